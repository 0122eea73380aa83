package mesh

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/topology"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/workload"
)

func defaultPlan(t *testing.T) *topology.Plan {
	t.Helper()
	plan, err := Plan(meshMembers(topology.DefaultMeshNodes), topology.DefaultMeshParams())
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func kindCount(plan *topology.Plan) map[string]int {
	out := map[string]int{}
	for _, n := range plan.Nodes {
		out[n.Kind]++
	}
	return out
}

func TestMeshDeterminism(t *testing.T) {
	a, b := defaultPlan(t), defaultPlan(t)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same members and parameters gave different plans")
	}
	p := topology.DefaultMeshParams()
	p.Seed = 2
	c, err := Plan(meshMembers(topology.DefaultMeshNodes), p)
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for i := range a.Nodes {
		if slices.Equal(a.Nodes[i].Peers, c.Nodes[i].Peers) {
			same++
		}
	}
	if same > len(a.Nodes)/4 {
		t.Errorf("seed 2 kept the peers of %d of %d nodes", same, len(a.Nodes))
	}
	// A different client mix or compressed share keeps the graph (separate random streams).
	p = topology.DefaultMeshParams()
	p.Clients = map[string]float64{"prysm": 1}
	p.CompressedShare = 0.5
	d, err := Plan(meshMembers(topology.DefaultMeshNodes), p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Nodes {
		if !slices.Equal(a.Nodes[i].Peers, d.Nodes[i].Peers) || !slices.Equal(a.Nodes[i].Topics, d.Nodes[i].Topics) {
			t.Fatalf("node %d: client mix and compressed share changed the graph or topics", i)
		}
	}
}

func TestMeshKindsAndTopics(t *testing.T) {
	plan := defaultPlan(t)
	// 47 others at 0.94/0.02/0.04 by largest remainder: 44.18, 0.94, 1.88.
	if got, want := kindCount(plan), map[string]int{topology.KindObserved: 1, topology.KindDefault: 44, topology.KindAllSubnets: 1, topology.KindSupernode: 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("kinds %v, want %v", got, want)
	}
	if plan.Observed != 0 || plan.Nodes[0].Kind != topology.KindObserved || plan.Nodes[0].Publishes {
		t.Fatalf("observed %d, node 0 %s publishes %v", plan.Observed, plan.Nodes[0].Kind, plan.Nodes[0].Publishes)
	}
	if want := mustProfile(t, "all-subnets").Topics(testDigest); !slices.Equal(plan.Nodes[0].Topics, want) {
		t.Error("observed node's topics are not the workload's all-subnets profile")
	}
	if plan.Nodes[0].Client.Name != "teku" {
		t.Errorf("observed client %s", plan.Nodes[0].Client.Name)
	}
	attCover := map[int]int{}
	for i, n := range plan.Nodes[1:] {
		var att, sync, cols []int
		global := 0
		for _, tp := range n.Topics {
			_, name, err := gossip.ParseTopic(tp)
			if err != nil {
				t.Fatal(err)
			}
			switch s := gossip.Subnet(name); {
			case s < 0:
				global++
			case gossip.NameCategory(name) == gossip.Attestation:
				att = append(att, s)
			case gossip.NameCategory(name) == gossip.SyncCommittee:
				sync = append(sync, s)
			default:
				cols = append(cols, s)
			}
		}
		if global != 3 || !n.Publishes {
			t.Errorf("node %d: %d global topics, publishes %v", i+1, global, n.Publishes)
		}
		switch n.Kind {
		case topology.KindDefault, topology.KindSupernode:
			slices.Sort(att)
			consecutive := len(att) == 2 && (att[1] == att[0]+1 || (att[0] == 0 && att[1] == 63))
			wantCols := map[string]int{topology.KindDefault: 4, topology.KindSupernode: 128}[n.Kind]
			if !consecutive || len(sync) != 0 || len(cols) != wantCols {
				t.Errorf("%s node %d: subnets %v, sync %v, %d columns", n.Kind, i+1, att, sync, len(cols))
			}
			for _, s := range att {
				attCover[s]++
			}
		case topology.KindAllSubnets:
			if len(att) != 64 || len(sync) != 4 || len(cols) != 8 {
				t.Errorf("all-subnets node %d: %d, %d, %d subnets", i+1, len(att), len(sync), len(cols))
			}
		}
	}
	// 46 subnet pairs spread round from one offset: every subnet once, 28 twice.
	if len(attCover) != 64 {
		t.Errorf("default and supernode pairs cover %d subnets, want 64", len(attCover))
	}
}

func TestMeshGraph(t *testing.T) {
	p := topology.DefaultMeshParams()
	for _, n := range []int{topology.DefaultMeshNodes, 16, 32, 200} {
		plan, err := Plan(meshMembers(n), p)
		if err != nil {
			t.Fatalf("%d nodes: %v", n, err)
		}
		// Peers symmetric, Dial ⊆ Peers, each edge dialled by exactly one end.
		edges := 0
		for u, nd := range plan.Nodes {
			if !slices.IsSorted(nd.Peers) || !slices.IsSorted(nd.Dial) || len(nd.Direct) != 0 {
				t.Fatalf("%d nodes: node %d lists unsorted or has direct peers", n, u)
			}
			for _, v := range nd.Peers {
				if v == u || !slices.Contains(plan.Nodes[v].Peers, u) {
					t.Fatalf("%d nodes: edge %d–%d is not symmetric", n, u, v)
				}
				ud, vd := slices.Contains(nd.Dial, v), slices.Contains(plan.Nodes[v].Dial, u)
				if ud == vd {
					t.Fatalf("%d nodes: edge %d–%d dialled by %v/%v", n, u, v, ud, vd)
				}
			}
			for _, v := range nd.Dial {
				if !slices.Contains(nd.Peers, v) {
					t.Fatalf("%d nodes: node %d dials non-peer %d", n, u, v)
				}
			}
			edges += len(nd.Dial)
		}
		// Degrees: ordinary nodes around the target, the observed node at its count.
		obs := plan.Nodes[plan.Observed]
		if want := min(p.ObservedPeers, n-1); len(obs.Peers) < want || len(obs.Peers) > want+3 {
			t.Errorf("%d nodes: observed node has %d peers, want %d (+ at most 3 from the subnet search)", n, len(obs.Peers), want)
		}
		if plan.ObservedPeersCapped != (n-1 < p.ObservedPeers) {
			t.Errorf("%d nodes: ObservedPeersCapped %v", n, plan.ObservedPeersCapped)
		}
		var sum, low, count int
		for _, nd := range plan.Nodes {
			if nd.Kind != topology.KindDefault {
				continue
			}
			d := len(nd.Peers)
			sum += d
			count++
			if d < p.Degree-2 {
				low++
			}
		}
		mean := float64(sum) / float64(count)
		if mean < float64(p.Degree)-0.5 || mean > float64(p.Degree)+1 || low > max(1, count/20) {
			t.Errorf("%d nodes: default nodes' mean degree %.1f (target %d), %d of %d more than 2 below", n, mean, p.Degree, low, count)
		}
		t.Logf("%d nodes: %d edges, observed %d peers, default nodes' mean degree %.2f", n, edges, len(obs.Peers), mean)
	}
}

// TestMeshCoverage checks the subnet search: the observed node has a subscriber among its
// peers on every topic, every node on every topic somebody else subscribes to, and each
// subnet topic's subscribers form one connected group.
func TestMeshCoverage(t *testing.T) {
	for _, seed := range []int64{1, 2, 3, 4} {
		p := topology.DefaultMeshParams()
		p.Seed = seed
		plan, err := Plan(meshMembers(topology.DefaultMeshNodes), p)
		if err != nil {
			t.Fatal(err)
		}
		subs := subscribers(plan)
		for u, nd := range plan.Nodes {
			for _, tp := range nd.Topics {
				if len(subs[tp]) < 2 {
					continue
				}
				if !slices.ContainsFunc(nd.Peers, func(v int) bool { return slices.Contains(subs[tp], v) }) {
					t.Errorf("seed %d: node %d (%s) has no peer on %s", seed, u, nd.Kind, tp)
				}
			}
		}
		for tp, s := range subs {
			if !isSubnetTopic(tp) {
				continue
			}
			g := newGraph(len(plan.Nodes))
			for u, nd := range plan.Nodes {
				for _, v := range nd.Peers {
					g.add(u, v)
				}
			}
			if c := g.components(s); len(c) != 1 {
				t.Errorf("seed %d: subscribers of %s form %d groups", seed, tp, len(c))
			}
		}
	}
}

// TestMeshWaitFor: a node waits for each neighbour on exactly the topics that neighbour
// subscribes to; on topics both subscribe to, that is symmetric.
func TestMeshWaitFor(t *testing.T) {
	plan := defaultPlan(t)
	for u, nd := range plan.Nodes {
		want := map[string][]int{}
		for _, v := range nd.Peers {
			for _, tp := range plan.Nodes[v].Topics {
				want[tp] = append(want[tp], v)
			}
		}
		if !reflect.DeepEqual(nd.WaitFor, want) {
			t.Fatalf("node %d waits for %v, want %v", u, nd.WaitFor, want)
		}
		for tp, vs := range nd.WaitFor {
			for _, v := range vs {
				if slices.Contains(nd.Topics, tp) && !slices.Contains(plan.Nodes[v].WaitFor[tp], u) {
					t.Fatalf("node %d waits for %d on shared %s but not the reverse", u, v, tp)
				}
			}
		}
	}
}

func TestMeshClientsAndCodecs(t *testing.T) {
	plan := defaultPlan(t)
	clients := map[string]int{}
	for _, nd := range plan.Nodes[1:] {
		clients[nd.Client.Name]++
		if len(nd.Codecs) != 0 {
			t.Fatal("compressed share 0 but a node offers a codec")
		}
	}
	// 47 at 0.60/0.23/0.12/0.03/0.02: 28.2, 10.81, 5.64, 1.41, 0.94.
	if want := map[string]int{"lighthouse": 28, "prysm": 11, "teku": 6, "nimbus": 1, "lodestar": 1}; !reflect.DeepEqual(clients, want) {
		t.Errorf("clients %v, want %v", clients, want)
	}
	for _, share := range []float64{0.5, 1} {
		p := topology.DefaultMeshParams()
		p.CompressedShare = share
		plan, err := Plan(meshMembers(topology.DefaultMeshNodes), p)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, nd := range plan.Nodes {
			if len(nd.Codecs) == 1 && nd.Codecs[0].String() == "snappy-stream" {
				n++
			}
		}
		if want := int(share * topology.DefaultMeshNodes); n != want || len(plan.Nodes[0].Codecs) != 1 {
			t.Errorf("share %v: %d nodes offer snappy-stream (observed %v), want %d with the observed one", share, n, plan.Nodes[0].Codecs, want)
		}
	}
}

func TestApportion(t *testing.T) {
	for _, c := range []struct {
		shares map[string]float64
		total  int
		want   map[string]int
	}{
		{map[string]float64{"a": 0.94, "b": 0.02, "c": 0.04}, 47, map[string]int{"a": 44, "b": 1, "c": 2}},
		// 15 × 0.02 = 0.3 would round to none: a share above 0 keeps one node.
		{map[string]float64{"a": 0.94, "b": 0.02, "c": 0.04}, 15, map[string]int{"a": 13, "b": 1, "c": 1}},
		{map[string]float64{"a": 0.5, "b": 0.5, "c": 0}, 3, map[string]int{"a": 2, "b": 1}},
		{map[string]float64{"a": 0.5, "b": 0.5, "c": 0.5}, 1, map[string]int{"a": 1}},
	} {
		got := map[string]int{}
		for _, name := range topology.Apportion(c.shares, []string{"a", "b", "c"}, c.total) {
			got[name]++
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("topology.Apportion(%v, %d) = %v, want %v", c.shares, c.total, got, c.want)
		}
	}
}

// TestMeshErrors: bad input fails before anything starts, naming the parameter and what it
// allows.
func TestMeshErrors(t *testing.T) {
	for _, c := range []struct {
		params map[string]string
		want   []string
	}{
		{map[string]string{topology.ParamClients: "prysm:0.5,geth:0.5"}, []string{"param clients", `"geth"`, "lighthouse"}},
		{map[string]string{topology.ParamClients: "prysm:0.5,teku:0.4"}, []string{"param clients", "sum to 0.9", "want 1"}},
		{map[string]string{topology.ParamClients: "prysm:1.5,teku:-0.5"}, []string{"param clients", "teku share -0.5", "≥ 0"}},
		{map[string]string{topology.ParamClients: "prysm"}, []string{"param clients", "name:share"}},
		{map[string]string{topology.ParamClients: "prysm:0.5,prysm:0.5"}, []string{"param clients", "twice"}},
		{map[string]string{topology.ParamMix: "default:0.5,archive:0.5"}, []string{"param mix", `"archive"`, "all-subnets, supernode"}},
		{map[string]string{topology.ParamMix: "default:0.5,supernode:0.6"}, []string{"param mix", "sum to 1.1"}},
		{map[string]string{topology.ParamDegree: "0"}, []string{"param degree", "positive integer"}},
		{map[string]string{topology.ParamDegree: "many"}, []string{"param degree", "positive integer"}},
		{map[string]string{topology.ParamObservedPeers: "-1"}, []string{"param observed_peers"}},
		{map[string]string{topology.ParamObservedClient: "reth"}, []string{"param observed_client", "allowed: spec, prysm"}},
		{map[string]string{topology.ParamCompressedShare: "1.5"}, []string{"param compressed_share", "0..1"}},
		{map[string]string{topology.ParamCompressedShare: "half"}, []string{"param compressed_share"}},
		{map[string]string{topology.ParamCodec: "lz4"}, []string{"param codec", "allowed"}},
		{map[string]string{topology.ParamCodec: "plain", topology.ParamCompressedShare: "0.5"}, []string{"param codec", "plain", "compressed_share"}},
		{map[string]string{topology.ParamTopologySeed: "1.5"}, []string{"param topology_seed"}},
	} {
		_, err := topology.ParseMeshParams(c.params)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %v, want one containing %q", c.params, err, w)
				break
			}
		}
	}

	members := meshMembers(topology.DefaultMeshNodes)
	withMix := func(mix map[string]float64) topology.MeshParams {
		p := topology.DefaultMeshParams()
		p.Mix = mix
		return p
	}
	withDegree := func(d int) topology.MeshParams { p := topology.DefaultMeshParams(); p.Degree = d; return p }
	withObserved := func(o int) topology.MeshParams { p := topology.DefaultMeshParams(); p.Observed = o; return p }
	hubMember := append(meshMembers(3), topology.Member{Group: "hub", Role: topology.RoleHub})
	for _, c := range []struct {
		name    string
		members []topology.Member
		params  topology.MeshParams
		want    []string
	}{
		{"one member", meshMembers(1), topology.DefaultMeshParams(), []string{"at least 2 members"}},
		{"degree ≥ members", meshMembers(10), withDegree(10), []string{"param degree", "1..9"}},
		{"observed out of range", members, withObserved(48), []string{"observed member 48", "0..47"}},
		{"hub-leaves role", hubMember, topology.DefaultMeshParams(), []string{`role "hub"`}},
		// Default nodes only: nobody but the observed node is on the sync committee subnets.
		{"impossible", members, withMix(map[string]float64{topology.KindDefault: 1}), []string{"impossible topology", "no other node does", "param mix"}},
		{"impossible sync", members, withMix(map[string]float64{topology.KindDefault: 0.9, topology.KindSupernode: 0.1}),
			[]string{"impossible topology", "sync_committee_0", "0 all-subnets"}},
		{"zero degree", members, withDegree(0), []string{"param degree"}},
	} {
		_, err := Plan(c.members, c.params)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, w)
				break
			}
		}
	}
}

