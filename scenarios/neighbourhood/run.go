// Package neighbourhood runs the recorded node's view of mainnet in one process: the observed
// node (Teku parameters, every attestation subnet of the form) and its peers as real
// go-libp2p hosts running unmodified go-libp2p-pubsub (package node), and for each peer a
// periphery of boundary peers (package periphery) that deliver the workload's messages from
// outside and keep grafting. Everything the observed node receives comes from its real peers;
// nothing is injected on its links. docs/neighbourhood.md describes the model.
package neighbourhood

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamsim/streamsim/sim/network"
	"github.com/streamsim/streamsim/sim/node"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"google.golang.org/protobuf/proto"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/link"
	"github.com/streamsim/streamsim/periphery"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/sim/runner"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/trace"
	"github.com/streamsim/streamsim/workload"
)

// Arrival is the hop/latency model of the periphery. With MeshNodes > 0 (the default,
// "mesh:N") a message reaches each real peer from its boundary when its own outside mesh
// peers forward it, in a random mesh of MeshNodes nodes that stands for mainnet beyond the
// neighbourhood (outsidemesh.go). With MeshNodes 0 ("first:min-max,spread:min-max", the
// model before issue 27's global-topic work) a message published on mainnet at At reaches a
// real peer first from one of its boundary peers after First (uniform, independently for
// each peer), and further copies from other boundary peers each a uniform Spread later. First
// stands for the hops from the origin to the peer's outside neighbours (2–4 hops of 20–100 ms
// one-way latency plus validation, gossipsub-interop's region latencies 2–220 ms,
// docs/inputs.md §7).
type Arrival struct {
	First, Spread node.DelayRange
	MeshNodes     int
}

// IndependentArrival is the independent draws: first copy 50–400 ms after publication,
// further copies 0–150 ms apart.
var IndependentArrival = Arrival{
	First:  node.DelayRange{Min: 50 * time.Millisecond, Max: 400 * time.Millisecond},
	Spread: node.DelayRange{Min: 0, Max: 150 * time.Millisecond},
}

// DefaultArrival is the outside mesh of DefaultOutsideNodes nodes (its First and Spread are
// IndependentArrival's, used only without the mesh).
var DefaultArrival = Arrival{First: IndependentArrival.First, Spread: IndependentArrival.Spread, MeshNodes: DefaultOutsideNodes}

// ParamArrival is the periphery's arrival model as a parameter: "mesh[:nodes]" or
// "first:min-max,spread:min-max".
const ParamArrival = "arrival"

// ArrivalMesh names the outside mesh model in ParamArrival.
const ArrivalMesh = "mesh"

// String is the parseable form.
func (a Arrival) String() string {
	if a.MeshNodes > 0 {
		return fmt.Sprintf("%s:%d", ArrivalMesh, a.MeshNodes)
	}
	return fmt.Sprintf("first:%v-%v,spread:%v-%v", a.First.Min, a.First.Max, a.Spread.Min, a.Spread.Max)
}

// Describe is the report's words for the model.
func (a Arrival) Describe() string {
	if a.MeshNodes > 0 {
		return fmt.Sprintf("%s (an outside mesh of %d nodes of degree %d: each real peer's copies when its client's D − 1 outside mesh peers forward)", a, a.MeshNodes, OutsideDegree)
	}
	return fmt.Sprintf("independent, first %v–%v, further copies %v–%v apart", a.First.Min, a.First.Max, a.Spread.Min, a.Spread.Max)
}

// ParseArrival reads "mesh" or "mesh:10000" (the outside mesh and its node count), or
// "first:50ms-400ms,spread:0-150ms" (independent draws; either part may be left out and keeps
// IndependentArrival's); "" is DefaultArrival. Errors name ParamArrival.
func ParseArrival(v string) (Arrival, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return DefaultArrival, nil
	}
	if name, n, _ := strings.Cut(v, ":"); strings.TrimSpace(name) == ArrivalMesh {
		a := DefaultArrival
		if n = strings.TrimSpace(n); n != "" {
			nodes, err := strconv.Atoi(n)
			if err != nil || nodes < MinOutsideNodes || nodes > MaxOutsideNodes {
				return a, fmt.Errorf("param %s: %q: want %s or %s:N with N from %d to %d outside nodes (mainnet has about %d)", ParamArrival, v, ArrivalMesh, ArrivalMesh, MinOutsideNodes, MaxOutsideNodes, DefaultOutsideNodes)
			}
			a.MeshNodes = nodes
		}
		return a, nil
	}
	a := IndependentArrival
	for part := range strings.SplitSeq(v, ",") {
		name, rng, ok := strings.Cut(strings.TrimSpace(part), ":")
		var dst *node.DelayRange
		switch strings.TrimSpace(name) {
		case "first":
			dst = &a.First
		case "spread":
			dst = &a.Spread
		}
		if !ok || dst == nil {
			return a, fmt.Errorf("param %s: %q is not %s[:nodes], first:min-max or spread:min-max (e.g. first:50ms-400ms)", ParamArrival, part, ArrivalMesh)
		}
		// One range parser: the validation delays' (category syntax aside).
		d, err := runner.ParseValidationDelays("block:" + strings.TrimSpace(rng))
		if err != nil {
			return a, fmt.Errorf("param %s: %s: %q is not a non-negative, ordered duration range (e.g. 50ms-400ms)", ParamArrival, name, rng)
		}
		*dst = d[gossip.Block]
	}
	return a, nil
}

