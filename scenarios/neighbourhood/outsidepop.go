package neighbourhood

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/holiman/uint256"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/workload"
)

// Each real peer's own peers as mainnet's: a real peer of degree d has its link to
// the observed node and d − 1 outside peers, each a periphery peer whose kind is drawn from
// the outside population and whose subscriptions follow from its kind: every global topic,
// 2 consecutive attestation subnets of 64 for a default node or a supernode, every subnet
// (and every sync committee subnet) for an all-subnets node, custody columns by kind. So the
// number of subscribed peers a real peer has on each of its topics, and with it how many
// eligible gossip targets it picks its IHAVE receivers from each heartbeat, follows from the
// population and its client's peer count.

// Parameters of the outside population.
const (
	// ParamOutsideAllSubnets is the share of mainnet's nodes on every attestation subnet:
	// not published, the run's one fitted input (DefaultOutsideAllSubnets).
	ParamOutsideAllSubnets = "outside_all_subnets"
	// ParamOutsideSupernodes is the share of supernodes (custody of all 128 columns).
	ParamOutsideSupernodes = "outside_supernodes"
)

// DefaultOutsideAllSubnets is fitted, not sourced: the share of nodes on all attestation
// subnets is not published. It is the share at which pubsub's IHAVE rule gives the IHAVE id
// recurrence the recording's control implies (≈ 38 % of id mentions repeat one the same
// stream carried before): with the default client mix and peer counts, a real peer on a
// subnet has 1 + (d − 1)·(s + (1 − s)·2/64) subscribed peers, D of them in its mesh, and
// picks the observed node with q = GossipChance(eligible, Dlazy, factor) per heartbeat;
// ExpectedRepeat(0.20) = 38 % (docs/neighbourhood.md, "The outside population"). It was not
// chosen by looking at any run's result.
const DefaultOutsideAllSubnets = 0.20

// DefaultOutsideSupernodes is the share of custody group count 128 among 3 334 mainnet ENRs
// (June 2026; docs/inputs.md §13).
const DefaultOutsideSupernodes = 0.248

// SubnetSearchPeers is the fewest peers a node keeps on each subnet it needs: Prysm and
// Lighthouse search for at least 6 (docs/inputs.md §13). A real peer's outside peers are
// topped up to max(SubnetSearchPeers, its client's D) subscribers on each of its topics (the
// peers its search finds), so its mesh can fill.
const SubnetSearchPeers = 6

// OutsidePeer is one outside peer of a real peer: its kind and the real peer's topics it
// subscribes to (sorted).
type OutsidePeer struct {
	Kind   string
	Topics []string
}

// outsideKind draws an outside peer's kind.
func outsideKind(rng *rand.Rand, allSubnets, supernodes float64) string {
	u := rng.Float64()
	switch {
	case u < allSubnets:
		return topology.KindAllSubnets
	case u < allSubnets+supernodes:
		return topology.KindSupernode
	}
	return topology.KindDefault
}

// kindSubscriptions is the global, attestation and sync committee topics a node of kind
// subscribes to, its first attestation subnet being first (a default node and a supernode
// take two consecutive subnets, an all-subnets node every one), and its column custody.
func kindSubscriptions(fd string, global []string, kind string, first int) (topics []string, custody int) {
	var att, sync []int
	custody = 4
	switch kind {
	case topology.KindDefault:
		att = []int{first, (first + 1) % gossip.AttestationSubnets}
	case topology.KindSupernode:
		att, custody = []int{first, (first + 1) % gossip.AttestationSubnets}, gossip.DataColumnSubnets
	case topology.KindAllSubnets:
		att, sync, custody = topology.UpTo(gossip.AttestationSubnets), topology.UpTo(gossip.SyncCommitteeSubnets), 8
	}
	topics = slices.Clone(global)
	for _, s := range att {
		topics = append(topics, gossip.Topic(fd, gossip.AttestationTopic(s)))
	}
	for _, s := range sync {
		topics = append(topics, gossip.Topic(fd, gossip.SyncCommitteeTopic(s)))
	}
	return topics, custody
}

// kindTopics is every topic a node of kind subscribes to (all 64 attestation subnets, not
// only the form's), with its first attestation subnet and node id drawn from rng.
func kindTopics(fd string, global []string, kind string, rng *rand.Rand) []string {
	topics, custody := kindSubscriptions(fd, global, kind, rng.IntN(gossip.AttestationSubnets))
	if custody >= gossip.DataColumnSubnets {
		for c := range gossip.DataColumnSubnets {
			topics = append(topics, gossip.Topic(fd, gossip.DataColumnTopic(c)))
		}
		return topics
	}
	var id [32]byte
	for k := 0; k < len(id); k += 8 {
		v := rng.Uint64()
		for b := range 8 {
			id[k+b] = byte(v >> (8 * b))
		}
	}
	for _, c := range workload.CustodyColumns(new(uint256.Int).SetBytes32(id[:]), custody) {
		topics = append(topics, gossip.Topic(fd, gossip.DataColumnTopic(c)))
	}
	return topics
}