// TestOrigin checks the origin rule on the default mesh: never the observed node, always a
// node that reaches a subscriber, attestations mostly from nodes off the subnet, spread
// over the eligible nodes, a slot's block and columns from its proposer.
func TestOrigin(t *testing.T) {
	plan := defaultPlan(t)
	subs := subscribers(plan)
	att := gossip.Topic(testDigest, gossip.AttestationTopic(17))
	reaches := func(u int, tp string) bool {
		return slices.Contains(subs[tp], u) || slices.ContainsFunc(plan.Nodes[u].Peers, func(v int) bool { return slices.Contains(subs[tp], v) })
	}
	counts := map[int]int{}
	offSubnet := 0
	const draws = 20000
	for seq := range draws {
		o := plan.Origin(1, seq/500, seq, att)
		if o == plan.Observed || o < 0 || !reaches(o, att) {
			t.Fatalf("origin %d of message %d cannot publish on %s", o, seq, att)
		}
		counts[o]++
		if !slices.Contains(subs[att], o) {
			offSubnet++
		}
	}
	if float64(offSubnet)/draws < 0.8 {
		t.Errorf("%d of %d attestation origins subscribe to the subnet; want most off it (fanout)", draws-offSubnet, draws)
	}
	eligible := plan.EligibleOrigins(att)
	expect := float64(draws) / float64(len(eligible))
	for _, u := range eligible {
		if c := float64(counts[u]); c < 0.8*expect || c > 1.2*expect {
			t.Errorf("node %d originates %v of %d attestations, expected about %.0f", u, c, draws, expect)
		}
	}
	// Deterministic, and the same on a hand-built copy without the precomputed rule.
	hand := &topology.Plan{Nodes: plan.Nodes, Observed: plan.Observed}
	for seq := range 200 {
		for _, tp := range []string{att, gossip.Topic(testDigest, gossip.TopicAggregateAndProof), gossip.Topic(testDigest, gossip.DataColumnTopic(5))} {
			if a, b, c := plan.Origin(3, 1, seq, tp), plan.Origin(3, 1, seq, tp), hand.Origin(3, 1, seq, tp); a != b || a != c {
				t.Fatalf("origin of %d on %s: %d, %d, hand-built %d", seq, tp, a, b, c)
			}
		}
	}
	// Block and columns: the slot's proposer when it reaches the column's subscribers.
	block := gossip.Topic(testDigest, gossip.TopicBeaconBlock)
	proposers := map[int]bool{}
	for slot := range 50 {
		p := plan.Origin(1, slot, 0, block)
		proposers[p] = true
		for c := range gossip.DataColumnSubnets {
			col := gossip.Topic(testDigest, gossip.DataColumnTopic(c))
			o := plan.Origin(1, slot, 1+c, col)
			if reaches(p, col) != (o == p) || !reaches(o, col) {
				t.Fatalf("slot %d column %d from %d, proposer %d (reaches %v)", slot, c, o, p, reaches(p, col))
			}
		}
	}
	if len(proposers) < 30 {
		t.Errorf("50 slots had %d distinct proposers", len(proposers))
	}
	if o := plan.Origin(1, 0, 0, "/eth2/00000000/beacon_block/ssz_snappy"); o != -1 {
		t.Errorf("origin on a topic of another fork digest: %d, want -1", o)
	}
}

