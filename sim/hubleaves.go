package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	gosync "sync"
	"sync/atomic"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/testground/sdk-go/run"
	"github.com/testground/sdk-go/runtime"
	"github.com/testground/sdk-go/sync"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/trace"
	"github.com/streamsim/streamsim/workload"
)

// errParity marks a leaf's parity failure.
var errParity = errors.New("parity FAIL")

// TraceFile is the frame recorder's asset name in an instance's outputs directory.
const TraceFile = "frames.trace.gz"

// Sync-service states and topics of hub-leaves.
const (
	stateReady    = sync.State("hub-leaves-ready")
	stateDone     = sync.State("hub-leaves-done")
	stateFinished = sync.State("hub-leaves-finished")
)

var (
	peersTopic  = sync.NewTopic("hub-leaves-peers", &peerRecord{})
	resultTopic = sync.NewTopic("hub-leaves-results", &resultRecord{})
)

// peerRecord is what each instance announces in the address exchange.
type peerRecord struct {
	Role     string   `json:"role"`
	Group    string   `json:"group"`
	Instance int      `json:"instance"`
	ID       string   `json:"id"`
	Addrs    []string `json:"addrs"`
	Codec    string   `json:"codec"`
	// Error is set when the instance failed before it could announce an address.
	Error string `json:"error,omitempty"`
}

// resultRecord is a publisher's published set, announced when it has published everything.
type resultRecord struct {
	Group    string           `json:"group"`
	Instance int              `json:"instance"`
	Parity   *analysis.Parity `json:"parity"`
	// Error is set when the publisher failed; leaves then stop waiting for it.
	Error string `json:"error,omitempty"`
}

