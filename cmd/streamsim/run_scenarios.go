package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/streamsim/streamsim/sim"
)

// scenarioFlags are the run command's flags for scenarios other than hub-leaves: how their
// groups are built and how their reports are printed.
type scenarioFlags struct {
	nodes *int
}

func registerScenarioFlags(fs *flag.FlagSet) *scenarioFlags {
	return &scenarioFlags{
		nodes: fs.Int("nodes", 48, "mesh: nodes in the mesh (one group, \"nodes\")"),
	}
}

// groups returns the run's groups for scenario sc.
func (f *scenarioFlags) groups(sc *sim.Scenario, params map[string]string) ([]sim.Group, error) {
	return nil, fmt.Errorf("--scenario %s: the run command cannot build its groups", sc.Name)
}

// report prints scenario sc's report of the run in dir.
func (f *scenarioFlags) report(sc *sim.Scenario, dir string, runErr error, asJSON bool, started time.Time) error {
	return fmt.Errorf("--scenario %s: no report", sc.Name)
}
