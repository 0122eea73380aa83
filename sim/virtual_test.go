package sim

import (
	"context"

	"github.com/streamsim/streamsim/analysis"
	"testing"
	"testing/synctest"

	"github.com/streamsim/streamsim/gossip"
)

// inBubble is Embedded.Bubble for tests: the run in synctest.Test's bubble.
func inBubble(t *testing.T) func(f func()) error {
	return func(f func()) error {
		synctest.Test(t, func(*testing.T) { f() })
		return nil
	}
}

// On the virtual clock a small mesh over shaped links (regions 2–220 ms apart, 50 Mbit/s and
// 1 Gbit/s, in simulated time) delivers every message to every node exactly once, its
// recording equals its meters, publishing is never late, delivery takes at least the latency
// between regions, and the summaries say which clock and transport ran and what a simulated
// minute cost.
func TestMeshVirtualClock(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 14-node mesh for two slots of simulated time")
	}
	dir := t.TempDir()
	params := smallMeshParams(map[string]string{ParamSlots: "2", ParamRecord: "true", ParamClock: "virtual", ParamLinks: "true"})
	e := &Embedded{Scenario: Mesh.Name, Out: dir, Groups: []Group{{ID: GroupNodes, Instances: 14}}, Params: params, Bubble: inBubble(t)}
	r, runErr := runEmbeddedMesh(t, e)
	if runErr != nil || !r.Delivery.Complete {
		t.Fatalf("run: %v; incomplete: %v; problems %v", runErr, r.Delivery.Incomplete, r.Problems)
	}
	checkMeshRecording(t, dir, r)
	if r.MaxLagMs != 0 {
		t.Errorf("publish lag %.3f ms on the virtual clock: something waited on the machine", r.MaxLagMs)
	}
	if l := r.Latency[gossip.Attestation]; l == nil || l.Deliveries == 0 || l.P50Ms < 2 {
		t.Errorf("attestation latency over simulated links %+v", l)
	}
	for _, n := range r.Summaries() {
		if n.Clock != string(ClockVirtual) || n.Transport != TransportSimnet || n.TimeScale != 1 {
			t.Fatalf("node %s/%d: clock %q transport %q time scale %g", n.Group, n.Instance, n.Clock, n.Transport, n.TimeScale)
		}
		if p := n.Process; p == nil || p.SimulatedSeconds < 12 || p.WallPerSimulatedMinute() <= 0 {
			t.Fatalf("node %s/%d process %+v", n.Group, n.Instance, n.Process)
		}
	}
	p := r.Summaries()[0].Process
	t.Logf("%.1f s simulated in %.1f s wall (%.1f s per simulated minute), CPU %.1f s; attestation latency %+v",
		p.SimulatedSeconds, p.WallSeconds, p.WallPerSimulatedMinute(), p.CPUSeconds, r.Latency[gossip.Attestation])
}

// runEmbeddedMesh runs e and loads its mesh report; the run's own error is the caller's to
// judge.
func runEmbeddedMesh(t *testing.T, e *Embedded) (*analysis.MeshReport, error) {
	t.Helper()
	runErr := e.Run(context.Background())
	r, err := analysis.LoadMeshRun(e.Out)
	if err != nil {
		t.Fatalf("load: %v (run: %v)", err, runErr)
	}
	return r, runErr
}