// Config is one run.
type Config struct {
	Population NeighbourhoodParams
	// Slots measured after Warmup slots (the meshes form and the periphery's pressure
	// settles during the warm-up; its traffic is not counted).
	Slots, Warmup int
	TimeScale     float64
	Seed          int64 // workload seed (messages, arrival draws)
	Validators    int
	// Era is the workload's era (workload.ApplyEra); empty: workload.DefaultEra.
	Era        string
	Validation node.ValidationDelays
	Arrival    Arrival
	// Copies is how many boundary peers deliver each message to each real peer.
	Copies int
	Queue  int
	Log    *slog.Logger
	// MemoryBytes is the memory the periphery may use; 0: MemAvailable of /proc/meminfo.
	MemoryBytes int64
	// Codec is the stream codec of the observed node's links: the observed node and its real
	// peers offer it (plain /meshsub/1.2.0 is always offered last); the boundary peers speak
	// plain /meshsub/1.2.0 only, so the peers' links to them stay plain.
	Codec codec.Spec
	// Trace, when set, records the observed node's gossipsub frames (its streams with its
	// real peers) for offline replay (`streamsim sweep`).
	Trace *trace.Writer
	// Network is the run's network, which makes every host (through Hosts, network.go); nil:
	// TCP on 127.0.0.1, the real clock.
	Network network.Network
	// Clock is the run's clock (Network's); under network.ClockVirtual the run is in a
	// synctest bubble, and CodecCPU says whether the nodes charge codec CPU in simulated time.
	Clock    network.Clock
	CodecCPU bool
	// Regraft is the mean further delay of an outside peer's GRAFT after a PRUNE's backoff
	// (simulated time; periphery.Config.Regraft); 0: as the backoff ends.
	Regraft time.Duration
	// Churn is the mean session of an outside peer (boundary peer or grafter, simulated
	// time): each leaves after an exponential time of this mean and a new one, with a new
	// identity, takes its place (outside.go); 0: none.
	Churn time.Duration
	// Bandwidth is the observed node's and its real peers' link rates by bandwidth class
	// (network.go); the zero value: unshaped.
	Bandwidth Bandwidth
	// ObservedIDontWant overrides the observed node's IDONTWANT threshold in bytes
	// (ParseObservedIDontWant); 0: its client profile's.
	ObservedIDontWant int
	// Framing, when set, is the outbound framing of the observed node and every real peer
	// (ParamFraming, framing.go); "": each its client's.
	Framing gossip.Framing
	// Forwarding is ParamForwarding's rule (framing.go); "": every node as go-libp2p-pubsub
	// (runs from before the parameter).
	Forwarding string
	// Scoring is ParamScoring's rule (scoring.go); "": off.
	Scoring string
}

// DefaultConfig is the calibration form.
func DefaultConfig() Config {
	vd, _ := runner.ParseValidationDelays(runner.DefaultValidationDelay)
	return Config{
		Population: DefaultNeighbourhoodParams(),
		Slots:      10, Warmup: 5, TimeScale: 1, Seed: 1, Validators: 1_000_000,
		Validation: vd, Arrival: DefaultArrival, Copies: 2, Queue: 30000, Log: slog.Default(),
		Churn: DefaultChurn, Bandwidth: DefaultBandwidth(), Forwarding: ForwardingClient, Scoring: ScoringOff,
	}
}

// Measured per-host costs that bound the periphery (periphery/cost_test.go,
// BenchmarkBoundary, and docs/inputs.md §6's 340 KiB per TCP host with pubsub).
const (
	BytesPerBoundary = 400 << 10
	BytesPerReal     = 4 << 20
)

// event is one delivery by one boundary peer: the k-th copy of a message to a real peer,
// made by the k-th of its boundary peers, in a seeded rotation from offset, that is in the
// real peer's mesh of the topic when the copy is due (a mainnet node's first copies come
// from its mesh; the others only gossip). Only when fewer are meshed does a copy go by a
// boundary peer out of the mesh, which gossips it (IHAVE at its next heartbeat).
type event struct {
	at     time.Duration // unscaled, from the start of slot 0
	peer   int           // real peer
	offset int           // where the rotation over its boundary peers starts
	k      int           // which copy
	m      *workload.Message
	out    *periphery.Message // m as the outside peers deliver it, one for all its events
}

type realNode struct {
	node *node.Node
	// mu guards the outside peers, which churn replaces while the schedule delivers.
	mu       sync.RWMutex
	boundary []*periphery.Peer // its outside peers, as plan.Peers[i].Outside
	retired  []periphery.Stats // of the outside peers churn replaced
	share    *meshShare
}

// deliverer is the boundary peer (of n) that makes copy k of a message from the rotation
// starting at offset: the k-th one in the real peer's mesh of the topic (inMesh), else the
// (k−meshed)-th of the others.
func deliverer(n int, inMesh func(int) bool, offset, k int) int {
	meshed := 0
	for j := range n {
		i := (offset + j) % n
		if inMesh(i) {
			if meshed == k {
				return i
			}
			meshed++
		}
	}
	rest := k - meshed
	for j := range n {
		i := (offset + j) % n
		if !inMesh(i) {
			if rest == 0 {
				return i
			}
			rest--
		}
	}
	return (offset + k) % n
}

// ObservedRegion is where the observed node sits in the latency model: Europe, the
// heaviest region of gossipsub-interop's model (56 % of nodes); the recording does not say.
const ObservedRegion = "europe"

