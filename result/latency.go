package result

import "sort"

// CDFStepPct is the step between the points of a latency CDF in reports' JSON (cdf_ms), in
// percent: the latency at 0, 2, 4, … 100 % of deliveries.
const CDFStepPct = 2

// LatencyCDF samples a sorted latency list at every CDFStepPct percent (nearest rank, as
// Quantile): 100/CDFStepPct+1 points, the first the least latency, the last the greatest;
// nil for an empty list.
func LatencyCDF(sorted []float64) []float64 {
	if len(sorted) == 0 {
		return nil
	}
	out := make([]float64, 0, 100/CDFStepPct+1)
	for p := 0; p <= 100; p += CDFStepPct {
		out = append(out, Quantile(sorted, float64(p)/100))
	}
	return out
}

// LatencyDist is a delivery-latency distribution in ms: how many deliveries, its
// percentiles, its maximum and its CDF (LatencyCDF), all from one sorted list.
type LatencyDist struct {
	Deliveries int64     `json:"deliveries"`
	P50Ms      float64   `json:"p50_ms"`
	P90Ms      float64   `json:"p90_ms"`
	P99Ms      float64   `json:"p99_ms"`
	MaxMs      float64   `json:"max_ms"`
	CDFMs      []float64 `json:"cdf_ms"`
}

// LatencyOf sorts ms in place and returns its distribution; nil for none.
func LatencyOf(ms []float64) *LatencyDist {
	if len(ms) == 0 {
		return nil
	}
	sort.Float64s(ms)
	return &LatencyDist{Deliveries: int64(len(ms)), P50Ms: Quantile(ms, 0.5), P90Ms: Quantile(ms, 0.9), P99Ms: Quantile(ms, 0.99),
		MaxMs: ms[len(ms)-1], CDFMs: LatencyCDF(ms)}
}
