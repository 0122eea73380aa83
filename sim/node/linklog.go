package node

import (
	"cmp"
	"errors"
	snet "github.com/streamsim/streamsim/sim/network"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/streamsim/streamsim/result"
)

// linkLog tracks, per peer, the connection and the current gossip stream in each direction,
// and records outages: a link is down from the moment its connection closes or one of its
// streams ends, until the node is connected with a live stream each way again and its pubsub
// has read the peer's first RPC on the new inbound stream (the hello carrying the peer's
// subscriptions: until then pubsub sends the peer no messages).
//
// It also carries the node's pair reset: go-libp2p-pubsub v0.19 forgets a peer's
// subscriptions when its outbound stream to that peer dies while the connection stays up
// (handleDeadPeers → clearPeerFromTopicsState) and reopens only that stream, so the peer,
// whose own outbound stream is intact, never announces them again and receives nothing more
// from this node. When a gossip stream with a peer fails on this node's side (a codec or
// framing error, a bogus RPC pubsub resets, a write error, the reset fault), the node
// therefore resets its other gossip stream with that peer too: both sides then reopen their
// outbound streams, and the first RPC on each (the hello with the subscriptions) restores the
// state. Both new streams start with empty codec history. A reset by the peer does not
// trigger it (the peer reset the pair).
//
// Each side's pubsub must forget the other's subscriptions before it reads the other's new
// hello, or it forgets them after learning them. The side that reset the pair (the
// initiator) therefore holds two things until the order is certain: reading the first RPC of
// the peer's new stream, until its own pubsub has dropped the peer's state (the RawTracer's
// OnClosedOutboundStream, called right after); and writing the first RPC of its own new
// stream, until the peer's new stream has arrived (the peer opens it only after dropping
// this node's state). Each hold lasts at most pairHoldMax. The other side needs no hold: it
// drops the initiator's state before it opens its new stream.
type linkLog struct {
	n         *Node
	pairReset bool

	mu      sync.Mutex
	peers   map[peer.ID]*linkState
	outages []result.Outage

	live        atomic.Int64 // live gossip streams, both directions
	awaiting    atomic.Int64 // new inbound streams whose first RPC pubsub has not read yet
	refuseUntil atomic.Int64 // Unix ns: connections are closed on arrival until then
	slowUntil   atomic.Int64 // Unix ns: gossip reads are throttled until then
	slowRate    atomic.Int64 // bytes per second while throttled
	notifiee    *network.NotifyBundle
}

type linkState struct {
	in, out   *codecStream
	connected bool
	up        bool           // has worked at least once
	down      *result.Outage // the open outage, if any
	hello     bool           // awaiting pubsub's first RPC from the peer on the current inbound stream
	subs      bool           // the peer's first RPC carried subscriptions (a hello to wait for)
	heard     bool           // pubsub has read an RPC from the peer
	// The pair reset's order (Unix ns): when this node last reset the pair, when an inbound
	// stream from the peer last opened, when pubsub last dropped the peer's outbound state.
	pairAt, inOpenedAt, clearedAt int64
}

// pairHoldMax bounds each hold of the pair reset's order.
const pairHoldMax = snet.MaxHold

func (l *linkLog) init(n *Node, pairReset bool) {
	l.n, l.pairReset = n, pairReset
	l.peers = map[peer.ID]*linkState{}
	l.notifiee = &network.NotifyBundle{
		ConnectedF: func(nw network.Network, c network.Conn) {
			if time.Now().UnixNano() < l.refuseUntil.Load() {
				go c.Close()
				return
			}
			l.mu.Lock()
			l.state(c.RemotePeer()).connected = true
			l.check(c.RemotePeer())
			l.mu.Unlock()
		},
		DisconnectedF: func(nw network.Network, c network.Conn) {
			p := c.RemotePeer()
			if nw.Connectedness(p) == network.Connected {
				return
			}
			l.mu.Lock()
			st := l.state(p)
			st.connected = false
			l.markDown(p, st, "disconnected")
			l.mu.Unlock()
		},
	}
	n.host.Network().Notify(l.notifiee)
}

func (l *linkLog) close() {
	if l.notifiee != nil {
		l.n.host.Network().StopNotify(l.notifiee)
	}
}

