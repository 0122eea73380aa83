package runner

import (
	"flag"
	"fmt"
	"strings"
)

// Run is one embedded run that `streamsim run` makes from its flags.
type Run struct {
	// Name labels the run; with several runs it names the run's outputs directory.
	Name string
	// Params are the run's parameters (Testground strings) and Groups its groups.
	Params map[string]string
	Groups []Group
	// Seed, Codec and Bandwidth are what a run of a comparison (an A/B) varies: the
	// workload and topology seed, the codec spec and the links' rate ("" unshaped).
	Seed      int64
	Codec     string
	Bandwidth string
	// Parsed is every group's parameters once parsed and checked (Scenario.ParseGroups);
	// Embedded.Parsed takes it, so a run's parameters are parsed once.
	Parsed map[string]*Params
}

// RunFlags are a scenario's own flags of `streamsim run`, defined on the command's flag set
// by Scenario.Flags; after parsing, Runs turns them into the runs to make.
type RunFlags interface {
	// Runs returns the runs the flags ask for, given the parameters the common flags and
	// --set gave (a copy each run may change): one run, or several for a comparison. A bad
	// flag is an error naming it and what it accepts.
	Runs(params map[string]string) ([]Run, error)
}

// FlagParams are the common parameters `streamsim run` gives a flag of their own (--name,
// underscores as dashes: --time-scale for time_scale); every other parameter is set with
// --set name=value.
var FlagParams = []string{ParamSlots, ParamTimeScale, ParamClock, ParamProfile, ParamPayload, ParamSeed, ParamValidators, ParamRecord}

// FlagName is the flag of a parameter in `streamsim run`: --time-scale for time_scale.
func FlagName(param string) string { return strings.ReplaceAll(param, "_", "-") }

// FlagOf names the flag that sets a parameter for an error message: its own flag, the
// scenario's flag that sets it (when the scenario's RunFlags says so), or --set name.
func FlagOf(param string, f RunFlags) string {
	for _, p := range FlagParams {
		if p == param {
			return "--" + FlagName(param)
		}
	}
	if n, ok := f.(interface{ FlagOf(param string) string }); ok {
		if name := n.FlagOf(param); name != "" {
			return name
		}
	}
	return "--set " + param
}

// SingleRun is the RunFlags of a scenario that runs one group of a given size: --instances.
type SingleRun struct {
	Group     string
	Instances *int
}

// SingleRunFlags defines --instances for a scenario with one group.
func SingleRunFlags(group string, def int) func(fs *flag.FlagSet) RunFlags {
	return func(fs *flag.FlagSet) RunFlags {
		return &SingleRun{Group: group, Instances: fs.Int("instances", def, "instances in the group \""+group+"\"")}
	}
}

// Runs is the one run.
func (s *SingleRun) Runs(params map[string]string) ([]Run, error) {
	if *s.Instances < 1 {
		return nil, fmt.Errorf("--instances %d: want at least 1", *s.Instances)
	}
	return []Run{{Params: params, Groups: []Group{{ID: s.Group, Instances: *s.Instances}}}}, nil
}

// ParseGroups parses every group's parameters once (params with the group's own on top),
// checks them and the fault schedule's targets against the run's groups before any node
// starts, and returns them by group ID.
func (s *Scenario) ParseGroups(params map[string]string, groups []Group) (map[string]*Params, error) {
	out := map[string]*Params{}
	sizes := map[string]int{}
	total := 0
	for _, g := range groups {
		if g.Instances < 1 {
			return nil, fmt.Errorf("group %s: %d instances", g.ID, g.Instances)
		}
		sizes[g.ID] = g.Instances
		total += g.Instances
	}
	for _, g := range groups {
		p, err := s.ParseParams(MergeParams(params, g.Params))
		if err == nil && s.Check != nil {
			err = s.Check(p, map[string]int{g.ID: g.Instances})
		}
		if err == nil {
			err = CheckFaultTargets(p.Faults, sizes) // fault targets name instances of this run
		}
		if err != nil {
			return nil, fmt.Errorf("group %s: %w", g.ID, err)
		}
		out[g.ID] = p
	}
	if total < s.MinInstances {
		return nil, fmt.Errorf("%s needs at least %d instances, have %d", s.Name, s.MinInstances, total)
	}
	return out, nil
}

// MergeParams is a copy of base with over's values on top.
func MergeParams(base, over map[string]string) map[string]string {
	p := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		p[k] = v
	}
	for k, v := range over {
		p[k] = v
	}
	return p
}
