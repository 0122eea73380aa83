package periphery_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/streamsim/streamsim/internal/longtest"
	"github.com/streamsim/streamsim/sim/network"
	"github.com/streamsim/streamsim/sim/node"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/golang/snappy"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/periphery"
	"github.com/streamsim/streamsim/topology"
)

const scale = 30.0

var topic = gossip.Topic("8c9f62fe", gossip.AttestationTopic(0))

// realTracer records, at the real node, GRAFTs received and PRUNEs sent per peer, and mesh
// additions.
type realTracer struct {
	mu     sync.Mutex
	grafts map[peer.ID][]time.Time // GRAFT received
	prunes map[peer.ID][]time.Time // PRUNE sent
	meshed map[peer.ID]int         // Graft events (peer added to our mesh)
	iwant  map[peer.ID]int         // IWANT ids sent
}

func newRealTracer() *realTracer {
	return &realTracer{grafts: map[peer.ID][]time.Time{}, prunes: map[peer.ID][]time.Time{}, meshed: map[peer.ID]int{}, iwant: map[peer.ID]int{}}
}

func (r *realTracer) RecvRPC(rpc *pubsub.RPC) {
	if rpc.Control == nil || len(rpc.Control.Graft) == 0 {
		return
	}
	r.mu.Lock()
	r.grafts[rpc.From()] = append(r.grafts[rpc.From()], time.Now())
	r.mu.Unlock()
}

func (r *realTracer) SendRPC(rpc *pubsub.RPC, p peer.ID) {
	if rpc.Control == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(rpc.Control.Prune) > 0 {
		r.prunes[p] = append(r.prunes[p], time.Now())
	}
	for _, w := range rpc.Control.Iwant {
		r.iwant[p] += len(w.MessageIDs)
	}
}

func (r *realTracer) Graft(p peer.ID, _ string) {
	r.mu.Lock()
	r.meshed[p]++
	r.mu.Unlock()
}

func (*realTracer) AddPeer(peer.ID, protocol.ID)                         {}
func (*realTracer) RemovePeer(peer.ID)                                   {}
func (*realTracer) OnNewOutboundStream(peer.ID, protocol.ID)             {}
func (*realTracer) OnClosedOutboundStream(peer.ID)                       {}
func (*realTracer) Join(string)                                          {}
func (*realTracer) Leave(string)                                         {}
func (*realTracer) Prune(peer.ID, string)                                {}
func (*realTracer) ValidateMessage(*pubsub.Message)                      {}
func (*realTracer) DeliverMessage(*pubsub.Message)                       {}
func (*realTracer) RejectMessage(*pubsub.Message, string)                {}
func (*realTracer) DuplicateMessage(*pubsub.Message)                     {}
func (*realTracer) ThrottlePeer(peer.ID)                                 {}
func (*realTracer) SendRPCCompleted(*pubsub.RPC, peer.ID, time.Duration) {}
func (*realTracer) DropRPC(*pubsub.RPC, peer.ID)                         {}
func (*realTracer) UndeliverableMessage(*pubsub.Message)                 {}

