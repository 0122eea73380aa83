package node

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	snet "github.com/streamsim/streamsim/sim/network"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
)

// meter holds one streamSide per peer and direction. Once frozen (Node.FreezeStats) it meters
// and records no more frames, and sides it creates are born frozen.
type meter struct {
	mu     sync.Mutex
	sides  map[sideKey]*streamSide
	frozen bool
}

type sideKey struct {
	peer peer.ID
	dir  string
}

// streamSide accumulates one direction of every stream to one peer.
type streamSide struct {
	mu        sync.Mutex
	peer      peer.ID
	dir       string
	protocol  string
	codec     string
	streams   int
	frames    int64
	raw       int64
	wire      int64
	msgs      [gossip.NumCategories]int64
	catRaw    [gossip.NumCategories]int64
	catWire   [gossip.NumCategories]int64
	control   [gossip.NumControlKinds]result.ControlBytes
	codecSum  codec.Stats
	meterCPU  time.Duration // the CPU meter's own cost, not in codecSum.Time (cpuspan.go)
	preempted int64         // frames descheduled in their codec spans (cpuspan.go)
	firstCPU  time.Duration // the codec CPU of each stream's first frame (its setup), in codecSum.Time
	// frozen: the side's figures went into the summary; frames are no longer metered or
	// recorded, so the summary and the recording agree exactly.
	frozen bool
}

// side returns the accumulator for s's direction dir and counts one more stream on it.
func (m *meter) side(s network.Stream, dir string, spec codec.Spec) *streamSide {
	k := sideKey{s.Conn().RemotePeer(), dir}
	m.mu.Lock()
	defer m.mu.Unlock()
	ss := m.sides[k]
	if ss == nil {
		ss = &streamSide{peer: k.peer, dir: dir, frozen: m.frozen}
		m.sides[k] = ss
	}
	ss.mu.Lock()
	ss.streams++
	ss.protocol = string(s.Protocol())
	ss.codec = spec.String()
	ss.mu.Unlock()
	return ss
}

// add meters one frame: raw bytes fed to (or produced by) the codec, the wire bytes it took,
// and the codec's work (cs.Time: its CPU; the meter's own cost apart). Wire bytes are split across categories in proportion to raw bytes.
// record (nil when the node does not record) records the frame in the same step; neither
// happens once the side is frozen. One lock per frame: this runs for every frame on both
// sides of every stream.
func (ss *streamSide) add(parts *gossip.FrameParts, raw int, wire int64, cs codec.Stats, meter meterCost, record func()) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.frozen {
		return
	}
	if record != nil {
		record()
	}
	ss.frames++
	ss.raw += int64(raw)
	ss.wire += wire
	shares := gossip.ShareOut(wire, &parts.Bytes)
	for c := range parts.Bytes {
		ss.msgs[c] += int64(parts.Messages[c])
		ss.catRaw[c] += int64(parts.Bytes[c])
		ss.catWire[c] += shares[c]
	}
	if parts.Bytes[gossip.Control] > 0 {
		var kindBytes [gossip.NumCategories]int // ShareOut's weights, indexed by control kind
		for k, cp := range parts.Control {
			kindBytes[k] = cp.Bytes
		}
		kindWire := gossip.ShareOut(shares[gossip.Control], &kindBytes)
		for k, cp := range parts.Control {
			c := &ss.control[k]
			c.RawBytes += int64(cp.Bytes)
			c.WireBytes += kindWire[k]
			c.Entries += int64(cp.Entries)
			c.IDs += int64(cp.IDs)
		}
	}
	ss.codecSum.Units += cs.Units
	ss.codecSum.RawBytes += cs.RawBytes
	ss.codecSum.WireBytes += cs.WireBytes
	ss.codecSum.Time += cs.Time
	ss.meterCPU += meter.cpu
	if meter.preempted {
		ss.preempted++
	}
	if meter.first {
		ss.firstCPU += cs.Time
	}
	ss.codecSum.StateBytes = max(ss.codecSum.StateBytes, cs.StateBytes)
}

