// Package topology decides who connects to whom and who subscribes to what in a scenario,
// from each instance's role and sequence number alone, so every instance derives the same
// picture without asking anyone.
package topology

import "fmt"

// Roles in the hub-leaves scenario.
const (
	Publisher = "publisher"
	Hub       = "hub"
	Leaf      = "leaf"
)

// Member is one instance as the address exchange announced it.
type Member struct {
	Role     string
	Group    string
	Instance int
}

// Links is one member's view of the topology.
type Links struct {
	// Dial lists the members this one connects to.
	Dial []int
	// Direct lists the members that are its GossipSub direct peers (configured on both ends).
	Direct []int
	// Subscribe tells which topics it subscribes to: "all" (every consensus topic),
	// "profile" (the run's leaf profile) or "none" (it only publishes).
	Subscribe string
}

// HubLeaves is the live-check topology: publishers stand in for the network and dial the
// hub as ordinary peers (they publish through fanout and subscribe to nothing); the hub
// subscribes to every topic; every leaf dials the hub, and leaf and hub are direct peers of
// each other, so a leaf receives every message of its profile and no gossip control.
// members is indexed by position; it returns each member's links, or an error unless
// there is exactly one hub and at least one leaf and one publisher.
func HubLeaves(members []Member) ([]Links, error) {
	hub := -1
	var pubs, leaves int
	for i, m := range members {
		switch m.Role {
		case Hub:
			if hub >= 0 {
				return nil, fmt.Errorf("two hubs: members %d and %d", hub, i)
			}
			hub = i
		case Publisher:
			pubs++
		case Leaf:
			leaves++
		default:
			return nil, fmt.Errorf("member %d: unknown role %q", i, m.Role)
		}
	}
	if hub < 0 || pubs == 0 || leaves == 0 {
		return nil, fmt.Errorf("hub-leaves needs one hub, publishers and leaves; have %d hub, %d publishers, %d leaves",
			map[bool]int{true: 1}[hub >= 0], pubs, leaves)
	}
	out := make([]Links, len(members))
	for i, m := range members {
		switch m.Role {
		case Hub:
			out[i].Subscribe = "all"
			for j, o := range members {
				if o.Role == Leaf {
					out[i].Direct = append(out[i].Direct, j)
				}
			}
		case Publisher:
			out[i] = Links{Dial: []int{hub}, Subscribe: "none"}
		case Leaf:
			out[i] = Links{Dial: []int{hub}, Direct: []int{hub}, Subscribe: "profile"}
		}
	}
	return out, nil
}