// BoundaryRegion is the boundary peers' region: latency 0 to every real peer, since the
// periphery's schedule (Arrival) already says when a message reaches a real peer.
const BoundaryRegion = "boundary"

// run is one neighbourhood run's state, passed from phase to phase.
type run struct {
	cfg   Config
	plan  *NeighbourhoodPlan
	gen   *workload.Generator
	place placement
	net   *Hosts
	rep   *Report
	ct    *controlTracer
	mech  *mechanism
	// score reads the real peers' scores (ParamScoring client; nil otherwise); first counts
	// at the real peers the messages whose first copy came from the observed node.
	score *scoreWatch
	first *firstDeliveries
	// outside is the arrival model's mainnet beyond the neighbourhood (nil: independent
	// draws); peerRegion each real peer's region index in it.
	outside    *outsideMesh
	peerRegion []int8
	// ctx ends every goroutine the run started (subscriptions, periphery, schedule).
	ctx     context.Context
	obs     *node.Node
	reals   []*realNode
	places  []map[string][]int // topicPlaces' answers, by real peer and topic
	closeMu sync.Mutex         // churn adds closers while the run goes on
	closers []func()
	outsideCounters
}

// hostSet is every host of a run, made by its Network before any node starts.
type hostSet struct {
	observed *network.Host
	reals    []*network.Host
	boundary [][]*network.Host // per real peer: its outside peers'
}

// Run runs the neighbourhood and reports the observed node's view. Its phases: plan (every
// refusal, before anything starts), hosts on the network, nodes, periphery, schedule,
// measure, report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	// The process may make several runs (an A/B makes one per seed and codec): CPU is
	// counted from here.
	cpuStart := processCPU()
	r, err := newRun(cfg)
	if err != nil {
		return nil, err
	}
	var cancel context.CancelFunc
	r.ctx, cancel = context.WithCancel(ctx)
	defer cancel()
	defer r.close()
	hs, err := r.hosts()
	if err != nil {
		return nil, err
	}
	if err := r.nodes(hs); err != nil {
		return nil, err
	}
	if err := r.periphery(hs); err != nil {
		return nil, err
	}
	slots, genErr := r.schedule()
	m, err := r.measure(slots)
	if err != nil {
		return nil, err
	}
	select {
	case err := <-genErr:
		return nil, fmt.Errorf("workload: %w", err)
	default:
	}
	return r.report(m, cpuStart), nil
}

// newRun is the plan phase: it checks the configuration, plans the population, checks the
// periphery fits in memory, places the hosts in the latency model, makes the workload
// generator and chooses the network. Nothing has started when it refuses.
func newRun(cfg Config) (*run, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Slots < 1 || cfg.Warmup < 0 {
		return nil, fmt.Errorf("neighbourhood: slots %d, warm-up %d: want at least 1 measured slot", cfg.Slots, cfg.Warmup)
	}
	if cfg.Copies < 1 {
		return nil, fmt.Errorf("neighbourhood: copies %d: want at least 1", cfg.Copies)
	}
	if err := CheckOutside(cfg.Regraft, cfg.Churn); err != nil {
		return nil, err
	}
	if err := CheckScoring(cfg.Scoring, cfg.Validators, cfg.TimeScale); err != nil {
		return nil, err
	}
	for _, r := range []node.DelayRange{cfg.Arrival.First, cfg.Arrival.Spread} {
		if r.Min < 0 || r.Max < r.Min {
			return nil, fmt.Errorf("neighbourhood: arrival range %v-%v must be non-negative and ordered", r.Min, r.Max)
		}
	}
	plan, err := Plan(cfg.Population)
	if err != nil {
		return nil, err
	}
	plan.ObservedClient = observedClient(cfg, plan.ObservedClient)
	mem := cfg.MemoryBytes
	if mem <= 0 {
		mem = availableBytes()
	}
	if err := plan.PeripheryCapacity(BytesPerBoundary, BytesPerReal, mem); err != nil {
		return nil, err
	}
	for i, p := range plan.Peers {
		for _, t := range p.Topics {
			if n := len(p.Subs[t]); n < cfg.Copies {
				return nil, fmt.Errorf("param %s: %d: peer %d has %d outside peers on %s, fewer than the copies each message arrives with", ParamCopies, cfg.Copies, i, n, t)
			}
		}
	}
	wp := workload.DefaultParams()
	if cfg.Era != "" {
		if err := wp.ApplyEra(cfg.Era); err != nil {
			return nil, err
		}
	}
	wp.Seed, wp.Validators, wp.ForkDigest = cfg.Seed, cfg.Validators, cfg.Population.ForkDigest
	gen, err := workload.NewGenerator(wp)
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	place, err := placeHosts(cfg, plan)
	if err != nil {
		return nil, fmt.Errorf("param %s: %w", ParamLatency, err)
	}
	net, err := NewHosts(cfg.Network, cfg)
	if err != nil {
		return nil, fmt.Errorf("param %s: %w", ParamLatency, err)
	}
	ct := newControlTracer()
	ct.obs = newObserver(cfg.TimeScale)
	ct.mech = newMechanism()
	r := &run{cfg: cfg, plan: plan, gen: gen, place: place, net: net, ct: ct, mech: ct.mech,
		rep: &Report{Config: cfg, Plan: plan, Network: net.Name()}}
	if cfg.Scoring == ScoringClient {
		r.score = newScoreWatch(&ct.measuring)
	}
	if cfg.Arrival.MeshNodes > 0 {
		if r.outside, err = newOutsideMesh(cfg, cfg.Arrival.MeshNodes); err != nil {
			return nil, err
		}
		for _, sh := range place.peers {
			r.peerRegion = append(r.peerRegion, r.outside.regionIndex(sh.Region))
		}
	}
	return r, nil
}

