package codec

import (
	"fmt"
	"io"
	"time"

	"github.com/streamsim/streamsim/codec/snappystream"
)

// snappyWriter encodes each Write as one snappy-stream block.
type snappyWriter struct {
	w     io.Writer
	enc   *snappystream.Encoder
	buf   []byte
	stats Stats
	err   error
}

func newSnappyWriter(w io.Writer, s Spec) *snappyWriter {
	return &snappyWriter{w: w, enc: snappystream.NewEncoder(s.WindowBytes, s.SnappyLevel)}
}

func (s *snappyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	start := time.Now()
	s.buf = s.enc.Encode(s.buf[:0], p)
	s.stats.Time += time.Since(start)
	if _, err := s.w.Write(s.buf); err != nil {
		s.err = fmt.Errorf("snappy-stream: write unit %d: %w", s.stats.Units, err)
		return 0, s.err
	}
	s.stats.Units++
	s.stats.RawBytes += int64(len(p))
	s.stats.WireBytes += int64(len(s.buf))
	return len(p), nil
}

func (s *snappyWriter) Close() error { return nil }

func (s *snappyWriter) Stats() Stats {
	st := s.stats
	st.StateBytes = int64(s.enc.StateBytes() + cap(s.buf))
	return st
}

func newSnappyReader(r io.Reader, s Spec, o options) *meteredReader {
	src := &timedSource{r: r}
	sr := snappystream.NewReader(src, s.WindowBytes, o.maxUnitBytes)
	return &meteredReader{
		dec:   sr,
		src:   src,
		close: sr.Close,
		wire:  sr.WireBytes,
		units: sr.Blocks,
		state: func() int64 { return int64(sr.StateBytes()) },
	}
}
