package neighbourhood

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamsim/streamsim/sim/node"

	"github.com/streamsim/streamsim/gossip"
)

// First arrivals are shortest paths: on a hand-made graph (a line 0–1–2–3–4 and a shortcut
// 0–3) with 10 ms at every forwarder and no latency, node 4 is two hops away, not four.
func TestFirstArrivals(t *testing.T) {
	om := &outsideMesh{nodes: 5, adj: make([]int32, 5*OutsideDegree), region: make([]int8, 5), upBits: make([]int64, 5)}
	for i := range om.adj {
		om.adj[i] = -1
	}
	link := func(a, b int32) {
		om.adj[int(a)*OutsideDegree+len(om.neighbours(a))] = b
		om.adj[int(b)*OutsideDegree+len(om.neighbours(b))] = a
	}
	link(0, 1)
	link(1, 2)
	link(2, 3)
	link(3, 4)
	link(0, 3)
	got := om.firstArrivals(0, func(int32) time.Duration { return 10 * time.Millisecond })
	want := []time.Duration{0, 10, 20, 10, 20}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if !slices.Equal(got, want) {
		t.Errorf("first arrivals %v, want %v", got, want)
	}
	// An uplink's time counts once per hop, for all the peers it sends to: 1000 B to 3 peers
	// at 8 Mbit/s is 3 ms.
	om.upBits[0] = 8e6
	if d := om.sendTime(0, 1000, 3); d != 3*time.Millisecond {
		t.Errorf("send time %v, want 3ms", d)
	}
}

// The graph of the default model: every node has at most OutsideDegree links, almost all
// exactly that many, links are symmetric and loop-free, every node is reached, regions and
// classes follow gossipsub-interop's weights, and the same seed draws the same graph.
func TestOutsideMeshGraph(t *testing.T) {
	cfg := DefaultConfig()
	om, err := newOutsideMesh(cfg, DefaultOutsideNodes)
	if err != nil {
		t.Fatal(err)
	}
	full, super := 0, 0
	for u := range int32(om.nodes) {
		nb := om.neighbours(u)
		if len(nb) == OutsideDegree {
			full++
		}
		for _, v := range nb {
			if v == u || !slices.Contains(om.neighbours(v), u) {
				t.Fatalf("link %d–%d is a loop or one-way", u, v)
			}
		}
		if om.upBits[u] == cfg.Bandwidth.Supernode {
			super++
		}
		if om.region[u] < 0 {
			t.Fatalf("node %d has no region with latency on", u)
		}
	}
	if full < om.nodes*98/100 {
		t.Errorf("%d of %d nodes have %d links", full, om.nodes, OutsideDegree)
	}
	if s := float64(super) / float64(om.nodes); s < 0.18 || s > 0.22 {
		t.Errorf("supernode share %.3f, want gossipsub-interop's 0.2", s)
	}
	for _, at := range om.firstArrivals(0, func(int32) time.Duration { return time.Millisecond }) {
		if at > time.Minute {
			t.Fatal("a node the mesh does not reach")
		}
	}
	again, _ := newOutsideMesh(cfg, DefaultOutsideNodes)
	if !slices.Equal(om.adj, again.adj) || !slices.Equal(om.region, again.region) {
		t.Error("the same topology seed drew another graph")
	}
	if _, err := newOutsideMesh(cfg, MinOutsideNodes-1); err == nil || !strings.Contains(err.Error(), "param "+ParamArrival) {
		t.Errorf("too few outside nodes: %v", err)
	}
}

