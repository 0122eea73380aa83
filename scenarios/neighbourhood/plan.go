package neighbourhood

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/streamsim/streamsim/topology"

	"github.com/holiman/uint256"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/workload"
)

// The neighbourhood: the recorded node and its ~45 peers as real nodes, and for each peer a
// periphery of boundary peers standing for mainnet beyond (docs/neighbourhood.md). This file
// draws the population; the periphery's behaviour is package periphery's.

// Parameters of the neighbourhood population (ParseNeighbourhoodParams), beside
// ParamTopologySeed, ParamObservedPeers, ParamObservedClient, ParamMix and ParamClients.
const (
	ParamSubnets      = "subnets"       // attestation subnets of the observed node: the first n (64: the full form)
	ParamDegrees      = "degrees"       // each client's own peer count on mainnet, client:min-max
	ParamDialledShare = "dialled_share" // share of the observed node's links it dialled
	ParamBoundary     = "boundary"      // outside peers per real peer: degree (its degree − its link to the observed node) or a cap
	ParamPressure     = "pressure"      // topic kinds the boundary keeps grafting (TopicKinds)
	ParamLatency      = "latency"       // link latency between the observed node and its peers: regions or off
)

// Bandwidth classes: gossipsub-interop's network model's two (link.DefaultClasses,
// docs/inputs.md §7: ordinary nodes 50 Mbit/s up and down, supernodes 1 Gbit/s) and a third for
// nodes subscribed to every attestation subnet, whose forwarding alone needs more uplink than
// the ordinary class has (docs/neighbourhood.md, "An all-subnets node's link"). The
// population carries each node's class; the links that apply them belong to the run's
// network.
const (
	BandwidthFullNode   = "fullnode"
	BandwidthSupernode  = "supernode"
	BandwidthAllSubnets = "all-subnets"
)

// Latency models of ParamLatency.
const (
	LatencyRegions = "regions" // gossipsub-interop's region latencies (link.DefaultRegions), dilated
	LatencyOff     = "off"     // none: loopback only (the machine's own hop time)
)

// Topic kinds ParamPressure names.
const (
	TopicsAttestation = "attestation_subnets" // beacon_attestation_{n}
	TopicsSync        = "sync_subnets"        // sync_committee_{n}
	TopicsColumn      = "column_subnets"      // data_column_sidecar_{n}
	TopicsGlobal      = "global"              // beacon_block, beacon_aggregate_and_proof, sync_committee_contribution_and_proof
)

// TopicKinds are the kinds of topic, in the order ParamPressure lists them.
var TopicKinds = []string{TopicsAttestation, TopicsSync, TopicsColumn, TopicsGlobal}

// TopicKind is the kind of a full gossip topic.
func TopicKind(topic string) string {
	_, name, err := gossip.ParseTopic(topic)
	if err != nil || gossip.Subnet(name) < 0 {
		return TopicsGlobal
	}
	switch gossip.TopicCategory(topic) {
	case gossip.Attestation:
		return TopicsAttestation
	case gossip.SyncCommittee:
		return TopicsSync
	case gossip.DataColumn:
		return TopicsColumn
	}
	return TopicsGlobal
}

// DefaultPressure: the boundary keeps grafting attestation and sync committee subnets only.
// Why: grafting pressure comes from nodes below Dlo, that is nodes that find too few
// subscribed peers for a topic among their own. A default node is on 2 of 64 attestation
// subnets, so among a node's 70–200 peers a subnet has ~2–6 default-node subscribers plus
// the many-subnet nodes: default nodes graft the popular many-subnet nodes, which sit at
// Dhi (docs/inputs.md §9). Sync committee subnets are alike (4 subnets, subscribed while a
// validator is in the committee). Global topics (blocks, aggregates, contributions): every
// neighbour subscribes, every mesh fills from 70–200 candidates, nobody stays below Dlo.
// Data column subnets are sparse per node (custody 4–8 of 128) but supernodes (10–20 % of
// nodes, all 128 columns) and same-custody peers give a node 7–40 subscribers per column
// subnet among 70–200 peers, at or above D: no standing pressure either.
const DefaultPressure = TopicsAttestation + "," + TopicsSync