// close stops what the run started, last first.
func (r *run) close() {
	r.closeMu.Lock()
	defer r.closeMu.Unlock()
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
}

// hosts is the network phase: every host of the run, placed in the latency model.
func (r *run) hosts() (hostSet, error) {
	mk := func(sh link.Shape) (*network.Host, error) {
		h, err := r.net.Host(sh)
		if err != nil {
			return nil, err
		}
		r.closeMu.Lock()
		r.closers = append(r.closers, func() { h.Close() })
		r.closeMu.Unlock()
		return h, nil
	}
	var hs hostSet
	var err error
	if hs.observed, err = mk(r.place.observed); err != nil {
		return hs, err
	}
	hs.reals = make([]*network.Host, len(r.plan.Peers))
	hs.boundary = make([][]*network.Host, len(r.plan.Peers))
	for i, p := range r.plan.Peers {
		if hs.reals[i], err = mk(r.place.peers[i]); err != nil {
			return hs, err
		}
		for range p.Boundary {
			h, err := mk(r.place.boundary)
			if err != nil {
				return hs, err
			}
			hs.boundary[i] = append(hs.boundary[i], h)
		}
	}
	return hs, nil
}

// nodes is the nodes phase: GossipSub on the observed node's and the real peers' hosts, the
// observed node linked to each real peer (dialled or dialling as the plan says), and every
// node subscribed to its topics.
func (r *run) nodes(hs hostSet) error {
	cfg, plan := r.cfg, r.plan
	var codecs []codec.Spec
	if !cfg.Codec.IsPlain() {
		codecs = []codec.Spec{cfg.Codec}
	}
	obsOpts := []node.Option{node.WithRawTracers(r.ct), node.WithCodecs(codecs...)}
	if cfg.Trace != nil {
		obsOpts = append(obsOpts, node.WithRecorder(cfg.Trace))
	}
	scoring, err := nodeScoring(cfg.Scoring, plan.ObservedClient, cfg.Validators, nil)
	if err != nil {
		return err
	}
	obs, err := node.NewNode(hs.observed, r.nodeOptions(plan.ObservedClient, 0, append(obsOpts, scoring...)...)...)
	if err != nil {
		return err
	}
	r.closers = append(r.closers, func() { obs.Close() })
	r.obs = obs
	r.first = &firstDeliveries{measuring: &r.ct.measuring, obs: obs.ID(), topics: map[string]bool{}}
	for _, t := range plan.ObservedTopics {
		r.first.topics[t] = true
	}
	r.reals = make([]*realNode, len(plan.Peers))
	for i, p := range plan.Peers {
		share := newMeshShare(obs.ID())
		// Reports read the observed node's streams: a real peer meters only its link to it.
		metered := func(p peer.ID) bool { return p == obs.ID() }
		var inspect pubsub.ExtendedPeerScoreInspectFn
		if r.score != nil {
			r.score.obs = obs.ID()
			inspect = r.score.inspect
		}
		scoring, err := nodeScoring(cfg.Scoring, p.Client, cfg.Validators, inspect)
		if err != nil {
			return err
		}
		n, err := node.NewNode(hs.reals[i], r.nodeOptions(p.Client, i+1, append([]node.Option{node.WithCodecs(codecs...), node.WithRawTracers(share, r.first), node.WithMeteredPeers(metered)}, scoring...)...)...)
		if err != nil {
			return err
		}
		r.closers = append(r.closers, func() { n.Close() })
		r.reals[i] = &realNode{node: n, share: share}
		r.ct.names[n.ID()] = i
		r.mech.heartbeat[n.ID()] = node.Dilate(p.Client, cfg.TimeScale).Heartbeat
	}
	for i, p := range plan.Peers {
		var err error
		if p.Dialled {
			err = obs.Host().Connect(r.ctx, r.reals[i].node.AddrInfo())
		} else {
			err = r.reals[i].node.Host().Connect(r.ctx, obs.AddrInfo())
		}
		if err != nil {
			return fmt.Errorf("link observed–peer %d: %w", i, err)
		}
	}
	if err := r.subscribe(obs, plan.ObservedTopics); err != nil {
		return err
	}
	for i, p := range plan.Peers {
		if err := r.subscribe(r.reals[i].node, p.Topics); err != nil {
			return err
		}
	}
	return nil
}

// nodeOptions are a real node's options; pos staggers the heartbeats over one interval.
func (r *run) nodeOptions(cl topology.Client, pos int, extra ...node.Option) []node.Option {
	cfg := r.cfg
	stagger := cl.Heartbeat * time.Duration(pos) / time.Duration(len(r.plan.Peers)+1)
	opts := []node.Option{node.WithClient(cl), node.WithTimeScale(cfg.TimeScale), node.WithValidationDelay(cfg.Validation),
		node.WithNodeSeed(cfg.Seed, pos), node.WithFlowControl(false), node.WithQueueSize(cfg.Queue), node.WithHeartbeatDelay(stagger),
		node.WithLogger(cfg.Log), node.WithCodecCPUCharge(cfg.CodecCPU), node.WithFraming(nodeFraming(cfg.Framing, cl)),
		node.WithEchoWithholding(nodeWithholds(cfg.Forwarding, cl))}
	return append(opts, extra...)
}