// A real peer's copies: ascending, as many as asked, fixed by the seed; with more outside
// mesh peers the first copy comes earlier (the earliest of more forwarders); a block takes
// longer across 50 Mbit/s uplinks than with bandwidth off; and the first copy of a real peer
// with a client's D − 1 sources lands within about one hop of a typical node's first arrival
// (the property the model exists for: a mesh neighbour is about as early as the node).
func TestOutsideCopies(t *testing.T) {
	cfg := DefaultConfig()
	om, err := newOutsideMesh(cfg, 2000)
	if err != nil {
		t.Fatal(err)
	}
	var mid [gossip.MessageIDBytes]byte
	at := func(om *outsideMesh, c gossip.Category, bytes, sources, n int, seed uint64) []time.Duration {
		mid[0] = byte(seed)
		return om.copies(c, mid, bytes, 1, sources, n, rand.New(rand.NewPCG(seed, 1)))
	}
	a := at(om, gossip.Aggregate, 600, 7, 3, 1)
	if len(a) != 3 || !slices.IsSorted(a) || a[0] <= 0 {
		t.Errorf("copies %v", a)
	}
	if b := at(om, gossip.Aggregate, 600, 7, 3, 1); !slices.Equal(a, b) {
		t.Errorf("same seed, copies %v then %v", a, b)
	}
	mean := func(om *outsideMesh, c gossip.Category, bytes, sources int) time.Duration {
		var sum time.Duration
		for s := range uint64(200) {
			sum += at(om, c, bytes, sources, 1, s)[0]
		}
		return sum / 200
	}
	if one, seven := mean(om, gossip.Aggregate, 600, 1), mean(om, gossip.Aggregate, 600, 7); seven >= one {
		t.Errorf("first copy from 7 sources at %v on average, from 1 at %v", seven, one)
	}
	off := cfg
	off.Bandwidth = Bandwidth{}
	omOff, err := newOutsideMesh(off, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if on, unlimited := mean(om, gossip.Block, 60_000, 7), mean(omOff, gossip.Block, 60_000, 7); on <= unlimited {
		t.Errorf("a 60 kB block's first copy at %v with 50 Mbit/s uplinks, %v unlimited", on, unlimited)
	}
	// A typical node's first arrival against a real peer's with 7 sources: the propagation's
	// sample is of typical nodes (their forwards leave one validation after arrival).
	var typical, peer []time.Duration
	for s := range uint64(64) {
		p := om.propagate(gossip.Attestation, 300, s+1000)
		typical = append(typical, p.leaves...)
		mid[0] = byte(s)
		peer = append(peer, om.copies(gossip.Attestation, mid, 300, 1, 7, 1, rand.New(rand.NewPCG(s, 2)))[0])
	}
	slices.Sort(typical)
	slices.Sort(peer)
	if d := typical[len(typical)/2] - peer[len(peer)/2]; d < -150*time.Millisecond || d > 150*time.Millisecond {
		t.Errorf("median first copy of a real peer %v, a typical node's forward %v: more than a hop apart", peer[len(peer)/2], typical[len(typical)/2])
	}
	t.Logf("medians: typical node forwards %v, real peer's first copy %v", typical[len(typical)/2], peer[len(peer)/2])
}

// Latency off and validation off: nothing but uplinks, and with bandwidth off every copy
// comes at publication.
func TestOutsideMeshDegenerate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Population.Latency = LatencyOff
	cfg.Validation = node.ValidationDelays{}
	cfg.Bandwidth = Bandwidth{}
	om, err := newOutsideMesh(cfg, 500)
	if err != nil {
		t.Fatal(err)
	}
	var mid [gossip.MessageIDBytes]byte
	if c := om.copies(gossip.Block, mid, 100_000, -1, 7, 2, rand.New(rand.NewPCG(1, 1))); c[0] != 0 || c[1] != 0 {
		t.Errorf("copies %v, want both at publication", c)
	}
}

// The mesh's cost per propagation on a mainnet-sized graph, which bounds the model's setup:
// outsideScenarios of them per category.
func BenchmarkPropagate(b *testing.B) {
	om, err := newOutsideMesh(DefaultConfig(), DefaultOutsideNodes)
	if err != nil {
		b.Fatal(err)
	}
	for i := range b.N {
		om.propagate(gossip.Aggregate, 600, uint64(i))
	}
}
