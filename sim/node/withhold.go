package node

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/streamsim/streamsim/gossip"
)

// WithEchoWithholding makes the node forward as rust-libp2p (Lighthouse, Grandine) and
// nim-libp2p (Nimbus) do: not to a mesh peer whose own copy of the message reached the node
// before it forwarded (rust-libp2p's mcache observe_duplicate, whose peers forward_msg
// leaves out; nim-libp2p's validationSeen). go-libp2p-pubsub, jvm-libp2p and
// js-libp2p-gossipsub leave out only the peer they first got the message from (and peers
// that sent IDONTWANT), so a go node forwards the message back to every other mesh peer that
// sent it while it was validating.
//
// pubsub still decides; below it the node's gossip streams drop, from each outbound frame,
// the messages that the stream's peer sent the node before the frame is written (the
// stream's inbound side records them). A forward queued before that peer's copy arrived and
// written after it is dropped too, where rust-libp2p would have sent it; on the simulator's
// queues that gap is the writer's hand-off. Only metered streams (WithMeteredPeers) are
// filtered: an unmetered peer's bytes are not measured, and its copies are not recorded.
func WithEchoWithholding(on bool) Option {
	return func(c *config) error { c.withhold = on; return nil }
}

// WithholdsEchoes reports whether the node forwards as WithEchoWithholding.
func (n *Node) WithholdsEchoes() bool { return n.echoes != nil }

// Withheld is, per category, the forwards the node left out because the peer had sent it
// the message first (WithEchoWithholding); zero for a node that forwards as go does.
func (n *Node) Withheld() [gossip.NumCategories]int64 {
	var out [gossip.NumCategories]int64
	if n.echoes != nil {
		for c := range out {
			out[c] = n.echoes.withheld[c].Load()
		}
	}
	return out
}

// echoWindow is how long a peer's copy is remembered: far longer than a message's validation
// and the writer's queue, so every forward decided after the copy arrived finds it.
const echoWindow = 10 * time.Second

// echoLog is what each metered peer sent the node, by message key, for echoWindow.
type echoLog struct {
	seed     maphash.Seed
	mu       sync.Mutex
	peers    map[peer.ID]*peerCopies
	withheld [gossip.NumCategories]atomic.Int64
}

// peerCopies is one peer's recent copies: a set and the same keys in arrival order, for
// expiry.
type peerCopies struct {
	set   map[uint64]struct{}
	queue []keyAt
	head  int
}

type keyAt struct {
	key uint64
	at  time.Time
}

func newEchoLog() *echoLog {
	return &echoLog{seed: maphash.MakeSeed(), peers: map[peer.ID]*peerCopies{}}
}

// received records the messages of an inbound frame from p.
func (e *echoLog) received(p peer.ID, frame []byte) {
	now := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	pc := e.peers[p]
	for msg := range gossip.PublishedMessages(frame) {
		if pc == nil {
			pc = &peerCopies{set: map[uint64]struct{}{}}
			e.peers[p] = pc
		}
		k := gossip.MessageKey(e.seed, msg)
		if _, ok := pc.set[k]; ok {
			continue
		}
		pc.set[k] = struct{}{}
		pc.queue = append(pc.queue, keyAt{k, now})
	}
	if pc != nil {
		pc.expire(now)
	}
}

// expire forgets copies older than echoWindow.
func (pc *peerCopies) expire(now time.Time) {
	cut := now.Add(-echoWindow)
	for pc.head < len(pc.queue) && pc.queue[pc.head].at.Before(cut) {
		delete(pc.set, pc.queue[pc.head].key)
		pc.head++
	}
	if pc.head > 1024 && pc.head*2 > len(pc.queue) {
		pc.queue = append(pc.queue[:0], pc.queue[pc.head:]...)
		pc.head = 0
	}
}

// filter returns frame without the messages p sent the node (into buf when it drops any);
// empty when nothing is left to send.
func (e *echoLog) filter(buf []byte, p peer.ID, frame []byte) []byte {
	e.mu.Lock()
	pc := e.peers[p]
	if pc == nil || len(pc.set) == 0 {
		e.mu.Unlock()
		return frame
	}
	var dropped [gossip.NumCategories]int64
	out, n, err := gossip.DropMessages(buf[:0], frame, func(msg []byte) bool {
		if _, ok := pc.set[gossip.MessageKey(e.seed, msg)]; ok {
			dropped[gossip.MessageCategory(msg)]++
			return true
		}
		return false
	})
	e.mu.Unlock()
	if err != nil || n == 0 {
		return frame
	}
	for c, d := range dropped {
		if d > 0 {
			e.withheld[c].Add(d)
		}
	}
	return out
}

// forget drops p's copies (its connection is gone).
func (e *echoLog) forget(p peer.ID) {
	e.mu.Lock()
	delete(e.peers, p)
	e.mu.Unlock()
}