// parsePressure reads "kind,kind,..." (or none, all) into the set of topic kinds under
// pressure.
func parsePressure(v string) (map[string]bool, error) {
	out := map[string]bool{}
	switch strings.TrimSpace(v) {
	case "none":
		return out, nil
	case "all":
		for _, k := range TopicKinds {
			out[k] = true
		}
		return out, nil
	}
	for part := range strings.SplitSeq(v, ",") {
		k := strings.TrimSpace(part)
		if !slices.Contains(TopicKinds, k) {
			return nil, fmt.Errorf("param %s: %q is not a topic kind (allowed: %s, or all, none)", ParamPressure, part, strings.Join(TopicKinds, ", "))
		}
		out[k] = true
	}
	return out, nil
}

// BoundaryByDegree is ParamBoundary's default: each real peer gets as many outside peers as
// its degree leaves once its link inside the neighbourhood (to the observed node) is counted.
const BoundaryByDegree = "degree"

// OwnLinks is how many of a real peer's peers are inside the neighbourhood: the observed node.
const OwnLinks = 1

// DefaultDegrees are the clients' target peer counts (docs/inputs.md §13): Lighthouse 200
// (since August 2025, sigp/lighthouse#7877), Prysm 70, Teku 64–100, Lodestar 100, Nimbus 160;
// spec stands for a go node at Prysm's.
const DefaultDegrees = "lighthouse:200-200,prysm:70-70,teku:64-100,lodestar:100-100,nimbus:160-160,spec:70-70"

// NeighbourhoodParams describe the observed node's neighbourhood.
type NeighbourhoodParams struct {
	Seed           int64
	Peers          int    // the observed node's peers (the recording's ~45)
	ObservedClient string // the recording ran Teku
	// Subnets is how many attestation subnets (0..Subnets−1) the observed node subscribes
	// to and the workload carries: a few in the calibration form, 64 in the full form.
	Subnets int
	// Mix is the peers' population by kind (MixKinds), Clients their client mix.
	Mix, Clients map[string]float64
	// Degrees is each client's own peer count range on mainnet.
	Degrees map[string][2]int
	// DialledShare is the share of the observed node's links it dialled (the peer at Dhi
	// refuses GRAFTs on links it did not dial).
	DialledShare float64
	// Boundary caps each real peer's outside peers (BoundaryOfDegree: no cap, its degree −
	// OwnLinks).
	Boundary int
	// OutsideAllSubnets and OutsideSupernodes are the outside population's shares of
	// all-subnets nodes and supernodes (the rest are default nodes).
	OutsideAllSubnets, OutsideSupernodes float64
	// Pressure is the set of topic kinds (TopicKinds) the boundary peers keep grafting
	// (DefaultPressure); on the others they subscribe and let the real peer graft them.
	Pressure map[string]bool
	// Latency is the link latency model between the observed node and its peers
	// (LatencyRegions or LatencyOff).
	Latency    string
	ForkDigest string
}

// BoundaryOfDegree is Boundary without a cap: every link a real peer's degree leaves.
const BoundaryOfDegree = -1

// Presses reports whether the boundary keeps grafting topic (by its kind).
func (p NeighbourhoodParams) Presses(topic string) bool {
	return p.Pressure[TopicKind(topic)]
}

