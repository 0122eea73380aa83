// Package topology decides, for every scenario, each instance's role, whom it dials, its
// direct peers, its GossipSub client profile, what it subscribes to and whom it waits for.
// It is pure and seeded: every instance derives the same Plan from the same members and
// parameters without asking anyone.
package topology

import (
	"slices"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
)

// Role is what an instance does in a scenario.
type Role string

// Roles. Hub-leaves has publishers, one hub and leaves; a mesh has nodes only.
const (
	RolePublisher Role = "publisher" // publishes the workload (hub-leaves)
	RoleHub       Role = "hub"       // forwards everything to the leaves (hub-leaves)
	RoleLeaf      Role = "leaf"      // a direct peer of the hub, one stream codec (hub-leaves)
	RoleNode      Role = "node"      // a mesh member
)

// Testground group IDs of hub-leaves; every other group is a leaf group.
const (
	GroupPublishers = "publishers"
	GroupHub        = "hub"
)

// HubLeavesRole maps a hub-leaves Testground group ID to its role: GroupPublishers and
// GroupHub by name, any other group is a leaf group.
func HubLeavesRole(group string) Role {
	switch group {
	case GroupPublishers:
		return RolePublisher
	case GroupHub:
		return RoleHub
	}
	return RoleLeaf
}

// Member is one instance as the address exchange announced it. Callers pass members sorted
// by (Group, Instance); a Plan's nodes are indexed like them.
type Member struct {
	// Group is the Testground group ID, Instance the sequence number within it (from 0).
	Group    string
	Instance int
	// Role is the instance's role (HubLeavesRole of its group; RoleNode in a mesh).
	Role Role
	// Codec is a leaf group's stream codec (hub-leaves); a mesh ignores it.
	Codec codec.Spec
}

// Plan is the whole topology of a run, identical on every instance.
type Plan struct {
	// Nodes is indexed like the members the plan was made from.
	Nodes []Node
	// Observed is the index of the mesh's observed node (the recorded all-subnets node);
	// -1 in scenarios without one.
	Observed int
	// ObservedPeersCapped is set when the observed node has fewer peers than
	// MeshParams.ObservedPeers asked for because there are fewer other members.
	ObservedPeersCapped bool

	origins originRule
}

// Node is one member's part of the plan.
type Node struct {
	// Role is the member's role (RoleNode for every mesh member).
	Role Role
	// Kind is the population kind: in a mesh "observed", "default", "all-subnets" or
	// "supernode" (KindObserved, …); in hub-leaves the role.
	Kind string
	// Client is the GossipSub parameter set the node runs with.
	Client Client
	// Codecs are the compressed stream codecs the node offers, in preference order; the
	// caller always offers plain after them.
	Codecs []codec.Spec
	// Dial lists the members this one connects to; every edge of the graph is dialled by
	// exactly one of its ends.
	Dial []int
	// Peers lists every graph neighbour (those it dials and those that dial it), sorted.
	Peers []int
	// Direct lists its GossipSub direct peers (configured on both ends).
	Direct []int
	// Topics are the full gossip topics it subscribes to, sorted.
	Topics []string
	// Publishes tells whether the node originates messages: hub-leaves publishers, every
	// mesh node but the observed one (Plan.Origin picks which message).
	Publishes bool
	// WaitFor maps a topic to the members whose subscription to it this node must see
	// before the measured phase starts: only then does a publish or a forward on that
	// topic reach them.
	WaitFor map[string][]int
}

// originRule is how Plan.Origin picks a message's publisher.
type originRule struct {
	// roundRobin: message seq belongs to publishers[seq mod len] (hub-leaves).
	roundRobin bool
	publishers []int
	// topics maps a topic to its origin candidates. Nil on a Plan built by hand: Origin then
	// derives them from Nodes on every call.
	topics map[string]originTopic
}

// originTopic is what Origin needs of one topic.
type originTopic struct {
	// eligible lists the publishing nodes that can reach one of the topic's subscribers
	// (they subscribe or a neighbour does), sorted.
	eligible []int
	// proposed marks block and column topics, published by the slot's proposer.
	proposed bool
}

func newOriginTopic(p *Plan, topic string) originTopic {
	c := gossip.TopicCategory(topic)
	return originTopic{eligible: p.EligibleOrigins(topic), proposed: c == gossip.Block || c == gossip.DataColumn}
}

