package replay

import (
	"fmt"
	"slices"

	"github.com/klauspost/compress/dict"
	"github.com/klauspost/compress/zstd"
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
func trainDict(frames [][]byte, level int) (d []byte, err error) {
	if len(frames) == 0 {
		return nil, fmt.Errorf("train dictionary: no training frames (raise --train-split)")
	}
	total := 0
	for _, f := range frames {
		total += len(f)
	}
	samples := slices.Clone(frames)
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
	for i, f := range samples {
		if len(f) > dictSampleMaxBytes {
			samples[i] = f[:dictSampleMaxBytes]
		}
	}
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("train dictionary on %d frames: the dictionary builder failed: %v", len(samples), r)
		}
	}()
	d, err = dict.BuildZstdDict(samples, dict.Options{
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

// dictSampleMaxBytes bounds one training sample: klauspost/compress's dictionary builder
// panics (zstd/enc_base.go) on a sample somewhere above 200 kB, which a block's frame in raw
// SSZ mode can be; a dictionary learns from the first bytes of such a frame as well as from
// all of them.
const dictSampleMaxBytes = 128 << 10
