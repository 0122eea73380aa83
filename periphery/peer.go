// Package periphery is the rest of the network as a neighbourhood's real nodes see it: boundary
// peers that speak GossipSub's wire protocol (/meshsub/1.2.0, varint-delimited pb.RPC) to one
// real node each, without running go-libp2p-pubsub. A boundary peer subscribes to its topics,
// keeps grafting (as a popular node below Dlo does on mainnet), delivers the messages it is
// given, answers IWANT, gossips IHAVE while the real node keeps it out of its mesh, obeys PRUNE
// backoffs, and forwards nothing. Grafting pressure is per topic (Config.Pressure): on a
// topic without it the peer never grafts on its own and is in the real node's mesh only
// while the real node grafts it, as a mainnet neighbour with a full mesh of its own is. It
// never touches the links between the observed node and
// its peers: it only ever talks to the one real node it was given.
//
// It stands apart from the real nodes (package node) on purpose: nothing here is a model of
// the nodes whose bytes are measured, only of the pressure and the traffic mainnet puts on
// them from outside.
package periphery

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/streamsim/streamsim/gossip"
)

// Protocol is the GossipSub protocol a boundary peer speaks (plain v1.2: IDONTWANT capable).
const Protocol = protocol.ID("/meshsub/1.2.0")

// Config describes a boundary peer's behaviour. Durations are already divided by the run's
// time scale.
type Config struct {
	// Topics the peer subscribes to and grafts on.
	Topics []string
	// Heartbeat is how often the peer grafts again where it is out of the real node's mesh
	// and not backing off, and gossips IHAVE where it is out.
	Heartbeat time.Duration
	// PruneBackoff is the backoff obeyed after a PRUNE that carries none (the sender's
	// backoff is obeyed when given, in whole seconds, as pubsub sends it).
	PruneBackoff time.Duration
	// HistoryGossip is how many heartbeats a message id stays in IHAVE (pubsub's 3).
	HistoryGossip int
	// MaxRPC bounds one received RPC (the real node's max message size).
	MaxRPC int
	// Pressure says on which topics the peer keeps grafting (at start and again after
	// every backoff); nil: on every topic. New asks it once per topic. On the others it only subscribes, and joins
	// or leaves the real node's mesh when the real node grafts or prunes it.
	Pressure func(topic string) bool
	// FirstGraft spreads the first GRAFTs in time: each pressed topic's first GRAFT comes
	// at a uniform time in [0, FirstGraft) after Start (seeded by Seed), so that peers
	// started together are not pruned together and then, one backoff later, back together
	// in a wave. 0: at Start.
	FirstGraft time.Duration
	// Regraft delays each GRAFT after a PRUNE's backoff by a further delay drawn from an
	// exponential distribution of this mean (seeded by Seed): a grafter that needs a mesh
	// peer only now and then, picking among many candidates. 0: at the first heartbeat
	// after the backoff, as a node below Dlo does.
	Regraft time.Duration
	Seed    uint64
}

// presses reports whether the peer keeps grafting topic.
func (c *Config) presses(topic string) bool { return c.Pressure == nil || c.Pressure(topic) }

// Stats counts what a boundary peer did and received.
type Stats struct {
	Published     int64 // messages sent in full (mesh delivery or IWANT answer)
	IWantAnswered int64 // message ids answered
	IHaveIDs      int64 // ids advertised
	GraftsSent    int64
	PrunesIn      int64
	GraftsIn      int64
	MessagesIn    int64 // full messages received from the real node (discarded)
	FramesIn      int64
}

