package mesh

import (
	"errors"
	"testing"
	"time"

	"github.com/streamsim/streamsim/sim/runner"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/sim/node"
)

// The mesh takes validation_delay; a bad value is refused before any node starts, naming it.
func TestMeshValidationDelayParam(t *testing.T) {
	p, err := Mesh.ParseParams(map[string]string{runner.ParamValidationDelay: runner.DefaultValidationDelay})
	if err != nil {
		t.Fatal(err)
	}
	if err := Mesh.Check(p, map[string]int{GroupNodes: 48}); err != nil {
		t.Fatalf("default delays refused: %v", err)
	}
	opts, err := meshNodes.NodeOptions(p)
	if err != nil || len(opts) != 2 {
		t.Fatalf("node options %d, %v", len(opts), err)
	}
	if v := meshOf(p).validation; v[gossip.Aggregate] != (node.DelayRange{Min: 5 * time.Millisecond, Max: 20 * time.Millisecond}) {
		t.Errorf("mesh node validation %v", v)
	}
	var pe *runner.ParamError
	if _, err := Mesh.ParseParams(map[string]string{runner.ParamValidationDelay: "block:50ms-10ms"}); !errors.As(err, &pe) || pe.Name != runner.ParamValidationDelay {
		t.Errorf("bad delay: %v", err)
	}
}