// DefaultNeighbourhoodParams is the calibration form's population: 45 peers of which 30 %
// on all subnets, as docs/inputs.md §9's arithmetic needs (10–20 subscribed peers per subnet
// among 45 to make ≈ 12 IHAVE mentions per attestation). These are inputs; the run's
// calibration table says how far the output is from the recording.
func DefaultNeighbourhoodParams() NeighbourhoodParams {
	d, _ := parseDegrees(ParamDegrees, DefaultDegrees)
	pr, _ := parsePressure(DefaultPressure)
	return NeighbourhoodParams{
		Pressure: pr, Latency: LatencyRegions,
		Seed: 1, Peers: 45, ObservedClient: "teku", Subnets: 4,
		Mix:               map[string]float64{topology.KindDefault: 0.6, topology.KindAllSubnets: 0.3, topology.KindSupernode: 0.1},
		Clients:           topology.DefaultMeshParams().Clients,
		Degrees:           d,
		DialledShare:      0.5,
		Boundary:          BoundaryOfDegree,
		OutsideAllSubnets: DefaultOutsideAllSubnets, OutsideSupernodes: DefaultOutsideSupernodes,
		ForkDigest: workload.DefaultParams().ForkDigest,
	}
}

// ParseNeighbourhoodParams reads string parameters over the defaults; each bad value is an
// error naming its parameter.
func ParseNeighbourhoodParams(m map[string]string) (NeighbourhoodParams, error) {
	p := DefaultNeighbourhoodParams()
	get := func(k string) (string, bool) { return topology.ParamValue(m, k) }
	if err := topology.ParsePopulation(m, &p.Seed, &p.ObservedClient, &p.Mix, &p.Clients); err != nil {
		return p, err
	}
	var err error
	for _, f := range []struct {
		name string
		dst  *int
	}{{topology.ParamObservedPeers, &p.Peers}, {ParamSubnets, &p.Subnets}} {
		if v, ok := get(f.name); ok {
			if *f.dst, err = strconv.Atoi(v); err != nil {
				return p, fmt.Errorf("param %s: %q is not an integer", f.name, v)
			}
		}
	}
	if v, ok := get(ParamDegrees); ok {
		if p.Degrees, err = parseDegrees(ParamDegrees, v); err != nil {
			return p, err
		}
	}
	if v, ok := get(ParamPressure); ok {
		if p.Pressure, err = parsePressure(v); err != nil {
			return p, err
		}
	}
	if v, ok := get(ParamLatency); ok {
		p.Latency = strings.TrimSpace(v)
	}
	if v, ok := get(ParamBoundary); ok {
		if p.Boundary, err = parseBoundary(v); err != nil {
			return p, err
		}
	}
	for _, f := range []struct {
		name string
		dst  *float64
	}{{ParamOutsideAllSubnets, &p.OutsideAllSubnets}, {ParamOutsideSupernodes, &p.OutsideSupernodes}} {
		if v, ok := get(f.name); ok {
			if *f.dst, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
				return p, fmt.Errorf("param %s: %q is not a share in 0..1", f.name, v)
			}
		}
	}
	if v, ok := get(ParamDialledShare); ok {
		if p.DialledShare, err = strconv.ParseFloat(v, 64); err != nil {
			return p, fmt.Errorf("param %s: %q is not a number in 0..1", ParamDialledShare, v)
		}
	}
	return p, p.Validate()
}

// parseBoundary reads ParamBoundary: "degree" or a positive cap.
func parseBoundary(v string) (int, error) {
	v = strings.TrimSpace(v)
	if v == BoundaryByDegree {
		return BoundaryOfDegree, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("param %s: %q: want %s (each real peer's degree minus its link to the observed node) or a cap of at least 1 outside peer", ParamBoundary, v, BoundaryByDegree)
	}
	return n, nil
}

// parseDegrees parses "client:min-max,..." (or client:n); every client of ClientNames must
// be given.
func parseDegrees(param, v string) (map[string][2]int, error) {
	out := map[string][2]int{}
	for part := range strings.SplitSeq(v, ",") {
		name, rng, ok := strings.Cut(strings.TrimSpace(part), ":")
		name = strings.TrimSpace(name)
		if !ok {
			return nil, fmt.Errorf("param %s: %q is not client:min-max (e.g. lighthouse:100-200)", param, part)
		}
		if !slices.Contains(topology.ClientNames, name) {
			return nil, fmt.Errorf("param %s: unknown client %q (allowed: %s)", param, name, strings.Join(topology.ClientNames, ", "))
		}
		lo, hi, isRange := strings.Cut(rng, "-")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := strconv.Atoi(strings.TrimSpace(hi))
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("param %s: %s: %q is not min-max peers (non-negative integers)", param, name, rng)
		}
		out[name] = [2]int{a, b}
	}
	return out, nil
}

