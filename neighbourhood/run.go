// Package neighbourhood runs the recorded node's view of mainnet in one process: the observed
// node (Teku parameters, every attestation subnet of the form) and its peers as real
// go-libp2p hosts running unmodified go-libp2p-pubsub (package sim), and for each peer a
// periphery of boundary peers (package periphery) that deliver the workload's messages from
// outside and keep grafting. Everything the observed node receives comes from its real peers;
// nothing is injected on its links. docs/neighbourhood.md describes the model.
package neighbourhood

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"google.golang.org/protobuf/proto"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/link"
	"github.com/streamsim/streamsim/periphery"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/sim"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/trace"
	"github.com/streamsim/streamsim/workload"
)

// Arrival is the hop/latency model of the periphery: a message published on mainnet at At
// reaches a real peer first from one of its boundary peers after First (uniform), and further
// copies from other boundary peers each a uniform Spread later. First stands for the hops
// from the origin to the peer's outside neighbours (2–4 hops of 20–100 ms one-way latency
// plus validation, gossipsub-interop's region latencies 2–220 ms, reference.md §7).
type Arrival struct {
	First, Spread sim.DelayRange
}

// DefaultArrival: first copy 50–400 ms after publication, further copies 0–150 ms apart.
var DefaultArrival = Arrival{
	First:  sim.DelayRange{Min: 50 * time.Millisecond, Max: 400 * time.Millisecond},
	Spread: sim.DelayRange{Min: 0, Max: 150 * time.Millisecond},
}

// ParamArrival is the periphery's arrival model as a parameter: "first:min-max,spread:min-max".
const ParamArrival = "arrival"

// String is the parseable form.
func (a Arrival) String() string {
	return fmt.Sprintf("first:%v-%v,spread:%v-%v", a.First.Min, a.First.Max, a.Spread.Min, a.Spread.Max)
}

// ParseArrival reads "first:50ms-400ms,spread:0-150ms" (either part may be left out and
// keeps its default); errors name ParamArrival.
func ParseArrival(v string) (Arrival, error) {
	a := DefaultArrival
	v = strings.TrimSpace(v)
	if v == "" {
		return a, nil
	}
	for part := range strings.SplitSeq(v, ",") {
		name, rng, ok := strings.Cut(strings.TrimSpace(part), ":")
		var dst *sim.DelayRange
		switch strings.TrimSpace(name) {
		case "first":
			dst = &a.First
		case "spread":
			dst = &a.Spread
		}
		if !ok || dst == nil {
			return a, fmt.Errorf("param %s: %q is not first:min-max or spread:min-max (e.g. first:50ms-400ms)", ParamArrival, part)
		}
		// One range parser: the validation delays' (category syntax aside).
		d, err := sim.ParseValidationDelays("block:" + strings.TrimSpace(rng))
		if err != nil {
			return a, fmt.Errorf("param %s: %s: %q is not a non-negative, ordered duration range (e.g. 50ms-400ms)", ParamArrival, name, rng)
		}
		*dst = d[gossip.Block]
	}
	return a, nil
}

// Config is one run.
type Config struct {
	Population topology.NeighbourhoodParams
	// Slots measured after Warmup slots (the meshes form and the periphery's pressure
	// settles during the warm-up; its traffic is not counted).
	Slots, Warmup int
	TimeScale     float64
	Seed          int64 // workload seed (messages, arrival draws)
	Validators    int
	Validation    sim.ValidationDelays
	Arrival       Arrival
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
}

// DefaultConfig is the calibration form.
func DefaultConfig() Config {
	vd, _ := sim.ParseValidationDelays(sim.DefaultValidationDelay)
	return Config{
		Population: topology.DefaultNeighbourhoodParams(),
		Slots:      10, Warmup: 5, TimeScale: 1, Seed: 1, Validators: 1_000_000,
		Validation: vd, Arrival: DefaultArrival, Copies: 2, Queue: 30000, Log: slog.Default(),
	}
}

