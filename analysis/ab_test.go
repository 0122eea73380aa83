package analysis

import "testing"

// Latency against plain: a codec run minus its baseline per category both measured, over
// seeds; a run without a passing baseline, a failed run and plain itself compare nothing;
// a group is saturated or late when any of its runs or their baselines was.
func TestLatencyDiffs(t *testing.T) {
	lat := func(p50, p99 float64) (map[string]float64, map[string]float64) {
		return map[string]float64{"a": p50}, map[string]float64{"a": p99}
	}
	run := func(codec string, ok bool, base int, p50, p99 float64) LatencyRun[string] {
		r := LatencyRun[string]{Codec: codec, OK: ok, Base: base}
		r.P50, r.P99 = lat(p50, p99)
		return r
	}
	runs := []LatencyRun[string]{
		run("plain", true, 0, 100, 1000), run("zstd", true, 0, 150, 900), // seed 1
		run("plain", true, 2, 200, 2000), run("zstd", true, 2, 100, 2300), // seed 2
		run("plain", false, 4, 1, 1), run("zstd", true, 4, 9000, 9000), // seed 3: baseline failed
		run("zstd", true, -1, 9000, 9000), // no baseline
		run("zstd", false, 0, 9000, 9000), // failed
		run("snappy", true, 0, 130, 1100),
	}
	runs[3].Late = true
	runs[2].Saturated = true
	runs[8].P50["b"], runs[8].P99["b"] = 5, 5 // the baseline has no "b"
	got := LatencyDiffs(runs, []string{"a", "b"}, func(i int, c string) string { return runs[i].Codec + "/" + c })
	if len(got) != 2 || got[0].Key != "zstd/a" || got[1].Key != "snappy/a" {
		t.Fatalf("groups %+v", got)
	}
	z := got[0]
	if z.Seeds != 2 || z.P50 != (Spread{Mean: -25, Min: -100, Max: 50}) || z.P99 != (Spread{Mean: 100, Min: -100, Max: 300}) || !z.Saturated || !z.Late {
		t.Errorf("zstd %+v", z)
	}
	if s := got[1]; s.Seeds != 1 || s.P50.Mean != 30 || s.P99.Mean != 100 || s.Saturated || s.Late {
		t.Errorf("snappy %+v", s)
	}
}