// Validate reports the first parameter out of range, by name. The check that every subnet
// has a subscribed peer is Neighbourhood's (it depends on the draw).
func (p NeighbourhoodParams) Validate() error {
	if p.Peers < 1 {
		return fmt.Errorf("param %s: %d: want at least 1", topology.ParamObservedPeers, p.Peers)
	}
	if p.Subnets < 1 || p.Subnets > gossip.AttestationSubnets {
		return fmt.Errorf("param %s: %d: want 1..%d (64 is the full form)", ParamSubnets, p.Subnets, gossip.AttestationSubnets)
	}
	if _, err := topology.ClientProfile(p.ObservedClient); err != nil {
		return fmt.Errorf("param %s: %w", topology.ParamObservedClient, err)
	}
	if err := topology.CheckShares(topology.ParamMix, p.Mix, topology.MixKinds); err != nil {
		return err
	}
	if err := topology.CheckShares(topology.ParamClients, p.Clients, topology.ClientNames); err != nil {
		return err
	}
	for _, c := range topology.ClientNames {
		d, ok := p.Degrees[c]
		switch {
		case !ok && p.Clients[c] > 0:
			return fmt.Errorf("param %s: no degree for client %s, which param %s gives a share", ParamDegrees, c, topology.ParamClients)
		case d[0] < 0 || d[1] < 0:
			return fmt.Errorf("param %s: %s: %d-%d: degrees must not be negative", ParamDegrees, c, d[0], d[1])
		case d[1] < d[0]:
			return fmt.Errorf("param %s: %s: %d-%d: want min ≤ max", ParamDegrees, c, d[0], d[1])
		case ok && d[0] <= OwnLinks && p.Clients[c] > 0:
			return fmt.Errorf("param %s: %s: %d-%d: a peer count must exceed the neighbourhood's own links of a peer (%d: the observed node), want at least %d", ParamDegrees, c, d[0], d[1], OwnLinks, OwnLinks+1)
		case ok && p.Clients[c] > 0:
			cl, _ := topology.ClientProfile(c)
			// On a topic the observed node is not on, all its mesh peers are outside peers.
			if d[0]-OwnLinks < meshFloor(cl) {
				return fmt.Errorf("param %s: %s: %d-%d: a %s peer cannot find its %d mesh peers on a topic (max(%d, its D %d)) among %d outside peers: want at least %d", ParamDegrees, c, d[0], d[1], c, meshFloor(cl), SubnetSearchPeers, cl.D, d[0]-OwnLinks, meshFloor(cl)+OwnLinks)
			}
			if p.Boundary != BoundaryOfDegree && p.Boundary < meshFloor(cl) {
				return fmt.Errorf("param %s: %d: a %s peer with %d outside peers cannot fill its mesh of %d (max(%d, its D %d)) on a topic the observed node is not on: want at least %d", ParamBoundary, p.Boundary, c, p.Boundary, meshFloor(cl), SubnetSearchPeers, cl.D, meshFloor(cl))
			}
		}
	}
	if !(p.DialledShare >= 0 && p.DialledShare <= 1) {
		return fmt.Errorf("param %s: %v: want 0..1", ParamDialledShare, p.DialledShare)
	}
	if p.Boundary < BoundaryOfDegree || p.Boundary == 0 {
		return fmt.Errorf("param %s: %d: want %s or a cap of at least 1", ParamBoundary, p.Boundary, BoundaryByDegree)
	}
	if err := checkOutsideShares(p.OutsideAllSubnets, p.OutsideSupernodes); err != nil {
		return err
	}
	if p.Latency != LatencyRegions && p.Latency != LatencyOff {
		return fmt.Errorf("param %s: %q: allowed %s, %s", ParamLatency, p.Latency, LatencyRegions, LatencyOff)
	}
	if p.ForkDigest == "" {
		return fmt.Errorf("neighbourhood: fork digest not set")
	}
	return nil
}

