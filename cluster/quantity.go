package cluster

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseQuantity parses a Kubernetes resource quantity into its base unit, in thousandths
// ("250m" CPU is 250; "1" is 1000; "128Mi" is 128·2²⁰·1000), so CPU and memory compare in one
// integer type without floats. Exponent forms (1e3) are not accepted.
func ParseQuantity(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty quantity")
	}
	suffixes := []struct {
		s string
		m float64
	}{
		{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
		{"m", 1e-3}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12},
	}
	mult := 1.0
	num := s
	for _, suf := range suffixes {
		if strings.HasSuffix(s, suf.s) {
			mult, num = suf.m, strings.TrimSuffix(s, suf.s)
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) || strings.ContainsAny(num, "eE") {
		return 0, fmt.Errorf("%q is not a quantity (like 250m, 2, 128Mi, 1Gi)", s)
	}
	return int64(math.Round(v * mult * 1000)), nil
}

// formatMilli prints a thousandths value of CPU as Kubernetes does ("1500m").
func formatCPU(milli int64) string { return strconv.FormatInt(milli, 10) + "m" }

// formatBytes prints a thousandths value of bytes in MiB.
func formatBytes(milli int64) string {
	return strconv.FormatFloat(float64(milli)/1000/(1<<20), 'f', 0, 64) + "Mi"
}
