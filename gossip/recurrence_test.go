package gossip

import (
	"math"
	"slices"
	"testing"
)

// pubsub's rule: q per eligible count and client (go Dlazy 6 factor 0.25, Lighthouse Dlazy 3,
// Nimbus factor 0.05), and the repeat share it gives over 3 heartbeats: 23 % at q 0.25,
// 38 % near q 0.45, 67 % at q 1, 0 without gossip.
func TestGossipRule(t *testing.T) {
	for _, c := range []struct {
		e, dlazy int
		factor   float64
		want     float64
	}{{0, 6, 0.25, 0}, {4, 6, 0.25, 1}, {12, 6, 0.25, 0.5}, {24, 6, 0.25, 0.25}, {100, 6, 0.25, 0.25}, {199, 3, 0.25, 49.0 / 199},
		{10, 3, 0.25, 0.3}, {160, 6, 0.05, 8.0 / 160}, {60, 6, 0.05, 0.1}} {
		if got := GossipChance(c.e, c.dlazy, c.factor); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("GossipChance(%d, %d, %v) = %v, want %v", c.e, c.dlazy, c.factor, got, c.want)
		}
	}
	for _, c := range []struct{ q, want float64 }{{0.25, 0.229}, {0.45, 0.383}, {1, 2.0 / 3}, {0, 0}} {
		if got := RepeatShareOf(c.q, 3); math.Abs(got-c.want) > 0.001 {
			t.Errorf("RepeatShareOf(%v, 3) = %.4f, want %.3f", c.q, got, c.want)
		}
	}
}

// The live count: repeats by distance on one stream, none across streams, and Reset keeps the
// ids seen so a measurement after a warm-up counts repeats of the warm-up's ids.
func TestRecurrenceFrames(t *testing.T) {
	r := NewRecurrence()
	r.Frame("a", 100, slices.Values([]string{"x", "y"}))
	r.Frame("b", 100, slices.Values([]string{"x"}))
	r.Frame("a", 100<<10, slices.Values([]string{"x"})) // 100 B after its first mention on a
	r.Frame("a", 10, slices.Values([]string{"y"}))      // 100 KiB + 100 B after
	s := r.Sum()
	if s.Mentions != 5 || !slices.Equal(s.Within, []int64{1, 1, 2, 2}) {
		t.Errorf("sum %+v, want 5 mentions, within 1 1 2 2", s)
	}
	r.Reset()
	r.Frame("b", 10, slices.Values([]string{"x"}))
	if s := r.Sum(); s.Mentions != 1 || s.Within[0] != 1 || s.RepeatShare(4<<10) != 1 {
		t.Errorf("after reset %+v: the warm-up's id counts as an earlier mention", s)
	}
	r.Frame("c", 20<<20, nil)
	r.Frame("c", 10, slices.Values([]string{"z"}))
	r.Frame("c", 10, slices.Values([]string{"z"}))
	if s := r.Sum(); s.Mentions != 3 || s.Within[0] != 2 {
		t.Errorf("%+v", s)
	}
}