func TestClientProfiles(t *testing.T) {
	for _, name := range topology.ClientNames {
		c, err := topology.ClientProfile(name)
		if err != nil {
			t.Fatal(err)
		}
		// go-libp2p-pubsub's GossipSubParams.validate, which NewGossipSub enforces.
		if c.Name != name || !(c.HistoryGossip <= c.HistoryLength) || !(c.Dscore <= c.Dhi) ||
			!(c.Dlo <= c.D && c.D <= c.Dhi) || !(c.Dout < c.Dlo && c.Dout < c.D/2) ||
			c.Heartbeat <= 0 || c.FanoutTTL <= 0 || c.SeenTTL <= 0 || c.Dlazy < 1 || c.IDontWantThresholdBytes < 1 {
			t.Errorf("%s: %+v is not a valid go-libp2p-pubsub parameter set", name, c)
		}
	}
	lh, _ := topology.ClientProfile("lighthouse")
	if lh.D != 5 || lh.Dlo != 3 || lh.Dhi != 10 || lh.Dlazy != 3 || lh.Heartbeat.Seconds() != 1 || lh.HistoryLength != 12 || lh.IDontWantThresholdBytes != 1000 {
		t.Errorf("lighthouse %+v", lh)
	}
	if _, err := topology.ClientProfile("grandine"); err == nil || !strings.Contains(err.Error(), "allowed: spec, prysm, lighthouse, teku, lodestar, nimbus") {
		t.Errorf("unknown client: %v", err)
	}
}