// NeighbourPeer is one real peer of the observed node.
type NeighbourPeer struct {
	Kind   string // topology.MixKinds
	Client topology.Client
	// Degree is the peer's own peer count on mainnet, drawn from its client's range.
	Degree int
	// Dialled: the observed node dialled this link (it is outbound at the observed node).
	Dialled bool
	// Topics it subscribes to (within the form's subnets), sorted.
	Topics []string
	// Boundary is its number of outside peers: Degree − OwnLinks, capped by param boundary.
	Boundary int
	// Outside are its outside peers (Boundary of them), kinds and subscriptions drawn from
	// the outside population (outsidepop.go); Subs maps each of its topics to the outside
	// peers subscribed to it. ToppedUp counts the subscriptions its subnet search added.
	Outside  []OutsidePeer
	Subs     map[string][]int
	ToppedUp int
	// Bandwidth is its class by kind: BandwidthFullNode (default nodes), BandwidthSupernode
	// or BandwidthAllSubnets.
	Bandwidth string
}

// NeighbourhoodPlan is the drawn neighbourhood.
type NeighbourhoodPlan struct {
	ObservedClient topology.Client
	ObservedTopics []string
	Peers          []NeighbourPeer
	// Subscribers maps each of the observed node's topics to the peers subscribed to it.
	Subscribers map[string][]int
	// BoundaryTotal is the number of outside peers over all real peers.
	BoundaryTotal int
	// ObservedBandwidth is the observed node's bandwidth class: BandwidthAllSubnets, as every
	// node subscribed to all subnets (the recording does not say its link; an assumption).
	ObservedBandwidth string
}

