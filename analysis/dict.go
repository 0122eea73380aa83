package analysis

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/klauspost/compress/dict"
	"github.com/klauspost/compress/zstd"

	"github.com/streamsim/streamsim/codec"
)

// Dictionary training bounds. The proposal trained on 20 minutes of an all-subnets
// recording; the builder's time grows with its input, so at most dictSampleBytes of the
// training frames are used, taken evenly across the training part.
const (
	dictMaxBytes    = 112640 // zstd --train's default dictionary size
	dictSampleBytes = 8 << 20
	dictID          = 0x5353 // fixed so that a sweep's bytes do not depend on the clock
)

// trainDict builds a zstd dictionary for level from training frames with
// github.com/klauspost/compress/dict.
func trainDict(frames [][]byte, level int) ([]byte, error) {
	if len(frames) == 0 {
		return nil, fmt.Errorf("train dictionary: no training frames (raise --train-split)")
	}
	total := 0
	for _, f := range frames {
		total += len(f)
	}
	samples := frames
	if total > dictSampleBytes {
		step := float64(total) / dictSampleBytes
		samples = nil
		next := 0.0
		acc := 0
		for _, f := range frames {
			if float64(acc) >= next {
				samples = append(samples, f)
				next += step * float64(len(f))
			}
			acc += len(f)
		}
	}
	d, err := dict.BuildZstdDict(samples, dict.Options{
		MaxDictSize: dictMaxBytes,
		HashBytes:   6,
		ZstdDictID:  dictID,
		ZstdLevel:   zstd.EncoderLevelFromZstd(level),
	})
	if err != nil {
		return nil, fmt.Errorf("train dictionary on %d frames: %w", len(samples), err)
	}
	return d, nil
}

// dictWriter is codec's zstd stream writer (one frame per stream direction, a flushed block
// per Write) with a dictionary: the same options plus WithEncoderDict.
type dictWriter struct {
	w     io.Writer
	buf   bytes.Buffer
	enc   *zstd.Encoder
	spec  codec.Spec
	dict  []byte
	stats codec.Stats
}

func newDictWriter(w io.Writer, s codec.Spec, d []byte) (*dictWriter, error) {
	z := &dictWriter{w: w, spec: s, dict: d}
	enc, err := zstd.NewWriter(&z.buf,
		zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(s.ZstdLevel)),
		zstd.WithWindowSize(s.WindowBytes),
		zstd.WithEncoderConcurrency(1),
		zstd.WithLowerEncoderMem(true),
		zstd.WithEncoderDict(d))
	if err != nil {
		return nil, fmt.Errorf("zstd+dict: new encoder: %w", err)
	}
	z.enc = enc
	return z, nil
}

func (z *dictWriter) Write(p []byte) (int, error) {
	start := time.Now()
	_, err := z.enc.Write(p)
	if err == nil {
		err = z.enc.Flush()
	}
	z.stats.Time += time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("zstd+dict: encode unit %d: %w", z.stats.Units, err)
	}
	if err := z.flush(); err != nil {
		return 0, err
	}
	z.stats.Units++
	z.stats.RawBytes += int64(len(p))
	return len(p), nil
}

func (z *dictWriter) flush() error {
	n := z.buf.Len()
	_, err := z.w.Write(z.buf.Bytes())
	z.buf.Reset()
	if err != nil {
		return fmt.Errorf("zstd+dict: write unit %d: %w", z.stats.Units, err)
	}
	z.stats.WireBytes += int64(n)
	return nil
}

func (z *dictWriter) Close() error {
	start := time.Now()
	err := z.enc.Close()
	z.stats.Time += time.Since(start)
	if err != nil {
		return fmt.Errorf("zstd+dict: close: %w", err)
	}
	return z.flush()
}

// Stats estimates state as codec's zstd writer does (window, block buffers, level tables;
// see codec.Spec.NewWriter) plus the dictionary, which each encoder holds.
func (z *dictWriter) Stats() codec.Stats {
	st := z.stats
	st.StateBytes = codecState(z.spec, true) + int64(len(z.dict))
	return st
}

// dictReader decodes a dictWriter's stream.
type dictReader struct {
	dec     *zstd.Decoder
	src     *countingReader
	spec    codec.Spec
	dict    []byte
	raw     int64
	elapsed time.Duration
}

type countingReader struct {
	r *bytes.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func newDictReader(r *bytes.Reader, s codec.Spec, d []byte) (*dictReader, error) {
	src := &countingReader{r: r}
	dec, err := zstd.NewReader(src,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(uint64(s.WindowBytes)),
		zstd.WithDecoderMaxMemory(uint64(s.WindowBytes)),
		zstd.WithDecoderDicts(d))
	if err != nil {
		return nil, fmt.Errorf("zstd+dict: new decoder: %w", err)
	}
	return &dictReader{dec: dec, src: src, spec: s, dict: d}, nil
}

func (z *dictReader) Read(p []byte) (int, error) {
	start := time.Now()
	n, err := z.dec.Read(p)
	z.elapsed += time.Since(start)
	z.raw += int64(n)
	return n, err
}

func (z *dictReader) Close() error {
	z.dec.Close()
	return nil
}

func (z *dictReader) Stats() codec.Stats {
	return codec.Stats{
		RawBytes:   z.raw,
		WireBytes:  z.src.n,
		Time:       z.elapsed,
		StateBytes: codecState(z.spec, false) + int64(len(z.dict)),
	}
}

// codecState is the StateBytes that codec's own zstd writer or reader reports for s, so the
// dictionary configuration's figure differs from plain zstd's by the dictionary only.
func codecState(s codec.Spec, writer bool) int64 {
	var sink bytes.Buffer
	if writer {
		w := s.NewWriter(&sink)
		defer w.Close()
		return w.(codec.Meter).Stats().StateBytes
	}
	r := s.NewReader(bytes.NewReader(nil))
	defer r.Close()
	return r.(codec.Meter).Stats().StateBytes
}