// totals sums every side's bytes per category and direction.
func (m *meter) totals() (in, out map[gossip.Category]result.CategoryBytes) {
	var sum [2][gossip.NumCategories]result.CategoryBytes
	m.mu.Lock()
	sides := make([]*streamSide, 0, len(m.sides))
	for _, ss := range m.sides {
		sides = append(sides, ss)
	}
	m.mu.Unlock()
	for _, ss := range sides {
		d := 0
		if ss.dir == "out" {
			d = 1
		}
		ss.mu.Lock()
		for c := range ss.catRaw {
			sum[d][c].RawBytes += ss.catRaw[c]
			sum[d][c].WireBytes += ss.catWire[c]
		}
		ss.mu.Unlock()
	}
	maps := [2]map[gossip.Category]result.CategoryBytes{{}, {}}
	for d := range sum {
		for c, b := range sum[d] {
			if b.RawBytes != 0 || b.WireBytes != 0 {
				maps[d][gossip.Category(c)] = b
			}
		}
	}
	return maps[0], maps[1]
}

// snapshot returns every side's figures; freeze freezes the meter and each side as its
// figures are taken.
func (m *meter) snapshot(role func(peer.ID) string, freeze bool) []result.StreamStats {
	m.mu.Lock()
	m.frozen = m.frozen || freeze
	sides := make([]*streamSide, 0, len(m.sides))
	for _, ss := range m.sides {
		sides = append(sides, ss)
	}
	m.mu.Unlock()
	out := make([]result.StreamStats, 0, len(sides))
	for _, ss := range sides {
		ss.mu.Lock()
		ss.frozen = ss.frozen || freeze
		st := result.StreamStats{
			Peer: ss.peer.String(), Direction: ss.dir, Protocol: ss.protocol, Codec: ss.codec,
			Streams: ss.streams, Frames: ss.frames, RawBytes: ss.raw, WireBytes: ss.wire,
			Messages:   map[gossip.Category]int64{},
			Categories: map[gossip.Category]result.CategoryBytes{},
			CodecStats: result.CodecStats{
				Units: ss.codecSum.Units, RawBytes: ss.codecSum.RawBytes, WireBytes: ss.codecSum.WireBytes,
				TimeNs: max(0, int64(ss.codecSum.Time)), MeterNs: int64(ss.meterCPU), PreemptedFrames: ss.preempted, FirstFrameNs: max(0, int64(ss.firstCPU)), StateBytes: ss.codecSum.StateBytes,
			},
		}
		for c := range ss.msgs {
			if ss.msgs[c] != 0 {
				st.Messages[gossip.Category(c)] = ss.msgs[c]
			}
			if ss.catRaw[c] != 0 || ss.catWire[c] != 0 {
				st.Categories[gossip.Category(c)] = result.CategoryBytes{RawBytes: ss.catRaw[c], WireBytes: ss.catWire[c]}
			}
		}
		for k, cb := range ss.control {
			if cb.RawBytes != 0 {
				if st.Control == nil {
					st.Control = map[string]result.ControlBytes{}
				}
				st.Control[gossip.ControlKind(k).String()] = cb
			}
		}
		ss.mu.Unlock()
		if role != nil {
			st.PeerRole = role(ss.peer)
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Peer != out[j].Peer {
			return out[i].Peer < out[j].Peer
		}
		return out[i].Direction < out[j].Direction
	})
	return out
}