// HubLeaves is the hub-leaves scenario (the proposal's live check), one instance of it:
// publishers publish the workload, the hub forwards, leaves (direct peers of the hub only)
// receive their profile over their stream codec. Its role comes from its group: "publishers",
// "hub", or any other group, which is a leaf group whose codec is the group's "codec"
// parameter. It writes results.out points and a summary.json asset, and fails when a leaf's
// delivered messages differ from the published set.
func HubLeaves(runenv *runtime.RunEnv, initCtx *run.InitContext) error {
	role := topology.Leaf
	switch runenv.TestGroupID {
	case GroupPublishers:
		role = topology.Publisher
	case GroupHub:
		role = topology.Hub
	}
	h := &hubLeaves{
		runenv: runenv, client: initCtx.SyncClient, role: role,
		signaled: map[sync.State]bool{},
		instance: int(initCtx.GroupSeq) - 1,
		summary:  &analysis.NodeSummary{Role: role, Group: runenv.TestGroupID, Instance: int(initCtx.GroupSeq) - 1},
	}
	_, h.summary.Build = analysis.BuildOptimized()
	p, err := ParseParams(runenv.TestInstanceParams)
	if err == nil && role == topology.Publisher && runenv.TestGroupInstanceCount != p.Publishers {
		err = fmt.Errorf("param %s is %d but group %s has %d instances", ParamPublishers, p.Publishers, GroupPublishers, runenv.TestGroupInstanceCount)
	}
	if err != nil {
		h.abandon(err)
		return err
	}
	h.p = p
	h.slot = time.Duration(float64(workload.SlotDuration) / p.TimeScale)
	s := h.summary
	s.Profile, s.Payload, s.Slots, s.TimeScale, s.Seed = p.Profile.Name, p.Payload, p.Slots, p.TimeScale, p.Seed
	if role == topology.Leaf {
		s.Codec = p.Codec.String()
	}
	budget := time.Duration(p.Slots+2)*h.slot + 3*time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()

	var runErr error
	if ip, err := initCtx.NetClient.GetDataNetworkIP(); err != nil {
		runErr = fmt.Errorf("data network IP: %w", err)
	} else {
		runErr = h.run(ctx, ip.String())
	}
	if runErr != nil {
		s.Error = runErr.Error()
		if !errors.Is(runErr, errParity) {
			h.abandon(runErr)
		}
	}
	if err := h.finish(); err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

type hubLeaves struct {
	runenv   *runtime.RunEnv
	client   sync.Client
	p        Params
	role     string
	slot     time.Duration
	instance int
	node     *Node
	rec      *trace.Writer
	summary  *analysis.NodeSummary
	roles    map[peer.ID]string
	// slots is a publisher's workload source.
	slots *slotSource
	// parityErr is a leaf's parity failure: reported after the run's barriers, so the other
	// instances finish normally.
	parityErr error
	// done is set once the instance passed the done barrier; only then do the others wait
	// for it at the finished barrier.
	done bool
	// signaled records the barriers this instance has entered, and resultSent whether a
	// publisher announced its result: after a failure the instance enters the rest and
	// announces the failure, so the others finish instead of waiting for it until timeout.
	signaled   map[sync.State]bool
	resultSent bool
	addrSent   bool
}

// abandon lets the other instances go on after this one failed with err.
func (h *hubLeaves) abandon(err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !h.addrSent {
		h.addrSent = true
		h.client.Publish(ctx, peersTopic, &peerRecord{Role: h.role, Group: h.runenv.TestGroupID, Instance: h.instance, Error: err.Error()})
	}
	if h.role == topology.Publisher && !h.resultSent {
		h.resultSent = true
		h.client.Publish(ctx, resultTopic, &resultRecord{Group: h.runenv.TestGroupID, Instance: h.instance, Error: err.Error()})
	}
	for _, st := range []sync.State{stateReady, stateDone} {
		if !h.signaled[st] {
			h.signaled[st] = true
			h.client.SignalEntry(ctx, st)
		}
	}
}

func (h *hubLeaves) run(ctx context.Context, ip string) error {
	n := h.runenv.TestInstanceCount
	if h.p.Record {
		var err error
		h.rec, err = trace.Create(filepath.Join(h.runenv.TestOutputsPath, TraceFile), trace.Header{
			Version: trace.Version, Source: "recorder",
			Params: map[string]string{"scenario": "hub-leaves", "role": h.role, "group": h.runenv.TestGroupID,
				"instance": strconv.Itoa(h.instance), "payload": h.p.Payload, "profile": h.p.Profile.Name,
				"time_scale": strconv.FormatFloat(h.p.TimeScale, 'g', -1, 64), "seed": strconv.FormatInt(h.p.Seed, 10),
				"note": "frames as go-libp2p-pubsub wrote or read them (ssz_snappy payloads), before stream compression"},
		})
		if err != nil {
			return fmt.Errorf("frame recorder: %w", err)
		}
	}
	var codecs []codec.Spec
	if h.role == topology.Leaf && ProtocolFor(h.p.Codec) != PlainProtocol {
		codecs = []codec.Spec{h.p.Codec}
	}
	h.roles = map[peer.ID]string{}
	var rolesMu gosync.Mutex
	node, err := NewNode(Config{
		ListenIP: ip, Codecs: codecs, PayloadSSZ: h.p.Payload == gossip.PayloadSSZ, TimeScale: h.p.TimeScale,
		Recorder: h.rec, Role: h.role,
		PeerRole: func(id peer.ID) string { rolesMu.Lock(); defer rolesMu.Unlock(); return h.roles[id] },
	})
	if err != nil {
		return err
	}
	h.node = node
	h.summary.PeerID = node.ID().String()

	// Address exchange.
	self := peerRecord{Role: h.role, Group: h.runenv.TestGroupID, Instance: h.instance, ID: node.ID().String(), Codec: h.summary.Codec}
	for _, a := range node.Host().Addrs() {
		self.Addrs = append(self.Addrs, a.String())
	}
	recs := make(chan *peerRecord, n+16)
	if _, err := h.client.Subscribe(ctx, peersTopic, recs); err != nil {
		return fmt.Errorf("subscribe to peers: %w", err)
	}
	h.addrSent = true
	if _, err := h.client.Publish(ctx, peersTopic, &self); err != nil {
		return fmt.Errorf("publish address: %w", err)
	}
	var records []*peerRecord
	for len(records) < n {
		select {
		case r := <-recs:
			if r.Error != "" {
				return fmt.Errorf("instance %s/%d failed: %s", r.Group, r.Instance, r.Error)
			}
			records = append(records, r)
		case <-ctx.Done():
			return fmt.Errorf("address exchange: %d of %d instances: %w", len(records), n, ctx.Err())
		}
	}
	slices.SortFunc(records, func(a, b *peerRecord) int {
		if a.Group != b.Group {
			if a.Group < b.Group {
				return -1
			}
			return 1
		}
		return a.Instance - b.Instance
	})
	members := make([]topology.Member, n)
	infos := make([]peer.AddrInfo, n)
	me := -1
	var leafCodecs []codec.Spec
	for i, r := range records {
		members[i] = topology.Member{Role: r.Role, Group: r.Group, Instance: r.Instance}
		id, err := peer.Decode(r.ID)
		if err != nil {
			return fmt.Errorf("peer record %s/%d: %w", r.Group, r.Instance, err)
		}
		infos[i].ID = id
		for _, s := range r.Addrs {
			a, err := ma.NewMultiaddr(s)
			if err != nil {
				return fmt.Errorf("peer record %s/%d: %w", r.Group, r.Instance, err)
			}
			infos[i].Addrs = append(infos[i].Addrs, a)
		}
		rolesMu.Lock()
		h.roles[id] = r.Role
		rolesMu.Unlock()
		if id == node.ID() {
			me = i
		}
		if r.Role == topology.Leaf {
			spec, err := codec.Parse(r.Codec)
			if err != nil {
				return fmt.Errorf("leaf %s/%d codec: %w", r.Group, r.Instance, err)
			}
			if ProtocolFor(spec) != PlainProtocol && !slices.ContainsFunc(leafCodecs, func(c codec.Spec) bool { return c.String() == spec.String() }) {
				leafCodecs = append(leafCodecs, spec)
			}
		}
	}
	links, err := topology.HubLeaves(members)
	if err != nil {
		return err
	}
	if me < 0 {
		return errors.New("own record missing from the address exchange")
	}
	if h.role == topology.Hub {
		node.cfg.Codecs = leafCodecs // the hub serves every leaf codec of the run
	}
	var direct []peer.AddrInfo
	for _, j := range links[me].Direct {
		direct = append(direct, infos[j])
	}
	if err := node.Start(direct); err != nil {
		return err
	}
	for _, j := range links[me].Dial {
		if err := node.Host().Connect(ctx, infos[j]); err != nil {
			return fmt.Errorf("connect to %s/%d: %w", members[j].Group, members[j].Instance, err)
		}
	}
	for _, v := range node.Protocols() {
		h.summary.Protocols = append(h.summary.Protocols, string(v))
	}

	// Subscriptions, then wait until every subscription this node depends on is visible.
	digest := h.p.Profile
	fork := workload.DefaultParams().ForkDigest
	allTopics := mustProfile("supernode").Topics(fork)
	var delivered *deliveries
	switch links[me].Subscribe {
	case "all":
		if _, err := subscribe(ctx, node, allTopics, nil); err != nil {
			return err
		}
	case "profile":
		delivered = &deliveries{}
		if _, err := subscribe(ctx, node, digest.Topics(fork), delivered); err != nil {
			return err
		}
	}
	hubID := peer.ID("")
	for i, m := range members {
		if m.Role == topology.Hub {
			hubID = infos[i].ID
		}
	}
	waitFor := map[string][]peer.ID{}
	switch h.role {
	case topology.Publisher:
		for _, t := range allTopics {
			waitFor[t] = []peer.ID{hubID}
		}
	case topology.Leaf:
		for _, t := range digest.Topics(fork) {
			waitFor[t] = []peer.ID{hubID}
		}
	case topology.Hub:
		for i, m := range members {
			if m.Role == topology.Leaf {
				for _, t := range digest.Topics(fork) {
					waitFor[t] = append(waitFor[t], infos[i].ID)
				}
			}
		}
	}
	if err := waitSubscribed(ctx, node.PubSub(), waitFor); err != nil {
		return err
	}
	if h.role == topology.Publisher {
		// Open the shared workload before the barrier, so every publisher of the process
		// is counted before the first slot is taken.
		if h.slots, err = openSlots(h.p.Workload(), h.p.Slots); err != nil {
			return err
		}
		defer h.slots.close()
	}
	h.signaled[stateReady] = true
	if _, err := h.client.SignalAndWait(ctx, stateReady, n); err != nil {
		return fmt.Errorf("ready barrier: %w", err)
	}

	// The measured phase.
	start := time.Now()
	h.summary.Start = start
	results := make(chan *resultRecord, n+16)
	if _, err := h.client.Subscribe(ctx, resultTopic, results); err != nil {
		return fmt.Errorf("subscribe to results: %w", err)
	}
	var phaseErr error
	switch h.role {
	case topology.Publisher:
		phaseErr = h.publish(ctx, start)
	case topology.Leaf:
		phaseErr = h.receive(ctx, results, delivered)
	}
	if phaseErr != nil {
		return phaseErr
	}
	if h.role != topology.Leaf {
		h.summary.Duration = time.Since(start).Seconds()
	}
	h.signaled[stateDone] = true
	if _, err := h.client.SignalAndWait(ctx, stateDone, n); err != nil {
		return fmt.Errorf("done barrier: %w", err)
	}
	h.done = true
	if h.role == topology.Hub {
		h.summary.Duration = time.Since(start).Seconds()
	}
	return h.parityErr
}

// finish snapshots the meters, writes the summary and results, waits for every instance to
// do the same and closes the node.
func (h *hubLeaves) finish() error {
	var err error
	if h.node != nil {
		// BandwidthCounter totals are swept once a second.
		time.Sleep(1200 * time.Millisecond)
		h.summary.Streams = h.node.Stats()
		h.summary.Pubsub = h.node.PubsubStats()
		h.summary.Bandwidth = h.node.Bandwidth()
		h.summary.StreamErrors = h.node.StreamErrors()
	}
	if werr := analysis.WriteSummary(filepath.Join(h.runenv.TestOutputsPath, analysis.SummaryFile), h.summary); werr != nil {
		err = fmt.Errorf("write summary: %w", werr)
	}
	h.recordPoints()
	if h.done {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if _, berr := h.client.SignalAndWait(ctx, stateFinished, h.runenv.TestInstanceCount); berr != nil && err == nil {
			err = fmt.Errorf("finished barrier: %w", berr)
		}
		cancel()
	}
	if h.node != nil {
		h.node.Close()
	}
	if h.rec != nil {
		if cerr := h.rec.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("frame recorder: %w", cerr)
		}
	}
	return err
}

