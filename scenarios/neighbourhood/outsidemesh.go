package neighbourhood

import (
	"container/heap"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/streamsim/streamsim/sim/node"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/link"
)

// The arrival model "mesh" (issue 27; docs/neighbourhood.md, "Why a mainnet node gets k − 1
// copies"): mainnet beyond the neighbourhood is one random mesh of OutsideNodes nodes of degree
// OutsideDegree, each in a region of gossipsub-interop's latency model and of its bandwidth
// class. A message is published by a random node and reaches every node first along the
// fastest path, each hop costing the forwarder's validation, its uplink's time to send the
// message to its other mesh peers, and the latency between the two regions (gossipsub's first
// copies follow shortest paths: a node forwards to every mesh peer but its sender, and
// IDONTWANT only ever stops copies to nodes that already have the message). A real peer's
// boundary peers stand for its own other mesh peers on the topic (its client's D − 1 nodes of
// that mesh): its k-th copy arrives when the k-th fastest of them forwards it.
//
// Why this and not independent draws per peer: in a mesh every node's neighbours receive the
// message within about one hop of it, so a node is the first source of about one of its mesh
// peers, and receives a copy from the rest (k − 1 of k; docs/inputs.md §7 and the ethresear.ch
// thread cited in docs/neighbourhood.md). With each real peer's first copy drawn independently
// over 350 ms, the observed node, one hop after the earliest of its ~8 peers on a global topic,
// was ahead of about half of them and served them first, so it got ~3.5 copies from 8 meshes.

// Outside mesh defaults and bounds.
const (
	// DefaultOutsideNodes is mainnet's beacon node count, to its order: about 10 000
	// (ethresear.ch "Estimating validator decentralization using p2p data": 12–13 k nodes;
	// docs/inputs.md §9). The size sets the number of hops (log_7 of it); a 2 000-node mesh
	// gave seed 1 more aggregate copies (docs/neighbourhood.md, the sensitivity run).
	DefaultOutsideNodes = 10_000
	// OutsideDegree is the mesh degree of the outside nodes: the spec's D (8), the degree
	// Prysm, Teku, Lodestar and Nimbus keep (docs/inputs.md §7).
	OutsideDegree = 8
	// MinOutsideNodes and MaxOutsideNodes bound the parameter: fewer than a few hops of
	// degree 8 is no mesh, and the largest mainnet-sized graph costs ~0.1 s per scenario.
	MinOutsideNodes = 100
	MaxOutsideNodes = 200_000
	// outsideScenarios is how many propagations the model keeps per category: a message
	// takes one by its id. outsideSample is how many nodes of each propagation a real peer's
	// outside mesh peers are drawn from.
	outsideScenarios = 256
	outsideSample    = 512
)

// outsideMesh is the graph and the propagations computed on it so far.
type outsideMesh struct {
	nodes  int
	adj    []int32 // node u's neighbours: adj[u*OutsideDegree:(u+1)*OutsideDegree], -1 for none
	region []int8  // index in oneWay; -1: latency 0
	upBits []int64 // uplink rate; 0: unlimited
	oneWay [][]time.Duration
	seed   int64
	val    node.ValidationDelays
	pool   map[poolKey]*propagation
}

type poolKey struct {
	cat gossip.Category
	i   int
}

// propagation is one message's spread over the outside mesh, kept for a sample of nodes:
// when each one's forward leaves its uplink (its first arrival, its validation and its
// uplink's time for the message) and its region.
type propagation struct {
	leaves []time.Duration
	region []int8
}

