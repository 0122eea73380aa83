package mesh

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/streamsim/streamsim/topology"

	"github.com/holiman/uint256"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/workload"
)

// Random streams of Mesh, one per decision.
const (
	streamKinds uint64 = iota + 1
	streamSubnets
	streamNodeIDs
	streamGraph
	streamDial
	streamClients
	streamCodecs
)

// Plan is the gossip-mesh topology: the observed node, and the other members drawn
// from the population and client mixes, in a seeded random graph.
//
//   - Kinds and clients are apportioned to the other nodes by largest remainder (so 48 nodes
//     get the mix as closely as whole nodes allow, and every name with a share gets at
//     least one node when there are enough) and shuffled by the seed. Default nodes'
//     subnet pairs are spread round the 64 subnets from a seeded offset, so 32 default nodes
//     cover every subnet once; custody columns follow workload.CustodyColumns of a seeded
//     node id.
//   - The observed node gets ObservedPeers peers drawn by the seed. Then, as clients
//     search peers by subnet, every node with no peer on one of its subnet topics gets one
//     (the least connected other subscriber). Then every node but the observed one gets
//     random peers up to Degree, and the subscribers of each subnet topic are joined into
//     one connected group, so a mesh on every topic can reach all its subscribers. Each
//     edge is dialled by one end, drawn by the seed.
//   - Every node waits for each neighbour's subscriptions on every topic the neighbour
//     subscribes to: its shared topics for mesh building, the others so that a publish on a
//     topic it does not subscribe to (fanout) reaches its subscribed neighbours from the
//     first message on.
//
// Plan fails, naming the parameter, when there are fewer than 2 members, a member is not a
// mesh node, Degree is not below the number of members, or the observed node subscribes to
// a topic no other node subscribes to (an impossible topology).
func Plan(members []topology.Member, p topology.MeshParams) (*topology.Plan, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	n := len(members)
	if n < 2 {
		return nil, fmt.Errorf("mesh needs at least 2 members, have %d", n)
	}
	for i, m := range members {
		if m.Role != topology.RoleNode {
			return nil, fmt.Errorf("mesh: member %d (%s/%d) has role %q, want %q", i, m.Group, m.Instance, m.Role, topology.RoleNode)
		}
	}
	if p.Degree >= n {
		return nil, fmt.Errorf("param %s: %d: want 1..%d (members − 1)", topology.ParamDegree, p.Degree, n-1)
	}
	if p.Observed >= n {
		return nil, fmt.Errorf("observed member %d: want 0..%d", p.Observed, n-1)
	}
	rng := func(stream uint64) *rand.Rand { return rand.New(rand.NewPCG(uint64(p.Seed), stream)) }
	obs := p.Observed
	others := make([]int, 0, n-1)
	for i := range n {
		if i != obs {
			others = append(others, i)
		}
	}

	plan := &topology.Plan{Nodes: make([]topology.Node, n), Observed: obs}
	kinds := topology.Apportion(p.Mix, topology.MixKinds, len(others))
	rng(streamKinds).Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	for k, i := range others {
		plan.Nodes[i].Kind = kinds[k]
	}
	plan.Nodes[obs].Kind = topology.KindObserved
	if err := assignTopics(plan, p, rng(streamSubnets), rng(streamNodeIDs)); err != nil {
		return nil, err
	}
	subs := subscribers(plan)
	for _, t := range plan.Nodes[obs].Topics {
		if len(subs[t]) < 2 {
			return nil, impossible(t, p, plan)
		}
	}

	g := newGraph(n)
	grng := rng(streamGraph)
	wantObs := min(p.ObservedPeers, n-1)
	plan.ObservedPeersCapped = p.ObservedPeers > n-1
	perm := grng.Perm(len(others))
	for _, k := range perm[:wantObs] {
		g.add(obs, others[k])
	}
	g.subnetSearch(plan, subs, obs, grng)
	g.fillDegree(others, p.Degree, grng)
	g.joinSubscribers(plan, subs, obs, grng)
	if c := g.components(nil); len(c) > 1 {
		return nil, fmt.Errorf("mesh graph is not connected (%d components): raise param %s", len(c), topology.ParamDegree)
	}

	drng := rng(streamDial)
	for u := range n {
		for _, v := range g.neighbours(u) {
			if v > u {
				if drng.IntN(2) == 0 {
					plan.Nodes[u].Dial = append(plan.Nodes[u].Dial, v)
				} else {
					plan.Nodes[v].Dial = append(plan.Nodes[v].Dial, u)
				}
			}
		}
	}
	for u := range n {
		nd := &plan.Nodes[u]
		nd.Role = topology.RoleNode
		nd.Peers = g.neighbours(u)
		slices.Sort(nd.Dial)
		nd.Publishes = u != obs
		nd.WaitFor = map[string][]int{}
		for _, v := range nd.Peers {
			for _, t := range plan.Nodes[v].Topics {
				nd.WaitFor[t] = append(nd.WaitFor[t], v)
			}
		}
	}

	observedClient, err := topology.ClientProfile(p.ObservedClient)
	if err != nil {
		return nil, err
	}
	plan.Nodes[obs].Client = observedClient
	clients := topology.Apportion(p.Clients, topology.ClientNames, len(others))
	rng(streamClients).Shuffle(len(clients), func(i, j int) { clients[i], clients[j] = clients[j], clients[i] })
	for k, i := range others {
		if plan.Nodes[i].Client, err = topology.ClientProfile(clients[k]); err != nil {
			return nil, err
		}
	}

	if compressed := int(math.Round(p.CompressedShare * float64(n))); compressed > 0 {
		plan.Nodes[obs].Codecs = []codec.Spec{p.Codec}
		crng := rng(streamCodecs)
		for _, k := range crng.Perm(len(others))[:compressed-1] {
			plan.Nodes[others[k]].Codecs = []codec.Spec{p.Codec}
		}
	}

	plan.DrawnOrigins(others, slices.Collect(maps.Keys(subs)))
	return plan, nil
}