func (h *hubLeaves) recordPoints() {
	r := h.runenv.R()
	s := h.summary
	// CPU points say whether they come from an optimized build (Testground's exec:go is not).
	build := "optimized"
	if optimized, _ := analysis.BuildOptimized(); !optimized {
		build = "unoptimized"
	}
	for _, st := range s.Streams {
		tag := ",peer_role=" + st.PeerRole + ",direction=" + st.Direction + ",codec=" + st.Codec
		r.RecordPoint("wire_bytes"+tag, float64(st.WireBytes))
		r.RecordPoint("raw_bytes"+tag, float64(st.RawBytes))
		r.RecordPoint("frames"+tag, float64(st.Frames))
		r.RecordPoint("codec_time_ns"+tag+",build="+build, float64(st.CodecStats.TimeNs))
	}
	if s.Parity != nil {
		r.RecordPoint("messages", float64(s.Parity.Total()))
	}
	if s.Schedule != nil {
		r.RecordPoint("max_lag_ms", float64(s.Schedule.MaxLagNs)/1e6)
	}
	r.RecordPoint("drops", float64(s.Pubsub.Drops()))
	ok := 1.0
	if s.Error != "" {
		ok = 0
	}
	r.RecordPoint("ok", ok)
}

// publish publishes this publisher's share of the workload on schedule: message i of the run
// (in schedule order) belongs to publisher i mod publishers.
func (h *hubLeaves) publish(ctx context.Context, start time.Time) error {
	topics := map[string]*pubsub.Topic{}
	var err error
	parity := newParity()
	sched := &analysis.Schedule{SlotNs: int64(h.slot)}
	var lagSum time.Duration
	index := 0
	published := 0
	for slotIndex := range h.p.Slots {
		msgs, err := h.slots.slot(slotIndex)
		if err != nil {
			return fmt.Errorf("workload: %w", err)
		}
		for _, m := range msgs {
			mine := index%h.p.Publishers == h.instance
			index++
			if !mine {
				continue
			}
			t := topics[m.Topic]
			if t == nil {
				if t, err = h.node.Topic(m.Topic); err != nil {
					return err
				}
				topics[m.Topic] = t
			}
			// Pace on the outbound queue to the hub: a burst the machine cannot absorb
			// shows as lag against the schedule instead of as dropped RPCs.
			h.node.awaitBacklog("")
			target := start.Add(time.Duration(float64(m.At) / h.p.TimeScale))
			// Sleeping for less than a millisecond oversleeps (timer slack) and would make a
			// burst fall behind; publish everything due within the next millisecond.
			if d := time.Until(target); d > time.Millisecond {
				time.Sleep(d)
			}
			if err := t.Publish(ctx, m.Data); err != nil {
				return fmt.Errorf("publish on %s: %w", m.Topic, err)
			}
			lag := max(time.Since(target), 0)
			lagSum += lag
			sched.MaxLagNs = max(sched.MaxLagNs, int64(lag))
			if lag > h.slot {
				sched.LateMessages++
			}
			published++
			if h.p.Profile.Wants(m.Topic) {
				id := gossip.MessageID(m.Topic, m.Data)
				parity.add(gossip.TopicCategory(m.Topic), string(id[:]))
			}
		}
		h.slots.release(slotIndex)
	}
	if got := index; published == 0 && got == 0 {
		return errors.New("workload produced no messages")
	}
	sched.Messages = int64(published)
	if published > 0 {
		sched.MeanLagNs = int64(lagSum) / int64(published)
	}
	sched.ScheduledNs = int64(h.p.Slots) * int64(h.slot)
	sched.ElapsedNs = int64(time.Since(start))
	h.summary.Schedule = sched
	h.summary.Parity = parity.record()
	h.resultSent = true
	_, err = h.client.Publish(ctx, resultTopic, &resultRecord{Group: h.runenv.TestGroupID, Instance: h.instance, Parity: h.summary.Parity})
	return err
}

