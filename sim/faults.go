package sim

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/units"
)

// Faults: a schedule of failures injected into the measured phase (param faults), the link
// log every node keeps (when each gossip link was down and why), and the record of what
// pubsub lost. Reports account for every published message against these records.
//
// Schedule syntax: comma-separated entries
//
//	<slot>:<kind>:<target>[@<peer>][:<arg>[:<arg>]]
//
// <slot> counts slots of the measured phase from 0 and may have a fraction (2.5 is half-way
// through slot 2). <target> and <peer> are a group with an optional instance,
// <group>[/<instance>] (instance 0 when left out). Kinds:
//
//	disconnect[:<slots>]            the target closes every connection, refuses new ones for
//	                                <slots> (default 0.5), then dials its planned peers again
//	reset                           the writer of each gossip stream into the target (or only
//	                                @peer's) sends part of its next unit, then resets the stream
//	garbage[:<bytes>]               the writer of each gossip stream into the target (or @peer's)
//	                                writes <bytes> (default 64) seeded random bytes between units
//	rogue[:<bytes>]                 a stranger (a fresh host outside the run) opens a gossip
//	                                stream to the target with its compressed protocol, sends
//	                                <bytes> (default 64) random bytes and closes its side
//	slow[:<slots>[:<bytes/s>]]      the target reads its gossip streams at <bytes/s> (default
//	                                64KiB) for <slots> (default 1)
//	crash                           the target stops at once: closes its host, announces
//	                                nothing, writes no summary (what a crashed process shows)
//	hang                            the target stops making progress until its time budget
//	                                (param timeout) runs out
const ParamFaults = "faults"

// FaultKind names a kind of fault.
type FaultKind string

// Fault kinds.
const (
	FaultDisconnect FaultKind = "disconnect"
	FaultReset      FaultKind = "reset"
	FaultGarbage    FaultKind = "garbage"
	FaultRogue      FaultKind = "rogue"
	FaultSlow       FaultKind = "slow"
	FaultCrash      FaultKind = "crash"
	FaultHang       FaultKind = "hang"
)

// FaultKinds lists every fault kind with its arguments, for errors and help texts.
const FaultKinds = "disconnect[:<slots down>], reset, garbage[:<bytes>], rogue[:<bytes>], slow[:<slots>[:<bytes per second>]], crash, hang"

// FaultForms is the schedule's syntax, for the parameter's description.
const FaultForms = "comma-separated <slot>:<kind>:<group>[/<instance>][@<peer group>[/<instance>]][:<args>] (slot from 0, fractions allowed; @peer for reset and garbage); kinds: " + FaultKinds + "; empty: no faults"

// Fault defaults.
const (
	defaultDownSlots    = 0.5
	defaultGarbageBytes = 64
	defaultSlowSlots    = 1.0
	defaultSlowRate     = 64 << 10
	maxGarbageBytes     = 1 << 20
)

// InstanceRef names one instance: a group and a sequence number in it.
type InstanceRef struct {
	Group    string
	Instance int
}

func (r InstanceRef) String() string { return r.Group + "/" + strconv.Itoa(r.Instance) }

// Fault is one entry of a fault schedule.
type Fault struct {
	Spec    string // the entry as written
	AtSlots float64
	Kind    FaultKind
	Target  InstanceRef
	// Peer restricts reset and garbage to the stream from one peer of the target.
	Peer *InstanceRef
	// ForSlots: how long a disconnect or a slow reader lasts.
	ForSlots float64
	// Bytes: garbage and rogue payload size.
	Bytes int
	// RateBytes: a slow reader's bytes per second.
	RateBytes int
}

// ParseFaults parses a fault schedule for a run of slots slots; errors name the parameter,
// the entry and the allowed forms.
func ParseFaults(s string, slots int) ([]Fault, error) {
	var out []Fault
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		f, err := parseFault(e, slots)
		if err != nil {
			return nil, paramError(ParamFaults, "entry %q: %w (form: %s)", e, err, FaultForms)
		}
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b Fault) int {
		switch {
		case a.AtSlots < b.AtSlots:
			return -1
		case a.AtSlots > b.AtSlots:
			return 1
		}
		return 0
	})
	return out, nil
}