// Peer is one boundary peer of one real node.
type Peer struct {
	h      host.Host
	cfg    Config
	target peer.ID

	out   network.Stream
	queue *queue
	werr  atomic.Value // the writer's error

	// topic is each of cfg.Topics' index in them; meshed and pressed are by that index:
	// whether the real node has not pruned us (we grafted) and whether we keep grafting.
	// meshed is read without mu (the schedule asks InMesh of every candidate of a copy) and
	// written under it.
	topic   map[string]int
	meshed  []atomic.Bool
	pressed []bool
	first   []int // of each of cfg.Topics, the index of its first occurrence (the one topic maps it to)

	mu      sync.Mutex
	backoff map[string]time.Time // no GRAFT before
	regraft map[string]time.Time // nor before (Config.Regraft)
	rng     *rand.Rand
	// windows are the messages given to the peer per heartbeat window, newest last: what
	// IWANT is answered from (newest first), and what IHAVE and expiry count in; base is the
	// number of windows expired before windows[0].
	windows [][]held
	base    int
	pending map[string][]pendingID // ids held back per topic, for IHAVE

	stats struct {
		published, iwant, ihave, grafts, prunes, graftsIn, msgsIn, frames atomic.Int64
	}
	done chan struct{}
}

// New makes a boundary peer on h (a host of its own: its peer id is its identity) and
// registers its stream handler, so that the real node's stream to it is read.
func New(h host.Host, cfg Config) (*Peer, error) {
	if len(cfg.Topics) == 0 || cfg.Heartbeat <= 0 || cfg.PruneBackoff <= 0 {
		return nil, fmt.Errorf("periphery: a peer needs topics, a heartbeat and a prune backoff: %+v", cfg)
	}
	if cfg.HistoryGossip < 1 {
		cfg.HistoryGossip = 3
	}
	if cfg.MaxRPC <= 0 {
		cfg.MaxRPC = 1 << 20
	}
	if cfg.Regraft < 0 || cfg.FirstGraft < 0 {
		return nil, fmt.Errorf("periphery: re-graft delay %v, first-graft spread %v: must not be negative", cfg.Regraft, cfg.FirstGraft)
	}
	p := &Peer{h: h, cfg: cfg, backoff: map[string]time.Time{}, regraft: map[string]time.Time{},
		topic: make(map[string]int, len(cfg.Topics)), meshed: make([]atomic.Bool, len(cfg.Topics)), pressed: make([]bool, len(cfg.Topics)), first: make([]int, len(cfg.Topics)),
		rng:     rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)),
		pending: map[string][]pendingID{}, done: make(chan struct{}), queue: newQueue()}
	for i, t := range cfg.Topics {
		if _, dup := p.topic[t]; !dup {
			p.topic[t] = i
		}
		p.first[i] = p.topic[t]
		p.pressed[i] = cfg.presses(t)
	}
	h.SetStreamHandler(Protocol, p.read)
	return p, nil
}

// Start opens the peer's stream to the real node (already connected), announces its
// subscriptions and grafts, and runs its heartbeat until ctx ends.
func (p *Peer) Start(ctx context.Context, target peer.ID) error {
	p.target = target
	s, err := p.h.NewStream(ctx, target, Protocol)
	if err != nil {
		return fmt.Errorf("periphery: stream to %s: %w", target, err)
	}
	p.out = s
	rpc := &pb.RPC{Control: &pb.ControlMessage{}}
	now := time.Now()
	p.mu.Lock()
	for i, t := range p.cfg.Topics {
		sub := true
		rpc.Subscriptions = append(rpc.Subscriptions, &pb.RPC_SubOpts{Subscribe: &sub, Topicid: &t})
		switch {
		case !p.pressed[i]:
		case p.cfg.FirstGraft > 0:
			p.regraft[t] = now.Add(time.Duration(p.rng.Int64N(int64(p.cfg.FirstGraft))))
		default:
			rpc.Control.Graft = append(rpc.Control.Graft, &pb.ControlGraft{TopicID: &t})
			p.setMeshed(t, true)
		}
	}
	p.mu.Unlock()
	p.stats.grafts.Add(int64(len(rpc.Control.Graft)))
	go p.writer(ctx)
	if err := p.send(rpc); err != nil {
		return err
	}
	go p.heartbeat(ctx)
	return nil
}

// regraftDelay draws the wait beyond a backoff (Config.Regraft); p.mu held.
func (p *Peer) regraftDelay() time.Duration {
	if p.cfg.Regraft <= 0 {
		return 0
	}
	return time.Duration(p.rng.ExpFloat64() * float64(p.cfg.Regraft))
}