// newRealNode is the real pubsub node these tests press: client cl's parameters at the
// tests' time scale, traced, joined to the test topic; closed when the test ends.
func newRealNode(t *testing.T, cl topology.Client) (*node.Node, *pubsub.Topic, *realTracer) {
	t.Helper()
	tr := newRealTracer()
	rh, err := network.NewHost("")
	if err != nil {
		t.Fatal(err)
	}
	real, err := node.NewNode(rh, node.WithTimeScale(scale), node.WithClient(cl), node.WithRawTracers(tr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { real.Close() })
	rt, err := real.Topic(topic)
	if err != nil {
		t.Fatal(err)
	}
	return real, rt, tr
}

// Against an unmodified go-libp2p-pubsub node (Dhi 2, time scale 30): two boundary peers
// graft and are meshed, a third is refused at Dhi (it dialled), gets PRUNE with the dilated
// backoff and grafts again only after it; what the meshed peers publish is delivered in full,
// what the refused one publishes reaches the real node by IHAVE → IWANT → message; and the
// real node's forwards reach the boundary peers, who discard them.
func TestBoundaryPeersAgainstPubsub(t *testing.T) {
	cl, _ := topology.ClientProfile("spec")
	cl.D, cl.Dlo, cl.Dhi, cl.Dscore, cl.Dout, cl.Dlazy = 2, 1, 2, 1, 0, 3
	d := node.Dilate(cl, scale)
	real, rt, tr := newRealNode(t, cl)
	sub, err := rt.Subscribe(pubsub.WithBufferSize(1024))
	if err != nil {
		t.Fatal(err)
	}
	var delivered sync.Map
	go func() {
		for {
			m, err := sub.Next(context.Background())
			if err != nil {
				return
			}
			delivered.Store(m.ID, true)
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var peers []*periphery.Peer
	for i := range 3 {
		h, err := network.NewHost("")
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		p, err := periphery.New(h.Host, periphery.Config{Topics: []string{topic}, Heartbeat: d.Heartbeat, PruneBackoff: d.PruneBackoff})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Connect(ctx, real.AddrInfo()); err != nil {
			t.Fatal(err)
		}
		// The real node must have seen the previous peer's GRAFT first, so that the third
		// finds it at Dhi.
		time.Sleep(100 * time.Millisecond)
		if err := p.Start(ctx, real.ID()); err != nil {
			t.Fatal(err)
		}
		waitFor(t, fmt.Sprintf("peer %d's GRAFT", i), func() bool {
			tr.mu.Lock()
			defer tr.mu.Unlock()
			return len(tr.grafts[h.ID()]) > 0
		})
		peers = append(peers, p)
	}
	ids := func(i int) peer.ID { return peers[i].Host().ID() }
	tr.mu.Lock()
	if tr.meshed[ids(0)] == 0 || tr.meshed[ids(1)] == 0 || tr.meshed[ids(2)] != 0 || len(tr.prunes[ids(2)]) == 0 {
		t.Fatalf("meshed %v, prunes to the third %d", tr.meshed, len(tr.prunes[ids(2)]))
	}
	tr.mu.Unlock()
	waitFor(t, "the third peer's PRUNE", func() bool { return peers[2].Stats().PrunesIn > 0 && !peers[2].InMesh(topic) })

	// Messages: from a meshed peer in full, from the refused one by IHAVE/IWANT.
	payload := func(i int) []byte {
		return snappy.Encode(nil, fmt.Appendf(nil, "attestation %06d ........................", i))
	}
	want := map[string]bool{}
	for i := range 40 {
		from := peers[i%3]
		data := payload(i)
		if err := from.Publish(topic, data); err != nil {
			t.Fatal(err)
		}
		tp := topic
		want[gossip.PubsubMsgID(&pb.Message{Topic: &tp, Data: data})] = true
	}
	waitFor(t, "every message at the real node", func() bool {
		for id := range want {
			if _, ok := delivered.Load(id); !ok {
				return false
			}
		}
		return true
	})
	s2 := peers[2].Stats()
	tr.mu.Lock()
	iwant := tr.iwant[ids(2)]
	tr.mu.Unlock()
	if s2.IHaveIDs == 0 || s2.IWantAnswered == 0 || iwant == 0 {
		t.Errorf("refused peer: %+v; real node sent it %d IWANT ids", s2, iwant)
	}
	// The real node forwards what one meshed peer sent to the other.
	waitFor(t, "forwards to the boundary", func() bool { return peers[1].Stats().MessagesIn > 0 })

	// Keep grafting: the refused peer grafts again, never inside the backoff the PRUNE gave.
	waitFor(t, "a second GRAFT of the refused peer", func() bool {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return len(tr.grafts[ids(2)]) >= 2
	})
	tr.mu.Lock()
	defer tr.mu.Unlock()
	g, pr := tr.grafts[ids(2)], tr.prunes[ids(2)]
	for _, gt := range g[1:] {
		var last time.Time
		for _, p := range pr {
			if p.Before(gt) {
				last = p
			}
		}
		// 50 ms: the PRUNE's send and receive are timed on different sides of the stream.
		if gt.Sub(last) < d.PruneBackoff-50*time.Millisecond {
			t.Errorf("GRAFT %v after a PRUNE, inside the %v backoff", gt.Sub(last), d.PruneBackoff)
		}
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Pressure per topic: a boundary peer presses (grafts, and grafts again after a PRUNE) on
// the topics Config.Pressure names and never grafts the others, where it is in the real
// node's mesh only because the real node grafted it; messages it then delivers arrive in
// full.
func TestPressurePerTopic(t *testing.T) {
	cl, _ := topology.ClientProfile("spec")
	cl.D, cl.Dlo, cl.Dhi, cl.Dscore, cl.Dout, cl.Dlazy = 2, 1, 3, 1, 0, 3
	d := node.Dilate(cl, scale)
	global := gossip.Topic("8c9f62fe", "beacon_block")
	tr := newRealTracer()
	grafted := &graftTopics{seen: map[string]int{}}
	rh, err := network.NewHost("")
	if err != nil {
		t.Fatal(err)
	}
	real, err := node.NewNode(rh, node.WithTimeScale(scale), node.WithClient(cl), node.WithRawTracers(tr, grafted))
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	delivered := map[string]*sync.Map{}
	for _, tp := range []string{topic, global} {
		rt, err := real.Topic(tp)
		if err != nil {
			t.Fatal(err)
		}
		sub, err := rt.Subscribe(pubsub.WithBufferSize(1024))
		if err != nil {
			t.Fatal(err)
		}
		m := &sync.Map{}
		delivered[tp] = m
		go func() {
			for {
				msg, err := sub.Next(context.Background())
				if err != nil {
					return
				}
				m.Store(msg.ID, true)
			}
		}()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h, err := network.NewHost("")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	bp, err := periphery.New(h.Host, periphery.Config{Topics: []string{topic, global}, Heartbeat: d.Heartbeat, PruneBackoff: d.PruneBackoff,
		Pressure: func(tp string) bool { return tp == topic }})
	if err != nil {
		t.Fatal(err)
	}
	if err := real.Host().Connect(ctx, h.AddrInfo()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if err := bp.Start(ctx, real.ID()); err != nil {
		t.Fatal(err)
	}
	// The real node, below Dlo on the global topic with one subscribed peer, grafts it.
	waitFor(t, "the real node's GRAFT on the global topic", func() bool { return bp.InMesh(global) && bp.Stats().GraftsIn > 0 })
	// InMeshAt asks by the topic's place in Config.Topics; places it does not have are out.
	if !bp.InMeshAt(1) || bp.InMeshAt(-1) || bp.InMeshAt(2) {
		t.Errorf("InMeshAt(1, -1, 2) = %v, %v, %v, want true, false, false", bp.InMeshAt(1), bp.InMeshAt(-1), bp.InMeshAt(2))
	}
	// Several heartbeats: the boundary peer's GRAFTs are all on the pressed topic.
	time.Sleep(10 * d.Heartbeat)
	grafted.mu.Lock()
	att, blk := grafted.seen[topic], grafted.seen[global]
	grafted.mu.Unlock()
	if att == 0 || blk != 0 {
		t.Errorf("GRAFTs received from the boundary peer: %d on the pressed topic (want ≥ 1), %d on the global one (want 0)", att, blk)
	}
	if s := bp.Stats(); s.GraftsSent != int64(att) {
		t.Errorf("the peer counts %d GRAFTs sent, the real node received %d", s.GraftsSent, att)
	}
	// Meshed by the real node's GRAFT, the peer delivers in full, with no IHAVE.
	data := snappy.Encode(nil, []byte("block ....................................................."))
	if err := bp.Publish(global, data); err != nil {
		t.Fatal(err)
	}
	tp := global
	id := gossip.PubsubMsgID(&pb.Message{Topic: &tp, Data: data})
	waitFor(t, "the block at the real node", func() bool { _, ok := delivered[global].Load(id); return ok })
	if s := bp.Stats(); s.IHaveIDs != 0 || s.Published != 1 {
		t.Errorf("meshed on the global topic: %+v, want 1 published and no IHAVE", s)
	}
}

// graftTopics counts GRAFTs received per topic.
type graftTopics struct {
	realTracer
	mu   sync.Mutex
	seen map[string]int
}

func (g *graftTopics) RecvRPC(rpc *pubsub.RPC) {
	if rpc.Control == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, gr := range rpc.Control.Graft {
		g.seen[gr.GetTopicID()]++
	}
}

func (*graftTopics) SendRPC(*pubsub.RPC, peer.ID) {}
func (*graftTopics) Graft(peer.ID, string)        {}

// Re-grafts spread in time (Config.Regraft), against unmodified pubsub: ten peers that the
// real node dialled graft it (D 2, Dhi 3: it accepts outbound peers at Dhi, then prunes to D
// at its heartbeat). A pruned peer never grafts inside the PRUNE's backoff, and with Regraft
// set it comes back after a further delay of that mean, drawn per peer, so peers pruned
// together do not return as one wave; without it (the control) it returns within a few
// heartbeats of the backoff's end.
func TestRegraftSpread(t *testing.T) {
	longtest.Skip(t, "re-graft timing over many backoffs")
	cl, _ := topology.ClientProfile("spec")
	cl.D, cl.Dlo, cl.Dhi, cl.Dscore, cl.Dout, cl.Dlazy = 2, 1, 3, 1, 0, 3
	d := node.Dilate(cl, scale)
	mean := d.PruneBackoff / 2
	spread, firstSpread := regraftExtras(t, cl, mean, d.PruneBackoff)
	control, firstControl := regraftExtras(t, cl, 0, 0)
	avg := func(v []time.Duration) time.Duration {
		var s time.Duration
		for _, x := range v {
			s += x
		}
		return s / time.Duration(max(len(v), 1))
	}
	t.Logf("delay beyond the backoff: Regraft %v: mean %v over %d re-grafts; Regraft 0: mean %v over %d (heartbeat %v)",
		mean, avg(spread), len(spread), avg(control), len(control), d.Heartbeat)
	if len(spread) < 5 || len(control) < 5 {
		t.Fatalf("too few re-grafts after a PRUNE (%d, %d): the real node was not pushed over Dhi", len(spread), len(control))
	}
	if a := avg(spread); a < mean/3 || a > 3*mean {
		t.Errorf("Regraft %v: re-grafts came %v after the backoff on average, want about the mean", mean, a)
	}
	if a := avg(control); a >= mean/3 {
		t.Errorf("Regraft 0: re-grafts came %v after the backoff on average, want within a few heartbeats", a)
	}
	// FirstGraft: the ten first GRAFTs spread over the window, not at Start (over more than
	// the window when the real node grafted a peer first: its own first GRAFT then follows a
	// PRUNE and its backoff).
	t.Logf("first GRAFTs spread over %v with FirstGraft %v, %v without", firstSpread, d.PruneBackoff, firstControl)
	if firstSpread < d.PruneBackoff/3 || firstControl > d.PruneBackoff/6 {
		t.Errorf("first GRAFTs spread over %v (FirstGraft %v, want ≥ a third of it) and %v without (want a few heartbeats)", firstSpread, d.PruneBackoff, firstControl)
	}
}

// regraftExtras runs ten pressing peers against one real node for three backoffs and returns,
// for each PRUNE followed by a GRAFT of the same peer, the GRAFT's delay beyond the backoff,
// and how far apart the peers' first GRAFTs came.
func regraftExtras(t *testing.T, cl topology.Client, regraft, first time.Duration) ([]time.Duration, time.Duration) {
	t.Helper()
	d := node.Dilate(cl, scale)
	real, rt, tr := newRealNode(t, cl)
	if _, err := rt.Subscribe(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var peers []*periphery.Peer
	for i := range 10 {
		h, err := network.NewHost("")
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		p, err := periphery.New(h.Host, periphery.Config{Topics: []string{topic}, Heartbeat: d.Heartbeat, PruneBackoff: d.PruneBackoff,
			Regraft: regraft, FirstGraft: first, Seed: uint64(i)})
		if err != nil {
			t.Fatal(err)
		}
		if err := real.Host().Connect(ctx, h.AddrInfo()); err != nil {
			t.Fatal(err)
		}
		peers = append(peers, p)
	}
	time.Sleep(100 * time.Millisecond)
	for _, p := range peers {
		if err := p.Start(ctx, real.ID()); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(3 * d.PruneBackoff)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var extras []time.Duration
	var lo, hi time.Time
	for _, p := range peers {
		id := p.Host().ID()
		if g := tr.grafts[id]; len(g) > 0 {
			if lo.IsZero() || g[0].Before(lo) {
				lo = g[0]
			}
			if g[0].After(hi) {
				hi = g[0]
			}
		}
		for _, pt := range tr.prunes[id] {
			for _, gt := range tr.grafts[id] {
				if gt.After(pt) {
					// 50 ms: the PRUNE's send and receive are timed on different sides of the stream.
					if gt.Sub(pt) < d.PruneBackoff-50*time.Millisecond {
						t.Errorf("GRAFT %v after a PRUNE, inside the %v backoff", gt.Sub(pt), d.PruneBackoff)
					}
					extras = append(extras, gt.Sub(pt)-d.PruneBackoff)
					break
				}
			}
		}
	}
	return extras, hi.Sub(lo)
}
