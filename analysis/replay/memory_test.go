package replay

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/gossip"
)

// withoutTiming returns the report's results and views as JSON with every timing figure
// zeroed: what must not depend on how the sweep was scheduled.
func withoutTiming(t *testing.T, rep *Report) string {
	t.Helper()
	rs := make([]Result, len(rep.Results))
	for i, r := range rep.Results {
		r.EncodeTime, r.DecodeTime = 0, 0
		r.EncodeNsPerB, r.DecodeNsPerB, r.EncodeMBPerSec, r.DecodeMBPerSec = 0, 0, 0, 0
		r.EncodeCPUNsPerB, r.DecodeCPUNsPerB, r.MeterCPUNsPerB = 0, 0, 0
		rs[i] = r
	}
	b, err := json.Marshal(struct {
		Results []Result
		Views   []TrafficSummary
		Notes   []string
	}{rs, rep.Views, rep.Notes})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The same recording swept within a budget that forces configurations into passes of their
// own and stream directions into groups gives the same figures, to the bit, as within one
// that holds everything at once.
func TestSweepBudgetIdenticalResults(t *testing.T) {
	path, _, _ := testTrace(t, t.TempDir(), 3)
	opts := func(budget int64) Options {
		return Options{
			// Not zstd+dict: klauspost's dictionary builder is not deterministic run to run.
			Grid:     mustGrid(t, "none,plain,snappy-stream:4KiB:fast,snappy-stream:64KiB:better,zstd:1:64KiB"),
			Profiles: []string{"default"}, Layouts: []string{LayoutOneStream, LayoutTopicStreams},
			Payloads: []string{gossip.PayloadSSZSnappy, gossip.PayloadSSZ}, TrainSplit: 0.25, Workers: 2, MemoryBudget: budget,
		}
	}
	large, err := Sweep([]string{path}, opts(DefaultMemoryBudget))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(large.Memory.Passes); n != 1 {
		t.Fatalf("the large budget took %d passes", n)
	}
	// A budget of one byte is refused; the refusal says what every pass holds.
	_, err = Sweep([]string{path}, opts(1))
	var be *BudgetError
	if !errors.As(err, &be) || !errors.Is(err, ErrMemoryBudget) {
		t.Fatalf("budget 1: %v, want a BudgetError", err)
	}
	// Room for about 4 MiB of streams beside it: each zstd stream direction holds about 1 MiB.
	small, err := Sweep([]string{path}, opts(int64(float64(be.Fixed+4<<20)/planShare)+outsideGo()))
	if err != nil {
		t.Fatal(err)
	}
	plan := small.Memory
	grouped := false
	for _, p := range plan.Passes {
		for _, j := range p.Jobs {
			grouped = grouped || strings.Contains(j, "[group 2/")
		}
		if p.Bytes > int64(planShare*float64(plan.BudgetBytes-plan.OutsideBytes)) {
			t.Errorf("pass %v: estimated %d over the planned share of the budget %d", p.Jobs, p.Bytes, plan.BudgetBytes)
		}
	}
	if len(plan.Passes) < 4 || !grouped {
		t.Fatalf("the small budget's plan has %d passes and grouped=%v: it does not exercise batching: %+v", len(plan.Passes), grouped, plan)
	}
	a, b := withoutTiming(t, large), withoutTiming(t, small)
	if a != b {
		t.Errorf("results differ between one pass and %d:\n%s\n%s", len(plan.Passes), a, b)
	}
	t.Logf("%d passes, %d results identical", len(plan.Passes), len(small.Results))
}

// The estimate bounds the live heap measured when a configuration's streams are all open,
// and is not far above it: the plan neither overruns the budget nor wastes it.
func TestMemoryEstimateBoundsMeasured(t *testing.T) {
	path, _, _ := testTrace(t, t.TempDir(), 3)
	for _, cfg := range []string{"snappy-stream:64KiB:fast", "zstd:1:64KiB"} {
		var measured int64
		beforeFinish = func() { measured = max(measured, heapLive()) }
		rep, err := Sweep([]string{path}, Options{Grid: mustGrid(t, cfg), Profiles: []string{"all-subnets"}, Layouts: []string{LayoutTopicStreams},
			Payloads: []string{gossip.PayloadSSZSnappy}, TrainSplit: 0.25, Workers: 1})
		beforeFinish = nil
		if err != nil {
			t.Fatal(err)
		}
		est := rep.Memory.PeakBytes
		ratio := float64(est) / float64(measured)
		t.Logf("%s: %d streams, estimated %d, measured %d live (%.2f×)", cfg, rep.Results[0].Streams, est, measured, ratio)
		if ratio < 1 || ratio > 1.5 {
			t.Errorf("%s: estimate %d against %d measured (%.2f×): want 1–1.5×", cfg, est, measured, ratio)
		}
	}
}

// The measured state grows with the window and holds at least the history at both ends; a
// stream is estimated at the first measured fill at or above its bytes.
func TestMeasuredState(t *testing.T) {
	var prev int64
	for _, s := range []string{"snappy-stream:4KiB:fast", "snappy-stream:64KiB:fast", "snappy-stream:1MiB:fast", "zstd:3:2MiB"} {
		c, err := ParseConfig(s)
		if err != nil {
			t.Fatal(err)
		}
		curve := measuredState(c)
		top := curve.bytes[len(curve.bytes)-1]
		window := int64(c.Spec.HistoryBytes())
		t.Logf("%s: %d B at %d B through, %d B at %d B", s, curve.bytes[0], curve.at[0], top, curve.at[len(curve.at)-1])
		if top <= prev || top < 2*window {
			t.Errorf("%s: %d bytes past the window: want more than the smaller window's %d and at least both ends' history %d", s, top, prev, 2*window)
		}
		prev = top
		for i := 1; i < len(curve.bytes); i++ {
			if curve.bytes[i] < curve.bytes[i-1] {
				t.Errorf("%s: state falls from %d to %d", s, curve.bytes[i-1], curve.bytes[i])
			}
		}
		if got := curve.of(curve.at[1] - 1); got != curve.bytes[1] {
			t.Errorf("%s: of(%d) = %d, want the next fill's %d", s, curve.at[1]-1, got, curve.bytes[1])
		}
		if got := curve.of(1 << 40); got != top {
			t.Errorf("%s: of(1 TiB) = %d, want the last fill's %d", s, got, top)
		}
	}
}