// Publish delivers one message from outside: in full if the real node keeps us in its mesh,
// else by IHAVE at the next heartbeat (and in full on IWANT). data is the gossip payload as
// pubsub carries it (ssz_snappy).
func (p *Peer) Publish(topic string, data []byte) error {
	id := gossip.MessageID(topic, data)
	return p.PublishID(topic, data, string(id[:]))
}

// PublishID is Publish with the message id (gossip.MessageID) already known.
func (p *Peer) PublishID(topic string, data []byte, id string) error {
	return p.Deliver(NewMessage(topic, data, id), -1)
}

// Message is one message from outside, to be delivered by any number of peers: its RPC and
// the frame a peer sends it in are built once for all of them.
type Message struct {
	id    string
	topic string
	m     *pb.Message
	once  sync.Once
	frame []byte // varint length and pb.RPC{Publish: [m]}, as the writer would marshal it
	err   error
}

// NewMessage is the message data of topic with id (gossip.MessageID).
func NewMessage(topic string, data []byte, id string) *Message {
	return &Message{id: id, topic: topic, m: &pb.Message{Data: data, Topic: &topic}}
}

// encoded is the message's frame, marshalled by the first peer that sends it in full.
func (m *Message) encoded() ([]byte, error) {
	m.once.Do(func() { m.frame, m.err = gossip.AppendFrame(nil, &pb.RPC{Publish: []*pb.Message{m.m}}) })
	return m.frame, m.err
}

// Deliver is Publish of a message made by NewMessage. topicAt is where its topic first is in
// Config.Topics (InMeshAt), or -1 to look it up; m and its frame may be shared by many peers
// and are never changed.
func (p *Peer) Deliver(m *Message, topicAt int) error {
	p.mu.Lock()
	if len(p.windows) == 0 {
		p.windows = append(p.windows, nil)
	}
	last := len(p.windows) - 1
	p.windows[last] = append(p.windows[last], held{id: m.id, m: m.m})
	var meshed bool
	if topicAt >= 0 {
		meshed = p.InMeshAt(topicAt)
	} else {
		meshed = p.InMesh(m.topic)
	}
	if !meshed {
		p.pending[m.topic] = append(p.pending[m.topic], pendingID{id: m.id, window: p.base + last})
	}
	p.mu.Unlock()
	if !meshed {
		return nil
	}
	p.stats.published.Add(1)
	frame, err := m.encoded()
	if err != nil {
		return fmt.Errorf("periphery: marshal: %w", err)
	}
	return p.enqueue(outgoing{frame: frame})
}

// held is a message given to the peer, in the window it was given in.
type held struct {
	id string
	m  *pb.Message
}

// pendingID is a held-back message's id and the window (counted from the first) it was given in.
type pendingID struct {
	id     string
	window int
}

// outgoing is what the writer writes: an RPC to marshal, or a frame already marshalled.
type outgoing struct {
	rpc   *pb.RPC
	frame []byte
}

// Stats returns the peer's counters.
func (p *Peer) Stats() Stats {
	return Stats{Published: p.stats.published.Load(), IWantAnswered: p.stats.iwant.Load(), IHaveIDs: p.stats.ihave.Load(),
		GraftsSent: p.stats.grafts.Load(), PrunesIn: p.stats.prunes.Load(), GraftsIn: p.stats.graftsIn.Load(),
		MessagesIn: p.stats.msgsIn.Load(), FramesIn: p.stats.frames.Load()}
}

// Host is the peer's libp2p host.
func (p *Peer) Host() host.Host { return p.h }

func (p *Peer) subscribed(topic string) bool {
	_, ok := p.topic[topic]
	return ok
}

// InMesh reports whether the peer currently considers itself in the real node's mesh of topic.
func (p *Peer) InMesh(topic string) bool {
	i, ok := p.topic[topic]
	return ok && p.meshed[i].Load()
}

// InMeshAt is InMesh of the topic whose first place in Config.Topics is i (false for i < 0): no
// lookup of the topic's name.
func (p *Peer) InMeshAt(i int) bool {
	return i >= 0 && i < len(p.meshed) && p.meshed[i].Load()
}

