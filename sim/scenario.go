package sim

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"strings"
	gosync "sync"

	"github.com/testground/sdk-go/run"
	"github.com/testground/sdk-go/runtime"

	"github.com/streamsim/streamsim/link"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/topology"
)

// Scenario is one test case: its parameters, how Testground groups map to roles, its topology,
// and who publishes what. The instance lifecycle around it (address exchange, barriers,
// failure announcements, publishing on the schedule, receiving and counting, outputs) is
// shared; a new scenario is a value of this type in its own file, registered in init.
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
	// the typed value Check, Plan, Link and NodeOptions read back as p.Own; a bad value is a
	// ParamError naming it. Nil: the scenario reads p.Values itself.
	Parse func(p *Params) (any, error)
	// Check validates the parameters against the run's groups (group ID → instance count),
	// before any node starts.
	Check func(p *Params, groups map[string]int) error
	// Plan builds the topology from the members the address exchange announced; every
	// instance calls it with the same members and gets the same plan.
	Plan func(p *Params, members []topology.Member) (*topology.Plan, error)
	// Receiver tells whether a member checks what it receives against what was published
	// to its topics (hub-leaves: the leaves; a mesh: every node).
	Receiver func(n *topology.Node) bool
	// FlowControl: whether nodes pause reading while their outbound queues are full (see
	// WithFlowControl). Off where gossip timing is the result.
	FlowControl bool
	// RecordMessages: every node writes the time it published or first received each message
	// (messages.bin), for delivery latency in reports.
	RecordMessages bool
	// BandwidthCounter: every host keeps go-libp2p's BandwidthCounter (the summary's
	// bandwidth), for reports that cross-check wire bytes against it; it costs meter updates
	// on every stream read and write.
	BandwidthCounter bool
	// NodeOptions are extra node options from the scenario's parameters.
	NodeOptions func(p *Params) ([]Option, error)
	// Link returns the shaped link of the instance seq of group (of instances in all), or nil
	// for an unshaped host. It runs before the address exchange, so it can depend only on
	// the parameters and the instance's position.
	Link func(p *Params, group string, seq, instances int) (*link.Link, error)
	// Body, when set, is the whole of an instance in place of the shared lifecycle: a
	// scenario whose instance runs a network of its own in one process (the neighbourhood:
	// real nodes and their boundary peers). It gets the parsed parameters, the instance's
	// outputs directory and its summary to fill; the lifecycle writes the summary (with the
	// body's error as its failure) and bounds the body by the instance's time budget.
	Body func(ctx context.Context, p *Params, outputs string, summary *result.NodeSummary) error
	// VirtualClock: the scenario's embedded runs can take clock virtual (clock.go): every
	// wait of its layers is durable in a synctest bubble and its hosts are built through the
	// instance's network. Others refuse it before anything starts.
	VirtualClock bool
	// EmbeddedClock is the clock of its embedded runs when param clock is empty (default
	// real); instances that are processes (Testground, Kubernetes) always take real then.
	EmbeddedClock Clock
	// Report names the report kind (package analysis) its outputs are read with; "" is the
	// generic per-node report.
	Report string
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
	if p.Own, err = s.Parse(p); err != nil {
		return nil, err
	}
	return p, nil
}

// TestCase is the scenario as a Testground test case.
func (s *Scenario) TestCase() run.InitializedTestCaseFn {
	return func(env *runtime.RunEnv, ic *run.InitContext) error { return runInstance(s, env, ic, nil) }
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