func (l *linkLog) state(p peer.ID) *linkState {
	st := l.peers[p]
	if st == nil {
		st = &linkState{}
		l.peers[p] = st
	}
	return st
}

// markDown opens an outage of p's link unless one is open or the link never worked.
func (l *linkLog) markDown(p peer.ID, st *linkState, cause string) {
	if st.up && st.down == nil {
		st.down = &result.Outage{Peer: p.String(), FromNs: time.Now().UnixNano(), Cause: cause}
	}
}

// check closes p's outage when the link works again.
func (l *linkLog) check(p peer.ID) {
	st := l.peers[p]
	if st == nil || st.in == nil || st.out == nil || st.hello {
		return
	}
	if !st.connected {
		// Streams can open before the Connected notification arrives.
		st.connected = l.n.host.Network().Connectedness(p) == network.Connected
		if !st.connected {
			return
		}
	}
	st.up = true
	if st.down != nil {
		st.down.ToNs = time.Now().UnixNano()
		l.outages = append(l.outages, *st.down)
		st.down = nil
	}
}

// opened registers a new gossip stream.
func (l *linkLog) opened(s *codecStream) {
	l.live.Add(1)
	p := s.Conn().RemotePeer()
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.state(p)
	s.openedAt = time.Now().UnixNano()
	if s.Stat().Direction == network.DirInbound {
		// A peer without subscriptions sends no hello (pubsub skips an empty first RPC).
		await := !st.heard || st.subs
		if await && !st.hello {
			l.awaiting.Add(1)
		}
		st.in, st.hello = s, await
		st.inOpenedAt = s.openedAt
	} else {
		st.out = s
	}
	l.check(p)
}

// ended records the end of a gossip stream (once per stream). failed says whether it ended
// in a failure (not a clean close), which resets the pair (see linkLog).
func (l *linkLog) ended(s *codecStream, cause string, failed bool) {
	if !s.ended.CompareAndSwap(false, true) {
		return
	}
	l.live.Add(-1)
	p := s.Conn().RemotePeer()
	l.mu.Lock()
	st := l.state(p)
	current := st.in == s || st.out == s
	var sibling *codecStream
	if st.in == s {
		st.in, sibling = nil, st.out
		if st.hello {
			st.hello = false
			l.awaiting.Add(-1)
		}
	} else if st.out == s {
		st.out, sibling = nil, st.in
	}
	if current {
		l.markDown(p, st, cause)
	}
	pair := current && failed && l.pairReset && sibling != nil && !sibling.ended.Load()
	if pair {
		st.pairAt = time.Now().UnixNano()
	}
	l.mu.Unlock()
	if pair {
		sibling.pairReset.Store(true)
		sibling.Stream.Reset()
		l.ended(sibling, "pair reset after: "+cause, false)
		sibling.release()
	}
}

// receivedRPC notes that pubsub read an RPC from p (RawTracer RecvRPC, called just before
// pubsub handles the RPC's subscriptions). It costs one atomic load unless a new inbound
// stream awaits its first RPC.
func (l *linkLog) receivedRPC(rpc *pubsub.RPC) {
	if l.awaiting.Load() == 0 {
		return
	}
	p := rpc.From()
	l.mu.Lock()
	defer l.mu.Unlock()
	if st := l.peers[p]; st != nil && st.hello {
		if !st.heard {
			st.heard, st.subs = true, len(rpc.GetSubscriptions()) > 0
		}
		st.hello = false
		l.awaiting.Add(-1)
		l.check(p)
	}
}

// outboundCleared records that pubsub dropped its outbound state for p (RawTracer
// OnClosedOutboundStream: right after it forgot p's subscriptions).
func (l *linkLog) outboundCleared(p peer.ID) {
	l.mu.Lock()
	l.state(p).clearedAt = time.Now().UnixNano()
	l.mu.Unlock()
}

// holdFirst keeps the pair reset's order (see linkLog) for a stream's first read (inbound)
// or write (outbound); it returns at once for every later one and on the other side.
func (l *linkLog) holdFirst(s *codecStream) {
	if s.firstDone.Swap(true) {
		return
	}
	p := s.Conn().RemotePeer()
	inbound := s.Stat().Direction == network.DirInbound
	ready := func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		st := l.peers[p]
		if st == nil || st.pairAt == 0 || s.openedAt < st.pairAt {
			return true
		}
		if inbound {
			return st.clearedAt >= st.pairAt
		}
		return st.inOpenedAt > st.pairAt
	}
	deadline := time.Now().Add(pairHoldMax)
	for !ready() && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
}

