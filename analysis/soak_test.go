package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/streamsim/streamsim/result"
)

func samples(n int, heap func(i int) int64, goroutines func(i int) int64) []result.Sample {
	var out []result.Sample
	for i := range n {
		out = append(out, result.Sample{AtNs: int64(i) * int64(time.Second), HeapLiveBytes: heap(i), Goroutines: goroutines(i), Streams: 8, GossipStreams: 8})
	}
	return out
}

func TestSoakTrend(t *testing.T) {
	const mib = 1 << 20
	flatHeap := func(i int) int64 { return 200*mib + int64(20*mib*math.Sin(float64(i))) }
	flatG := func(int) int64 { return 900 }
	node := func(s []result.Sample, seenTTL time.Duration) *result.NodeSummary {
		return &result.NodeSummary{Group: "hub", Samples: s, SeenTTLNs: int64(seenTTL)}
	}
	// Growing until the seen TTL (20 s) and two sweeps (a minute each), flat after: flat.
	warming := func(i int) int64 { return flatHeap(i) + int64(min(i, 140))*10*mib }
	r := BuildSoakReport([]*result.NodeSummary{node(samples(200, warming, flatG), 20*time.Second)})
	if !r.Judged || !r.OK || r.WarmupS != 140 {
		t.Fatalf("flat after warm-up: %+v", r)
	}
	// A leak of 2 MiB a sample (60 samples after warm-up): growing. A goroutine leak of one
	// per sample: growing.
	for name, n := range map[string]*result.NodeSummary{
		"heap":       node(samples(200, func(i int) int64 { return flatHeap(i) + 2*int64(i)*mib }, flatG), 20*time.Second),
		"goroutines": node(samples(200, flatHeap, func(i int) int64 { return 900 + int64(i) }), 20*time.Second),
	} {
		r := BuildSoakReport([]*result.NodeSummary{n})
		if !r.Judged || r.OK {
			t.Errorf("%s leak not caught: %+v", name, r.Checks)
		}
	}
	// Too few samples after warm-up: not judged.
	if r := BuildSoakReport([]*result.NodeSummary{node(samples(150, flatHeap, flatG), 20*time.Second)}); r.Judged {
		t.Errorf("judged %d samples after a 140-sample warm-up", 150)
	}
	if BuildSoakReport([]*result.NodeSummary{{Group: "hub"}}) != nil {
		t.Error("a report without samples")
	}
}

// Nodes of one process share its heap: a node with a short seen TTL is judged after its
// process neighbours' longer warm-up, so their caches filling is not read as its growth.
// The same node alone in its process is judged after its own warm-up.
func TestSoakWarmupPerProcess(t *testing.T) {
	const mib = 1 << 20
	// The process heap grows until sample 200 (the long-TTL node's warm-up: 80 s + two
	// sweeps), flat after.
	heap := func(i int) int64 { return 200*mib + int64(min(i, 200))*2*mib }
	flatG := func(int) int64 { return 900 }
	mk := func(ttl time.Duration, pid int) *result.NodeSummary {
		return &result.NodeSummary{Group: "nodes", Samples: samples(260, heap, flatG), SeenTTLNs: int64(ttl),
			Process: &result.Process{Host: "h", PID: pid}}
	}
	shared := BuildSoakReport([]*result.NodeSummary{mk(5*time.Second, 1), mk(80*time.Second, 1)})
	if !shared.Judged || !shared.OK || shared.WarmupS != 200 {
		t.Fatalf("shared process: %+v", shared)
	}
	alone := BuildSoakReport([]*result.NodeSummary{mk(5*time.Second, 2), mk(80*time.Second, 1)})
	if !alone.Judged || alone.OK {
		t.Fatalf("a short-TTL node in its own process whose heap grows after its warm-up must be caught: %+v", alone.Checks)
	}
}
