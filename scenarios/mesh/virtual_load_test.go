package mesh_test

import (
	"os/exec"
	"runtime"
	"strconv"
	"testing"

	"github.com/streamsim/streamsim/internal/longtest"
	"github.com/streamsim/streamsim/scenarios/mesh"

	"github.com/streamsim/streamsim/sim/runner"

	"github.com/streamsim/streamsim/sim/network"

	"github.com/streamsim/streamsim/topology"
)

// TestMeshTimeScaleInvariance's question on the virtual clock, where there is no time scale:
// the same mesh (20 nodes of degree 8 around the observed node, 5 slots) gives the observed
// node the same copies and control per message whatever else the machine runs. Three seeds on
// the machine as it is give the spread; the first seed again, beside one busy process per core
// (shell loops, as stress(1) would), must fall within it, by TestMeshTimeScaleInvariance's
// rule. A long test (CI's long step runs it); docs/overhead.md has the figures.
func TestMeshVirtualClockLoadIndependence(t *testing.T) {
	longtest.Skip(t, "four 20-node meshes for 5 simulated slots each, the last beside busy processes")
	run := func(seed int) map[string]float64 {
		params := map[string]string{runner.ParamSlots: "5", runner.ParamClock: string(network.ClockVirtual), runner.ParamValidators: "32768",
			runner.ParamSeed: strconv.Itoa(seed), topology.ParamTopologySeed: strconv.Itoa(seed),
			"observed_peers": "19", "degree": "8", "mix": "default:0.5,all-subnets:0.3,supernode:0.2"}
		e := &runner.Embedded{Scenario: mesh.Mesh.Name, Out: t.TempDir(), Groups: []runner.Group{{ID: mesh.GroupNodes, Instances: 20}}, Params: params, Bubble: inBubble(t)}
		r, err := runEmbeddedMesh(t, e)
		if err != nil || !r.Delivery.Complete || r.MaxLagMs != 0 {
			t.Fatalf("seed %d: %v; incomplete %v; lag %.3f ms; problems %v", seed, err, r.Delivery.Incomplete, r.MaxLagMs, r.Problems)
		}
		f := dilationFigures(r)
		p := r.Process
		t.Logf("seed %d: %s (%.0f s simulated in %.1f s wall, CPU %.1f s)", seed, fmtFigures(f), p.SimulatedSeconds, p.WallSeconds, p.CPUSeconds)
		return f
	}
	seeds := []int{11, 12, 13}
	lo, hi := map[string]float64{}, map[string]float64{}
	for i, s := range seeds {
		for k, v := range run(s) {
			if i == 0 || v < lo[k] {
				lo[k] = v
			}
			if i == 0 || v > hi[k] {
				hi[k] = v
			}
		}
	}
	stop := busyProcesses(t, runtime.NumCPU())
	loaded := run(seeds[0])
	stop()
	for k, v := range loaded {
		w := hi[k] - lo[k]
		if v < lo[k]-w/2-0.01 || v > hi[k]+w/2+0.01 {
			t.Errorf("%s beside busy processes: %.4f, outside the seeds' %.4f..%.4f on the machine as it was", k, v, lo[k], hi[k])
		}
	}
}

// busyProcesses starts n processes that each keep a core busy; the returned func ends them.
func busyProcesses(t *testing.T, n int) func() {
	var cmds []*exec.Cmd
	for range n {
		c := exec.Command("sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			t.Fatalf("busy process: %v", err)
		}
		cmds = append(cmds, c)
	}
	stop := func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
		cmds = nil
	}
	t.Cleanup(stop)
	return stop
}