// Measured per-host costs that bound the periphery (periphery/cost_test.go,
// BenchmarkBoundary, and reference.md §6's 340 KiB per TCP host with pubsub).
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
	id     string
}

type realNode struct {
	node     *sim.Node
	boundary []*periphery.Peer
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

// latencyModel is the link model of a run: gossipsub-interop's regions plus the boundary's,
// every latency divided by the time scale (a modelled latency is simulated time), and each
// real peer's region drawn from the topology seed by the regions' weights. Links carry no
// rate limit. nil: latency off.
func latencyModel(cfg Config, peers int) (link.Regions, []string, error) {
	if cfg.Population.Latency == topology.LatencyOff {
		return link.Regions{}, nil, nil
	}
	base := link.DefaultRegions()
	shapes, err := link.Assign(cfg.Population.Seed, peers, base, []link.Class{{Name: "unlimited", Weight: 1}})
	if err != nil {
		return link.Regions{}, nil, err
	}
	withB, err := base.WithRegion(BoundaryRegion, 0)
	if err != nil {
		return link.Regions{}, nil, err
	}
	dil, err := withB.Dilate(cfg.TimeScale)
	if err != nil {
		return link.Regions{}, nil, err
	}
	regions := make([]string, peers)
	for i, sh := range shapes {
		regions[i] = sh.Region
	}
	return dil, regions, nil
}

// newHost makes a host in region (unshaped when the latency model is off).
func newHost(regions link.Regions, region string) (*sim.Host, error) {
	if region == "" {
		return sim.NewHost("")
	}
	lk, err := link.New(link.Shape{Region: region}, regions)
	if err != nil {
		return nil, err
	}
	return sim.NewShapedHost("", lk)
}

// Run runs the neighbourhood and reports the observed node's view.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	// The process may make several runs (an A/B makes one per seed and codec): CPU is
	// counted from here.
	cpuStart := processCPU()
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Slots < 1 || cfg.Warmup < 0 {
		return nil, fmt.Errorf("neighbourhood: slots %d, warm-up %d: want at least 1 measured slot", cfg.Slots, cfg.Warmup)
	}
	if cfg.Copies < 1 {
		return nil, fmt.Errorf("neighbourhood: copies %d: want at least 1", cfg.Copies)
	}
	for _, r := range []sim.DelayRange{cfg.Arrival.First, cfg.Arrival.Spread} {
		if r.Min < 0 || r.Max < r.Min {
			return nil, fmt.Errorf("neighbourhood: arrival range %v-%v must be non-negative and ordered", r.Min, r.Max)
		}
	}
	plan, err := topology.Neighbourhood(cfg.Population)
	if err != nil {
		return nil, err
	}
	mem := cfg.MemoryBytes
	if mem <= 0 {
		mem = availableBytes()
	}
	if err := plan.PeripheryCapacity(BytesPerBoundary, BytesPerReal, mem); err != nil {
		return nil, err
	}
	for i, p := range plan.Peers {
		if p.Boundary < cfg.Copies {
			return nil, fmt.Errorf("param %s: peer %d has %d boundary peers, fewer than the %d copies each message arrives with", topology.ParamBoundary, i, p.Boundary, cfg.Copies)
		}
	}
	wp := workload.DefaultParams()
	wp.Seed, wp.Validators, wp.ForkDigest = cfg.Seed, cfg.Validators, cfg.Population.ForkDigest
	gen, err := workload.NewGenerator(wp)
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Real nodes.
	spec, _ := topology.ClientProfile("spec")
	dil := sim.Dilate(spec, cfg.TimeScale)
	ct := newControlTracer()
	ct.obs = newObserver(cfg.TimeScale)
	nodeOpts := func(cl topology.Client, pos int, extra ...sim.Option) []sim.Option {
		stagger := cl.Heartbeat * time.Duration(pos) / time.Duration(len(plan.Peers)+1)
		return append([]sim.Option{sim.WithClient(cl), sim.WithTimeScale(cfg.TimeScale), sim.WithValidationDelay(cfg.Validation),
			sim.WithNodeSeed(cfg.Seed, pos), sim.WithFlowControl(false), sim.WithQueueSize(cfg.Queue), sim.WithHeartbeatDelay(stagger),
			sim.WithLogger(cfg.Log)}, extra...)
	}
	var closers []func()
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}()
	regions, peerRegions, err := latencyModel(cfg, len(plan.Peers))
	if err != nil {
		return nil, fmt.Errorf("param %s: %w", topology.ParamLatency, err)
	}
	region := func(r string) string {
		if peerRegions == nil {
			return ""
		}
		return r
	}
	oh, err := newHost(regions, region(ObservedRegion))
	if err != nil {
		return nil, err
	}
	var codecs []codec.Spec
	if !cfg.Codec.IsPlain() {
		codecs = []codec.Spec{cfg.Codec}
	}
	obsOpts := []sim.Option{sim.WithRawTracers(ct), sim.WithCodecs(codecs...)}
	if cfg.Trace != nil {
		obsOpts = append(obsOpts, sim.WithRecorder(cfg.Trace))
	}
	obs, err := sim.NewNode(oh, nodeOpts(plan.ObservedClient, 0, obsOpts...)...)
	if err != nil {
		oh.Close()
		return nil, err
	}
	closers = append(closers, func() { obs.Close() })
	reals := make([]*realNode, len(plan.Peers))
	for i, p := range plan.Peers {
		var r string
		if peerRegions != nil {
			r = peerRegions[i]
		}
		h, err := newHost(regions, r)
		if err != nil {
			return nil, err
		}
		n, err := sim.NewNode(h, nodeOpts(p.Client, i+1, sim.WithCodecs(codecs...))...)
		if err != nil {
			h.Close()
			return nil, err
		}
		closers = append(closers, func() { n.Close() })
		reals[i] = &realNode{node: n}
		ct.names[n.ID()] = i
	}
	for i, p := range plan.Peers {
		var err error
		if p.Dialled {
			err = obs.Host().Connect(runCtx, reals[i].node.AddrInfo())
		} else {
			err = reals[i].node.Host().Connect(runCtx, obs.AddrInfo())
		}
		if err != nil {
			return nil, fmt.Errorf("link observed–peer %d: %w", i, err)
		}
	}
	// Subscriptions: every real node joins its topics and drains its deliveries.
	subscribe := func(n *sim.Node, topics []string) error {
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
					if _, err := sub.Next(runCtx); err != nil {
						return
					}
				}
			}()
		}
		return nil
	}
	if err := subscribe(obs, plan.ObservedTopics); err != nil {
		return nil, err
	}
	for i, p := range plan.Peers {
		if err := subscribe(reals[i].node, p.Topics); err != nil {
			return nil, err
		}
	}
	// The periphery: each real peer dials its boundary peers (so at Dhi it still accepts
	// their GRAFTs: the pressure), which then subscribe and graft.
	for i, p := range plan.Peers {
		for range p.Boundary {
			h, err := newHost(regions, region(BoundaryRegion))
			if err != nil {
				return nil, err
			}
			closers = append(closers, func() { h.Close() })
			bp, err := periphery.New(h.Host, periphery.Config{Topics: p.Topics, Heartbeat: dil.Heartbeat, PruneBackoff: dil.PruneBackoff,
				MaxRPC: sim.MaxMessageBytes, Pressure: cfg.Population.Presses})
			if err != nil {
				return nil, err
			}
			if err := reals[i].node.Host().Connect(runCtx, h.AddrInfo()); err != nil {
				return nil, fmt.Errorf("peer %d to its boundary: %w", i, err)
			}
			reals[i].boundary = append(reals[i].boundary, bp)
		}
	}
	time.Sleep(200 * time.Millisecond) // the real peers' streams to the boundary open
	for i := range reals {
		for _, bp := range reals[i].boundary {
			if err := bp.Start(runCtx, reals[i].node.ID()); err != nil {
				return nil, err
			}
		}
	}
	time.Sleep(time.Duration(float64(3*time.Second) / cfg.TimeScale)) // first meshes

	// Who gets what: topic → real peers subscribed.
	subs := map[string][]int{}
	for i, p := range plan.Peers {
		for _, t := range p.Topics {
			subs[t] = append(subs[t], i)
		}
	}
	observedTopics := map[string]bool{}
	for _, t := range plan.ObservedTopics {
		observedTopics[t] = true
	}

	// Schedule, slot by slot, generated one slot ahead.
	rep := &Report{Config: cfg, Plan: plan}
	slots := make(chan []event, 1)
	genErr := make(chan error, 1)
	go func() {
		defer close(slots)
		for s := range cfg.Warmup + cfg.Slots + 1 { // +1: a drain slot without messages
			if s == cfg.Warmup+cfg.Slots {
				slots <- nil
				break
			}
			msgs, err := gen.NextSlot()
			if err != nil {
				genErr <- err
				return
			}
			var evs []event
			for k := range msgs {
				m := &msgs[k]
				peers := subs[m.Topic]
				if len(peers) == 0 {
					continue
				}
				mid := gossip.MessageID(m.Topic, m.Data)
				if observedTopics[m.Topic] && s >= cfg.Warmup {
					rep.expected[m.Category]++
					ct.obs.expect(string(mid[:]), m.At, m.Category)
				}
				for _, i := range peers {
					r := drawRng(cfg.Seed, mid, i)
					at := m.At + draw(r, cfg.Arrival.First)
					offset := r.IntN(len(reals[i].boundary))
					for k := range cfg.Copies {
						evs = append(evs, event{at: at, peer: i, offset: offset, k: k, m: m, id: string(mid[:])})
						at += draw(r, cfg.Arrival.Spread)
					}
				}
			}
			sort.SliceStable(evs, func(a, b int) bool { return evs[a].at < evs[b].at })
			select {
			case slots <- evs:
			case <-runCtx.Done():
				return
			}
		}
	}()
	start := time.Now()
	ct.obs.begin(start)
	scaled := func(d time.Duration) time.Duration { return time.Duration(float64(d) / cfg.TimeScale) }
	var before snapshot
	var maxLag time.Duration
	var cpuBefore time.Duration
	var measureStart time.Time
	dropsTo := func() int64 { // RPCs the real peers dropped on their way to the observed node
		var n int64
		for _, r := range reals {
			n += r.node.PubsubStats().DroppedTo[obs.ID().String()]
		}
		return n
	}
	var dropsToBefore int64
	slot := 0
	for evs := range slots {
		if slot == cfg.Warmup {
			before = snapshotOf(obs.Stats(), obs.PubsubStats())
			ct.measuring.Store(true)
			cpuBefore, measureStart, dropsToBefore = processCPU(), time.Now(), dropsTo()
		}
		if slot >= cfg.Warmup && evs != nil {
			ct.obs.sampleMesh(obs.PubsubStats().MeshPeers, plan.ObservedTopics)
		}
		if evs == nil { // drain
			time.Sleep(scaled(workload.SlotDuration))
			break
		}
		for _, e := range evs {
			target := start.Add(scaled(e.at))
			if d := time.Until(target); d > time.Millisecond {
				select {
				case <-time.After(d):
				case <-runCtx.Done():
					return nil, runCtx.Err()
				}
			}
			lag := max(0, time.Since(target))
			maxLag = max(maxLag, lag)
			if slot >= cfg.Warmup {
				ct.obs.lag(lag)
			}
			// A boundary peer whose link failed (a real node that stopped reading for
			// yamux's write timeout) delivers no more; the run goes on and the report
			// counts it (delivery completeness says whether the observed node lost anything).
			bps := reals[e.peer].boundary
			bp := bps[deliverer(len(bps), func(i int) bool { return bps[i].InMesh(e.m.Topic) }, e.offset, e.k)]
			if err := bp.PublishID(e.m.Topic, e.m.Data, e.id); err != nil {
				if rep.BoundaryErrors == 0 {
					cfg.Log.Warn("boundary delivery failed", "peer", e.peer, "err", err)
				}
				rep.BoundaryErrors++
			}
		}
		slot++
	}
	select {
	case err := <-genErr:
		return nil, fmt.Errorf("workload: %w", err)
	default:
	}
	ct.measuring.Store(false)
	// The meters stop here, and with them the recording: the summary's streams and the
	// trace hold exactly the same frames.
	streams := obs.FreezeStats()
	after := snapshotOf(streams, obs.PubsubStats())
	rep.Streams, rep.Pubsub = streams, after.ps
	rep.fill(before, after, ct, maxLag, time.Since(start))
	rep.Timing = ct.obs.timing(maxLag, processCPU()-cpuBefore, time.Since(measureStart))
	rep.CPU = processCPU() - cpuStart
	rep.Timing.ObservedDrops = after.ps.Drops() - before.ps.Drops()
	rep.Timing.DropsToObserved = dropsTo() - dropsToBefore
	rep.ObservedPeers = len(obs.Host().Network().Peers())
	for _, r := range reals {
		for _, bp := range r.boundary {
			st := bp.Stats()
			rep.Boundary.Published += st.Published
			rep.Boundary.IWantAnswered += st.IWantAnswered
			rep.Boundary.IHaveIDs += st.IHaveIDs
			rep.Boundary.GraftsSent += st.GraftsSent
			rep.Boundary.PrunesIn += st.PrunesIn
			rep.Boundary.MessagesIn += st.MessagesIn
		}
	}
	return rep, nil
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

