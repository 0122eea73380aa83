package analysis

import "math"

// ABRun names one run of an A/B comparison (Kind.Compare): what it varies.
type ABRun struct {
	Seed  int64  `json:"seed"`
	Codec string `json:"codec"`
	// Bandwidth is the ordinary nodes' link rate when links were shaped ("" unshaped).
	Bandwidth string `json:"bandwidth,omitempty"`
}

// Spread is a mean with its range.
type Spread struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// SpreadOf is the mean, minimum and maximum of vs (over seeds).
func SpreadOf(vs []float64) Spread {
	s := Spread{Min: math.Inf(1), Max: math.Inf(-1)}
	for _, v := range vs {
		s.Mean += v / float64(len(vs))
		s.Min, s.Max = math.Min(s.Min, v), math.Max(s.Max, v)
	}
	return s
}

// LatencyRun is one run of an A/B as the latency comparison reads it: its codec, whether it
// passed its checks, the machine's state that shapes latency (saturated; late: a schedule
// that fell behind), its plain baseline (the index in the runs of the plain run of the same
// seed and setting, -1 for none) and its delivery latency percentiles per category (ms), a
// category it did not measure absent from P50.
type LatencyRun[C comparable] struct {
	Codec           string
	OK              bool
	Saturated, Late bool
	Base            int
	P50, P99        map[C]float64
}

// LatencyDiff is one group of codec runs (a codec and category, with whatever else the
// kind groups by): their latency percentiles minus their baselines', mean and range over the
// seeds, and whether any of those runs or their baselines was saturated or late.
type LatencyDiff[K comparable] struct {
	Key             K
	Seeds           int
	P50, P99        Spread
	Saturated, Late bool
}

// LatencyDiffs is the A/Bs' one rule for latency against plain: a run compares nothing when
// it is plain, failed its checks, or has no baseline that passed its; otherwise each category
// of cats that both it and its baseline measured adds its p50 and p99 minus the baseline's to
// the group key(run, category). Groups are in the order they first appear.
func LatencyDiffs[K, C comparable](runs []LatencyRun[C], cats []C, key func(run int, c C) K) []LatencyDiff[K] {
	type acc struct {
		p50, p99        []float64
		saturated, late bool
	}
	accs := map[K]*acc{}
	var order []K
	for i, r := range runs {
		if r.Codec == "plain" || !r.OK || r.Base < 0 || r.Base >= len(runs) || !runs[r.Base].OK {
			continue
		}
		base := runs[r.Base]
		for _, c := range cats {
			want, ok := base.P50[c]
			got, ok2 := r.P50[c]
			if !ok || !ok2 {
				continue
			}
			k := key(i, c)
			a := accs[k]
			if a == nil {
				a = &acc{}
				accs[k] = a
				order = append(order, k)
			}
			a.p50 = append(a.p50, got-want)
			a.p99 = append(a.p99, r.P99[c]-base.P99[c])
			a.saturated = a.saturated || r.Saturated || base.Saturated
			a.late = a.late || r.Late || base.Late
		}
	}
	out := make([]LatencyDiff[K], 0, len(order))
	for _, k := range order {
		a := accs[k]
		out = append(out, LatencyDiff[K]{Key: k, Seeds: len(a.p50), P50: SpreadOf(a.p50), P99: SpreadOf(a.p99), Saturated: a.saturated, Late: a.late})
	}
	return out
}
