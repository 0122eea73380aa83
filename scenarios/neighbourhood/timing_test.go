package neighbourhood

import (
	"slices"
	"testing"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
)

// Each category's latency line holds its percentiles and the CDF they are points of, from
// the least latency to the greatest.
func TestTimingLatencyCDF(t *testing.T) {
	o := newObserver(1)
	o.latency[gossip.Attestation] = []float64{40, 10, 30, 20}
	l, ok := o.timing(0, 0, 0).Latency[gossip.Attestation.String()]
	if !ok || l.Messages != 4 || l.P50Ms != 20 || l.P90Ms != 40 || l.P99Ms != 40 {
		t.Fatalf("latency %+v", l)
	}
	if len(l.CDFMs) != 100/result.CDFStepPct+1 || l.CDFMs[0] != 10 || l.CDFMs[len(l.CDFMs)-1] != 40 || !slices.IsSorted(l.CDFMs) {
		t.Errorf("CDF %v", l.CDFMs)
	}
	for _, p := range []float64{l.P50Ms, l.P90Ms, l.P99Ms} {
		if !slices.Contains(l.CDFMs, p) {
			t.Errorf("percentile %v not on the CDF", p)
		}
	}
}