// impossible explains an observed-node topic nobody else subscribes to.
func impossible(topic string, p topology.MeshParams, plan *topology.Plan) error {
	count := map[string]int{}
	for i, nd := range plan.Nodes {
		if i != plan.Observed {
			count[nd.Kind]++
		}
	}
	_, name, _ := gossip.ParseTopic(topic)
	return fmt.Errorf("impossible topology: the observed node subscribes to %s but no other node does "+
		"(param %s over %d other nodes gives %d %s, %d %s and %d %s nodes): raise the %s or %s share of param %s, or the number of nodes",
		name, topology.ParamMix, len(plan.Nodes)-1, count[topology.KindDefault], topology.KindDefault, count[topology.KindAllSubnets], topology.KindAllSubnets,
		count[topology.KindSupernode], topology.KindSupernode, topology.KindAllSubnets, topology.KindSupernode, topology.ParamMix)
}

// assignTopics fills every node's Topics from its kind.
func assignTopics(plan *topology.Plan, p topology.MeshParams, subnetRng, idRng *rand.Rand) error {
	fd := p.ForkDigest
	observed, err := workload.ParseProfile("all-subnets")
	if err != nil {
		return err
	}
	// The global topics every profile has: the workload's default profile without its
	// subnet topics.
	def, err := workload.ParseProfile("default")
	if err != nil {
		return err
	}
	var global []string
	for _, t := range def.Topics(fd) {
		if _, name, err := gossip.ParseTopic(t); err == nil && gossip.Subnet(name) < 0 {
			global = append(global, t)
		}
	}
	// Default nodes and supernodes take subnet pairs round the subnets.
	var defaults []int
	for i, nd := range plan.Nodes {
		if nd.Kind == topology.KindDefault || nd.Kind == topology.KindSupernode {
			defaults = append(defaults, i)
		}
	}
	offset := subnetRng.IntN(gossip.AttestationSubnets)
	subnetRng.Shuffle(len(defaults), func(i, j int) { defaults[i], defaults[j] = defaults[j], defaults[i] })
	first := map[int]int{}
	for k, i := range defaults {
		first[i] = (offset + 2*k) % gossip.AttestationSubnets
	}
	for i := range plan.Nodes {
		nd := &plan.Nodes[i]
		// A node id per node, drawn for all in index order, so a node's custody does not
		// depend on the others' kinds.
		var id [32]byte
		for k := 0; k < len(id); k += 8 {
			v := idRng.Uint64()
			for b := range 8 {
				id[k+b] = byte(v >> (8 * b))
			}
		}
		nodeID := new(uint256.Int).SetBytes32(id[:])
		var att, sync []int
		custody := 0
		switch nd.Kind {
		case topology.KindObserved:
			nd.Topics = observed.Topics(fd)
			continue
		case topology.KindSupernode:
			s := first[i]
			att, custody = []int{s, (s + 1) % gossip.AttestationSubnets}, gossip.DataColumnSubnets
		case topology.KindAllSubnets:
			att, sync, custody = topology.UpTo(gossip.AttestationSubnets), topology.UpTo(gossip.SyncCommitteeSubnets), 8
		case topology.KindDefault:
			s := first[i]
			att, custody = []int{s, (s + 1) % gossip.AttestationSubnets}, 4
		default:
			return fmt.Errorf("mesh: node %d has unknown kind %q", i, nd.Kind)
		}
		topics := slices.Clone(global)
		for _, s := range att {
			topics = append(topics, gossip.Topic(fd, gossip.AttestationTopic(s)))
		}
		for _, s := range sync {
			topics = append(topics, gossip.Topic(fd, gossip.SyncCommitteeTopic(s)))
		}
		for _, c := range workload.CustodyColumns(nodeID, custody) {
			topics = append(topics, gossip.Topic(fd, gossip.DataColumnTopic(c)))
		}
		slices.Sort(topics)
		nd.Topics = topics
	}
	return nil
}

