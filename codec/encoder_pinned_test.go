package codec

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/streamsim/streamsim/codec/snappystream"
)

// TestSnappyStreamOutputPinned pins what snappy-stream's encoders emit on the benchmark
// inputs (generated from fixed seeds): the byte count and a digest of every block, per
// window and level. Speed work on the encoders (inlining, reused hashes, an assembly
// loop) must leave these unchanged; a change meant to alter the output updates this table
// and states the byte change per category in docs/measurements/codecs.md.
func TestSnappyStreamOutputPinned(t *testing.T) {
	want := map[string]string{
		"attestations 0 fast":         "871273 b6e951ad7cd127d9",
		"attestations 0 better":       "858739 71f2d503256ddb85",
		"attestations 4096 fast":      "381562 07ef7082c558c40e",
		"attestations 4096 better":    "373948 684ed3a5fff3fda9",
		"attestations 65536 fast":     "360140 d07725f9e3e9e8bb",
		"attestations 65536 better":   "354880 798f6cce28266f98",
		"attestations 1048576 fast":   "360024 91cb44d439a3fe0d",
		"attestations 1048576 better": "358237 4bb609da7473522f",
		"blocks 0 fast":               "379770 50b533c8bf961ccd",
		"blocks 0 better":             "379233 25f82173aba0fc69",
		"blocks 4096 fast":            "377247 e739bb23480d50b3",
		"blocks 4096 better":          "375223 4408c134a8938638",
		"blocks 65536 fast":           "363429 aae843d32f47365f",
		"blocks 65536 better":         "360858 6114c194801bbcee",
		"blocks 1048576 fast":         "348812 0b8654a4aa55cb9f",
		"blocks 1048576 better":       "381395 13ae2833cb88be0d",
		"cells 0 fast":                "525568 a30d1c716e8b1e50",
		"cells 0 better":              "525568 a30d1c716e8b1e50",
		"cells 4096 fast":             "525568 a30d1c716e8b1e50",
		"cells 4096 better":           "525568 a30d1c716e8b1e50",
		"cells 65536 fast":            "525568 a30d1c716e8b1e50",
		"cells 65536 better":          "525568 a30d1c716e8b1e50",
		"cells 1048576 fast":          "525568 a30d1c716e8b1e50",
		"cells 1048576 better":        "525568 a30d1c716e8b1e50",
	}
	ins := benchInputs()
	if testing.Short() {
		ins = ins[:1]
	}
	for _, in := range ins {
		for _, w := range []int{0, 4 << 10, 64 << 10, 1 << 20} {
			for _, l := range []snappystream.Level{snappystream.Fast, snappystream.Better} {
				e := snappystream.NewEncoder(w, l)
				h := sha256.New()
				n := 0
				var block []byte
				for _, m := range in.msgs {
					block = e.Encode(block[:0], m)
					h.Write(block)
					n += len(block)
				}
				key := fmt.Sprintf("%s %d %v", in.name, w, l)
				if got := fmt.Sprintf("%d %x", n, h.Sum(nil)[:8]); got != want[key] {
					t.Errorf("%s: output %s, pinned %s", key, got, want[key])
				}
			}
		}
	}
}
