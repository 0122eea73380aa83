package mesh

import (
	"strconv"
	"strings"

	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/sim/network"
	"github.com/streamsim/streamsim/sim/runner"

	"github.com/streamsim/streamsim/link"
	"github.com/streamsim/streamsim/sim/node"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/workload"
)

// GroupNodes is the mesh scenario's one group.
const GroupNodes = "nodes"

// ParamQueue is the mesh's pubsub queue size parameter.
const ParamQueue = "queue"

// ParamLinks turns the mesh's shaped links on.
const ParamLinks = "links"

// DefaultMeshQueue is the mesh's default queue: see ParamQueue's description. Measured: at
// 0.25× with 1000 the observed node's link to the one other all-subnets node dropped 12 734
// RPCs and delivery was incomplete; with 30 000 nothing was lost, and in an 8-slot run at 0.5×
// that queue peaked at 14 920 RPCs.
const DefaultMeshQueue = 30000

// meshParamNames are the mesh's own parameters, owned and parsed by topology.ParseMeshParams.
var meshParamNames = []string{
	topology.ParamTopologySeed, topology.ParamDegree, topology.ParamObservedPeers, topology.ParamObservedClient,
	topology.ParamMix, topology.ParamClients, topology.ParamCompressedShare,
}

// Mesh is a real GossipSub mesh with control traffic: every instance is a node of a seeded
// random graph (topology.Mesh): one observed all-subnets node with about 45 peers like the
// recorded one, the others drawn from a population mix (default nodes, all-subnets nodes,
// supernodes) and a client mix (each client's GossipSub parameters). Every message of the
// workload is published by a seeded origin node; every node checks that it received every
// message of its topics exactly once, and records when it published or first received each
// message, for delivery latency. A share of the nodes (compressed_share) offers the codec;
// the rest speak plain, so mixed meshes go through the plain fallback. Flow control is off:
// gossip timing is a result here, and a machine that cannot keep up says so through lag and
// its CPU use.
var Mesh = &runner.Scenario{
	Name:    "mesh",
	Summary: "a seeded GossipSub mesh with control traffic around an observed all-subnets node; bytes by category and control kind, copies, completeness, latency",
	Params:  meshParams(),
	// The observed node needs peers, and its topics subscribers among them.
	MinInstances: 3, MaxInstances: 1000, DefaultInstances: topology.DefaultMeshNodes,
	Role: func(string) topology.Role { return topology.RoleNode },
	// The topology is checked with the group's size before any node starts (an impossible
	// one names the parameter to change).
	Parse: parseMesh,
	Check: func(p *runner.Params, groups map[string]int) error {
		if n := groups[GroupNodes]; n > 0 {
			_, err := Plan(meshMembers(n), meshOf(p).topology)
			return err
		}
		return nil
	},
	Run:          runner.NodeLifecycle(meshNodes),
	Report:       ReportKind,
	VirtualClock: true,
	// Measured (docs/overhead.md): the default form on the virtual clock took 36 s of wall
	// against 45 s on the real clock at 0.5× (which saturated the machine and ran 359 ms
	// late), for 3.0× the CPU; its figures do not depend on the machine keeping up.
	EmbeddedClock: network.ClockVirtual,
	Flags:         meshFlags,
}

// ReportKind is the report the scenario's outputs are read with (package report beside it
// registers it).
const ReportKind = result.GossipMeshKind

// meshNodes is the mesh's node lifecycle: every node a receiver of its topics, message times
// recorded, links by the instance's position.
var meshNodes = runner.NodeSpec{
	Plan: func(p *runner.Params, members []topology.Member) (*topology.Plan, error) {
		return Plan(members, meshOf(p).topology)
	},
	Receiver:       func(n *topology.Node) bool { return len(n.Topics) > 0 },
	FlowControl:    false,
	RecordMessages: true,
	Link:           meshLink,
	NodeOptions: func(p *runner.Params) ([]node.Option, error) {
		c := meshOf(p)
		return []node.Option{node.WithQueueSize(c.queue), node.WithValidationDelay(c.validation)}, nil
	},
}

func init() { runner.Register(Mesh) }