// subscribers maps every topic to its subscribers, sorted.
func subscribers(plan *topology.Plan) map[string][]int {
	subs := map[string][]int{}
	for i, nd := range plan.Nodes {
		for _, t := range nd.Topics {
			subs[t] = append(subs[t], i)
		}
	}
	return subs
}

// isSubnetTopic tells subnet topics (attestation, sync committee, column) from the global
// ones every node subscribes to.
func isSubnetTopic(topic string) bool {
	_, name, err := gossip.ParseTopic(topic)
	return err == nil && gossip.Subnet(name) >= 0
}

// graph is an undirected simple graph on n nodes.
type graph struct {
	adj [][]bool
	deg []int
}

func newGraph(n int) *graph {
	g := &graph{adj: make([][]bool, n), deg: make([]int, n)}
	for i := range g.adj {
		g.adj[i] = make([]bool, n)
	}
	return g
}

func (g *graph) add(u, v int) {
	if u == v || g.adj[u][v] {
		return
	}
	g.adj[u][v], g.adj[v][u] = true, true
	g.deg[u]++
	g.deg[v]++
}

func (g *graph) neighbours(u int) []int {
	var out []int
	for v, ok := range g.adj[u] {
		if ok {
			out = append(out, v)
		}
	}
	return out
}

// fillDegree connects the nodes, in random order, to random nodes of the set below degree.
func (g *graph) fillDegree(nodes []int, degree int, rng *rand.Rand) {
	cands := make([]int, 0, len(nodes))
	for _, k := range rng.Perm(len(nodes)) {
		u := nodes[k]
		for g.deg[u] < degree {
			cands = cands[:0]
			for _, v := range nodes {
				if v != u && !g.adj[u][v] && g.deg[v] < degree {
					cands = append(cands, v)
				}
			}
			if len(cands) == 0 {
				break
			}
			g.add(u, cands[rng.IntN(len(cands))])
		}
	}
}

// subnetSearch gives every node with no neighbour on one of its subnet topics a peer there:
// the least connected other subscriber, not the observed node unless it is the only one.
func (g *graph) subnetSearch(plan *topology.Plan, subs map[string][]int, obs int, rng *rand.Rand) {
	for u, nd := range plan.Nodes {
		for _, t := range nd.Topics {
			if !isSubnetTopic(t) || slices.ContainsFunc(subs[t], func(v int) bool { return g.adj[u][v] }) {
				continue
			}
			best := -1
			for _, k := range rng.Perm(len(subs[t])) {
				v := subs[t][k]
				if v == u || (v == obs && len(subs[t]) > 2) {
					continue
				}
				if best < 0 || g.deg[v] < g.deg[best] {
					best = v
				}
			}
			if best >= 0 {
				g.add(u, best)
			}
		}
	}
}

// joinSubscribers links the connected groups of each subnet topic's subscribers (in the
// subgraph they induce) into one, through random members other than the observed node.
func (g *graph) joinSubscribers(plan *topology.Plan, subs map[string][]int, obs int, rng *rand.Rand) {
	topics := slices.Sorted(maps.Keys(subs))
	for _, t := range topics {
		if !isSubnetTopic(t) {
			continue
		}
		comps := g.components(subs[t])
		for len(comps) > 1 {
			a, b := comps[0], comps[1]
			g.add(pickMember(a, obs, rng), pickMember(b, obs, rng))
			comps = g.components(subs[t])
		}
	}
}

func pickMember(comp []int, obs int, rng *rand.Rand) int {
	var c []int
	for _, v := range comp {
		if v != obs {
			c = append(c, v)
		}
	}
	if len(c) == 0 {
		return comp[0]
	}
	return c[rng.IntN(len(c))]
}

// components returns the connected components of the subgraph induced by nodes (all nodes
// when nil), each sorted, in order of their smallest member.
func (g *graph) components(nodes []int) [][]int {
	in := make([]bool, len(g.adj))
	if nodes == nil {
		for i := range in {
			in[i] = true
		}
	} else {
		for _, v := range nodes {
			in[v] = true
		}
	}
	seen := make([]bool, len(g.adj))
	var comps [][]int
	for s := range g.adj {
		if !in[s] || seen[s] {
			continue
		}
		comp := []int{s}
		seen[s] = true
		for k := 0; k < len(comp); k++ {
			for v, ok := range g.adj[comp[k]] {
				if ok && in[v] && !seen[v] {
					seen[v] = true
					comp = append(comp, v)
				}
			}
		}
		slices.Sort(comp)
		comps = append(comps, comp)
	}
	return comps
}
