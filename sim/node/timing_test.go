package node

import (
	"context"
	"math"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/streamsim/streamsim/internal/longtest"
	snet "github.com/streamsim/streamsim/sim/network"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/streamsim/streamsim/topology"
)

// Every pubsub duration is divided by the scale; the backoffs PRUNE carries are whole seconds
// from 1 s up, so the pruner and the pruned peer agree.
func TestDilate(t *testing.T) {
	lh, err := topology.ClientProfile("lighthouse")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		scale                   float64
		prune, unsub, slack, hb time.Duration
		graftFlood, iwant, seen time.Duration
		pruneErr                float64
	}{
		{1, 60 * time.Second, 10 * time.Second, time.Second, time.Second, 10 * time.Second, 3 * time.Second, 768 * time.Second, 0},
		{0.5, 120 * time.Second, 20 * time.Second, 2 * time.Second, 2 * time.Second, 20 * time.Second, 6 * time.Second, 1536 * time.Second, 0},
		{4, 15 * time.Second, 3 * time.Second, 250 * time.Millisecond, 250 * time.Millisecond, 2500 * time.Millisecond, 750 * time.Millisecond, 192 * time.Second, 0},
		// 7.5 s is sent as 8 s and kept as 8 s on both sides; 1.25 s as 1 s.
		{8, 8 * time.Second, time.Second, 125 * time.Millisecond, 125 * time.Millisecond, 1250 * time.Millisecond, 375 * time.Millisecond, 96 * time.Second, 0.5 / 7.5},
		// Below 1 s PRUNE carries 0 and the receiver uses its own (equal) backoff: exact.
		{100, 600 * time.Millisecond, 100 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, 30 * time.Millisecond, 7680 * time.Millisecond, 0},
	} {
		d := Dilate(lh, c.scale)
		got := []time.Duration{d.PruneBackoff, d.UnsubscribeBackoff, d.BackoffSlack, d.Heartbeat, d.GraftFloodThreshold, d.IWantFollowupTime, d.SeenTTL}
		want := []time.Duration{c.prune, c.unsub, c.slack, c.hb, c.graftFlood, c.iwant, c.seen}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("scale %g: field %d = %v, want %v (%+v)", c.scale, i, got[i], want[i], d)
			}
		}
		if e := d.PruneBackoffError(); math.Abs(e-c.pruneErr) > 1e-9 {
			t.Errorf("scale %g: prune backoff error %g, want %g", c.scale, e, c.pruneErr)
		}
		var p pubsub.GossipSubParams
		d.apply(&p, 0)
		if p.PruneBackoff != c.prune || p.UnsubscribeBackoff != d.UnsubscribeBackoff || p.GraftFloodThreshold != c.graftFlood ||
			p.IWantFollowupTime != c.iwant || p.HeartbeatInterval != c.hb ||
			p.HeartbeatInitialDelay != time.Duration(float64(100*time.Millisecond)/c.scale) {
			t.Errorf("scale %g: applied %+v", c.scale, p)
		}
	}
}

// pubsub's backoff slack is one variable per process: the first node of a scale sets it, a
// node of another scale is refused while one runs, and accepted once they are closed.
func TestTimeScaleIsProcessWide(t *testing.T) {
	start := func(scale float64) (*Node, error) {
		h, err := snet.NewHost("")
		if err != nil {
			t.Fatal(err)
		}
		n, err := NewNode(h, WithTimeScale(scale))
		if err != nil {
			h.Close()
		}
		return n, err
	}
	a, err := start(5)
	if err != nil {
		t.Fatal(err)
	}
	if pubsub.GossipSubHeartbeatInterval != 200*time.Millisecond {
		t.Errorf("slack at scale 5: %v", pubsub.GossipSubHeartbeatInterval)
	}
	b, err := start(5)
	if err != nil {
		t.Fatalf("same scale refused: %v", err)
	}
	if _, err := start(3); err == nil || !strings.Contains(err.Error(), "time scale 3") {
		t.Fatalf("another scale beside running nodes: %v", err)
	}
	a.Close()
	b.Close()
	c, err := start(3)
	if err != nil {
		t.Fatalf("scale 3 after the others closed: %v", err)
	}
	if pubsub.GossipSubHeartbeatInterval != time.Second/3 {
		t.Errorf("slack at scale 3: %v", pubsub.GossipSubHeartbeatInterval)
	}
	c.Close()
}

// backoffTracer records, at one node, each PRUNE received from peer (time and the backoff it
// carries) and each GRAFT sent to it.
type backoffTracer struct {
	peer   peer.ID
	mu     gosync.Mutex
	prunes []time.Time
	carry  []uint64
	grafts []time.Time
}

func (b *backoffTracer) RecvRPC(rpc *pubsub.RPC) {
	if rpc.From() != b.peer || rpc.Control == nil || len(rpc.Control.Prune) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prunes = append(b.prunes, time.Now())
	b.carry = append(b.carry, rpc.Control.Prune[0].GetBackoff())
}

