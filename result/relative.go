package result

// PercentOf is a as a percentage of b, the one convention for every figure relative to plain
// in streamsim's tables and JSON: 53.1 means 53.1 % of plain's bytes. ok is false when b is 0.
func PercentOf(a, b float64) (pct float64, ok bool) {
	if b == 0 {
		return 0, false
	}
	return 100 * a / b, true
}
