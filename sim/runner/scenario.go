package runner

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"strings"
	gosync "sync"

	"github.com/streamsim/streamsim/sim/network"

	"github.com/testground/sdk-go/run"
	"github.com/testground/sdk-go/runtime"

	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/topology"
)

// Scenario is one test case: its parameters, how Testground groups map to roles, and what
// an instance does. The runner parses the parameters once, builds the run's network and
// hands both to Run in an Env; a new scenario is a value of this type in its own folder
// (scenarios/<name>), listed in scenarios/all.
type Scenario struct {
	Name    string
	Summary string
	// Params are the scenario's own parameters; the common ones (commonParams) come first
	// in every scenario's declaration.
	Params []Param
	// Defaults overrides the common parameters' defaults for this scenario (slots, time_scale,
	// …), by name.
	Defaults map[string]string
	// Instances bounds the instance count (manifest.toml's instances).
	MinInstances, MaxInstances, DefaultInstances int
	// Role maps a group ID to a role.
	Role func(group string) topology.Role
	// Parse parses the scenario's own parameters (p.Values) once, after the common ones, into
	// the typed value its Run reads back with Own; a bad value is a ParamError naming it.
	// Nil: the scenario has no parameters of its own.
	Parse func(p *Params) (any, error)
	// Check validates the parameters against the run's groups (group ID → instance count),
	// before any node starts.
	Check func(p *Params, groups map[string]int) error
	// Run is one instance of the scenario: what it does with the run's network, within the
	// instance's time budget (ctx). NodeLifecycle is the Run of a scenario whose instances are
	// one node each (hub-leaves, mesh); a scenario that runs a network of its own in one
	// instance ends with Env.Finish.
	Run func(ctx context.Context, e *Env) error
	// BandwidthCounter: the run's real-clock hosts keep go-libp2p's BandwidthCounter (the
	// summary's bandwidth), for reports that cross-check wire bytes against it; it costs
	// meter updates on every stream read and write.
	BandwidthCounter bool
	// VirtualClock: the scenario's embedded runs can take clock virtual: every wait of its
	// layers is durable in a synctest bubble and its hosts come from the run's network.
	// Others refuse it before anything starts.
	VirtualClock bool
	// EmbeddedClock is the clock of its embedded runs when param clock is empty (default
	// real); instances that are processes (Testground, Kubernetes) always take real then.
	EmbeddedClock network.Clock
	// Report is the report kind its outputs are read with (package analysis registers the
	// reader under the same constant); "" is the generic per-node report.
	Report result.ReportKind
	// Flags defines the scenario's own flags of `streamsim run` (its groups, a comparison)
	// and returns how they make runs; SingleRunFlags does for a scenario with one group.
	Flags func(fs *flag.FlagSet) RunFlags
}

// Declared returns every parameter the scenario reads: the common ones, then its own.
func (s *Scenario) Declared() []Param {
	out := append([]Param(nil), commonParams...)
	for i := range out {
		if d, ok := s.Defaults[out[i].Name]; ok {
			out[i].Default = d
		}
	}
	return append(out, s.Params...)
}

// ParseParams parses an instance's parameters for this scenario.
func (s *Scenario) ParseParams(m map[string]string) (*Params, error) {
	p, err := ParseParams(s.Declared(), m)
	if err == nil {
		err = s.checkClock(p)
	}
	if err != nil {
		return nil, err
	}
	if s.Parse == nil {
		return p, nil
	}
	if p.own, err = s.Parse(p); err != nil {
		return nil, err
	}
	return p, nil
}

// TestCase is the scenario as a Testground test case.
func (s *Scenario) TestCase() run.InitializedTestCaseFn {
	return func(env *runtime.RunEnv, ic *run.InitContext) error { return runProcessInstance(s, env, ic) }
}

var registry = struct {
	gosync.Mutex
	m map[string]*Scenario
}{m: map[string]*Scenario{}}

// Register adds a scenario; a second scenario of the same name panics (a programming error).
func Register(s *Scenario) {
	registry.Lock()
	defer registry.Unlock()
	if registry.m[s.Name] != nil {
		panic("sim: scenario " + s.Name + " registered twice")
	}
	registry.m[s.Name] = s
}

// Lookup returns a registered scenario, or an error listing the registered ones.
func Lookup(name string) (*Scenario, error) {
	registry.Lock()
	defer registry.Unlock()
	if s := registry.m[name]; s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("unknown scenario %q (scenarios: %s)", name, strings.Join(scenarioNames(), ", "))
}

// Scenarios returns every registered scenario, by name.
func Scenarios() []*Scenario {
	registry.Lock()
	defer registry.Unlock()
	var out []*Scenario
	for _, n := range scenarioNames() {
		out = append(out, registry.m[n])
	}
	return out
}

func scenarioNames() []string {
	names := make([]string, 0, len(registry.m))
	for n := range registry.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
