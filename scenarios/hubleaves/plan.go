package hubleaves

import (
	"fmt"
	"slices"

	"github.com/streamsim/streamsim/topology"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/workload"
)

// Plan is the live-check topology (the proposal's): publishers stand in for the network
// and dial the hub as ordinary peers, subscribe to nothing and publish through fanout; the
// hub subscribes to every topic (the supernode profile) and offers every compressed codec
// of the leaves; every leaf dials the hub and subscribes to leafProfile, and leaf and hub
// are direct peers of each other, so a leaf receives every message of its profile and no
// gossip control. Everyone runs the spec's GossipSub parameters.
//
// Before the run: a publisher waits for the hub's subscription to every topic (so its first
// publish reaches the hub), a leaf for the hub's on its profile's topics, the hub for every
// leaf's on the leaf profile's topics. Members' roles must be publisher, hub or leaf with
// exactly one hub, at least one publisher and at least one leaf.
func Plan(members []topology.Member, leafProfile workload.Profile, forkDigest string) (*topology.Plan, error) {
	if forkDigest == "" {
		return nil, fmt.Errorf("hub-leaves: fork digest not set")
	}
	hub := -1
	var publishers, leaves []int
	for i, m := range members {
		switch m.Role {
		case topology.RoleHub:
			if hub >= 0 {
				return nil, fmt.Errorf("hub-leaves: two hubs, members %d and %d (%s/%d, %s/%d)",
					hub, i, members[hub].Group, members[hub].Instance, m.Group, m.Instance)
			}
			hub = i
		case topology.RolePublisher:
			publishers = append(publishers, i)
		case topology.RoleLeaf:
			leaves = append(leaves, i)
		default:
			return nil, fmt.Errorf("hub-leaves: member %d (%s/%d) has role %q (allowed: %s, %s, %s)",
				i, m.Group, m.Instance, m.Role, topology.RolePublisher, topology.RoleHub, topology.RoleLeaf)
		}
	}
	if hub < 0 || len(publishers) == 0 || len(leaves) == 0 {
		hubs := 0
		if hub >= 0 {
			hubs = 1
		}
		return nil, fmt.Errorf("hub-leaves needs one hub, publishers and leaves; have %d hub, %d publishers, %d leaves",
			hubs, len(publishers), len(leaves))
	}
	spec, err := topology.ClientProfile("spec")
	if err != nil {
		return nil, err
	}
	supernode, err := workload.ParseProfile("supernode")
	if err != nil {
		return nil, err
	}
	allTopics := supernode.Topics(forkDigest)
	leafTopics := leafProfile.Topics(forkDigest)
	waitAll := func(topics []string, on []int) map[string][]int {
		w := make(map[string][]int, len(topics))
		for _, t := range topics {
			w[t] = slices.Clone(on)
		}
		return w
	}

	// The hub serves every leaf codec of the run, in member order, each once.
	var hubCodecs []codec.Spec
	for _, i := range leaves {
		c := members[i].Codec
		if c.Kind != codec.Plain && !slices.ContainsFunc(hubCodecs, func(h codec.Spec) bool { return h.String() == c.String() }) {
			hubCodecs = append(hubCodecs, c)
		}
	}
	plan := &topology.Plan{Nodes: make([]topology.Node, len(members)), Observed: -1}
	plan.RoundRobinOrigins(publishers)
	var others []int
	for i := range members {
		if i != hub {
			others = append(others, i)
		}
	}
	plan.Nodes[hub] = topology.Node{
		Role: topology.RoleHub, Kind: string(topology.RoleHub), Client: spec, Codecs: hubCodecs,
		Peers: others, Direct: slices.Clone(leaves), Topics: allTopics,
		WaitFor: waitAll(leafTopics, leaves),
	}
	for _, i := range publishers {
		plan.Nodes[i] = topology.Node{
			Role: topology.RolePublisher, Kind: string(topology.RolePublisher), Client: spec,
			Dial: []int{hub}, Peers: []int{hub}, Publishes: true,
			WaitFor: waitAll(allTopics, []int{hub}),
		}
	}
	for _, i := range leaves {
		var codecs []codec.Spec
		if c := members[i].Codec; c.Kind != codec.Plain {
			codecs = []codec.Spec{c}
		}
		plan.Nodes[i] = topology.Node{
			Role: topology.RoleLeaf, Kind: string(topology.RoleLeaf), Client: spec, Codecs: codecs,
			Dial: []int{hub}, Peers: []int{hub}, Direct: []int{hub}, Topics: slices.Clone(leafTopics),
			WaitFor: waitAll(leafTopics, []int{hub}),
		}
	}
	return plan, nil
}