func parseFault(e string, slots int) (Fault, error) {
	parts := strings.Split(e, ":")
	if len(parts) < 3 {
		return Fault{}, errors.New("want <slot>:<kind>:<target>")
	}
	f := Fault{Spec: e, Kind: FaultKind(parts[1])}
	at, err := strconv.ParseFloat(parts[0], 64)
	if err != nil || at < 0 || at >= float64(slots) {
		return f, fmt.Errorf("slot %q is not a number in [0, %d) (param %s is %d)", parts[0], slots, ParamSlots, slots)
	}
	f.AtSlots = at
	target, peerSpec, hasPeer := strings.Cut(parts[2], "@")
	if f.Target, err = parseInstanceRef(target); err != nil {
		return f, fmt.Errorf("target: %w", err)
	}
	if hasPeer {
		if f.Kind != FaultReset && f.Kind != FaultGarbage {
			return f, fmt.Errorf("@<peer> applies to reset and garbage only, not %s", f.Kind)
		}
		r, err := parseInstanceRef(peerSpec)
		if err != nil {
			return f, fmt.Errorf("peer: %w", err)
		}
		f.Peer = &r
	}
	args := parts[3:]
	maxArgs := map[FaultKind]int{FaultDisconnect: 1, FaultReset: 0, FaultGarbage: 1, FaultRogue: 1, FaultSlow: 2, FaultCrash: 0, FaultHang: 0}
	n, ok := maxArgs[f.Kind]
	if !ok {
		return f, fmt.Errorf("unknown fault kind %q (kinds: %s)", f.Kind, FaultKinds)
	}
	if len(args) > n {
		return f, fmt.Errorf("%s takes at most %d argument(s), got %d", f.Kind, n, len(args))
	}
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	slotsArg := func(v string, def float64) (float64, error) {
		if v == "" {
			return def, nil
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || !(x > 0) || x > float64(slots) {
			return 0, fmt.Errorf("duration %q is not a number of slots in (0, %d]", v, slots)
		}
		return x, nil
	}
	sizeArg := func(v string, def int) (int, error) {
		if v == "" {
			return def, nil
		}
		x, err := units.ParseSize(v)
		if err != nil || x < 1 || x > maxGarbageBytes {
			return 0, fmt.Errorf("size %q is not a byte count in 1..1MiB (like 64 or 4KiB)", v)
		}
		return x, nil
	}
	switch f.Kind {
	case FaultDisconnect:
		f.ForSlots, err = slotsArg(arg(0), defaultDownSlots)
	case FaultGarbage, FaultRogue:
		f.Bytes, err = sizeArg(arg(0), defaultGarbageBytes)
	case FaultSlow:
		if f.ForSlots, err = slotsArg(arg(0), defaultSlowSlots); err == nil {
			f.RateBytes, err = sizeArg(arg(1), defaultSlowRate)
		}
	}
	return f, err
}

func parseInstanceRef(s string) (InstanceRef, error) {
	g, inst, hasInst := strings.Cut(s, "/")
	if g == "" {
		return InstanceRef{}, fmt.Errorf("%q has no group", s)
	}
	r := InstanceRef{Group: g}
	if hasInst {
		n, err := strconv.Atoi(inst)
		if err != nil || n < 0 {
			return r, fmt.Errorf("instance %q of %q is not a non-negative integer", inst, s)
		}
		r.Instance = n
	}
	return r, nil
}

// CheckFaultTargets checks that every instance a schedule names is in the run's groups
// (group ID → instance count).
func CheckFaultTargets(faults []Fault, groups map[string]int) error {
	for _, f := range faults {
		refs := []InstanceRef{f.Target}
		if f.Peer != nil {
			refs = append(refs, *f.Peer)
		}
		for _, r := range refs {
			if n, ok := groups[r.Group]; !ok || r.Instance >= n {
				names := make([]string, 0, len(groups))
				for g, n := range groups {
					names = append(names, fmt.Sprintf("%s (%d)", g, n))
				}
				slices.Sort(names)
				return paramError(ParamFaults, "entry %q: no instance %s in this run (groups: %s)", f.Spec, r, strings.Join(names, ", "))
			}
		}
	}
	return nil
}

// neighbours are the plan's peers of member i: those it dials and those that dial it.
func neighbours(plan *topology.Plan, i int) []int {
	out := slices.Clone(plan.Nodes[i].Dial)
	for j := range plan.Nodes {
		if slices.Contains(plan.Nodes[j].Dial, i) && !slices.Contains(out, j) {
			out = append(out, j)
		}
	}
	slices.Sort(out)
	return out
}

// ---------------------------------------------------------------------------------------
// The link log: every node keeps one.

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
const pairHoldMax = 5 * time.Second

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

// ---------------------------------------------------------------------------------------
// Fault actions on a node.

// cutUnit sends the first half of frame's compressed unit, then resets the stream (the
// reset fault). Called by Write with s.wmu held.
func (s *codecStream) cutUnit(frame []byte) (int, error) {
	s.cut = false
	var unit bytes.Buffer
	s.wire.w = &unit
	_, err := s.w.Write(frame)
	s.wire.w = s.Stream
	if err != nil {
		return 0, err
	}
	part := unit.Bytes()[:max(1, unit.Len()/2)]
	_, werr := s.Stream.Write(part)
	s.Stream.Reset()
	s.node.links.ended(s, fmt.Sprintf("fault reset: sent %d of a %d-byte unit, then reset", len(part), unit.Len()), true)
	s.release()
	s.faultDone <- fmt.Sprintf("sent %d of a %d-byte unit (%d-byte frame), then reset (write error: %v)", len(part), unit.Len(), len(frame), werr)
	return 0, network.ErrReset
}

// armCut makes the next Write of p's outbound gossip stream send part of its unit and reset
// the stream; it returns a channel that receives a note when that happened, or false when
// there is no such stream.
func (n *Node) armCut(p peer.ID) (<-chan string, bool) {
	s := n.links.stream(p, network.DirOutbound)
	if s == nil {
		return nil, false
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.wclosed || s.cut {
		return nil, false
	}
	s.cut = true
	s.faultDone = make(chan string, 1)
	return s.faultDone, true
}

// injectGarbage writes garbage into p's outbound gossip stream between two units.
func (n *Node) injectGarbage(p peer.ID, garbage []byte) (string, bool) {
	s := n.links.stream(p, network.DirOutbound)
	if s == nil {
		return "no outbound gossip stream", false
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.wclosed {
		return "stream closed", false
	}
	if _, err := s.Stream.Write(garbage); err != nil {
		return "write: " + err.Error(), false
	}
	return fmt.Sprintf("%d bytes into %s after %d units", len(garbage), s.Protocol(), s.wlast.Units), true
}

// disconnect closes every connection of the node and refuses new ones until until.
func (n *Node) disconnect(until time.Time) int {
	n.links.refuseUntil.Store(until.UnixNano())
	conns := n.host.Network().Conns()
	for _, c := range conns {
		c.Close()
	}
	return len(conns)
}

// slowReads throttles the node's gossip reads to rate bytes per second until until.
func (n *Node) slowReads(until time.Time, rate int) {
	n.links.slowRate.Store(int64(rate))
	n.links.slowUntil.Store(until.UnixNano())
}

// GossipStreams is the number of live gossip streams of the node (both directions).
func (n *Node) GossipStreams() int64 { return n.links.live.Load() }

// Outages returns the node's link outages that overlap [since, now].
func (n *Node) Outages(since time.Time) []result.Outage { return n.links.snapshot(since) }

// rogue opens a gossip stream to target from a fresh host (a stranger outside the run) with
// proto and writes garbage on it; it returns what the stranger saw.
func rogue(ctx context.Context, target peer.AddrInfo, proto protocol.ID, garbage []byte) (string, error) {
	h, err := NewHost("")
	if err != nil {
		return "", err
	}
	defer h.Close()
	if err := h.Connect(ctx, target); err != nil {
		return "", fmt.Errorf("connect: %w", err)
	}
	s, err := h.NewStream(ctx, target.ID, proto)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", proto, err)
	}
	if _, err := s.Write(garbage); err != nil {
		return "", fmt.Errorf("write: %w", err)
	}
	// The stranger is done sending: a decoder that waits for the rest of a declared block
	// now sees the stream end inside it. The target answers with a reset; wait for it.
	s.CloseWrite()
	s.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, rerr := s.Read(make([]byte, 1))
	s.Reset()
	answer := "the target reset the stream"
	if !errors.Is(rerr, network.ErrReset) {
		answer = fmt.Sprintf("then read: %v", rerr)
	}
	return fmt.Sprintf("%d bytes on %s from stranger %s, then closed; %s", len(garbage), proto, h.ID(), answer), nil
}

// ---------------------------------------------------------------------------------------
// What pubsub lost, by message id (recorded when the node keeps a lost log).

// lostLog collects the ids of messages pubsub dropped, per reason and peer, up to maxLostIDs.
type lostLog struct {
	mu    sync.Mutex
	by    map[lostKey]*result.LostMessages
	order []lostKey
	kept  int
}

type lostKey struct{ reason, peer string }

const maxLostIDs = 1 << 20

func (l *lostLog) add(reason string, p peer.ID, ids ...[]byte) {
	if l == nil || len(ids) == 0 {
		return
	}
	k := lostKey{reason, ""}
	if p != "" {
		k.peer = p.String()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil {
		l.by = map[lostKey]*result.LostMessages{}
	}
	e := l.by[k]
	if e == nil {
		e = &result.LostMessages{Reason: reason, Peer: k.peer}
		l.by[k] = e
		l.order = append(l.order, k)
	}
	for _, id := range ids {
		if l.kept >= maxLostIDs {
			e.Truncated++
			continue
		}
		l.kept++
		e.IDs = append(e.IDs, hex.EncodeToString(id))
	}
}

// dropped records the messages of an RPC pubsub dropped for p.
func (l *lostLog) dropped(rpc *pubsub.RPC, p peer.ID) {
	if l == nil || rpc == nil {
		return
	}
	var ids [][]byte
	for _, m := range rpc.GetPublish() {
		id := gossip.MessageID(m.GetTopic(), m.GetData())
		ids = append(ids, id[:])
	}
	l.add(result.LostDropped, p, ids...)
}

func (l *lostLog) message(reason string, m *pubsub.Message) {
	if l == nil || m == nil {
		return
	}
	l.add(reason, "", []byte(m.ID))
}

func (l *lostLog) snapshot() []result.LostMessages {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]result.LostMessages, 0, len(l.order))
	for _, k := range l.order {
		e := *l.by[k]
		e.IDs = slices.Clone(e.IDs)
		out = append(out, e)
	}
	return out
}

// WithLostLog makes the node record the id of every message pubsub drops (full outbound
// queue), cannot deliver (full subscription buffer) or rejects, for per-message accounting.
// It costs a message-id computation per dropped message; runs with faults turn it on.
func WithLostLog(on bool) Option { return func(c *config) error { c.lostLog = on; return nil } }

// WithPairReset turns the pair reset on or off (default on): when one gossip stream with a
// peer fails, the node resets its other gossip stream with that peer (see linkLog for why).
func WithPairReset(on bool) Option { return func(c *config) error { c.pairReset = on; return nil } }

// LostMessages returns what the node's lost log holds (nil without WithLostLog).
func (n *Node) LostMessages() []result.LostMessages { return n.tracer.lost.snapshot() }

// ---------------------------------------------------------------------------------------
// Running a schedule in an instance.

// faultRunner carries out the faults of a schedule that fall to one instance.
type faultRunner struct {
	in     *instance
	faults []Fault
	// idx resolves instance references to member indexes.
	idx map[InstanceRef]int

	mu     sync.Mutex
	events []result.FaultEvent
}

func newFaultRunner(in *instance) (*faultRunner, error) {
	r := &faultRunner{in: in, faults: in.p.Faults, idx: map[InstanceRef]int{}}
	groups := map[string]int{}
	for i, m := range in.members {
		r.idx[InstanceRef{m.Group, m.Instance}] = i
		groups[m.Group] = max(groups[m.Group], m.Instance+1)
	}
	if err := CheckFaultTargets(r.faults, groups); err != nil {
		return nil, err
	}
	return r, nil
}

// downWindows returns, for member j, the intervals (offsets from the measured phase's start)
// during which its connections are down by schedule: its own disconnects.
func (r *faultRunner) downWindows(j int) [][2]time.Duration {
	var out [][2]time.Duration
	for _, f := range r.faults {
		if f.Kind == FaultDisconnect && r.idx[f.Target] == j {
			at := r.in.slotTime(f.AtSlots)
			out = append(out, [2]time.Duration{at, at + r.in.slotTime(f.ForSlots)})
		}
	}
	return out
}

// run carries out this instance's faults, each at its time after start.
func (r *faultRunner) run(ctx context.Context, start time.Time) {
	me := r.in.me
	var wg sync.WaitGroup
	for i, f := range r.faults {
		target := r.idx[f.Target]
		var actor bool
		switch f.Kind {
		case FaultReset, FaultGarbage:
			// The writers of the streams into the target act: its peers (or the one named).
			if f.Peer != nil {
				actor = r.idx[*f.Peer] == me
			} else {
				actor = slices.Contains(neighbours(r.in.plan, target), me)
			}
		default:
			actor = target == me
		}
		if !actor {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(start.Add(r.in.slotTime(f.AtSlots)))):
			}
			r.apply(ctx, i, f, target)
		}()
	}
	wg.Wait()
}