// endedErr records the end of a stream whose read or write returned err.
func (l *linkLog) endedErr(s *codecStream, err error) {
	cause, failed := endCause(err)
	l.ended(s, cause, failed)
}

// isCurrent reports whether s is p's current stream in its direction.
func (l *linkLog) isCurrent(s *codecStream) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.peers[s.Conn().RemotePeer()]
	return st != nil && (st.in == s || st.out == s)
}

// stream returns p's current gossip stream in direction dir.
func (l *linkLog) stream(p peer.ID, dir network.Direction) *codecStream {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.peers[p]
	if st == nil {
		return nil
	}
	if dir == network.DirInbound {
		return st.in
	}
	return st.out
}

// outageMergeGap joins outages of one link that are this close: one episode seen as two
// (the first new stream arrives before the second old one is read to its reset).
const outageMergeGap = 100 * time.Millisecond

// snapshot returns the outages that overlap [since, now], one episode each; those still open
// end at 0.
func (l *linkLog) snapshot(since time.Time) []result.Outage {
	l.mu.Lock()
	all := slices.Clone(l.outages)
	for _, st := range l.peers {
		if st.down != nil {
			all = append(all, *st.down)
		}
	}
	l.mu.Unlock()
	slices.SortFunc(all, func(a, b result.Outage) int {
		if c := strings.Compare(a.Peer, b.Peer); c != 0 {
			return c
		}
		return cmp.Compare(a.FromNs, b.FromNs)
	})
	var out []result.Outage
	for _, o := range all {
		if n := len(out); n > 0 && out[n-1].Peer == o.Peer && out[n-1].ToNs != 0 && o.FromNs-out[n-1].ToNs < int64(outageMergeGap) {
			last := &out[n-1]
			last.ToNs = o.ToNs
			if !strings.Contains(last.Cause, o.Cause) {
				last.Cause += "; " + o.Cause
			}
			continue
		}
		out = append(out, o)
	}
	out = slices.DeleteFunc(out, func(o result.Outage) bool { return o.ToNs != 0 && o.ToNs < since.UnixNano() })
	slices.SortStableFunc(out, func(a, b result.Outage) int { return cmp.Compare(a.FromNs, b.FromNs) })
	return out
}

// endCause describes how a stream read or write ended, and whether the node should reset the
// pair (see linkLog): after a failure it saw itself, yes; after a clean end or a reset by the
// peer, no: a streamsim peer that reset one stream has reset the pair itself, and resetting
// again would hit the fresh stream its pubsub has opened meanwhile.
func endCause(err error) (string, bool) {
	switch {
	case err == nil, errors.Is(err, io.EOF):
		return "closed", false
	case errors.Is(err, network.ErrReset):
		return "reset by peer", false
	}
	return "error: " + err.Error(), true
}

// streamFaults is a codecStream's part in fault injection and the link log.
type streamFaults struct {
	cut       bool        // guarded by wmu: the next Write sends part of its unit, then resets
	faultDone chan string // receives a note when the cut happened
	ended     atomic.Bool // the link log has recorded the stream's end
	pairReset atomic.Bool // the stream was reset because its sibling failed
	frames    atomic.Int64
	openedAt  int64       // Unix ns, set by the link log
	firstDone atomic.Bool // the first read or write has passed holdFirst
}

// throttle sleeps, while the node is a slow reader, for as long as n bytes take at its rate.
func (l *linkLog) throttle(n int64) {
	if n <= 0 {
		return
	}
	until := l.slowUntil.Load()
	if until == 0 || time.Now().UnixNano() >= until {
		return
	}
	if rate := l.slowRate.Load(); rate > 0 {
		time.Sleep(time.Duration(float64(n) / float64(rate) * float64(time.Second)))
	}
}

// GossipStreams is the number of live gossip streams of the node (both directions).
func (n *Node) GossipStreams() int64 { return n.links.live.Load() }

// Outages returns the node's link outages that overlap [since, now].
func (n *Node) Outages(since time.Time) []result.Outage { return n.links.snapshot(since) }