// Origin returns the member that publishes a message of the run's schedule: seq is the
// message's index in the schedule (from 0, counting every slot), slot the index of its
// slot (from 0), topic its full topic. The choice is deterministic in (seed, slot, seq,
// topic) and the plan; -1 when no member can publish on the topic.
//
// Hub-leaves: message seq belongs to publisher seq mod publishers, in member order.
// Mesh: attestations, aggregates, sync committee messages and contributions come from a
// node drawn uniformly among those that can reach a subscriber of the topic, so most
// attestation origins do not subscribe to the subnet and publish through fanout, as on
// mainnet. A slot's block comes from a proposer drawn among all publishing nodes; its
// data column sidecars come from the same proposer when it can reach the column's
// subscribers, otherwise (as a builder or a node that reconstructed the column would)
// from a node drawn among those that can. The observed node originates nothing: the
// recording it stands for measured what other nodes published.
func (p *Plan) Origin(seed int64, slot, seq int, topic string) int {
	r := p.origins
	if r.publishers == nil {
		r = p.deriveOrigins()
	}
	if r.roundRobin {
		if len(r.publishers) == 0 || seq < 0 {
			return -1
		}
		return r.publishers[seq%len(r.publishers)]
	}
	ot, ok := r.topics[topic]
	if r.topics == nil {
		ot, ok = newOriginTopic(p, topic), true
	}
	if !ok || len(ot.eligible) == 0 {
		return -1
	}
	if ot.proposed {
		proposer := r.publishers[pick(len(r.publishers), uint64(seed), uint64(slot), proposerSalt)]
		if _, found := slices.BinarySearch(ot.eligible, proposer); found {
			return proposer
		}
	}
	return ot.eligible[pick(len(ot.eligible), uint64(seed), uint64(slot), uint64(seq), topicHash(topic))]
}

// RoundRobinOrigins sets the plan's origin rule: message seq is published by
// publishers[seq mod len(publishers)] (hub-leaves).
func (p *Plan) RoundRobinOrigins(publishers []int) {
	p.origins = originRule{roundRobin: true, publishers: publishers}
}

// DrawnOrigins sets the plan's origin rule to the mesh's (Origin): each message drawn among
// publishers by category, fixed now for each of topics from the plan's nodes.
func (p *Plan) DrawnOrigins(publishers []int, topics []string) {
	p.origins = originRule{publishers: publishers, topics: map[string]originTopic{}}
	for _, t := range topics {
		p.origins.topics[t] = newOriginTopic(p, t)
	}
}

// SameOrigins reports whether Origin names the same member on p and o for every message:
// whether their origin rules are equal. Plans built by hand (whose rule Origin derives from
// the nodes on every call) are compared by what that derivation reads.
func (p *Plan) SameOrigins(o *Plan) bool {
	a, b := p.origins, o.origins
	if a.publishers == nil || b.publishers == nil {
		if a.publishers != nil || b.publishers != nil {
			return false
		}
		return p.Observed == o.Observed && slices.EqualFunc(p.Nodes, o.Nodes, func(x, y Node) bool {
			return x.Role == y.Role && x.Publishes == y.Publishes && slices.Equal(x.Topics, y.Topics) && slices.Equal(x.Peers, y.Peers)
		})
	}
	if a.roundRobin != b.roundRobin || !slices.Equal(a.publishers, b.publishers) || len(a.topics) != len(b.topics) {
		return false
	}
	for t, x := range a.topics {
		y, ok := b.topics[t]
		if !ok || x.proposed != y.proposed || !slices.Equal(x.eligible, y.eligible) {
			return false
		}
	}
	return true
}

// proposerSalt separates the proposer draw from message draws.
const proposerSalt = 0x70726f706f736572 // "proposer"

// deriveOrigins rebuilds the origin rule of a Plan that was built by hand.
func (p *Plan) deriveOrigins() originRule {
	var r originRule
	for i, n := range p.Nodes {
		if n.Publishes {
			r.publishers = append(r.publishers, i)
		}
	}
	if r.publishers == nil {
		r.publishers = []int{}
	}
	r.roundRobin = p.Observed < 0 && len(p.Nodes) > 0 && p.Nodes[0].Role != RoleNode
	return r
}

// EligibleOrigins lists the publishing nodes that subscribe to topic or have a neighbour
// that does, sorted.
func (p *Plan) EligibleOrigins(topic string) []int {
	subscribes := make([]bool, len(p.Nodes))
	for i, n := range p.Nodes {
		_, subscribes[i] = slices.BinarySearch(n.Topics, topic)
	}
	var out []int
	for i, n := range p.Nodes {
		if !n.Publishes {
			continue
		}
		ok := subscribes[i]
		for _, j := range n.Peers {
			ok = ok || subscribes[j]
		}
		if ok {
			out = append(out, i)
		}
	}
	return out
}

// pick maps the values to an index in [0, n) with SplitMix64 steps: a stateless draw, so
// every instance gets the same origin for a message whatever else it asked before.
func pick(n int, values ...uint64) int {
	h := uint64(0x9e3779b97f4a7c15)
	for _, v := range values {
		h = splitmix(h ^ v)
	}
	return int(h % uint64(n))
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// topicHash is 64-bit FNV-1a, inline so that Origin does not allocate.
func topicHash(topic string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(topic); i++ {
		h ^= uint64(topic[i])
		h *= 1099511628211
	}
	return h
}
