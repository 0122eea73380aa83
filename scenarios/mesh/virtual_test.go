package mesh_test

import (
	"context"

	"github.com/streamsim/streamsim/internal/longtest"
	"github.com/streamsim/streamsim/scenarios/mesh"
	"github.com/streamsim/streamsim/scenarios/mesh/report"

	"github.com/streamsim/streamsim/sim/runner"

	"github.com/streamsim/streamsim/sim/network"

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
		t.Skip("runs a 14-node mesh for two slots of simulated time on each virtual transport")
	}
	for _, vnet := range []network.VirtualTransport{network.VirtualQUIC, network.VirtualMem} {
		t.Run(string(vnet), func(t *testing.T) {
			if vnet == network.VirtualQUIC {
				longtest.Skip(t, "the same run over QUIC on simnet")
			}
			testMeshVirtualClock(t, vnet)
		})
	}
}

func testMeshVirtualClock(t *testing.T, vnet network.VirtualTransport) {
	dir := t.TempDir()
	params := smallMeshParams(map[string]string{runner.ParamSlots: "2", runner.ParamRecord: "true", runner.ParamClock: "virtual", mesh.ParamLinks: "true", runner.ParamVNet: string(vnet)})
	want := map[network.VirtualTransport]string{network.VirtualQUIC: network.TransportSimnet, network.VirtualMem: network.TransportMem}[vnet]
	e := &runner.Embedded{Scenario: mesh.Mesh.Name, Out: dir, Groups: []runner.Group{{ID: mesh.GroupNodes, Instances: 14}}, Params: params, Bubble: inBubble(t)}
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
		if n.Clock != string(network.ClockVirtual) || n.Transport != want || n.TimeScale != 1 {
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
func runEmbeddedMesh(t *testing.T, e *runner.Embedded) (*report.MeshReport, error) {
	t.Helper()
	runErr := e.Run(context.Background())
	r, err := report.LoadMeshRun(e.Out)
	if err != nil {
		t.Fatalf("load: %v (run: %v)", err, runErr)
	}
	return r, runErr
}

// Codec CPU on the virtual clock: over unshaped simulated links (no latency, 100 Gbit/s) an
// attestation (one small frame per hop) reaches half its subscribers in no simulated time when
// codecs are free (codec_cpu false), and takes time when each frame's measured encode and
// decode CPU is charged; either way the codec time the meters report is the measured thread
// CPU, not the bubble's clock (which reads 0). Larger messages are left out: their delivery
// also waits on QUIC's acknowledgement timers, which vary between runs by more than a codec's
// microseconds.
func TestVirtualClockChargesCodecCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two 8-node meshes for a slot of simulated time")
	}
	latency := map[string]float64{}
	for _, charge := range []string{"false", "true"} {
		params := smallMeshParams(map[string]string{runner.ParamSlots: "1", runner.ParamClock: "virtual", runner.ParamCodecCPU: charge,
			"observed_peers": "7", "degree": "3", "compressed_share": "1"})
		e := &runner.Embedded{Scenario: mesh.Mesh.Name, Out: t.TempDir(), Groups: []runner.Group{{ID: mesh.GroupNodes, Instances: 8}}, Params: params, Bubble: inBubble(t)}
		r, runErr := runEmbeddedMesh(t, e)
		if runErr != nil || !r.Delivery.Complete {
			t.Fatalf("codec_cpu %s: run: %v; incomplete: %v; problems %v", charge, runErr, r.Delivery.Incomplete, r.Problems)
		}
		var codecNs int64
		for _, n := range r.Summaries() {
			for _, st := range n.Streams {
				codecNs += st.CodecStats.TimeNs
			}
		}
		if codecNs <= 0 {
			t.Errorf("codec_cpu %s: the meters report no codec time", charge)
		}
		l := r.Latency[gossip.Attestation]
		if l == nil || l.Deliveries == 0 {
			t.Fatalf("codec_cpu %s: attestation latency %+v", charge, l)
		}
		latency[charge] = l.P50Ms
		t.Logf("codec_cpu %s: codec time %.1f ms over all streams; attestation latency %+v", charge, float64(codecNs)/1e6, l)
	}
	if latency["false"] != 0 || !(latency["true"] > 0) {
		t.Errorf("attestation latency p50: %.4f ms with free codecs (want 0), %.4f ms with codec CPU charged (want more)", latency["false"], latency["true"])
	}
}

// TestChurnMesh's faults on the virtual clock (disconnect, reset mid-unit, garbage, a rogue
// stranger on the simulated network, a slow reader): each is applied, every message at every
// node is received once or missing with a reason, and simulated time keeps moving through
// the fault injection's waits on the stream locks.
func TestChurnMeshVirtualClock(t *testing.T) {
	longtest.Skip(t, "a mesh under churn on both virtual transports")
	if testing.Short() {
		t.Skip("runs a 14-node mesh with faults for three slots of simulated time on each virtual transport")
	}
	for _, vnet := range []network.VirtualTransport{network.VirtualQUIC, network.VirtualMem} {
		t.Run(string(vnet), func(t *testing.T) { testChurnMeshVirtualClock(t, vnet) })
	}
}

func testChurnMeshVirtualClock(t *testing.T, vnet network.VirtualTransport) {
	schedule := "0.4:disconnect:nodes/3:0.3, 1:reset:nodes/5, 1.5:garbage:nodes/7, 2:rogue:nodes/4, 2.2:slow:nodes/2:0.5"
	params := smallMeshParams(map[string]string{runner.ParamSlots: "3", runner.ParamFaults: schedule, runner.ParamClock: string(network.ClockVirtual), runner.ParamVNet: string(vnet)})
	e := &runner.Embedded{Scenario: mesh.Mesh.Name, Out: t.TempDir(), Groups: []runner.Group{{ID: mesh.GroupNodes, Instances: 14}}, Params: params, Bubble: inBubble(t)}
	r, runErr := runEmbeddedMesh(t, e)
	if runErr != nil || !r.OK || r.Faults == nil || !r.Faults.OK {
		t.Fatalf("run: %v; problems %v", runErr, r.Problems)
	}
	for _, f := range r.Faults.Faults {
		if !f.Applied {
			t.Errorf("fault %s at %s not applied: %s", f.Spec, f.Node, f.Note)
		}
	}
}
