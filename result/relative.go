package result

import "math"

// PercentOf is a as a percentage of b, the one convention for every figure relative to plain
// in streamsim's tables and JSON: 53.1 means 53.1 % of plain's bytes. ok is false when b is 0.
func PercentOf(a, b float64) (pct float64, ok bool) {
	if b == 0 {
		return 0, false
	}
	return 100 * a / b, true
}

// Quantile is the q-quantile (0..1) of sorted values by nearest rank; 0 for none.
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
