package node

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand"
	"testing"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/trace"
)

// items counts a frame's items as rust-libp2p sends them one per RPC: messages and control
// entries; a frame of subscriptions only counts as one (the hello packet, SubscribeMany).
func items(t *testing.T, frame []byte) int {
	t.Helper()
	parts, err := gossip.SplitFrame(frame)
	if err != nil {
		t.Fatalf("recorded frame: %v", err)
	}
	n := 0
	for c, m := range parts.Messages {
		if gossip.Category(c) != gossip.Control {
			n += m
		}
	}
	for k, p := range parts.Control {
		if gossip.ControlKind(k) != gossip.Subscriptions {
			n += p.Entries
		}
	}
	if n == 0 && parts.Control[gossip.Subscriptions].Entries > 0 {
		return 1
	}
	return n
}

// A node framing as rust-libp2p sends every message and control entry in a frame of its own
// to an unmodified go-libp2p-pubsub peer, which accepts them: the mesh forms (GRAFTs) and
// every message arrives. The same exchange framed as go has frames of several items (the
// heartbeat's GRAFTs for three topics leave in one), so the count below can fail.
func TestRustFramingRoundTrip(t *testing.T) {
	topics := []string{gossip.Topic(testFork, gossip.AttestationTopic(0)), gossip.Topic(testFork, gossip.AttestationTopic(1)),
		gossip.Topic(testFork, gossip.SyncCommitteeTopic(0))}
	const perTopic = 30
	maxItems := map[gossip.Framing]int{}
	for _, fm := range []gossip.Framing{gossip.FramingRust, gossip.FramingGo} {
		var rec bytes.Buffer
		w, err := trace.NewWriter(&rec, trace.Header{Source: "test"})
		if err != nil {
			t.Fatal(err)
		}
		sender := testNode(t, "snappy-stream", false, nil)
		sender.opts = append(sender.opts, WithFraming(fm), WithRecorder(w))
		recv := testNode(t, "snappy-stream", false, nil)
		// The receiver's first heartbeat comes late, so the sender's grafts the mesh (a peer
		// that is grafted first only accepts).
		recv.opts = append(recv.opts, WithHeartbeatDelay(3*time.Second))
		if err := sender.Start(nil); err != nil {
			t.Fatal(err)
		}
		if err := recv.Start(nil); err != nil {
			t.Fatal(err)
		}
		if sender.Framing() != fm || recv.Framing() != gossip.FramingGo {
			t.Fatalf("framing %s / %s", sender.Framing(), recv.Framing())
		}
		got := make(chan string, 4*perTopic*len(topics))
		var pubs []*pubsub.Topic
		for _, name := range topics {
			for _, n := range []*testPeer{sender, recv} {
				tp, err := n.Topic(name)
				if err != nil {
					t.Fatal(err)
				}
				sub, err := tp.Subscribe(pubsub.WithBufferSize(4096))
				if err != nil {
					t.Fatal(err)
				}
				if n == sender {
					pubs = append(pubs, tp)
					continue
				}
				go func() {
					for {
						m, err := sub.Next(recv.ctx)
						if err != nil {
							return
						}
						got <- m.ID
					}
				}()
			}
		}
		if err := recv.Host().Connect(context.Background(), sender.AddrInfo()); err != nil {
			t.Fatal(err)
		}
		// Wait until the sender's GRAFTs for every topic have gone out.
		deadline := time.Now().Add(10 * time.Second)
		for grafts := int64(0); grafts < int64(len(topics)); {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d GRAFTs sent of %d", fm, grafts, len(topics))
			}
			time.Sleep(20 * time.Millisecond)
			for _, s := range sender.Stats() {
				if s.Direction == "out" {
					grafts = s.Control["graft"].Entries
				}
			}
		}
		rng := rand.New(rand.NewSource(1))
		for i := range perTopic {
			for _, tp := range pubs {
				if err := tp.Publish(context.Background(), attestationPayload(rng, i)); err != nil {
					t.Fatal(err)
				}
			}
		}
		seen := map[string]bool{}
		timeout := time.After(10 * time.Second)
		for len(seen) < perTopic*len(topics) {
			select {
			case id := <-got:
				seen[id] = true
			case <-timeout:
				t.Fatalf("%s: %d of %d messages arrived", fm, len(seen), perTopic*len(topics))
			}
		}
		if n := recv.StreamErrors() + sender.StreamErrors(); n != 0 {
			t.Errorf("%s: %d stream errors", fm, n)
		}
		_, sraw, swire := side(t, sender, recv.ID(), "out")
		_, rraw, rwire := side(t, recv, sender.ID(), "in")
		if sraw != rraw || swire != rwire {
			t.Errorf("%s: sent %d/%d raw/wire, received %d/%d", fm, sraw, swire, rraw, rwire)
		}
		// Every recorded outbound frame of the sender.
		sender.Node.Close()
		sender.Node = nil
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := trace.NewReader(&rec)
		if err != nil {
			t.Fatal(err)
		}
		frames := 0
		for {
			f, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			s, _ := r.Stream(f.Stream)
			if s.Direction != trace.DirectionOut {
				continue
			}
			frames++
			maxItems[fm] = max(maxItems[fm], items(t, f.Data))
		}
		if frames == 0 {
			t.Fatalf("%s: no outbound frame recorded", fm)
		}
	}
	t.Logf("largest frame in items: %v", maxItems)
	if maxItems[gossip.FramingRust] != 1 {
		t.Errorf("rust framing sent a frame of %d items", maxItems[gossip.FramingRust])
	}
	if maxItems[gossip.FramingGo] < 2 {
		t.Errorf("go framing never sent a frame of several items (%d): the check above proves nothing", maxItems[gossip.FramingGo])
	}
}

func TestWithFramingRefusesUnknown(t *testing.T) {
	var c config
	err := WithFraming("quic")(&c)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("allowed: go, rust, nim, jvm, js")) {
		t.Fatalf("WithFraming(quic): %v", err)
	}
}