func (r *faultRunner) record(e result.FaultEvent) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *faultRunner) snapshot() []result.FaultEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.events)
	slices.SortFunc(out, func(a, b result.FaultEvent) int { return int(a.AtNs - b.AtNs) })
	return out
}

// apply carries out fault i (f) as this instance's part.
func (r *faultRunner) apply(ctx context.Context, i int, f Fault, target int) {
	in := r.in
	node := in.node
	ev := result.FaultEvent{Spec: f.Spec, Kind: string(f.Kind), AtNs: time.Now().UnixNano()}
	// Garbage is seeded by the run's seed and the entry's position: the same schedule
	// sends the same bytes.
	rng := rand.New(rand.NewSource(in.p.Seed*1_000_003 + int64(i)))
	switch f.Kind {
	case FaultDisconnect:
		until := time.Now().Add(in.slotTime(f.ForSlots))
		n := node.disconnect(until)
		ev.UntilNs, ev.Applied = until.UnixNano(), true
		ev.Note = fmt.Sprintf("closed %d connection(s)", n)
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(until)):
		}
		ev.Note += "; " + r.redial(ctx)
	case FaultReset, FaultGarbage:
		p := in.infos[target].ID
		ev.Peer = p.String()
		if f.Kind == FaultGarbage {
			garbage := make([]byte, f.Bytes)
			rng.Read(garbage)
			ev.Note, ev.Applied = node.injectGarbage(p, garbage)
			break
		}
		done, ok := node.armCut(p)
		if !ok {
			ev.Note = "no outbound gossip stream to the target"
			break
		}
		select {
		case ev.Note = <-done:
			ev.Applied = true
		case <-ctx.Done():
			ev.Note = "no unit was written before the run ended"
		}
	case FaultRogue:
		garbage := make([]byte, f.Bytes)
		rng.Read(garbage)
		proto := node.Protocols()[0]
		note, err := rogue(ctx, node.AddrInfo(), proto, garbage)
		ev.Note, ev.Applied = note, err == nil
		if err != nil {
			ev.Note = err.Error()
		}
	case FaultSlow:
		until := time.Now().Add(in.slotTime(f.ForSlots))
		node.slowReads(until, f.RateBytes)
		ev.UntilNs, ev.Applied = until.UnixNano(), true
		ev.Note = fmt.Sprintf("gossip reads at %s/s", units.FormatSize(f.RateBytes))
	case FaultCrash:
		in.crash()
		return // a crashed instance records nothing
	case FaultHang:
		ev.Applied = true
		ev.Note = "stopped making progress"
		r.record(ev)
		in.hang()
		return
	}
	r.record(ev)
}

// redial dials the instance's planned peers again after a disconnect.
func (r *faultRunner) redial(ctx context.Context) string {
	in := r.in
	var wg sync.WaitGroup
	var failed atomic.Int64
	peers := neighbours(in.plan, in.me)
	for _, j := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := in.node.Host().Connect(dctx, in.infos[j]); err != nil {
				failed.Add(1)
				in.runenv.RecordMessage("fault redial %s: %v", in.members[j], err)
			}
		}()
	}
	wg.Wait()
	return fmt.Sprintf("redialled %d peer(s), %d failed", len(peers), failed.Load())
}

// slotTime converts slots to the run's (scaled) time.
func (in *instance) slotTime(slots float64) time.Duration {
	return time.Duration(slots * float64(in.slot))
}
