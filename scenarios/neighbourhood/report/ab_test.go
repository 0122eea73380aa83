package report

import (
	"math"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/scenarios/neighbourhood"
)

// fakeRun is a neighbourhood report whose observed node received raw bytes per category
// and wire bytes at the given ratio of raw.
func fakeRun(dir string, raw map[gossip.Category]int64, ratio map[gossip.Category]float64, cpu float64) *Report {
	r := &Report{Dir: dir, Verdict: analysis.Verdict{Optimized: true, Checks: analysis.Checks{OK: true}}}
	f := &r.Figures
	f.Complete, f.SimulatedS, f.CPUS = true, 120, cpu
	var tr, tw int64
	for c, b := range raw {
		w := int64(float64(b) * ratio[c])
		f.Wire = append(f.Wire, neighbourhood.WireLine{Category: c.String(), Direction: "in", RawBytes: b, WireBytes: w, RelativePct: 100 * float64(w) / float64(b)})
		tr += b
		tw += w
	}
	f.Wire = append(f.Wire, neighbourhood.WireLine{Category: "total", Direction: "in", RawBytes: tr, WireBytes: tw, RelativePct: 100 * float64(tw) / float64(tr)},
		// Outbound lines are not the A/B's subject.
		neighbourhood.WireLine{Category: "total", Direction: "out", RawBytes: 1, WireBytes: 1, RelativePct: 100})
	return r
}

