package codec

import (
	"testing"

	gsnappy "github.com/golang/snappy"

	"github.com/streamsim/streamsim/codec/snappystream"
)

// snappyStreamBytes returns the wire bytes of msgs through one snappy-stream direction.
func snappyStreamBytes(msgs [][]byte, window int, level snappystream.Level) int {
	enc := snappystream.NewEncoder(window, level)
	var buf []byte
	n := 0
	for _, m := range msgs {
		buf = enc.Encode(buf[:0], m)
		n += len(buf)
	}
	return n
}

func perMessageSnappyBytes(msgs [][]byte) int {
	n := 0
	for _, m := range msgs {
		n += len(gsnappy.Encode(nil, m))
	}
	return n
}

// TestAttestationRatioTargets checks issue 2's ratio targets on the attestation stream
// with a 64 KiB window: fast at most 44 % and better at most 42 % of per-message Snappy.
func TestAttestationRatioTargets(t *testing.T) {
	frames := attestationFrames(1, 3000, 1000)
	base := perMessageSnappyBytes(frames)
	for _, c := range []struct {
		level snappystream.Level
		max   float64
	}{{snappystream.Fast, 0.44}, {snappystream.Better, 0.42}} {
		got := snappyStreamBytes(frames, 64<<10, c.level)
		rel := float64(got) / float64(base)
		t.Logf("%s: %d bytes, %.1f %% of per-message snappy (%d bytes)", c.level, got, 100*rel, base)
		if rel > c.max {
			t.Errorf("%s: %.1f %% of per-message snappy, target at most %.0f %%", c.level, 100*rel, 100*c.max)
		}
	}
}