// subscribe joins n to topics and drains its deliveries until the run ends.
func (r *run) subscribe(n *node.Node, topics []string) error {
	for _, t := range topics {
		tp, err := n.Topic(t)
		if err != nil {
			return err
		}
		sub, err := tp.Subscribe(pubsub.WithBufferSize(4096))
		if err != nil {
			return err
		}
		go func() {
			for {
				if _, err := sub.Next(r.ctx); err != nil {
					return
				}
			}
		}()
	}
	return nil
}

// periphery is the periphery phase: each real peer dials its outside peers (so at Dhi it still
// accepts their GRAFTs: the pressure), which then subscribe and graft, spread over one backoff; churn starts; it returns once the first meshes have formed.
func (r *run) periphery(hs hostSet) error {
	cfg := r.cfg
	for i := range r.plan.Peers {
		for j, h := range hs.boundary[i] {
			bp, err := periphery.New(h.Host, r.outsideConfig(i, j, false, uint64(j)))
			if err != nil {
				return err
			}
			if err := r.reals[i].node.Host().Connect(r.ctx, h.AddrInfo()); err != nil {
				return fmt.Errorf("peer %d to its outside peer: %w", i, err)
			}
			r.reals[i].boundary = append(r.reals[i].boundary, bp)
		}
	}
	time.Sleep(200 * time.Millisecond) // the real peers' streams to the boundary open
	for _, rn := range r.reals {
		for _, bp := range rn.boundary {
			if err := bp.Start(r.ctx, rn.node.ID()); err != nil {
				return err
			}
		}
	}
	go r.churn(r.outsideSlots())
	time.Sleep(time.Duration(float64(3*time.Second) / cfg.TimeScale)) // first meshes
	return nil
}

// schedule is the schedule phase: a goroutine generates the workload one slot ahead and
// turns each message into its deliveries by boundary peers (the arrival model), sorted by
// time; a nil slot is the drain slot after the last. The messages of the observed node's
// topics in the measured slots are what it is expected to receive. An error of the
// generator closes the channel early and is sent on the second.
func (r *run) schedule() (<-chan []event, <-chan error) {
	cfg := r.cfg
	subs := map[string][]int{} // topic → real peers subscribed
	for i, p := range r.plan.Peers {
		for _, t := range p.Topics {
			subs[t] = append(subs[t], i)
		}
	}
	observedTopics := map[string]bool{}
	for _, t := range r.plan.ObservedTopics {
		observedTopics[t] = true
	}
	slots := make(chan []event, 1)
	genErr := make(chan error, 1)
	go func() {
		room := 0
		defer close(slots)
		for s := range cfg.Warmup + cfg.Slots + 1 { // +1: a drain slot without messages
			if s == cfg.Warmup+cfg.Slots {
				slots <- nil
				break
			}
			msgs, err := r.gen.NextSlot()
			if err != nil {
				genErr <- err
				return
			}
			evs := make([]event, 0, room) // about the previous slot's
			for k := range msgs {
				m := &msgs[k]
				peers := subs[m.Topic]
				if len(peers) == 0 {
					continue
				}
				mid := gossip.MessageID(m.Topic, m.Data)
				out := periphery.NewMessage(m.Topic, m.Data, string(mid[:]))
				if observedTopics[m.Topic] && s >= cfg.Warmup {
					r.rep.expected[m.Category]++
					r.ct.obs.expect(string(mid[:]), m.At, m.Category)
				}
				for _, i := range peers {
					rng := drawRng(cfg.Seed, mid, i)
					if r.outside != nil {
						offset := rng.IntN(len(r.plan.Peers[i].Subs[m.Topic]))
						// The peer's other mesh peers on the topic: its client's D but the
						// observed node (wire bytes: the payload, topic and framing).
						ats := r.outside.copies(m.Category, mid, len(m.Data)+len(m.Topic)+16, r.peerRegion[i], r.plan.Peers[i].Client.D-1, cfg.Copies, rng)
						for k, at := range ats {
							evs = append(evs, event{at: m.At + at, peer: i, offset: offset, k: k, m: m, out: out})
						}
						continue
					}
					at := m.At + draw(rng, cfg.Arrival.First)
					offset := rng.IntN(len(r.plan.Peers[i].Subs[m.Topic]))
					for k := range cfg.Copies {
						evs = append(evs, event{at: at, peer: i, offset: offset, k: k, m: m, out: out})
						at += draw(rng, cfg.Arrival.Spread)
					}
				}
			}
			slices.SortStableFunc(evs, func(a, b event) int { return cmp.Compare(a.at, b.at) })
			room = len(evs) + len(evs)/8
			select {
			case slots <- evs:
			case <-r.ctx.Done():
				return
			}
		}
	}()
	return slots, genErr
}

// measured is what the measure phase hands the report: the observed node's counters when
// the measured slots began, and the clock and CPU readings around them.
type measured struct {
	before        snapshot
	start         time.Time     // of slot 0 (warm-up included)
	wallStart     time.Duration // of slot 0, on the machine's clock (network.WallNow)
	measureStart  time.Time
	measureWall   time.Duration // network.WallNow at measureStart
	cpuBefore     time.Duration
	dropsToBefore int64
	maxLag        time.Duration
	// inMesh: per real peer, the time the observed node had spent in its mesh per topic
	// when the measured slots began.
	inMesh []map[string]time.Duration
	// withheld: the real peers' withheld forwards per category when the measured slots began.
	withheld [gossip.NumCategories]int64
	// samples are the observed node's byte totals so far at the start of each measured slot
	// (the first is before's), AtNs from measureStart; the report adds the end's.
	samples []result.Sample
}