// newOutsideMesh draws the graph from the topology seed: a random pairing of OutsideDegree
// stubs per node (self-loops and repeated pairs dropped, so a few nodes have one or two
// links fewer), regions by gossipsub-interop's weights (none when latency is off), bandwidth
// classes by its weights at cfg's rates (unlimited when bandwidth is off).
func newOutsideMesh(cfg Config, nodes int) (*outsideMesh, error) {
	if nodes < MinOutsideNodes || nodes > MaxOutsideNodes {
		return nil, fmt.Errorf("param %s: mesh:%d: want %d to %d outside nodes (mainnet has about %d)", ParamArrival, nodes, MinOutsideNodes, MaxOutsideNodes, DefaultOutsideNodes)
	}
	om := &outsideMesh{nodes: nodes, adj: make([]int32, nodes*OutsideDegree), region: make([]int8, nodes), upBits: make([]int64, nodes),
		seed: cfg.Seed, val: cfg.Validation, pool: map[poolKey]*propagation{}}
	regions := link.DefaultRegions()
	classes := []link.Class{{Name: "unlimited", Weight: 1}}
	if cfg.Bandwidth.On() {
		classes = nil
		for _, c := range link.DefaultClasses() {
			c.UpBitsPerSec = cfg.Bandwidth.FullNode
			if c.Name == BandwidthSupernode {
				c.UpBitsPerSec = cfg.Bandwidth.Supernode
			}
			classes = append(classes, c)
		}
	}
	shapes, err := link.Assign(cfg.Population.Seed^0x6f757473, nodes, regions, classes)
	if err != nil {
		return nil, fmt.Errorf("param %s: %w", ParamArrival, err)
	}
	latency := cfg.Population.Latency != LatencyOff
	if latency {
		om.oneWay = regions.OneWay
	}
	for u, sh := range shapes {
		om.region[u] = -1
		if latency {
			i, _ := regions.Index(sh.Region)
			om.region[u] = int8(i)
		}
		om.upBits[u] = sh.UpBitsPerSec
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Population.Seed), 0x6d657368))
	stubs := make([]int32, 0, nodes*OutsideDegree)
	for u := range nodes {
		for range OutsideDegree {
			stubs = append(stubs, int32(u))
		}
	}
	rng.Shuffle(len(stubs), func(i, j int) { stubs[i], stubs[j] = stubs[j], stubs[i] })
	deg := make([]int, nodes)
	for i := range om.adj {
		om.adj[i] = -1
	}
	for i := 0; i+1 < len(stubs); i += 2 {
		a, b := stubs[i], stubs[i+1]
		if a == b || slices.Contains(om.neighbours(a), b) {
			continue
		}
		om.adj[int(a)*OutsideDegree+deg[a]], om.adj[int(b)*OutsideDegree+deg[b]] = b, a
		deg[a]++
		deg[b]++
	}
	return om, nil
}

func (om *outsideMesh) neighbours(u int32) []int32 {
	nb := om.adj[int(u)*OutsideDegree : int(u+1)*OutsideDegree]
	if i := slices.Index(nb, -1); i >= 0 {
		return nb[:i]
	}
	return nb
}

// latency is the one-way delay from a node in region a to one in region b (-1: none).
func (om *outsideMesh) latency(a, b int8) time.Duration {
	if om.oneWay == nil || a < 0 || b < 0 {
		return 0
	}
	return om.oneWay[a][b]
}

// sendTime is how long node u's uplink takes to send a message of bytes to n peers at once
// (they share it, so the last copy leaves after n times one copy's time).
func (om *outsideMesh) sendTime(u int32, bytes, n int) time.Duration {
	if om.upBits[u] <= 0 || n <= 0 {
		return 0
	}
	return time.Duration(float64(bytes*8*n) / float64(om.upBits[u]) * float64(time.Second))
}

