package codec

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/klauspost/compress/zstd"
)

// zstdWriter writes one zstd frame per stream direction and flushes a block per Write.
// The encoder writes into buf so that its time excludes the Write on w and each unit
// goes out with one Write.
type zstdWriter struct {
	w      io.Writer
	buf    bytes.Buffer
	enc    *zstd.Encoder
	spec   Spec
	stats  Stats
	err    error
	closed bool
}

func newZstdWriter(w io.Writer, s Spec) *zstdWriter {
	z := &zstdWriter{w: w, spec: s}
	opts := []zstd.EOption{
		zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(s.ZstdLevel)),
		zstd.WithWindowSize(s.WindowBytes),
		zstd.WithEncoderConcurrency(1),
		zstd.WithLowerEncoderMem(true),
	}
	if len(s.ZstdDict) > 0 {
		opts = append(opts, zstd.WithEncoderDict(s.ZstdDict))
	}
	enc, err := zstd.NewWriter(&z.buf, opts...)
	if err != nil {
		// Parse only admits levels and windows the library accepts.
		z.err = fmt.Errorf("zstd: new encoder for %s: %w", s, err)
	}
	z.enc = enc
	return z
}

func (z *zstdWriter) Write(p []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	start := time.Now()
	_, err := z.enc.Write(p)
	if err == nil {
		err = z.enc.Flush()
	}
	z.stats.Time += time.Since(start)
	if err != nil {
		z.err = fmt.Errorf("zstd: encode unit %d: %w", z.stats.Units, err)
		return 0, z.err
	}
	if err := z.flushBuf(); err != nil {
		return 0, err
	}
	z.stats.Units++
	z.stats.RawBytes += int64(len(p))
	return len(p), nil
}

func (z *zstdWriter) flushBuf() error {
	n := z.buf.Len()
	_, err := z.w.Write(z.buf.Bytes())
	z.buf.Reset()
	if err != nil {
		z.err = fmt.Errorf("zstd: write unit %d: %w", z.stats.Units, err)
		return z.err
	}
	z.stats.WireBytes += int64(n)
	return nil
}

// Close ends the frame (writing its end with one Write) without closing w.
func (z *zstdWriter) Close() error {
	if z.closed {
		return nil
	}
	z.closed = true
	if z.enc == nil {
		return z.err
	}
	start := time.Now()
	err := z.enc.Close()
	z.stats.Time += time.Since(start)
	z.enc = nil
	if z.err != nil {
		return z.err
	}
	if err != nil {
		z.err = fmt.Errorf("zstd: close: %w", err)
		return z.err
	}
	if z.buf.Len() > 0 {
		if err := z.flushBuf(); err != nil {
			return err
		}
	}
	z.err = fmt.Errorf("zstd: write after Close")
	return nil
}

func (z *zstdWriter) Stats() Stats {
	st := z.stats
	st.StateBytes = zstdEncoderStateBytes(z.spec)
	return st
}

// zstdEncoderStateBytes estimates klauspost/compress/zstd's encoder memory with
// WithLowerEncoderMem: history (window plus one 128 KiB block), two block buffers and
// the level's hash tables (8-byte entries).
func zstdEncoderStateBytes(s Spec) int64 {
	const block = 128 << 10
	var tables int64
	switch zstd.EncoderLevelFromZstd(s.ZstdLevel) {
	case zstd.SpeedFastest:
		tables = 8 << 15
	case zstd.SpeedDefault:
		tables = 8<<17 + 8<<15
	case zstd.SpeedBetterCompression:
		tables = 8<<19 + 8<<13
	default:
		tables = 8<<22 + 8<<18
	}
	return int64(s.WindowBytes) + block + 2*block + tables + int64(len(s.ZstdDict))
}

func newZstdReader(r io.Reader, s Spec) io.ReadCloser {
	src := &timedSource{r: r}
	opts := []zstd.DOption{
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(uint64(s.WindowBytes)),
		zstd.WithDecoderMaxMemory(uint64(s.WindowBytes)),
	}
	if len(s.ZstdDict) > 0 {
		opts = append(opts, zstd.WithDecoderDicts(s.ZstdDict))
	}
	dec, err := zstd.NewReader(src, opts...)
	if err != nil {
		return &failedReader{err: fmt.Errorf("zstd: new decoder for %s: %w", s, err)}
	}
	return &meteredReader{
		name: "zstd",
		dec:  dec,
		src:  src,
		close: func() error {
			dec.Close()
			return nil
		},
		// History (window) plus one block being decoded, plus the dictionary.
		state: func() int64 { return int64(s.WindowBytes) + 128<<10 + int64(len(s.ZstdDict)) },
	}
}

// failedReader reports a construction error on every Read.
type failedReader struct{ err error }

func (f *failedReader) Read([]byte) (int, error) { return 0, f.err }
func (f *failedReader) Close() error             { return nil }
func (f *failedReader) Stats() Stats             { return Stats{} }