// meshFloor is the subscribers a real peer of client cl keeps on each of its topics.
func meshFloor(cl topology.Client) int { return max(SubnetSearchPeers, cl.D) }

// drawOutside draws real peer np's outside peers (n of them) and tops each of its topics up to
// its mesh floor; observedOn says whether the observed node subscribes to a topic (it is one
// of the peer's subscribed peers there). It fills np.Outside and np.Subs.
func drawOutside(np *NeighbourPeer, n int, p NeighbourhoodParams, fd string, global []string, observedOn func(string) bool, rng *rand.Rand) error {
	mine := map[string]bool{}
	for _, t := range np.Topics {
		mine[t] = true
	}
	np.Outside = make([]OutsidePeer, n)
	for j := range n {
		kind := outsideKind(rng, p.OutsideAllSubnets, p.OutsideSupernodes)
		all := kindTopics(fd, global, kind, rng)
		var topics []string
		for _, t := range all {
			if mine[t] {
				topics = append(topics, t)
			}
		}
		np.Outside[j] = OutsidePeer{Kind: kind, Topics: topics}
	}
	floor := meshFloor(np.Client)
	np.Subs = map[string][]int{}
	for j, o := range np.Outside {
		for _, t := range o.Topics {
			np.Subs[t] = append(np.Subs[t], j)
		}
	}
	for _, t := range np.Topics {
		have := len(np.Subs[t])
		if observedOn(t) {
			have++
		}
		if have >= floor {
			continue
		}
		// The peer's subnet search finds nodes on t among the rest.
		var others []int
		for j := range np.Outside {
			if !slices.Contains(np.Subs[t], j) {
				others = append(others, j)
			}
		}
		rng.Shuffle(len(others), func(a, b int) { others[a], others[b] = others[b], others[a] })
		for _, j := range others {
			if have >= floor {
				break
			}
			np.Outside[j].Topics = append(np.Outside[j].Topics, t)
			np.Subs[t] = append(np.Subs[t], j)
			np.ToppedUp++
			have++
		}
		if have < floor {
			_, name, _ := gossip.ParseTopic(t)
			return fmt.Errorf("param %s or %s: a %s peer of degree %d with %d outside peers has %d subscribed peers on %s, fewer than the %d it needs to fill its mesh (max(%d, its D %d))",
				ParamDegrees, ParamBoundary, np.Client.Name, np.Degree, n, have, name, floor, SubnetSearchPeers, np.Client.D)
		}
	}
	for j := range np.Outside {
		slices.Sort(np.Outside[j].Topics)
	}
	for t := range np.Subs {
		slices.Sort(np.Subs[t])
	}
	return nil
}

// checkOutsideShares refuses outside population shares outside 0..1 or summing above 1.
func checkOutsideShares(allSubnets, supernodes float64) error {
	for _, s := range []struct {
		name string
		v    float64
	}{{ParamOutsideAllSubnets, allSubnets}, {ParamOutsideSupernodes, supernodes}} {
		if !(s.v >= 0 && s.v <= 1) {
			return fmt.Errorf("param %s: %v: want a share in 0..1", s.name, s.v)
		}
	}
	if allSubnets+supernodes > 1 {
		return fmt.Errorf("param %s %v and param %s %v: want shares summing to at most 1 (the rest are default nodes)", ParamOutsideAllSubnets, allSubnets, ParamOutsideSupernodes, supernodes)
	}
	return nil
}

// ExpectedRepeat is pubsub's rule applied to the outside population: the share of IHAVE id
// mentions on the observed node's inbound streams that repeat an earlier one, for an
// all-subnets share s, with every other input at p's (client mix, each client's mid-range
// degree and its D, Dlazy and gossip factor). A real peer of client c on an attestation
// subnet has n = 1 + max(floor − 1, (d − 1)·(s + (1 − s − supernodes)·2/64 + supernodes·2/64))
// subscribed peers (the observed node among them), D in its mesh, e = n − D eligible; it picks
// the observed node with q = GossipChance(e) per heartbeat, and its mentions repeat with
// gossip.RepeatShareOf(q, 3); mentions weigh by q. It returns the mix's repeat share and
// each client's q.
func ExpectedRepeat(p NeighbourhoodParams, s float64) (share float64, q map[string]float64) {
	q = map[string]float64{}
	var num, den float64
	perNode := s + (1-s)*2/float64(gossip.AttestationSubnets)
	for _, name := range topology.ClientNames {
		w := p.Clients[name]
		if w <= 0 {
			continue
		}
		cl, _ := topology.ClientProfile(name)
		d := p.Degrees[name]
		deg := float64(d[0]+d[1]) / 2
		if p.Boundary >= 0 {
			deg = min(deg, float64(p.Boundary)+1)
		}
		n := 1 + max(float64(meshFloor(cl)-1), (deg-1)*perNode)
		e := int(n - float64(cl.D) + 0.5)
		qc := gossip.GossipChance(e, cl.Dlazy, cl.GossipFactor)
		q[name] = qc
		num += w * qc * gossip.RepeatShareOf(qc, cl.HistoryGossip)
		den += w * qc
	}
	if den == 0 {
		return 0, q
	}
	return num / den, q
}
