package replay

import (
	"math/rand/v2"
	"testing"
)

// A training set with frames far larger than the builder takes whole (a block's frame in raw
// SSZ mode is about 400 kB) still trains a dictionary: large samples are cut, and a failure of
// the builder is an error, not a panic.
func TestTrainDictLargeFrames(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var frames [][]byte
	for i := range 40 {
		n := 300
		if i%8 == 0 {
			n = 400 << 10
		}
		f := make([]byte, n)
		for j := range f {
			if j%64 < 40 {
				f[j] = byte(j / 64 % 7) // repeated structure, as SSZ has
			} else {
				f[j] = byte(rng.Uint32())
			}
		}
		frames = append(frames, f)
	}
	d, err := trainDict(frames, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(d) == 0 || len(d) > dictMaxBytes {
		t.Fatalf("dictionary of %d bytes", len(d))
	}
	if len(frames[0]) != 400<<10 {
		t.Fatalf("the caller's frame was cut to %d bytes", len(frames[0]))
	}
}