// receive waits until the leaf has received everything the publishers published, or until
// deliveries stop for a while, then checks parity.
func (h *hubLeaves) receive(ctx context.Context, results chan *resultRecord, d *deliveries) error {
	var want analysis.Parity
	got := 0
	for got < h.p.Publishers {
		select {
		case r := <-results:
			if r.Error != "" {
				return fmt.Errorf("publisher %s/%d failed: %s", r.Group, r.Instance, r.Error)
			}
			want.Add(r.Parity)
			got++
		case <-ctx.Done():
			return fmt.Errorf("waiting for publishers' results (%d of %d): %w", got, h.p.Publishers, ctx.Err())
		}
	}
	idle := max(5*time.Second, 2*h.slot)
	last, lastChange := d.total(), time.Now()
	for d.total() < want.Total() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if t := d.total(); t != last {
			last, lastChange = t, time.Now()
		} else if time.Since(lastChange) > idle {
			break
		}
	}
	// Anything beyond the published set would arrive right behind it.
	time.Sleep(min(h.slot/4, time.Second))
	h.summary.Duration = time.Since(h.summary.Start).Seconds()
	h.summary.Parity = d.record()
	if !h.summary.Parity.Equal(&want) {
		h.parityErr = fmt.Errorf("%w: leaf %s (%s/%d) %s", errParity, h.summary.Codec, h.runenv.TestGroupID, h.instance,
			parityDiff(h.summary.Parity, &want))
	}
	return nil
}