func (b *backoffTracer) SendRPC(rpc *pubsub.RPC, p peer.ID) {
	if p != b.peer || rpc.Control == nil || len(rpc.Control.Graft) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.grafts = append(b.grafts, time.Now())
}

func (*backoffTracer) AddPeer(peer.ID, protocol.ID)                         {}
func (*backoffTracer) RemovePeer(peer.ID)                                   {}
func (*backoffTracer) OnNewOutboundStream(peer.ID, protocol.ID)             {}
func (*backoffTracer) OnClosedOutboundStream(peer.ID)                       {}
func (*backoffTracer) Join(string)                                          {}
func (*backoffTracer) Leave(string)                                         {}
func (*backoffTracer) Graft(peer.ID, string)                                {}
func (*backoffTracer) Prune(peer.ID, string)                                {}
func (*backoffTracer) ValidateMessage(*pubsub.Message)                      {}
func (*backoffTracer) DeliverMessage(*pubsub.Message)                       {}
func (*backoffTracer) RejectMessage(*pubsub.Message, string)                {}
func (*backoffTracer) DuplicateMessage(*pubsub.Message)                     {}
func (*backoffTracer) ThrottlePeer(peer.ID)                                 {}
func (*backoffTracer) SendRPCCompleted(*pubsub.RPC, peer.ID, time.Duration) {}
func (*backoffTracer) DropRPC(*pubsub.RPC, peer.ID)                         {}
func (*backoffTracer) UndeliverableMessage(*pubsub.Message)                 {}

// A peer at Dhi refuses the GRAFTs of a node that dialled it and prunes it (the grafting
// pressure of docs/inputs.md §9). At time scale 30 the PRUNE must carry the dilated backoff
// (60 s / 30 = 2 s, whole seconds) and the pruned node must graft again after that backoff
// plus clearBackoff's dilated slack (2 × 1 s / 30) and its 15-heartbeat sweep: in
// 2 s … 2.6 s (with 0.4 s for this machine's timers), not after the real-time 60 s backoff or
// the real-time 2 s slack.
func TestPruneBackoffIsDilated(t *testing.T) {
	longtest.Skip(t, "a prune backoff in dilated time")
	if testing.Short() {
		t.Skip("runs four nodes for about 12 s")
	}
	const scale = 30.0
	cl, _ := topology.ClientProfile("spec")
	cl.D, cl.Dlo, cl.Dhi, cl.Dscore, cl.Dout, cl.Dlazy = 2, 1, 2, 1, 0, 1
	mk := func(extra ...Option) *Node {
		h, err := snet.NewHost("")
		if err != nil {
			t.Fatal(err)
		}
		n, err := NewNode(h, append([]Option{WithTimeScale(scale), WithClient(cl)}, extra...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}
	p := mk()
	tr := &backoffTracer{peer: p.ID()}
	o := mk(WithRawTracers(tr))
	b1, b2 := mk(), mk()
	ctx := context.Background()
	// p dials the boundary nodes (so it accepts their GRAFTs at Dhi); o dials p.
	for _, b := range []*Node{b1, b2} {
		if err := p.Host().Connect(ctx, b.AddrInfo()); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.Host().Connect(ctx, p.AddrInfo()); err != nil {
		t.Fatal(err)
	}
	for _, n := range []*Node{p, o, b1, b2} {
		topic, err := n.Topic(testTopic)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := topic.Subscribe(); err != nil {
			t.Fatal(err)
		}
	}
	d := Dilate(cl, scale)
	lo, hi := d.PruneBackoff, d.PruneBackoff+2*d.BackoffSlack+16*d.Heartbeat+400*time.Millisecond
	deadline := time.Now().Add(40 * time.Second)
	var waits []time.Duration
	for len(waits) < 3 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		tr.mu.Lock()
		waits = waits[:0]
		for i, pr := range tr.prunes {
			if tr.carry[i] != uint64(d.PruneBackoff/time.Second) {
				t.Fatalf("PRUNE carried a backoff of %d s, want %v", tr.carry[i], d.PruneBackoff)
			}
			for _, g := range tr.grafts {
				if g.After(pr) {
					waits = append(waits, g.Sub(pr))
					break
				}
			}
		}
		tr.mu.Unlock()
	}
	if len(waits) < 3 {
		t.Fatalf("%d prune→graft waits in 40 s (prunes %d, grafts %d)", len(waits), len(tr.prunes), len(tr.grafts))
	}
	for _, w := range waits {
		if w < lo || w > hi {
			t.Errorf("graft again %v after a PRUNE, want %v … %v", w, lo, hi)
		}
	}
	t.Logf("prune → graft waits %v (allowed %v … %v)", waits, lo, hi)
}