// Plan draws the population from the seed: kinds and clients apportioned like the
// mesh's, then shuffled; degrees uniform in each client's range; which links the observed
// node dialled; topics by kind (default nodes 2 consecutive subnets and custody 4,
// all-subnets nodes every subnet and custody 8, supernodes 2 subnets and custody 128), of
// which only the form's subnets are kept. It fails, naming the parameter, when one of the
// observed node's topics has no subscribed peer.
func Plan(p NeighbourhoodParams) (*NeighbourhoodPlan, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	obsClient, _ := topology.ClientProfile(p.ObservedClient)
	kindRng := rand.New(rand.NewPCG(uint64(p.Seed), 11))
	clientRng := rand.New(rand.NewPCG(uint64(p.Seed), 12))
	degreeRng := rand.New(rand.NewPCG(uint64(p.Seed), 13))
	subnetRng := rand.New(rand.NewPCG(uint64(p.Seed), 14))
	idRng := rand.New(rand.NewPCG(uint64(p.Seed), 15))
	kinds := topology.Apportion(p.Mix, topology.MixKinds, p.Peers)
	kindRng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	clients := topology.Apportion(p.Clients, topology.ClientNames, p.Peers)
	clientRng.Shuffle(len(clients), func(i, j int) { clients[i], clients[j] = clients[j], clients[i] })
	dialled := int(p.DialledShare*float64(p.Peers) + 0.5)

	fd := p.ForkDigest
	keep := func(t string) bool {
		_, name, err := gossip.ParseTopic(t)
		if err != nil {
			return false
		}
		s := gossip.Subnet(name)
		return s < 0 || !strings.Contains(name, "beacon_attestation_") || s < p.Subnets
	}
	observed, err := workload.ParseProfile("all-subnets")
	if err != nil {
		return nil, err
	}
	plan := &NeighbourhoodPlan{ObservedClient: obsClient, Subscribers: map[string][]int{}, ObservedBandwidth: BandwidthAllSubnets}
	for _, t := range observed.Topics(fd) {
		if keep(t) {
			plan.ObservedTopics = append(plan.ObservedTopics, t)
		}
	}
	def, err := workload.ParseProfile("default")
	if err != nil {
		return nil, err
	}
	var global []string
	for _, t := range def.Topics(fd) {
		if _, name, err := gossip.ParseTopic(t); err == nil && gossip.Subnet(name) < 0 {
			global = append(global, t)
		}
	}
	for i := range p.Peers {
		cl, _ := topology.ClientProfile(clients[i])
		rg := p.Degrees[clients[i]]
		deg := rg[0]
		if rg[1] > rg[0] {
			deg += degreeRng.IntN(rg[1] - rg[0] + 1)
		}
		var id [32]byte
		for k := 0; k < len(id); k += 8 {
			v := idRng.Uint64()
			for b := range 8 {
				id[k+b] = byte(v >> (8 * b))
			}
		}
		topics, custody := kindSubscriptions(fd, global, kinds[i], subnetRng.IntN(gossip.AttestationSubnets))
		for _, c := range workload.CustodyColumns(new(uint256.Int).SetBytes32(id[:]), custody) {
			topics = append(topics, gossip.Topic(fd, gossip.DataColumnTopic(c)))
		}
		topics = slices.DeleteFunc(topics, func(t string) bool { return !keep(t) })
		slices.Sort(topics)
		b := deg - OwnLinks
		if p.Boundary != BoundaryOfDegree {
			b = min(b, p.Boundary)
		}
		np := NeighbourPeer{Kind: kinds[i], Client: cl, Degree: deg, Dialled: i < dialled, Topics: topics, Boundary: b, Bandwidth: BandwidthFullNode}
		switch kinds[i] {
		case topology.KindSupernode:
			np.Bandwidth = BandwidthSupernode
		case topology.KindAllSubnets:
			np.Bandwidth = BandwidthAllSubnets
		}
		if err := drawOutside(&np, b, p, fd, global, func(t string) bool { return slices.Contains(plan.ObservedTopics, t) },
			rand.New(rand.NewPCG(uint64(p.Seed), 1000+uint64(i)))); err != nil {
			return nil, err
		}
		plan.Peers = append(plan.Peers, np)
		plan.BoundaryTotal += b
	}
	for i, pr := range plan.Peers {
		for _, t := range pr.Topics {
			if slices.Contains(plan.ObservedTopics, t) {
				plan.Subscribers[t] = append(plan.Subscribers[t], i)
			}
		}
	}
	for _, t := range plan.ObservedTopics {
		if len(plan.Subscribers[t]) == 0 {
			_, name, _ := gossip.ParseTopic(t)
			return nil, fmt.Errorf("param %s: with %d peers and this mix no peer subscribes to %s of the observed node (raise the all-subnets or supernode share, param %s, or the peers, param %s)",
				topology.ParamMix, p.Peers, name, topology.ParamMix, topology.ParamObservedPeers)
		}
	}
	return plan, nil
}

// PeripheryCapacity checks that the periphery fits: boundary peers × bytes each plus the
// real nodes × bytes each must stay within available bytes. The error names param boundary
// and says what the run would need.
func (pl *NeighbourhoodPlan) PeripheryCapacity(perBoundary, perReal, available int64) error {
	outside := int64(pl.BoundaryTotal)
	need := outside*perBoundary + int64(len(pl.Peers)+1)*perReal
	if need > available {
		return fmt.Errorf("param %s: %d outside peers (%.0f MiB) and %d real nodes (%.0f MiB) need %.0f MiB, this machine has %.0f MiB available: lower %s (a cap), %s or %s",
			ParamBoundary, pl.BoundaryTotal, float64(outside*perBoundary)/(1<<20), len(pl.Peers)+1,
			float64(int64(len(pl.Peers)+1)*perReal)/(1<<20), float64(need)/(1<<20), float64(available)/(1<<20), ParamBoundary, ParamDegrees, topology.ParamObservedPeers)
	}
	return nil
}
