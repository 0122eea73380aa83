package sim

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
)

// meter holds one streamSide per peer and direction.
type meter struct {
	mu    sync.Mutex
	sides map[sideKey]*streamSide
}

type sideKey struct {
	peer peer.ID
	dir  string
}

// streamSide accumulates one direction of every stream to one peer.
type streamSide struct {
	mu       sync.Mutex
	peer     peer.ID
	dir      string
	protocol string
	codec    string
	streams  int
	frames   int64
	raw      int64
	wire     int64
	msgs     [gossip.NumCategories]int64
	catRaw   [gossip.NumCategories]int64
	catWire  [gossip.NumCategories]int64
	codecSum codec.Stats
}

// side returns the accumulator for s's direction dir and counts one more stream on it.
func (m *meter) side(s network.Stream, dir string, spec codec.Spec) *streamSide {
	k := sideKey{s.Conn().RemotePeer(), dir}
	m.mu.Lock()
	defer m.mu.Unlock()
	ss := m.sides[k]
	if ss == nil {
		ss = &streamSide{peer: k.peer, dir: dir}
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
// and the codec's work. Wire bytes are split across categories in proportion to raw bytes.
func (ss *streamSide) add(parts *gossip.FrameParts, raw int, wire int64, cs codec.Stats) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.frames++
	ss.raw += int64(raw)
	ss.wire += wire
	given := int64(0)
	for c := range parts.Bytes {
		ss.msgs[c] += int64(parts.Messages[c])
		b := int64(parts.Bytes[c])
		ss.catRaw[c] += b
		if raw > 0 {
			w := wire * b / int64(raw)
			ss.catWire[c] += w
			given += w
		}
	}
	ss.catWire[parts.Dominant()] += wire - given
	ss.codecSum.Units += cs.Units
	ss.codecSum.RawBytes += cs.RawBytes
	ss.codecSum.WireBytes += cs.WireBytes
	ss.codecSum.Time += cs.Time
	ss.codecSum.StateBytes = max(ss.codecSum.StateBytes, cs.StateBytes)
}

func (m *meter) snapshot(role func(peer.ID) string) []analysis.StreamStats {
	m.mu.Lock()
	sides := make([]*streamSide, 0, len(m.sides))
	for _, ss := range m.sides {
		sides = append(sides, ss)
	}
	m.mu.Unlock()
	out := make([]analysis.StreamStats, 0, len(sides))
	for _, ss := range sides {
		ss.mu.Lock()
		st := analysis.StreamStats{
			Peer: ss.peer.String(), Direction: ss.dir, Protocol: ss.protocol, Codec: ss.codec,
			Streams: ss.streams, Frames: ss.frames, RawBytes: ss.raw, WireBytes: ss.wire,
			Messages:   map[gossip.Category]int64{},
			Categories: map[gossip.Category]analysis.CategoryBytes{},
			CodecStats: analysis.CodecStats{
				Units: ss.codecSum.Units, RawBytes: ss.codecSum.RawBytes, WireBytes: ss.codecSum.WireBytes,
				TimeNs: int64(ss.codecSum.Time), StateBytes: ss.codecSum.StateBytes,
			},
		}
		for c := range ss.msgs {
			if ss.msgs[c] != 0 {
				st.Messages[gossip.Category(c)] = ss.msgs[c]
			}
			if ss.catRaw[c] != 0 || ss.catWire[c] != 0 {
				st.Categories[gossip.Category(c)] = analysis.CategoryBytes{RawBytes: ss.catRaw[c], WireBytes: ss.catWire[c]}
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

// tracer counts pubsub events (RawTracer): drops, rejections, undeliverable messages.
type tracer struct {
	delivered     atomic.Int64
	duplicates    atomic.Int64
	droppedRPCs   atomic.Int64
	undeliverable atomic.Int64
	throttled     atomic.Int64
	// queues counts, per peer, RPCs entering its outbound queue and leaving it for the
	// stream; their difference is the backlog.
	queues   sync.Map // peer.ID → *peerQueue
	mu       sync.Mutex
	rejected map[string]int64
}

var _ pubsub.RawTracer = (*tracer)(nil)

func (t *tracer) OnNewOutboundStream(peer.ID, protocol.ID) {}
func (t *tracer) OnClosedOutboundStream(peer.ID)           {}
func (t *tracer) AddPeer(peer.ID, protocol.ID)             {}
func (t *tracer) RemovePeer(peer.ID)                       {}
func (t *tracer) Join(string)                              {}
func (t *tracer) Leave(string)                             {}
func (t *tracer) Graft(peer.ID, string)                    {}
func (t *tracer) Prune(peer.ID, string)                    {}
func (t *tracer) ValidateMessage(*pubsub.Message)          {}
func (t *tracer) DeliverMessage(*pubsub.Message)           { t.delivered.Add(1) }
func (t *tracer) DuplicateMessage(*pubsub.Message)         { t.duplicates.Add(1) }
func (t *tracer) ThrottlePeer(peer.ID)                     { t.throttled.Add(1) }
func (t *tracer) RecvRPC(*pubsub.RPC)                      {}
func (t *tracer) SendRPC(_ *pubsub.RPC, p peer.ID)         { t.queue(p).queued.Add(1) }
func (t *tracer) SendRPCCompleted(_ *pubsub.RPC, p peer.ID, _ time.Duration) {
	t.queue(p).written.Add(1)
}

type peerQueue struct{ queued, written atomic.Int64 }

func (t *tracer) queue(p peer.ID) *peerQueue {
	if q, ok := t.queues.Load(p); ok {
		return q.(*peerQueue)
	}
	q, _ := t.queues.LoadOrStore(p, &peerQueue{})
	return q.(*peerQueue)
}

// maxBacklog is the longest outbound queue over all peers but except.
func (t *tracer) maxBacklog(except peer.ID) int64 {
	var most int64
	t.queues.Range(func(k, v any) bool {
		if k.(peer.ID) != except {
			q := v.(*peerQueue)
			most = max(most, q.queued.Load()-q.written.Load())
		}
		return true
	})
	return most
}
func (t *tracer) DropRPC(*pubsub.RPC, peer.ID)         { t.droppedRPCs.Add(1) }
func (t *tracer) UndeliverableMessage(*pubsub.Message) { t.undeliverable.Add(1) }

func (t *tracer) RejectMessage(_ *pubsub.Message, reason string) {
	t.mu.Lock()
	if t.rejected == nil {
		t.rejected = map[string]int64{}
	}
	t.rejected[reason]++
	t.mu.Unlock()
}

func (t *tracer) snapshot() analysis.Pubsub {
	p := analysis.Pubsub{
		Delivered: t.delivered.Load(), Duplicates: t.duplicates.Load(),
		DroppedRPCs: t.droppedRPCs.Load(), Undeliverable: t.undeliverable.Load(), Throttled: t.throttled.Load(),
	}
	t.mu.Lock()
	if len(t.rejected) > 0 {
		p.Rejected = map[string]int64{}
		for k, v := range t.rejected {
			p.Rejected[k] = v
		}
	}
	t.mu.Unlock()
	return p
}