// tracer counts pubsub events (RawTracer): deliveries and duplicates per category, drops,
// rejections, undeliverable messages, mesh changes, and each peer's outbound queue.
type tracer struct {
	delivered     [gossip.NumCategories]atomic.Int64
	duplicates    [gossip.NumCategories]atomic.Int64
	droppedRPCs   atomic.Int64
	undeliverable atomic.Int64
	throttled     atomic.Int64
	grafts        atomic.Int64
	prunes        atomic.Int64
	// queues counts, per peer, RPCs entering its outbound queue and leaving it for the
	// stream; their difference is the backlog. A peer's entry goes when its outbound stream
	// closes or it disconnects: pubsub drops that queue, and a stale count would stall reads.
	// The map is copied on change and read without a lock (pubsub asks for a peer's entry twice
	// per RPC; its peers come and go far less often).
	queues   atomic.Pointer[map[peer.ID]*peerQueue]
	queuesMu sync.Mutex // serialises changes to queues
	mu       sync.Mutex
	rejected map[string]int64
	mesh     map[string]map[peer.ID]bool // topic → mesh peers
	host     *snet.Host
	notifiee *network.NotifyBundle
	// lost records the ids of the messages behind drops, when the node keeps a lost log
	// (lostlog.go).
	lost  *lostLog
	links *linkLog
}

var _ pubsub.RawTracer = (*tracer)(nil)

// init watches h's connections, so that a peer that disconnects leaves no backlog behind.
func (t *tracer) init(h *snet.Host) {
	t.host = h
	t.notifiee = &network.NotifyBundle{DisconnectedF: func(nw network.Network, c network.Conn) {
		if p := c.RemotePeer(); nw.Connectedness(p) != network.Connected {
			t.forget(p)
		}
	}}
	h.Network().Notify(t.notifiee)
}

func (t *tracer) close() {
	if t.host != nil {
		t.host.Network().StopNotify(t.notifiee)
	}
}

// forget drops everything the tracer holds about peer p.
func (t *tracer) forget(p peer.ID) {
	t.dropQueue(p)
	t.mu.Lock()
	for _, m := range t.mesh {
		delete(m, p)
	}
	t.mu.Unlock()
}

func (t *tracer) OnNewOutboundStream(peer.ID, protocol.ID) {}
func (t *tracer) OnClosedOutboundStream(p peer.ID) {
	t.dropQueue(p)
	if t.links != nil {
		t.links.outboundCleared(p) // the pair reset's order (linklog.go)
	}
}
func (t *tracer) AddPeer(peer.ID, protocol.ID)       {}
func (t *tracer) RemovePeer(p peer.ID)               { t.forget(p) }
func (t *tracer) Join(string)                        {}
func (t *tracer) Leave(string)                       {}
func (t *tracer) ValidateMessage(*pubsub.Message)    {}
func (t *tracer) DeliverMessage(m *pubsub.Message)   { t.delivered[msgCategory(m)].Add(1) }
func (t *tracer) DuplicateMessage(m *pubsub.Message) { t.duplicates[msgCategory(m)].Add(1) }
func (t *tracer) ThrottlePeer(peer.ID)               { t.throttled.Add(1) }
func (t *tracer) RecvRPC(rpc *pubsub.RPC) {
	if t.links != nil {
		t.links.receivedRPC(rpc) // link log (linklog.go)
	}
}

func (t *tracer) SendRPC(_ *pubsub.RPC, p peer.ID) {
	q := t.queue(p)
	b := q.queued.Add(1) - q.written.Load()
	for m := q.maxBacklog.Load(); b > m && !q.maxBacklog.CompareAndSwap(m, b); m = q.maxBacklog.Load() {
	}
}
func (t *tracer) SendRPCCompleted(_ *pubsub.RPC, p peer.ID, _ time.Duration) {
	t.queue(p).written.Add(1)
}

func msgCategory(m *pubsub.Message) gossip.Category { return gossip.TopicCategory(m.GetTopic()) }

func (t *tracer) Graft(p peer.ID, topic string) {
	t.grafts.Add(1)
	t.mu.Lock()
	if t.mesh == nil {
		t.mesh = map[string]map[peer.ID]bool{}
	}
	if t.mesh[topic] == nil {
		t.mesh[topic] = map[peer.ID]bool{}
	}
	t.mesh[topic][p] = true
	t.mu.Unlock()
}

func (t *tracer) Prune(p peer.ID, topic string) {
	t.prunes.Add(1)
	t.mu.Lock()
	delete(t.mesh[topic], p)
	t.mu.Unlock()
}