func draw(r *rand.Rand, d sim.DelayRange) time.Duration {
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
	names     map[peer.ID]int
	mu        sync.Mutex
	ihaveIDs  [gossip.NumCategories]int64
	ihaveB    [gossip.NumCategories]int64
	full      map[string]map[peer.ID]bool
	gossiped  map[string]map[peer.ID]bool
}

func newControlTracer() *controlTracer {
	return &controlTracer{names: map[peer.ID]int{}, full: map[string]map[peer.ID]bool{}, gossiped: map[string]map[peer.ID]bool{}}
}

func (c *controlTracer) RecvRPC(rpc *pubsub.RPC) {
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
func (*controlTracer) RejectMessage(*pubsub.Message, string)                {}
func (*controlTracer) DuplicateMessage(*pubsub.Message)                     {}
func (*controlTracer) ThrottlePeer(peer.ID)                                 {}
func (*controlTracer) SendRPC(*pubsub.RPC, peer.ID)                         {}
func (*controlTracer) SendRPCCompleted(*pubsub.RPC, peer.ID, time.Duration) {}
func (*controlTracer) DropRPC(*pubsub.RPC, peer.ID)                         {}
func (*controlTracer) UndeliverableMessage(*pubsub.Message)                 {}

// snapshot is the observed node's counters at one moment.
type snapshot struct {
	in, out map[gossip.Category]result.CategoryBytes
	control map[string]result.ControlBytes
	ps      result.Pubsub
}

func snapshotOf(streams []result.StreamStats, ps result.Pubsub) snapshot {
	s := snapshot{in: map[gossip.Category]result.CategoryBytes{}, control: map[string]result.ControlBytes{}, ps: ps}
	s.out = map[gossip.Category]result.CategoryBytes{}
	for _, st := range streams {
		if st.Direction != "in" {
			for c, b := range st.Categories {
				v := s.out[c]
				v.RawBytes += b.RawBytes
				v.WireBytes += b.WireBytes
				s.out[c] = v
			}
			continue
		}
		for c, b := range st.Categories {
			v := s.in[c]
			v.RawBytes += b.RawBytes
			v.WireBytes += b.WireBytes
			s.in[c] = v
		}
		for k, b := range st.Control {
			v := s.control[k]
			v.RawBytes += b.RawBytes
			v.WireBytes += b.WireBytes
			v.Entries += b.Entries
			v.IDs += b.IDs
			s.control[k] = v
		}
	}
	return s
}

func availableBytes() int64 {
	if v := sim.MemAvailable(); v > 0 {
		return v
	}
	return 4 << 30
}
