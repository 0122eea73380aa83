package bench

import (
	"testing"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
)

// gossipStreams generates the control-heavy streams of every shape and framing, seed 1.
func gossipStreams(t testing.TB) []GossipStream {
	t.Helper()
	var out []GossipStream
	for _, shape := range GossipShapes {
		for _, f := range []Framing{GoFraming, RustFraming} {
			s, err := NewGossipStream(DefaultGossipParams(shape, 1, f))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
	}
	return out
}

func streamRatio(t testing.TB, s GossipStream, name string) StreamRatio {
	t.Helper()
	spec, err := codec.Parse(name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Ratio(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%-20s %-28s control %5.1f %%  attestation %5.1f %%  total %5.1f %%", s.Name, name, r.Pct[gossip.Control], r.Pct[gossip.Attestation], r.TotalPct)
	return r
}

// TestGossipStreamsAcceptance holds snappy-stream fast to its acceptance on the
// control-heavy streams, all measured in one run: control at 1 MiB within 5 points of
// zstd-3 with a 1 MiB window, at 64 KiB no worse than zstd-3 at 64 KiB + 2 points, and
// attestations (rust framing: frames of their own, so their bytes are theirs alone) no more
// than 0.5 points above what fast sent before the step caps.
//
// At 64 KiB the bound is on the mean over seeds 1–3 (one stream's draw moves the gap by
// several points; with the step capped at 5 the near-rust stream's gap is −1.6 to +1.4 over
// seeds 1–6, mean −0.2 over seeds 1–3).
func TestGossipStreamsAcceptance(t *testing.T) {
	gap64 := map[string]float64{}
	for seed := int64(1); seed <= 3; seed++ {
		for _, shape := range GossipShapes {
			for _, f := range []Framing{GoFraming, RustFraming} {
				s, err := NewGossipStream(DefaultGossipParams(shape, seed, f))
				if err != nil {
					t.Fatal(err)
				}
				gap64[s.Name] += (streamRatio(t, s, "snappy-stream:64KiB:fast").Pct[gossip.Control] - streamRatio(t, s, "zstd:3:64KiB").Pct[gossip.Control]) / 3
			}
		}
	}
	for name, gap := range gap64 {
		if gap > 2 {
			t.Errorf("%s: fast 64 KiB sends control %.1f points above zstd-3 64 KiB on the mean of seeds 1–3, above +2", name, gap)
		}
	}
	// fast's attestation percentages before the step caps: aa918a7's encoder on these
	// streams as the workload makes them now (era 2026-05; it was 43.4 / 42.3 and 42.7 / 42.0
	// on the workload before it). A change of the workload's attestations moves them: measure
	// them again with the encoder of aa918a7 (codec/snappystream) on the same streams.
	before := map[string][2]float64{
		"gossip-far-rust":  {44.8, 43.8},
		"gossip-near-rust": {44.3, 43.5},
	}
	for _, s := range gossipStreams(t) {
		streamRatio(t, s, "zstd:3:64KiB") // logged; the 64 KiB bound is on the seeds' mean above
		z1m := streamRatio(t, s, "zstd:3:1MiB")
		f64 := streamRatio(t, s, "snappy-stream:64KiB:fast")
		f1m := streamRatio(t, s, "snappy-stream:1MiB:fast")
		// Logged beside them (docs/codecs.md's table): better, and libzstd where cgo is.
		for _, name := range []string{"snappy-stream:64KiB:better", "snappy-stream:1MiB:better", "zstd-c:3:64KiB", "zstd-c:3:1MiB"} {
			if spec, err := codec.Parse(name); err == nil && spec.Available() == nil {
				streamRatio(t, s, name)
			}
		}
		if got, lim := f1m.Pct[gossip.Control], z1m.Pct[gossip.Control]+5; got > lim {
			t.Errorf("%s: fast 1 MiB sends control at %.1f %%, above zstd-3 1 MiB + 5 = %.1f %%", s.Name, got, lim)
		}
		if b, ok := before[s.Name]; ok {
			for i, r := range []StreamRatio{f64, f1m} {
				if got := r.Pct[gossip.Attestation]; got > b[i]+0.5 {
					t.Errorf("%s %s: attestations at %.1f %%, before %.1f %%", s.Name, r.Spec, got, b[i])
				}
			}
		}
	}
}
