package replay

import (
	"fmt"

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