func parityDiff(got, want *analysis.Parity) string {
	out := ""
	for _, c := range gossip.Categories() {
		g, w := got.Messages[c], want.Messages[c]
		switch {
		case g != w:
			out += fmt.Sprintf(" %s: received %d, published %d;", c, g, w)
		case got.Digest[c] != want.Digest[c]:
			out += fmt.Sprintf(" %s: same count, different message ids;", c)
		}
	}
	return out
}

// deliveries counts delivered messages per category with an order-independent id digest.
type deliveries struct {
	n     [gossip.NumCategories]atomic.Int64
	lanes [gossip.NumCategories][2]atomic.Uint64
	all   atomic.Int64
}

func (d *deliveries) add(c gossip.Category, id string) {
	d.n[c].Add(1)
	if len(id) >= 16 {
		d.lanes[c][0].Add(binary.LittleEndian.Uint64([]byte(id[:8])))
		d.lanes[c][1].Add(binary.LittleEndian.Uint64([]byte(id[8:16])))
	}
	d.all.Add(1)
}

func (d *deliveries) total() int64 { return d.all.Load() }

func (d *deliveries) record() *analysis.Parity {
	p := &analysis.Parity{Messages: map[gossip.Category]int64{}, Digest: map[gossip.Category][2]uint64{}}
	for c := range d.n {
		if v := d.n[c].Load(); v != 0 {
			p.Messages[gossip.Category(c)] = v
			p.Digest[gossip.Category(c)] = [2]uint64{d.lanes[c][0].Load(), d.lanes[c][1].Load()}
		}
	}
	return p
}