// inMesh reads every real peer's in-mesh times of the observed node.
func (r *run) inMesh(now time.Time) []map[string]time.Duration {
	out := make([]map[string]time.Duration, len(r.reals))
	for i, rn := range r.reals {
		out[i] = rn.share.inMesh(now)
	}
	return out
}

// dropsTo counts the RPCs the real peers dropped on their way to the observed node.
func (r *run) dropsTo() int64 {
	var n int64
	for _, rn := range r.reals {
		n += rn.node.PubsubStats().DroppedTo[r.obs.ID().String()]
	}
	return n
}

// measure is the measure phase: it plays the schedule on the clock (each delivery made by
// the boundary peer the rotation names), snapshots the observed node's counters when the
// warm-up ends and samples its mesh once per measured slot, and returns after the drain slot.
func (r *run) measure(slots <-chan []event) (measured, error) {
	cfg := r.cfg
	m := measured{start: time.Now(), wallStart: network.WallNow()}
	r.ct.obs.begin(m.start)
	scaled := func(d time.Duration) time.Duration { return time.Duration(float64(d) / cfg.TimeScale) }
	slot := 0
	var known []int8 // deliverer's answers for the current copy: 0 not asked, 1 out, 2 in the mesh
	for evs := range slots {
		if evs != nil {
			r.progress(slot, m)
		}
		if slot == cfg.Warmup {
			m.before = snapshotOf(r.obs.Stats(), r.obs.PubsubStats())
			r.ct.measuring.Store(true)
			m.cpuBefore, m.measureStart, m.measureWall, m.dropsToBefore = processCPU(), time.Now(), network.WallNow(), r.dropsTo()
			m.inMesh = r.inMesh(m.measureStart)
			m.withheld = r.withheld()
			r.mech.begin(m.measureStart)
		}
		if slot >= cfg.Warmup && evs != nil {
			x := result.Sample{AtNs: int64(time.Since(m.measureStart)), In: m.before.in, Out: m.before.out}
			if slot > cfg.Warmup {
				x.In, x.Out = r.obs.CategoryTotals()
			}
			m.samples = append(m.samples, x)
			r.ct.obs.sampleMesh(r.obs.PubsubStats().MeshPeers, r.plan.ObservedTopics)
			r.sampleEligible()
		}
		if evs == nil { // drain
			time.Sleep(scaled(workload.SlotDuration))
			break
		}
		for _, e := range evs {
			target := m.start.Add(scaled(e.at))
			if d := time.Until(target); d > time.Millisecond {
				select {
				case <-time.After(d):
				case <-r.ctx.Done():
					return m, r.ctx.Err()
				}
			}
			lag := max(0, time.Since(target))
			m.maxLag = max(m.maxLag, lag)
			if slot >= cfg.Warmup {
				r.ct.obs.lag(lag)
			}
			// A boundary peer whose link failed (a real node that stopped reading for
			// yamux's write timeout) delivers no more; the run goes on and the report
			// counts it (delivery completeness says whether the observed node lost anything).
			rn := r.reals[e.peer]
			rn.mu.RLock()
			bps, subs := rn.boundary, r.plan.Peers[e.peer].Subs[e.m.Topic]
			// Each candidate's mesh membership asked once (deliverer may walk the
			// rotation twice), by the topic's place in its topics.
			at := r.topicPlaces(e.peer, e.m.Topic, subs)
			known = append(known[:0], make([]int8, len(subs))...)
			j := deliverer(len(subs), func(i int) bool {
				if known[i] == 0 {
					known[i] = 1
					if bps[subs[i]].InMeshAt(at[i]) {
						known[i] = 2
					}
				}
				return known[i] == 2
			}, e.offset, e.k)
			bp := bps[subs[j]]
			rn.mu.RUnlock()
			if err := bp.Deliver(e.out, at[j]); err != nil {
				if r.rep.BoundaryErrors == 0 {
					cfg.Log.Warn("boundary delivery failed", "peer", e.peer, "err", err)
				}
				r.rep.BoundaryErrors++
			}
		}
		slot++
	}
	r.ct.measuring.Store(false)
	return m, nil
}

// topicPlaces is, for each of real peer i's outside peers subs (its subscribers of topic), where
// topic first is in the peer's topics (periphery.Peer.InMeshAt); the schedule's goroutine only.
// A churned peer's replacement has the same topics (outsideConfig).
func (r *run) topicPlaces(i int, topic string, subs []int) []int {
	if r.places == nil {
		r.places = make([]map[string][]int, len(r.plan.Peers))
	}
	if r.places[i] == nil {
		r.places[i] = map[string][]int{}
	}
	at, ok := r.places[i][topic]
	if !ok {
		at = make([]int, len(subs))
		for x, j := range subs {
			at[x] = slices.Index(r.plan.Peers[i].Outside[j].Topics, topic)
		}
		r.places[i][topic] = at
	}
	return at
}

