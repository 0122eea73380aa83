// Package topology decides, for every scenario, each instance's role, whom it dials, its direct
// peers, its topics, its GossipSub parameters and whom it waits for, from the members the
// address exchange announced and the run's parameters alone: pure and seeded, so every
// instance derives the same Plan without asking anyone.
package topology

import (
	"fmt"
	"strings"
	"time"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/workload"
)

// Role is what an instance does in a scenario.
type Role string

const (
	RolePublisher Role = "publisher" // hub-leaves: publishes the workload, subscribes to nothing
	RoleHub       Role = "hub"       // hub-leaves: subscribes to every topic and forwards
	RoleLeaf      Role = "leaf"      // hub-leaves: a direct peer of the hub on its codec
	RoleNode      Role = "node"      // mesh: an ordinary gossip node
)

// Member is one instance as the address exchange announced it (sorted by Group, Instance).
type Member struct {
	Group    string
	Instance int
	Role     Role
	// Codec is a hub-leaves leaf group's stream codec.
	Codec codec.Spec
}

// Plan is the whole topology, identical on every instance.
type Plan struct {
	// Nodes is indexed like the members.
	Nodes []Node
	// Observed is the index of a mesh's observed node, -1 elsewhere.
	Observed int
}

// Node is one member's part of a Plan.
type Node struct {
	Role Role
	// Kind is a mesh node's population kind ("observed", "default", "all-subnets",
	// "supernode"); the role elsewhere.
	Kind string
	// Client holds the GossipSub parameters the node runs.
	Client Client
	// Codecs are the compressed codecs it offers in preference order; plain is always
	// offered last.
	Codecs []codec.Spec
	// Dial lists the members this one dials (each edge is dialled by exactly one end).
	Dial []int
	// Direct lists its GossipSub direct peers.
	Direct []int
	// Topics are the full topics it subscribes to, sorted.
	Topics []string
	// Publishes: the node originates messages of the workload.
	Publishes bool
	// WaitFor maps a topic to the members whose subscription to it this node must see
	// before the run starts.
	WaitFor map[string][]int
}

// Client is a consensus client's GossipSub configuration (reference.md §7).
type Client struct {
	Name                    string
	D, Dlo, Dhi, Dlazy      int
	Heartbeat               time.Duration // real time
	HistoryLength           int
	HistoryGossip           int
	IDontWantThresholdBytes int // IDONTWANT only for messages at least this large
	FloodPublish            bool
}

// clients are the profiles read from the clients' sources (reference.md §7). Teku's and
// Nimbus's IDONTWANT thresholds are marked unverified there; they take the values given.
var clients = map[string]Client{
	"spec":       {"spec", 8, 6, 12, 6, 700 * time.Millisecond, 6, 3, 1024, false},
	"prysm":      {"prysm", 8, 6, 12, 6, 700 * time.Millisecond, 6, 3, 1024, false},
	"teku":       {"teku", 8, 6, 12, 6, 700 * time.Millisecond, 6, 3, 16 << 10, false},
	"lighthouse": {"lighthouse", 5, 3, 10, 3, time.Second, 12, 3, 1000, false},
	"lodestar":   {"lodestar", 8, 6, 12, 6, 700 * time.Millisecond, 6, 3, 16829, false},
	"nimbus":     {"nimbus", 8, 6, 12, 6, 700 * time.Millisecond, 6, 3, 200, true},
}

// ClientNames lists the client profiles ClientProfile knows.
var ClientNames = []string{"spec", "prysm", "teku", "lighthouse", "lodestar", "nimbus"}

// ClientProfile returns a client's GossipSub parameters.
func ClientProfile(name string) (Client, error) {
	c, ok := clients[name]
	if !ok {
		return Client{}, fmt.Errorf("unknown client %q (allowed: %s)", name, strings.Join(ClientNames, ", "))
	}
	return c, nil
}

// HubLeavesRole maps a hub-leaves group to its role: "publishers", "hub", and any other group
// is a leaf group.
func HubLeavesRole(group string) Role {
	switch group {
	case "publishers":
		return RolePublisher
	case "hub":
		return RoleHub
	}
	return RoleLeaf
}

// HubLeaves is the live-check topology: publishers stand in for the network and dial the hub
// as ordinary peers (they publish through fanout and subscribe to nothing); the hub subscribes
// to every topic and offers every leaf's codec; every leaf dials the hub, and leaf and hub are
// direct peers of each other, so a leaf receives every message of leafProfile and no gossip
// control. It is an error unless there is exactly one hub, a leaf and a publisher.
func HubLeaves(members []Member, leafProfile workload.Profile, forkDigest string) (*Plan, error) {
	hub := -1
	var pubs, leaves []int
	for i, m := range members {
		switch m.Role {
		case RoleHub:
			if hub >= 0 {
				return nil, fmt.Errorf("two hubs: members %d and %d", hub, i)
			}
			hub = i
		case RolePublisher:
			pubs = append(pubs, i)
		case RoleLeaf:
			leaves = append(leaves, i)
		default:
			return nil, fmt.Errorf("member %d (%s/%d): role %q is not a hub-leaves role", i, m.Group, m.Instance, m.Role)
		}
	}
	if hub < 0 || len(pubs) == 0 || len(leaves) == 0 {
		h := 0
		if hub >= 0 {
			h = 1
		}
		return nil, fmt.Errorf("hub-leaves needs one hub, publishers and leaves; have %d hub, %d publishers, %d leaves", h, len(pubs), len(leaves))
	}
	spec, _ := ClientProfile("spec")
	supernode, err := workload.ParseProfile("supernode")
	if err != nil {
		return nil, err
	}
	all := supernode.Topics(forkDigest)
	leafTopics := leafProfile.Topics(forkDigest)
	plan := &Plan{Nodes: make([]Node, len(members)), Observed: -1}
	for i, m := range members {
		plan.Nodes[i] = Node{Role: m.Role, Kind: string(m.Role), Client: spec, WaitFor: map[string][]int{}}
	}
	h := &plan.Nodes[hub]
	h.Topics = all
	for _, l := range leaves {
		h.Direct = append(h.Direct, l)
		if c := members[l].Codec; c.Kind != codec.Plain && !containsSpec(h.Codecs, c) {
			h.Codecs = append(h.Codecs, c)
		}
		for _, t := range leafTopics {
			h.WaitFor[t] = append(h.WaitFor[t], l)
		}
	}
	for _, p := range pubs {
		n := &plan.Nodes[p]
		n.Dial, n.Publishes = []int{hub}, true
		for _, t := range all {
			n.WaitFor[t] = []int{hub}
		}
	}
	for _, l := range leaves {
		n := &plan.Nodes[l]
		n.Dial, n.Direct, n.Topics = []int{hub}, []int{hub}, leafTopics
		if c := members[l].Codec; c.Kind != codec.Plain {
			n.Codecs = []codec.Spec{c}
		}
		for _, t := range leafTopics {
			n.WaitFor[t] = []int{hub}
		}
	}
	return plan, nil
}

func containsSpec(specs []codec.Spec, s codec.Spec) bool {
	for _, x := range specs {
		if x == s {
			return true
		}
	}
	return false
}
