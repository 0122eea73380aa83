package codec

import (
	"errors"
	"fmt"
	"io"

	"github.com/streamsim/streamsim/codec/snappystream"
	"github.com/streamsim/streamsim/units"
)

// SnappyStream is the proposal's codec: Snappy blocks whose copies may reach into a
// history of the stream's earlier blocks (package snappystream).
const SnappyStream Kind = 1

// DefaultSnappyWindowBytes is the proposal's history window.
const DefaultSnappyWindowBytes = snappystream.DefaultWindowBytes

// SnappyStreamProtocolID is the proposal's protocol ID, for snappy-stream with its 64 KiB
// history.
const SnappyStreamProtocolID = "/snappy-stream/meshsub/1.2.0"

var snappyStreamFamily = Family{
	Name:       "snappy-stream",
	Form:       "snappy-stream[:<window>[:fast|better]] (window 0..16MiB, default 64KiB:fast)",
	Default:    Spec{Kind: SnappyStream, WindowBytes: DefaultSnappyWindowBytes, SnappyLevel: snappystream.Fast},
	ProtocolID: SnappyStreamProtocolID,
	Specs: []string{
		"snappy-stream", "snappy-stream:0", "snappy-stream:4KiB", "snappy-stream:1MiB",
		"snappy-stream:0:better", "snappy-stream:4KiB:better", "snappy-stream:64KiB:better", "snappy-stream:1MiB:better",
	},
	// Window 0 writes plain Snappy blocks: today's per-message compression, by this encoder.
	Bench: []BenchSpec{
		{"snappy-stream-w0", "snappy-stream:0"},
		{"snappy-stream-w0-better", "snappy-stream:0:better"},
		{"snappy-stream", "snappy-stream"},
		{"snappy-stream-better", "snappy-stream:64KiB:better"},
	},
	is:    func(s Spec) bool { return s.Kind == SnappyStream },
	parse: parseSnappyStream,
	canonical: func(s Spec) string {
		if s.SnappyLevel != snappystream.Fast {
			return "snappy-stream:" + units.FormatSize(s.WindowBytes) + ":" + s.SnappyLevel.String()
		}
		if s.WindowBytes != DefaultSnappyWindowBytes {
			return "snappy-stream:" + units.FormatSize(s.WindowBytes)
		}
		return "snappy-stream"
	},
	explicit: func(s Spec) string {
		return "snappy-stream:" + units.FormatSize(s.WindowBytes) + ":" + s.SnappyLevel.String()
	},
	newWriter:      func(w io.Writer, s Spec, o options) io.WriteCloser { return newSnappyWriter(w, s, o) },
	newReader:      func(r io.Reader, s Spec, o options) io.ReadCloser { return newSnappyReader(r, s, o) },
	implementation: func(Spec) string { return "streamsim snappystream" },
}

// parseSnappyStream reads [<window>[:<level>]].
func parseSnappyStream(s Spec, params []string) (Spec, error) {
	if len(params) > 2 {
		return Spec{}, errors.New("too many parameters")
	}
	if len(params) > 0 {
		w, err := units.ParseSize(params[0])
		if err != nil {
			return Spec{}, fmt.Errorf("window: %w", err)
		}
		if w > snappystream.MaxWindowBytes {
			return Spec{}, fmt.Errorf("window %s above %s", units.FormatSize(w), units.FormatSize(snappystream.MaxWindowBytes))
		}
		s.WindowBytes = w
	}
	if len(params) > 1 {
		l, err := snappystream.ParseLevel(params[1])
		if err != nil {
			return Spec{}, fmt.Errorf("level %q is neither fast nor better", params[1])
		}
		s.SnappyLevel = l
	}
	return s, nil
}

// snappyWriter encodes each Write as one snappy-stream block.
type snappyWriter struct {
	w     io.Writer
	enc   *snappystream.Encoder
	buf   []byte
	stats Stats
	err   error
	clock meterClock
}

func newSnappyWriter(w io.Writer, s Spec, o options) *snappyWriter {
	return &snappyWriter{w: w, enc: snappystream.NewEncoder(s.WindowBytes, s.SnappyLevel), clock: o.clock}
}

func (s *snappyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	start := s.clock.now()
	s.buf = s.enc.Encode(s.buf[:0], p)
	s.stats.Time += s.clock.since(start)
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

// Reset starts a new stream direction on w with the state the writer holds (Resetter).
func (s *snappyWriter) Reset(w io.Writer) {
	s.enc.Reset()
	s.w, s.err, s.stats = w, nil, Stats{}
}

func (s *snappyWriter) Stats() Stats {
	st := s.stats
	st.StateBytes = int64(s.enc.StateBytes() + cap(s.buf))
	return st
}

// snappyReader is snappy-stream's Reader, metered, and able to start a new stream on its
// state (Resetter).
type snappyReader struct {
	*meteredReader
	sr *snappystream.Reader
}

// Reset starts a new stream direction from r with the state the reader holds.
func (s *snappyReader) Reset(r io.Reader) {
	s.src.r, s.src.n, s.src.blocked = r, 0, 0
	s.raw, s.elapsed = 0, 0
	s.sr.Reset(s.src)
}

func newSnappyReader(r io.Reader, s Spec, o options) *snappyReader {
	src := &timedSource{r: r, clock: o.clock}
	sr := snappystream.NewReader(src, s.WindowBytes, o.maxUnitBytes)
	return &snappyReader{sr: sr, meteredReader: &meteredReader{
		dec:     sr,
		byteDec: sr,
		peekDec: sr,
		src:     src,
		close:   sr.Close,
		wire:    sr.WireBytes,
		units:   sr.Blocks,
		state:   func() int64 { return int64(sr.StateBytes()) },
	}}
}