// progress logs, once per slot, where the run is: its slot, simulated time and the machine's
// time since the schedule began (on the virtual clock the full form takes about an hour, and
// a user wants to see it advance; on the real clock the two times agree unless it fell behind).
func (r *run) progress(slot int, m measured) {
	phase := "warm-up"
	if slot >= r.cfg.Warmup {
		phase = "measured"
	}
	r.cfg.Log.Info("progress", "slot", fmt.Sprintf("%d/%d", slot+1, r.cfg.Warmup+r.cfg.Slots), "phase", phase,
		"simulated", time.Since(m.start).Round(time.Second), "wall", (network.WallNow() - m.wallStart).Round(time.Second))
}

// report is the report phase: the observed node's meters stop here, and with them the
// recording (the summary's streams and the trace hold exactly the same frames); the
// measured slots' figures are the differences from the warm-up's end.
func (r *run) report(m measured, cpuStart time.Duration) *Report {
	rep := r.rep
	streams := r.obs.FreezeStats()
	stopped := time.Now()
	after := snapshotOf(streams, r.obs.PubsubStats())
	// The last interval ends when the meters stopped: it holds the last measured slot and
	// the drain slot, so the intervals add up to the measured figures (after − before).
	samples := append(m.samples, result.Sample{AtNs: int64(stopped.Sub(m.measureStart)), In: after.in, Out: after.out})
	rep.BySlot = result.BytesBySlot(samples, time.Duration(float64(workload.SlotDuration)/r.cfg.TimeScale))
	rep.Streams, rep.Pubsub = streams, after.ps
	// Wall time is the machine's (on the virtual clock time.Since is simulated time).
	rep.fill(m.before, after, r.ct, m.maxLag, network.WallNow()-m.wallStart)
	rep.Timing = r.ct.obs.timing(m.maxLag, processCPU()-m.cpuBefore, network.WallNow()-m.measureWall)
	rep.CPU = processCPU() - cpuStart
	rep.Timing.ObservedDrops = after.ps.Drops() - m.before.ps.Drops()
	rep.Timing.DropsToObserved = r.dropsTo() - m.dropsToBefore
	rep.ObservedPeers = len(r.obs.Host().Network().Peers())
	rep.Withheld = map[gossip.Category]int64{}
	for c, v := range r.withheld() {
		if d := v - m.withheld[c]; d > 0 {
			rep.Withheld[gossip.Category(c)] = d
		}
	}
	end := time.Now()
	var inMesh []map[string]time.Duration
	if m.inMesh != nil {
		after := r.inMesh(end)
		rep.MeshShares = meshShares(r.plan, m.inMesh, after, end.Sub(m.measureStart))
		for i := range after {
			d := map[string]time.Duration{}
			for t, v := range after[i] {
				d[t] = v - m.inMesh[i][t]
			}
			inMesh = append(inMesh, d)
		}
	}
	rep.Mechanism = r.mech.result(r.plan, r.ct.names, r.cfg.Population, end.Sub(m.measureStart), inMesh)
	for _, rn := range r.reals {
		rn.mu.RLock()
		stats := append([]periphery.Stats(nil), rn.retired...)
		for _, bp := range rn.boundary {
			stats = append(stats, bp.Stats())
		}
		rn.mu.RUnlock()
		for _, st := range stats {
			rep.Boundary.Published += st.Published
			rep.Boundary.IWantAnswered += st.IWantAnswered
			rep.Boundary.IHaveIDs += st.IHaveIDs
			rep.Boundary.GraftsSent += st.GraftsSent
			rep.Boundary.PrunesIn += st.PrunesIn
			rep.Boundary.MessagesIn += st.MessagesIn
		}
	}
	rep.Churned, rep.ChurnErrors = r.churned.Load(), r.churnErrors.Load()
	if r.score != nil {
		rep.Scoring = r.score.view()
	}
	if r.first != nil {
		rep.FirstFromObserved = r.first.shares()
	}
	return rep
}

// drawRng seeds the draws of one message's deliveries to one real peer.
func drawRng(seed int64, id [gossip.MessageIDBytes]byte, peerIdx int) *rand.Rand {
	h := sha256.New()
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(seed))
	binary.LittleEndian.PutUint64(b[8:], uint64(peerIdx))
	h.Write(b[:])
	h.Write(id[:])
	s := h.Sum(nil)
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(s[:8]), binary.LittleEndian.Uint64(s[8:16])))
}

func draw(r *rand.Rand, d node.DelayRange) time.Duration {
	if d.Max <= d.Min {
		return d.Min
	}
	return d.Min + time.Duration(r.Int64N(int64(d.Max-d.Min)+1))
}

// controlTracer sees the observed node's received RPCs: IHAVE ids and bytes per topic
// category (for scaling the calibration form's attestation gossip), and per attestation
// subnet which peers sent full messages and which only IHAVE.
type controlTracer struct {
	measuring atomic.Bool
	obs       *observer
	mech      *mechanism
	names     map[peer.ID]int
	mu        sync.Mutex
	ihaveIDs  [gossip.NumCategories]int64
	ihaveB    [gossip.NumCategories]int64
	full      map[string]map[peer.ID]bool
	gossiped  map[string]map[peer.ID]bool
	// forwarded: per topic, peers that sent a message the observed node had not asked them
	// for (a forward from their mesh); asked: per message id, the peers it sent IWANT to.
	forwarded map[string]map[peer.ID]bool
	asked     map[string][]peer.ID
	// sentTo: the peers the observed node sent each message to (by a hash of topic and
	// data); echoes: per category, copies received from a peer the observed node had
	// already sent the message to. A rust-libp2p or nim-libp2p peer that got the observed
	// node's copy while validating its own does not forward the message back; go and jvm
	// peers do, so an all-go neighbourhood over-counts by up to these.
	sentTo map[uint64][]peer.ID
	echoes [gossip.NumCategories]int64
}