// propagate spreads one message of category c and wireBytes from a random origin (scenario
// seed s), with each node's validation drawn from c's range, and keeps the sample.
func (om *outsideMesh) propagate(c gossip.Category, wireBytes int, s uint64) *propagation {
	rng := rand.New(rand.NewPCG(s, uint64(c)))
	vr := om.val[c]
	valOf := make([]time.Duration, om.nodes)
	for u := range valOf {
		valOf[u] = draw(rng, vr)
	}
	origin := int32(rng.IntN(om.nodes))
	valOf[origin] = 0 // its own message: published unvalidated
	arrive := om.firstArrivals(origin, func(u int32) time.Duration {
		n := len(om.neighbours(u)) - 1
		if u == origin {
			n++
		}
		return valOf[u] + om.sendTime(u, wireBytes, n)
	})
	p := &propagation{leaves: make([]time.Duration, outsideSample), region: make([]int8, outsideSample)}
	for i := range outsideSample {
		u := int32(rng.IntN(om.nodes))
		for u == origin {
			u = int32(rng.IntN(om.nodes))
		}
		n := len(om.neighbours(u)) - 1
		p.leaves[i], p.region[i] = arrive[u]+valOf[u]+om.sendTime(u, wireBytes, n), om.region[u]
	}
	return p
}

// firstArrivals is Dijkstra from origin: each node's first arrival, where a hop from u to v
// costs hold(u) (u's validation and uplink) plus the latency between their regions. A node
// the graph does not reach has a very large time.
func (om *outsideMesh) firstArrivals(origin int32, hold func(int32) time.Duration) []time.Duration {
	const never = time.Duration(1<<62 - 1)
	t := make([]time.Duration, om.nodes)
	for i := range t {
		t[i] = never
	}
	t[origin] = 0
	q := &arrivalHeap{{origin, 0}}
	for q.Len() > 0 {
		e := heap.Pop(q).(arrivalEntry)
		if e.at > t[e.node] {
			continue
		}
		leave := e.at + hold(e.node)
		for _, v := range om.neighbours(e.node) {
			if at := leave + om.latency(om.region[e.node], om.region[v]); at < t[v] {
				t[v] = at
				heap.Push(q, arrivalEntry{v, at})
			}
		}
	}
	return t
}

type arrivalEntry struct {
	node int32
	at   time.Duration
}

type arrivalHeap []arrivalEntry

func (h arrivalHeap) Len() int           { return len(h) }
func (h arrivalHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h arrivalHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *arrivalHeap) Push(x any)        { *h = append(*h, x.(arrivalEntry)) }
func (h *arrivalHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// copies is when a real peer in region peerRegion, with sources outside mesh peers on the
// topic, receives its first n copies of message mid (category c, wireBytes on the wire),
// from publication, ascending. The message takes one of outsideScenarios propagations of its
// category by its id (computed on first use, with the size of the message that first takes
// it); the peer's outside mesh peers are drawn from that propagation's sample by rng.
func (om *outsideMesh) copies(c gossip.Category, mid [gossip.MessageIDBytes]byte, wireBytes int, peerRegion int8, sources, n int, rng *rand.Rand) []time.Duration {
	k := poolKey{c, int(binary.LittleEndian.Uint64(mid[:8]) % outsideScenarios)}
	p := om.pool[k]
	if p == nil {
		h := sha256.New()
		var b [24]byte
		binary.LittleEndian.PutUint64(b[:8], uint64(om.seed))
		binary.LittleEndian.PutUint64(b[8:16], uint64(c))
		binary.LittleEndian.PutUint64(b[16:], uint64(k.i))
		h.Write(b[:])
		p = om.propagate(c, wireBytes, binary.LittleEndian.Uint64(h.Sum(nil)))
		om.pool[k] = p
	}
	at := make([]time.Duration, max(sources, n))
	for j := range at {
		i := rng.IntN(outsideSample)
		at[j] = p.leaves[i] + om.latency(p.region[i], peerRegion)
	}
	slices.Sort(at)
	return at[:n]
}

// regionIndex is a region's index in the latency model for the outside mesh (-1: latency 0,
// as for the flat and unshaped placements).
func (om *outsideMesh) regionIndex(name string) int8 {
	if om.oneWay == nil {
		return -1
	}
	i, err := link.DefaultRegions().Index(name)
	if err != nil {
		return -1
	}
	return int8(i)
}