// setMeshed records whether the peer is in the real node's mesh of topic (false for a topic it
// is not subscribed to, which it never is); p.mu held.
func (p *Peer) setMeshed(topic string, in bool) {
	if i, ok := p.topic[topic]; ok {
		p.meshed[i].Store(in)
	}
}

// queueLen bounds the RPCs waiting for the writer: deep enough that a real node busy for a
// while does not hold up the periphery's schedule for every other peer (a full queue blocks
// the caller: backpressure, which the schedule's lag then shows).
const queueLen = 1 << 14

// send queues one RPC for the writer.
func (p *Peer) send(rpc *pb.RPC) error { return p.enqueue(outgoing{rpc: rpc}) }

// enqueue queues one RPC or frame for the writer.
func (p *Peer) enqueue(o outgoing) error {
	if p.out == nil {
		return errors.New("periphery: not started")
	}
	if err, _ := p.werr.Load().(error); err != nil {
		return err
	}
	if !p.queue.push(o, p.done) {
		return errors.New("periphery: peer stopped")
	}
	return nil
}

// queue is what waits for the writer, in order, at most queueLen entries, holding only what
// waits: a channel of queueLen would keep queueLen slots per peer for the whole run (128 KiB
// for each of thousands of peers), every one scanned by the collector in every cycle.
type queue struct {
	mu    sync.Mutex
	items []outgoing
	head  int
	full  bool          // a push waits for room
	ready chan struct{} // capacity 1: something was pushed
	room  chan struct{} // closed and replaced when pop frees room in a full queue
}

func newQueue() *queue {
	return &queue{ready: make(chan struct{}, 1), room: make(chan struct{})}
}

// push appends o, waiting while the queue is full; false if stop closed first.
func (q *queue) push(o outgoing, stop <-chan struct{}) bool {
	for {
		q.mu.Lock()
		if len(q.items)-q.head < queueLen {
			q.items = append(q.items, o)
			q.mu.Unlock()
			select {
			case q.ready <- struct{}{}:
			default:
			}
			return true
		}
		q.full = true
		room := q.room
		q.mu.Unlock()
		select {
		case <-room:
		case <-stop:
			return false
		}
	}
}

// pop takes the oldest entry; false if there is none.
func (q *queue) pop() (outgoing, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head == len(q.items) {
		return outgoing{}, false
	}
	o := q.items[q.head]
	q.items[q.head] = outgoing{}
	q.head++
	switch {
	case q.head == len(q.items): // drained: keep a small buffer only
		if cap(q.items) > 1024 {
			q.items = nil
		} else {
			q.items = q.items[:0]
		}
		q.head = 0
	case q.head >= 1024 && 2*q.head >= len(q.items):
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	if q.full {
		q.full = false
		close(q.room)
		q.room = make(chan struct{})
	}
	return o, true
}

// writer writes queued RPCs as pubsub does: varint length and protobuf in one Write.
func (p *Peer) writer(ctx context.Context) {
	defer close(p.done)
	var buf []byte
	stop := ctx.Done()
	for {
		select {
		case <-stop:
			return
		default:
		}
		o, ok := p.queue.pop()
		if !ok {
			select {
			case <-stop:
				return
			case <-p.queue.ready:
			}
			continue
		}
		b := o.frame
		if b == nil {
			var err error
			if b, err = gossip.AppendFrame(buf[:0], o.rpc); err != nil {
				p.werr.Store(fmt.Errorf("periphery: marshal: %w", err))
				return
			}
			buf = b
		}
		if _, err := p.out.Write(b); err != nil {
			p.werr.Store(fmt.Errorf("periphery: write to %s: %w", p.target, err))
			return
		}
	}
}

// heartbeat grafts again where out of the mesh and not backing off, gossips IHAVE of the
// messages held back, and ages the message store.
func (p *Peer) heartbeat(ctx context.Context) {
	t := time.NewTicker(p.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			p.tick(now)
		}
	}
}