// BenchmarkOrigin: every instance asks for the origin of every message of the schedule
// (about 26 000 a slot).
func BenchmarkOrigin(b *testing.B) {
	plan, err := Plan(meshMembers(topology.DefaultMeshNodes), topology.DefaultMeshParams())
	if err != nil {
		b.Fatal(err)
	}
	topics := []string{gossip.Topic(testDigest, gossip.AttestationTopic(3)), gossip.Topic(testDigest, gossip.DataColumnTopic(9))}
	b.ResetTimer()
	for i := range b.N {
		if plan.Origin(1, i>>12, i, topics[i&1]) < 0 {
			b.Fatal("no origin")
		}
	}
}

// TestMeshLarge builds a Kubernetes-sized mesh: the defaults hold at 500 nodes.
func TestMeshLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("500-node mesh")
	}
	plan, err := Plan(meshMembers(500), topology.DefaultMeshParams())
	if err != nil {
		t.Fatal(err)
	}
	if got := kindCount(plan); got[topology.KindAllSubnets] != 10 || got[topology.KindSupernode] != 20 {
		t.Errorf("500 nodes: kinds %v", got)
	}
	_ = workload.SlotDuration
}

// SameOrigins holds between plans built from the same members and parameters, and between
// hand-built copies of the same nodes; it fails for another graph.
func TestSameOrigins(t *testing.T) {
	a, b := defaultPlan(t), defaultPlan(t)
	p := topology.DefaultMeshParams()
	p.Seed = 2
	other, err := Plan(meshMembers(topology.DefaultMeshNodes), p)
	if err != nil {
		t.Fatal(err)
	}
	hand := func(pl *topology.Plan) *topology.Plan { return &topology.Plan{Nodes: pl.Nodes, Observed: pl.Observed} }
	for _, c := range []struct {
		name string
		x, y *topology.Plan
		want bool
	}{
		{"same parameters", a, b, true},
		{"other topology seed", a, other, false},
		{"hand-built copies", hand(a), hand(b), true},
		{"hand-built, other seed", hand(a), hand(other), false},
		{"built and hand-built", a, hand(a), false},
	} {
		if got := c.x.SameOrigins(c.y); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

const testDigest = "8c9f62fe"

func mustProfile(t *testing.T, name string) workload.Profile {
	t.Helper()
	p, err := workload.ParseProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
