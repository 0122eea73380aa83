package hubleaves

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/sim/runner"

	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/workload"
)

// Group IDs of hub-leaves (topology owns the group → role mapping): publishers, the hub;
// every other group is a leaf group.
const (
	GroupPublishers = topology.GroupPublishers
	GroupHub        = topology.GroupHub
)

// ParamPublishers is hub-leaves' own parameter: the size of the publishers group.
const ParamPublishers = "publishers"

// HubLeaves is the proposal's live check: publishers stand in for the network and publish the
// workload through one hub (message i of the run by publisher i mod publishers); leaves are
// direct peers of the hub only, each on its group's codec, so each receives every message of
// its profile and no gossip control; a leaf fails when what it received differs from what was
// published. Every node records when it published or first received each message, for each
// leaf's delivery latency. Flow control is on: a machine that cannot keep up shows lag, not drops.
var HubLeaves = &runner.Scenario{
	Name:    "hub-leaves",
	Summary: "the proposal's live check: publishers → hub → direct-peer leaves, one per codec; parity and bytes per leaf",
	Params: []runner.Param{
		{Name: ParamPublishers, Type: "int", Unit: "instances", Default: "4", Desc: "number of instances in the publishers group (checked against the group; the workload is split across them)"},
	},
	MinInstances: 3, MaxInstances: 1000, DefaultInstances: 7,
	Role:  topology.HubLeavesRole,
	Parse: func(p *runner.Params) (any, error) { return p.Int(ParamPublishers, 1) },
	Check: func(p *runner.Params, groups map[string]int) error {
		pubs := runner.Own[int](p)
		if n, ok := groups[GroupPublishers]; ok && n != pubs {
			return fmt.Errorf("param %s is %d but group %s has %d instances", ParamPublishers, pubs, GroupPublishers, n)
		}
		return nil
	},
	Run: runner.NodeLifecycle(runner.NodeSpec{
		Plan: func(p *runner.Params, members []topology.Member) (*topology.Plan, error) {
			return Plan(members, p.Profile, workload.DefaultParams().ForkDigest)
		},
		Receiver:    func(n *topology.Node) bool { return n.Role == topology.RoleLeaf },
		FlowControl: true,
		// Message times give each leaf's delivery latency (report/latency.go).
		RecordMessages: true,
	}),
	Report: ReportKind,
	Flags:  hubLeavesFlags,
	// The leaf report cross-checks each leaf's wire bytes against it.
	BandwidthCounter: true,
}

// ReportKind is the report the scenario's outputs are read with: the live check's (package
// report beside it registers it).
const ReportKind = result.LiveCheckKind

// hubLeavesRun is hub-leaves' part of `streamsim run`: one leaf per codec, the publishers.
type hubLeavesRun struct {
	leaves     *string
	publishers *int
}

func hubLeavesFlags(fs *flag.FlagSet) runner.RunFlags {
	return &hubLeavesRun{
		leaves:     fs.String("leaves", "plain,snappy-stream,zstd", "leaf codec specs, comma-separated, one leaf each; <spec>*<count> is count leaves of one codec (e.g. plain,snappy-stream*200)"),
		publishers: fs.Int("publishers", 4, "publisher nodes standing in for the network"),
	}
}

func (f *hubLeavesRun) Runs(params map[string]string) ([]runner.Run, error) {
	leaves, err := ParseLeaves(*f.leaves)
	if err != nil {
		return nil, fmt.Errorf("--leaves: %w", err)
	}
	if *f.publishers < 1 {
		return nil, fmt.Errorf("--publishers %d: want at least 1", *f.publishers)
	}
	params[ParamPublishers] = strconv.Itoa(*f.publishers)
	return []runner.Run{{Params: params, Groups: LeafGroups(*f.publishers, leaves)}}, nil
}

// FlagOf: the publishers parameter is --publishers.
func (f *hubLeavesRun) FlagOf(param string) string {
	if param == ParamPublishers {
		return "--publishers"
	}
	return ""
}

func init() { runner.Register(HubLeaves) }

// LeafGroup is the group ID of the i-th hub-leaves leaf with codec spec.
func LeafGroup(i int, spec codec.Spec) string {
	name := strings.NewReplacer(":", "-", "/", "-").Replace(strings.ToLower(spec.String()))
	return fmt.Sprintf("leaf-%d-%s", i, name)
}

// HubLeavesGroups returns the groups of a hub-leaves run: publishers, the hub, one leaf per
// codec.
func HubLeavesGroups(publishers int, leaves []codec.Spec) []runner.Group {
	ls := make([]Leaves, len(leaves))
	for i, l := range leaves {
		ls[i] = Leaves{Codec: l, Count: 1}
	}
	return LeafGroups(publishers, ls)
}

// LeafGroups returns the groups of a hub-leaves run: publishers, the hub, and per entry of
// leaves one group of Count leaves on its codec (leaf-<i>-<codec>, instances 0..Count-1).
func LeafGroups(publishers int, leaves []Leaves) []runner.Group {
	gs := []runner.Group{{ID: GroupPublishers, Instances: publishers}, {ID: GroupHub, Instances: 1}}
	for i, l := range leaves {
		gs = append(gs, runner.Group{ID: LeafGroup(i, l.Codec), Instances: l.Count, Params: map[string]string{runner.ParamCodec: l.Codec.String()}})
	}
	return gs
}

// Leaves is one entry of --leaves: Count leaves on one codec.
type Leaves struct {
	Codec codec.Spec
	Count int
}

// LeavesForm is the syntax of --leaves, for its errors.
const LeavesForm = "comma-separated codec specs, each once or as <spec>*<count> for count leaves of that codec (count a whole number from 1), e.g. plain,snappy-stream*200 or snappy-stream:1MiB*100"

// ParseLeaves parses --leaves: comma-separated codec specs, one leaf each, or <spec>*<count>
// for count leaves on that codec ("plain,snappy-stream*200", "snappy-stream:1MiB*100").
func ParseLeaves(list string) ([]Leaves, error) {
	var out []Leaves
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		spec, count := f, 1
		if s, c, ok := strings.Cut(f, "*"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(c))
			if err != nil || n < 1 {
				return nil, fmt.Errorf("%q: leaf count %q is not a whole number from 1 (allowed: %s)", f, c, LeavesForm)
			}
			spec, count = strings.TrimSpace(s), n
		}
		c, err := codec.Parse(spec)
		if err != nil {
			return nil, err
		}
		out = append(out, Leaves{Codec: c, Count: count})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no codec specs in %q (allowed: %s)", list, LeavesForm)
	}
	return out, nil
}