func newParity() *deliveries { return &deliveries{} }

// subscribe subscribes to topics; when d is set, every delivered message is counted in it.
func subscribe(ctx context.Context, n *Node, topics []string, d *deliveries) ([]*pubsub.Subscription, error) {
	var subs []*pubsub.Subscription
	for _, t := range topics {
		topic, err := n.Topic(t)
		if err != nil {
			return nil, err
		}
		sub, err := topic.Subscribe(pubsub.WithBufferSize(4096))
		if err != nil {
			return nil, fmt.Errorf("subscribe %s: %w", t, err)
		}
		subs = append(subs, sub)
		go func() {
			cat := gossip.TopicCategory(t)
			for {
				m, err := sub.Next(n.ctx)
				if err != nil {
					return
				}
				if d != nil {
					d.add(cat, m.ID)
				}
			}
		}()
	}
	return subs, nil
}

// waitSubscribed waits until pubsub sees each listed peer subscribed to each topic.
func waitSubscribed(ctx context.Context, ps *pubsub.PubSub, want map[string][]peer.ID) error {
	for {
		missing := 0
		example := ""
		for t, ids := range want {
			have := ps.ListPeers(t)
			for _, id := range ids {
				if !slices.Contains(have, id) {
					missing++
					example = fmt.Sprintf("%s on %s", id, t)
				}
			}
		}
		if missing == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for subscriptions: %d missing (e.g. %s): %w", missing, example, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func mustProfile(name string) workload.Profile {
	p, err := workload.ParseProfile(name)
	if err != nil {
		panic(err)
	}
	return p
}
