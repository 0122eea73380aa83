package mesh_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/streamsim/streamsim/internal/longtest"
	"github.com/streamsim/streamsim/sim/runner"

	"github.com/streamsim/streamsim/analysis"
)

// The same fault kinds in a small mesh (14 nodes, half on snappy-stream): every message at
// every node is received once or missing with a reason, and the damaged links come back.
func TestChurnMesh(t *testing.T) {
	longtest.Skip(t, "a mesh under churn on the real clock")
	if testing.Short() {
		t.Skip("runs a 14-node mesh with faults")
	}
	dir := t.TempDir()
	if d := os.Getenv("CHURN_MESH_DIR"); d != "" {
		dir = d
	}
	schedule := "0.4:disconnect:nodes/3:0.3, 1:reset:nodes/5, 1.5:garbage:nodes/7, 2:rogue:nodes/4, 2.2:slow:nodes/2:0.5"
	r, runErr := runMesh(t, dir, 14, smallMeshParams(map[string]string{runner.ParamSlots: "3", runner.ParamFaults: schedule}), 4*time.Minute)
	var table strings.Builder
	analysis.WriteFaultAccounting(&table, r.Faults)
	t.Log("\n" + table.String())
	if runErr != nil || !r.OK || r.Faults == nil || !r.Faults.OK {
		t.Fatalf("run: %v; problems %v", runErr, r.Problems)
	}
	for _, f := range r.Faults.Faults {
		if !f.Applied {
			t.Errorf("fault %s at %s not applied: %s", f.Spec, f.Node, f.Note)
		}
	}
	var outages int
	for _, ra := range r.Faults.Receivers {
		outages += len(ra.Outages)
	}
	if outages == 0 {
		t.Error("no outages recorded")
	}
}