type peerQueue struct{ queued, written, dropped, maxBacklog atomic.Int64 }

// queueMap is the current per-peer map; never changed once published.
func (t *tracer) queueMap() map[peer.ID]*peerQueue {
	if m := t.queues.Load(); m != nil {
		return *m
	}
	return nil
}

func (t *tracer) queue(p peer.ID) *peerQueue {
	if q, ok := t.queueMap()[p]; ok {
		return q
	}
	t.queuesMu.Lock()
	defer t.queuesMu.Unlock()
	old := t.queueMap()
	if q, ok := old[p]; ok {
		return q
	}
	m := make(map[peer.ID]*peerQueue, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	q := &peerQueue{}
	m[p] = q
	t.queues.Store(&m)
	return q
}

// dropQueue forgets p's entry.
func (t *tracer) dropQueue(p peer.ID) {
	if _, ok := t.queueMap()[p]; !ok {
		return
	}
	t.queuesMu.Lock()
	defer t.queuesMu.Unlock()
	old := t.queueMap()
	if _, ok := old[p]; !ok {
		return
	}
	m := make(map[peer.ID]*peerQueue, len(old))
	for k, v := range old {
		if k != p {
			m[k] = v
		}
	}
	t.queues.Store(&m)
}

// maxBacklog is the longest outbound queue over all peers but except.
func (t *tracer) maxBacklog(except peer.ID) int64 {
	var most int64
	for k, q := range t.queueMap() {
		if k != except {
			most = max(most, q.queued.Load()-q.written.Load())
		}
	}
	return most
}
func (t *tracer) DropRPC(rpc *pubsub.RPC, p peer.ID) {
	t.droppedRPCs.Add(1)
	t.queue(p).dropped.Add(1)
	t.lost.dropped(rpc, p)
}

func (t *tracer) UndeliverableMessage(m *pubsub.Message) {
	t.undeliverable.Add(1)
	t.lost.message(result.LostUndeliverable, m)
}

func (t *tracer) RejectMessage(m *pubsub.Message, reason string) {
	t.lost.message(result.LostRejected+": "+reason, m)
	t.mu.Lock()
	if t.rejected == nil {
		t.rejected = map[string]int64{}
	}
	t.rejected[reason]++
	t.mu.Unlock()
}

func (t *tracer) snapshot() result.Pubsub {
	p := result.Pubsub{
		DroppedRPCs: t.droppedRPCs.Load(), Undeliverable: t.undeliverable.Load(), Throttled: t.throttled.Load(),
		Grafts: t.grafts.Load(), Prunes: t.prunes.Load(),
		DeliveredBy: map[gossip.Category]int64{}, DuplicatesBy: map[gossip.Category]int64{},
	}
	for c := range t.delivered {
		if v := t.delivered[c].Load(); v != 0 {
			p.DeliveredBy[gossip.Category(c)] = v
			p.Delivered += v
		}
		if v := t.duplicates[c].Load(); v != 0 {
			p.DuplicatesBy[gossip.Category(c)] = v
			p.Duplicates += v
		}
	}
	t.mu.Lock()
	if len(t.rejected) > 0 {
		p.Rejected = map[string]int64{}
		for k, v := range t.rejected {
			p.Rejected[k] = v
		}
	}
	for k, q := range t.queueMap() {
		if b := q.maxBacklog.Load(); b > p.MaxBacklog {
			p.MaxBacklog, p.MaxBacklogTo = b, k.String()
		}
		if d := q.dropped.Load(); d > 0 {
			if p.DroppedTo == nil {
				p.DroppedTo = map[string]int64{}
			}
			p.DroppedTo[k.String()] += d
		}
	}
	for topic, m := range t.mesh {
		if len(m) > 0 {
			if p.MeshPeers == nil {
				p.MeshPeers = map[string]int{}
			}
			p.MeshPeers[topic] = len(m)
		}
	}
	t.mu.Unlock()
	return p
}