func (p *Peer) tick(now time.Time) {
	var graft []*pb.ControlGraft
	var ihave []*pb.ControlIHave
	p.mu.Lock()
	for i, topic := range p.cfg.Topics {
		if p.meshed[p.first[i]].Load() || !p.pressed[i] {
			continue
		}
		if now.After(p.backoff[topic]) && !now.Before(p.regraft[topic]) {
			tp := topic
			graft = append(graft, &pb.ControlGraft{TopicID: &tp})
			p.setMeshed(topic, true)
		}
	}
	// IHAVE: ids of the last HistoryGossip windows of topics we are out of, as pubsub does.
	pending := 0
	for topic, ids := range p.pending {
		if len(ids) > 0 {
			tp := topic
			list := make([]string, len(ids))
			for i, x := range ids {
				list[i] = x.id
			}
			ihave = append(ihave, &pb.ControlIHave{TopicID: &tp, MessageIDs: list})
			p.stats.ihave.Add(int64(len(ids)))
			pending += len(ids)
		}
	}
	// Age: a new window; ids older than HistoryGossip windows leave IHAVE and the store.
	p.windows = append(p.windows, nil)
	if len(p.windows) > p.cfg.HistoryGossip {
		clear(p.windows[0])
		p.windows = p.windows[1:]
		p.base++
	}
	if pending > 0 { // nothing to expire otherwise
		for topic, ids := range p.pending {
			// Given in window order: the expired are a prefix.
			k := 0
			for k < len(ids) && ids[k].window < p.base {
				k++
			}
			if k > 0 {
				n := copy(ids, ids[k:])
				clear(ids[n:])
				p.pending[topic] = ids[:n]
			}
		}
	}
	p.mu.Unlock()
	p.stats.grafts.Add(int64(len(graft)))
	if len(graft) > 0 || len(ihave) > 0 {
		_ = p.send(&pb.RPC{Control: &pb.ControlMessage{Graft: graft, Ihave: ihave}}) // a closed stream ends the peer's part; the real node's side says why
	}
}

// read reads the real node's stream: full messages are discarded (a boundary peer forwards
// nothing), GRAFT puts the peer in the mesh (it accepts, as a peer below Dhi does), PRUNE
// takes it out and starts a backoff, IWANT is answered from the store.
func (p *Peer) read(s network.Stream) {
	defer s.Close()
	r := bufio.NewReader(s)
	var buf []byte
	for {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return
		}
		if n > uint64(p.cfg.MaxRPC) {
			s.Reset()
			return
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return
		}
		p.stats.frames.Add(1)
		msgs, ctl, err := readRPC(buf)
		if err != nil {
			s.Reset()
			return
		}
		p.stats.msgsIn.Add(int64(msgs))
		if ctl != nil {
			p.control(ctl)
		}
	}
}

// held is the message with id given to the peer latest and not yet expired, or nil; p.mu
// held. IWANT is rare, so a scan costs less than an index kept for every message given.
func (p *Peer) held(id string) *pb.Message {
	for w := len(p.windows) - 1; w >= 0; w-- {
		win := p.windows[w]
		for i := len(win) - 1; i >= 0; i-- {
			if win[i].id == id {
				return win[i].m
			}
		}
	}
	return nil
}

func (p *Peer) control(c *pb.ControlMessage) {
	var answer []*pb.Message
	p.mu.Lock()
	now := time.Now()
	for _, pr := range c.Prune {
		t := pr.GetTopicID()
		p.setMeshed(t, false)
		d := p.cfg.PruneBackoff
		if b := pr.GetBackoff(); b > 0 {
			d = time.Duration(b) * time.Second
		}
		if until := now.Add(d); until.After(p.backoff[t]) {
			p.backoff[t] = until
			p.regraft[t] = until.Add(p.regraftDelay())
		}
		p.stats.prunes.Add(1)
	}
	for _, g := range c.Graft {
		if t := g.GetTopicID(); p.subscribed(t) {
			p.setMeshed(t, true)
		}
	}
	p.stats.graftsIn.Add(int64(len(c.Graft)))
	for _, w := range c.Iwant {
		for _, id := range w.MessageIDs {
			if m := p.held(id); m != nil {
				answer = append(answer, m)
			}
		}
	}
	p.mu.Unlock()
	if len(answer) > 0 {
		p.stats.iwant.Add(int64(len(answer)))
		p.stats.published.Add(int64(len(answer)))
		_ = p.send(&pb.RPC{Publish: answer})
	}
}