var echoSeed = maphash.MakeSeed()

func messageKey(m *pb.Message) uint64 {
	var h maphash.Hash
	h.SetSeed(echoSeed)
	h.WriteString(m.GetTopic())
	h.Write(m.Data)
	return h.Sum64()
}

func newControlTracer() *controlTracer {
	return &controlTracer{names: map[peer.ID]int{}, full: map[string]map[peer.ID]bool{}, gossiped: map[string]map[peer.ID]bool{},
		sentTo: map[uint64][]peer.ID{}, forwarded: map[string]map[peer.ID]bool{}, asked: map[string][]peer.ID{}}
}

func (c *controlTracer) RecvRPC(rpc *pubsub.RPC) {
	c.mech.recv(rpc)
	if !c.measuring.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	from := rpc.From()
	mark := func(m map[string]map[peer.ID]bool, t string) {
		if m[t] == nil {
			m[t] = map[peer.ID]bool{}
		}
		m[t][from] = true
	}
	for _, m := range rpc.Publish {
		mark(c.full, m.GetTopic())
		if !slices.Contains(c.asked[gossip.PubsubMsgID(m)], from) {
			mark(c.forwarded, m.GetTopic())
		}
		if slices.Contains(c.sentTo[messageKey(m)], from) {
			c.echoes[gossip.TopicCategory(m.GetTopic())]++
		}
	}
	if rpc.Control == nil {
		return
	}
	for _, ih := range rpc.Control.Ihave {
		cat := gossip.TopicCategory(ih.GetTopicID())
		c.ihaveIDs[cat] += int64(len(ih.MessageIDs))
		c.ihaveB[cat] += int64(proto.Size(ih)) + 2 // + the field's tag and length
		mark(c.gossiped, ih.GetTopicID())
	}
}

func (*controlTracer) AddPeer(peer.ID, protocol.ID)             {}
func (*controlTracer) RemovePeer(peer.ID)                       {}
func (*controlTracer) OnNewOutboundStream(peer.ID, protocol.ID) {}
func (*controlTracer) OnClosedOutboundStream(peer.ID)           {}
func (*controlTracer) Join(string)                              {}
func (*controlTracer) Leave(string)                             {}
func (*controlTracer) Graft(peer.ID, string)                    {}
func (*controlTracer) Prune(peer.ID, string)                    {}
func (*controlTracer) ValidateMessage(*pubsub.Message)          {}
func (c *controlTracer) DeliverMessage(m *pubsub.Message) {
	if c.measuring.Load() {
		c.obs.deliver(m.ID)
	}
}
func (*controlTracer) RejectMessage(*pubsub.Message, string) {}
func (*controlTracer) DuplicateMessage(*pubsub.Message)      {}
func (*controlTracer) ThrottlePeer(peer.ID)                  {}
func (c *controlTracer) SendRPC(rpc *pubsub.RPC, to peer.ID) {
	if !c.measuring.Load() || (len(rpc.Publish) == 0 && len(rpc.GetControl().GetIwant()) == 0) {
		return
	}
	c.mu.Lock()
	for _, m := range rpc.Publish {
		k := messageKey(m)
		c.sentTo[k] = append(c.sentTo[k], to)
	}
	for _, w := range rpc.GetControl().GetIwant() {
		for _, id := range w.MessageIDs {
			c.asked[id] = append(c.asked[id], to)
		}
	}
	c.mu.Unlock()
}
func (*controlTracer) SendRPCCompleted(*pubsub.RPC, peer.ID, time.Duration) {}
func (*controlTracer) DropRPC(*pubsub.RPC, peer.ID)                         {}
func (*controlTracer) UndeliverableMessage(*pubsub.Message)                 {}

// snapshot is the observed node's counters at one moment.
type snapshot struct {
	in, out             map[gossip.Category]result.CategoryBytes
	control, controlOut map[string]result.ControlBytes // received, sent
	ps                  result.Pubsub
}

func snapshotOf(streams []result.StreamStats, ps result.Pubsub) snapshot {
	s := snapshot{in: map[gossip.Category]result.CategoryBytes{}, control: map[string]result.ControlBytes{}, ps: ps}
	s.out, s.controlOut = map[gossip.Category]result.CategoryBytes{}, map[string]result.ControlBytes{}
	for _, st := range streams {
		cats, ctl := s.in, s.control
		if st.Direction != "in" {
			cats, ctl = s.out, s.controlOut
		}
		for c, b := range st.Categories {
			v := cats[c]
			v.RawBytes += b.RawBytes
			v.WireBytes += b.WireBytes
			cats[c] = v
		}
		for k, b := range st.Control {
			v := ctl[k]
			v.RawBytes += b.RawBytes
			v.WireBytes += b.WireBytes
			v.Entries += b.Entries
			v.IDs += b.IDs
			ctl[k] = v
		}
	}
	return s
}

func availableBytes() int64 {
	if v := runner.MemAvailable(); v > 0 {
		return v
	}
	return 4 << 30
}

// withheld sums the real peers' forwards to the observed node left out because its copy came
// first (node.WithEchoWithholding), per category.
func (r *run) withheld() [gossip.NumCategories]int64 {
	var sum [gossip.NumCategories]int64
	for _, rn := range r.reals {
		for c, v := range rn.node.Withheld() {
			sum[c] += v
		}
	}
	return sum
}
