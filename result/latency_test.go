package result

import (
	"slices"
	"testing"
)

func TestLatencyCDF(t *testing.T) {
	if LatencyCDF(nil) != nil || LatencyOf(nil) != nil {
		t.Error("an empty list has a CDF")
	}
	ms := []float64{30, 10, 20, 40}
	d := LatencyOf(ms)
	if d.Deliveries != 4 || d.P50Ms != 20 || d.P90Ms != 40 || d.P99Ms != 40 || d.MaxMs != 40 {
		t.Errorf("distribution %+v", d)
	}
	c := d.CDFMs
	if len(c) != 100/CDFStepPct+1 {
		t.Fatalf("%d points, want %d", len(c), 100/CDFStepPct+1)
	}
	if c[0] != 10 || c[len(c)-1] != 40 {
		t.Errorf("CDF from %v to %v, want the least (10) to the greatest (40)", c[0], c[len(c)-1])
	}
	if !slices.IsSorted(c) {
		t.Errorf("CDF not sorted: %v", c)
	}
	// Nearest rank: 25 % of four deliveries is the first, 26 % the second, 50 % the second.
	if c[25/CDFStepPct] != 10 || c[26/CDFStepPct] != 20 || c[50/CDFStepPct] != 20 {
		t.Errorf("CDF points %v", c)
	}
	// Every percentile the distribution states is a point of its CDF.
	for _, p := range []float64{d.P50Ms, d.P90Ms, d.P99Ms} {
		if !slices.Contains(c, p) {
			t.Errorf("percentile %v is not on the CDF %v", p, c)
		}
	}
}