func TestCompare(t *testing.T) {
	raw := map[gossip.Category]int64{gossip.Attestation: 1000, gossip.Aggregate: 1000, gossip.Block: 1000, gossip.DataColumn: 1000,
		gossip.SyncCommittee: 1000, gossip.Control: 1000}
	one := map[gossip.Category]float64{}
	half := map[gossip.Category]float64{}
	for c := range raw {
		one[c], half[c] = 1, 0.5
	}
	half[gossip.Block] = 1 // blocks do not compress
	raw2 := map[gossip.Category]int64{}
	for c, v := range raw {
		raw2[c] = 2 * v // seed 2's runs carry twice as much
	}
	labels := []analysis.ABRun{{Seed: 1, Codec: "plain"}, {Seed: 1, Codec: "snappy-stream"}, {Seed: 2, Codec: "plain"}, {Seed: 2, Codec: "snappy-stream"}}
	reports := []analysis.Report{fakeRun("a", raw, one, 60), fakeRun("b", raw, half, 90), fakeRun("c", raw2, one, 60), fakeRun("d", raw2, half, 60)}
	rep, err := compare(labels, reports)
	if err != nil {
		t.Fatal(err)
	}
	ab := rep.(*AB)
	rows := map[string]ABRow{}
	for _, r := range ab.Rows {
		if r.Codec == "snappy-stream" {
			rows[r.Category] = r
		}
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if r := rows["attestation"]; r.Seeds != 2 || !near(r.OfRaw.Mean, 50) || r.OfPlain == nil || !near(r.OfPlain.Mean, 50) {
		t.Errorf("attestation row %+v", r)
	}
	if r := rows["block"]; !near(r.OfRaw.Mean, 100) {
		t.Errorf("block row %+v", r)
	}
	// Five categories at 50 %, blocks at 100 %: the total is 350/6 %; at the recording's mix
	// blocks weigh 154 of 5580 MiB/h.
	if r := rows["total"]; !near(r.OfRaw.Mean, 100*3.5/6) || r.CPU == nil || !near(r.CPU.Min, 100) || !near(r.CPU.Max, 150) {
		t.Errorf("total row %+v cpu %+v", r, r.CPU)
	}
	var sum, blocks float64
	for c, v := range neighbourhood.Recording.MiBh {
		sum += v
		if c == gossip.Block {
			blocks = v
		}
	}
	if r := rows[MixLabel]; !near(r.OfRaw.Mean, 50+50*blocks/sum) {
		t.Errorf("mix row %+v, want %.3f", r, 50+50*blocks/sum)
	}
	var b strings.Builder
	if err := ab.WriteTable(&b); err != nil || !strings.Contains(b.String(), "total at recording's mix") || !strings.Contains(b.String(), "result: OK") {
		t.Errorf("table: %v\n%s", err, b.String())
	}
	// A failed run is a problem of the comparison and compares nothing.
	bad := fakeRun("e", raw, half, 60)
	bad.Figures.Complete = false
	bad.Problem("delivery incomplete")
	rep, _ = compare(labels[:2], []analysis.Report{reports[0], bad})
	if rep.Outcome().Err() == nil {
		t.Error("a failed run passed the comparison")
	}
	for _, r := range rep.(*AB).Rows {
		if r.Codec == "snappy-stream" {
			t.Errorf("the failed run gave row %+v", r)
		}
	}
}

// Latency is compared with plain in the same seed: a codec run's p50 and p99 minus the plain
// run's, per category, mean and range over seeds; a run that failed compares nothing, and a
// run flagged saturated or late marks its difference.
func TestCompareLatencyDiff(t *testing.T) {
	raw := map[gossip.Category]int64{gossip.Attestation: 1000}
	ratio := map[gossip.Category]float64{gossip.Attestation: 0.5}
	run := func(dir string, p50, p99 float64) *Report {
		r := fakeRun(dir, raw, ratio, 60)
		r.Figures.Timing.Latency = map[string]neighbourhood.LatencyLine{"attestation": {Messages: 90, P50Ms: p50, P99Ms: p99},
			"block": {Messages: 0}} // no block measured: no difference
		return r
	}
	labels := []analysis.ABRun{{Seed: 1, Codec: "plain"}, {Seed: 1, Codec: "zstd"}, {Seed: 2, Codec: "plain"}, {Seed: 2, Codec: "zstd"},
		{Seed: 3, Codec: "plain"}, {Seed: 3, Codec: "zstd"}}
	failed := run("e", 100, 100)
	failed.Problem("delivery incomplete")
	reports := []analysis.Report{run("a", 200, 350), run("b", 210, 390), run("c", 180, 300), run("d", 200, 320), failed, run("f", 900, 900)}
	rep, err := compare(labels, reports)
	if err != nil {
		t.Fatal(err)
	}
	ab := rep.(*AB)
	if len(ab.LatencyDiff) != 1 {
		t.Fatalf("latency diffs %+v, want one (zstd, attestation)", ab.LatencyDiff)
	}
	d := ab.LatencyDiff[0]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if d.Codec != "zstd" || d.Category != "attestation" || d.Seeds != 2 || !near(d.P50.Mean, 15) || !near(d.P50.Min, 10) || !near(d.P50.Max, 20) ||
		!near(d.P99.Mean, 30) || !near(d.P99.Min, 20) || !near(d.P99.Max, 40) || d.Saturated || d.Late {
		t.Fatalf("zstd attestation diff %+v (seed 3's plain run failed: it compares nothing)", d)
	}
	var b strings.Builder
	if err := ab.WriteTable(&b); err != nil || !strings.Contains(b.String(), "+30.0 [+20.0, +40.0]") {
		t.Errorf("table lacks the p99 difference: %v\n%s", err, b.String())
	}

	// A run flagged saturated or late marks its difference.
	sat, late := run("b", 210, 390), run("c", 180, 300)
	sat.Flag(analysis.FlagSaturated, "the process was saturated")
	late.Flag(analysis.FlagLate, "the periphery fell behind its schedule")
	rep, err = compare(labels[:4], []analysis.Report{reports[0], sat, late, reports[3]})
	if err != nil {
		t.Fatal(err)
	}
	if d := rep.(*AB).LatencyDiff; len(d) != 1 || !d[0].Saturated || !d[0].Late || d[0].Seeds != 2 {
		t.Errorf("diff of a saturated and a late run: %+v", d)
	}
}