// meshParams declares the mesh's own parameters with topology's defaults.
func meshParams() []runner.Param {
	d := topology.DefaultMeshParams()
	return []runner.Param{
		{Name: topology.ParamTopologySeed, Type: "int", Unit: "", Default: strconv.FormatInt(d.Seed, 10), Desc: "seed of the graph and of the nodes' kinds, clients and codecs (messages and their origins follow param seed)"},
		{Name: topology.ParamDegree, Type: "int", Unit: "peers", Default: strconv.Itoa(d.Degree), Desc: "target peers per ordinary node"},
		{Name: topology.ParamObservedPeers, Type: "int", Unit: "peers", Default: strconv.Itoa(d.ObservedPeers), Desc: "peers of the observed all-subnets node (the recorded node had about 45)"},
		{Name: topology.ParamObservedClient, Type: "string", Unit: "", Default: d.ObservedClient, Desc: "client profile of the observed node: " + strings.Join(topology.ClientNames, ", ")},
		{Name: topology.ParamMix, Type: "string", Unit: "", Default: topology.FormatShares(d.Mix, topology.MixKinds), Desc: "population shares of the other nodes: " + strings.Join(topology.MixKinds, ", ") + " (kind:share, comma-separated, summing to 1)"},
		{Name: topology.ParamClients, Type: "string", Unit: "", Default: topology.FormatShares(d.Clients, topology.ClientNames), Desc: "client shares (client:share, comma-separated, summing to 1): " + strings.Join(topology.ClientNames, ", ")},
		{Name: ParamQueue, Type: "int", Unit: "RPCs", Default: strconv.Itoa(DefaultMeshQueue), Desc: "pubsub's per-peer outbound queue (and validation queue); a full queue drops RPCs. hub-leaves uses 1000 as go-libp2p-pubsub clients configure; in one process on two cores the link between two all-subnets nodes cannot drain the attestation burst through 1000 slots, so the mesh default keeps every message and the report flags queues that grew past 1000 (latency on those links then reflects this machine)"},
		{Name: ParamLinks, Type: "bool", Unit: "", Default: "false", Desc: "true: every node's TCP connections go through a shaped link (package link): uplink and downlink at its class's rate and the one-way latency between the two nodes' regions (gossipsub-interop's eight regions, drawn by topology_seed); needs time_scale 1, as rates and latencies are real time"},
		{Name: runner.ParamOrdinaryBandwidth, Type: "string", Unit: "bit/s", Default: runner.DefaultOrdinaryBandwidth, Desc: "with links: uplink and downlink of every node but supernodes (e.g. 10Mbit, 50Mbit, 1Gbit)"},
		{Name: runner.ParamSupernodeBandwidth, Type: "string", Unit: "bit/s", Default: runner.DefaultSupernodeBandwidth, Desc: "with links: uplink and downlink of supernodes (the mix's supernode kind)"},
		{Name: runner.ParamValidationDelay, Type: "string", Unit: "", Default: "off", Desc: "seeded validation delay per category before a node forwards (category:min-max, comma-separated, e.g. " + runner.DefaultValidationDelay + "; off: none, as the mesh's published figures ran; validation.go cites the figures)"},
		{Name: topology.ParamCompressedShare, Type: "float", Unit: "", Default: strconv.FormatFloat(d.CompressedShare, 'g', -1, 64), Desc: "share of nodes offering the codec param's compressed protocol (0..1); the rest speak plain"},
	}
}

// meshConfig is the mesh's own parameters, parsed once (Scenario.Parse).
type meshConfig struct {
	topology topology.MeshParams
	queue    int
	// links: shaped links, with the ordinary nodes' and supernodes' classes.
	links   bool
	classes [2]link.Class
	// validation: per-category validation delays (validation.go).
	validation node.ValidationDelays
}

// meshOf is a mesh instance's parsed parameters.
func meshOf(p *runner.Params) *meshConfig { return runner.Own[*meshConfig](p) }

// parseMesh parses the mesh's own parameters: the graph's through topology (with the codec
// already parsed), the queue and the links.
func parseMesh(p *runner.Params) (any, error) {
	c := &meshConfig{}
	m := map[string]string{topology.ParamCodec: p.Values[runner.ParamCodec]}
	for _, k := range meshParamNames {
		m[k] = p.Values[k]
	}
	var err error
	if c.topology, err = topology.ParseMeshParams(m); err != nil {
		return nil, err
	}
	c.topology.ForkDigest = workload.DefaultParams().ForkDigest
	if c.queue, err = p.Int(ParamQueue, 1); err != nil {
		return nil, err
	}
	if c.validation, err = runner.ParseValidationDelays(p.Values[runner.ParamValidationDelay]); err != nil {
		return nil, err
	}
	if c.links, err = runner.ParseBool(ParamLinks, p.Values[ParamLinks]); err != nil || !c.links {
		return c, err
	}
	if p.TimeScale != 1 {
		return nil, runner.ParamErrorf(ParamLinks, "shaped links need %s 1 (rates and latencies are real time), not %g", runner.ParamTimeScale, p.TimeScale)
	}
	if c.classes, err = runner.ParseBandwidthClasses(p.Values[runner.ParamOrdinaryBandwidth], p.Values[runner.ParamSupernodeBandwidth]); err != nil {
		return nil, err
	}
	return c, nil
}

// meshMembers are the members of a mesh of n nodes, before the address exchange.
func meshMembers(n int) []topology.Member {
	members := make([]topology.Member, n)
	for i := range members {
		members[i] = topology.Member{Group: GroupNodes, Instance: i, Role: topology.RoleNode}
	}
	return members
}

// meshLink is the shaped link of mesh node seq: its region drawn by the topology seed (as
// gossipsub-interop draws them), its class from its population kind (supernodes fast, every
// other node ordinary). Every instance derives the same from the parameters alone.
func meshLink(p *runner.Params, _ string, seq, instances int) (*link.Link, error) {
	c := meshOf(p)
	if !c.links {
		return nil, nil
	}
	plan, err := Plan(meshMembers(instances), c.topology)
	if err != nil {
		return nil, err
	}
	regions := link.DefaultRegions()
	shapes, err := link.Assign(c.topology.Seed, instances, regions, link.DefaultClasses())
	if err != nil {
		return nil, err
	}
	cl := c.classes[0]
	if plan.Nodes[seq].Kind == topology.KindSupernode {
		cl = c.classes[1]
	}
	shape := link.Shape{Region: shapes[seq].Region, Class: cl.Name, UpBitsPerSec: cl.UpBitsPerSec, DownBitsPerSec: cl.DownBitsPerSec}
	return link.New(shape, regions)
}
