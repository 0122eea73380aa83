package node

import (
	"context"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/streamsim/streamsim/gossip"
)

// messagesOut is the attestations n wrote to p (its metered outbound side).
func messagesOut(t *testing.T, n *testPeer, p peer.ID) int64 {
	t.Helper()
	var sum int64
	for _, s := range n.Stats() {
		if s.Peer == p.String() && s.Direction == "out" {
			sum += s.Messages[gossip.Attestation]
		}
	}
	return sum
}

// A triangle: pub sends each message to relay and fast; fast forwards at once to relay, which
// validates for 300 ms (at the time scale), so both other nodes' copies reach relay before it
// forwards. A go relay then forwards every message to the one of them it did not get it from
// first (pubsub leaves out only that one); a relay withholding as rust-libp2p does sends
// neither anything. Both relays deliver every message to their subscriber.
func TestEchoWithholding(t *testing.T) {
	const n = 20
	for _, withhold := range []bool{false, true} {
		relay := testNode(t, "snappy-stream", false, nil)
		relay.opts = append(relay.opts, WithValidationDelay(ValidationDelays{gossip.Attestation: {3 * time.Second, 3 * time.Second}}),
			WithNodeSeed(1, 0), WithEchoWithholding(withhold))
		pub := testNode(t, "snappy-stream", false, nil)
		fast := testNode(t, "snappy-stream", false, nil)
		// Every pair direct peers: each sends every message to the other two but its source.
		nodes := []*testPeer{relay, pub, fast}
		for i, a := range nodes {
			var others []peer.AddrInfo
			for j, b := range nodes {
				if j != i {
					others = append(others, b.AddrInfo())
				}
			}
			if err := a.Start(others); err != nil {
				t.Fatal(err)
			}
		}
		for i, a := range nodes {
			for _, b := range nodes[i+1:] {
				if err := a.Host().Connect(context.Background(), b.AddrInfo()); err != nil {
					t.Fatal(err)
				}
			}
		}
		if relay.WithholdsEchoes() != withhold || fast.WithholdsEchoes() {
			t.Fatalf("WithholdsEchoes: relay %v, fast %v", relay.WithholdsEchoes(), fast.WithholdsEchoes())
		}
		rRelay, rFast := subscribeTest(t, relay), subscribeTest(t, fast)
		subscribeTest(t, pub)
		waitTopicPeers(t, relay, pub.ID(), fast.ID())
		waitTopicPeers(t, fast, pub.ID(), relay.ID())
		waitTopicPeers(t, pub, relay.ID(), fast.ID())
		publishN(t, pub, 3, n, rRelay, rFast)
		// Wait for the relay's validations to end and its forwards to leave (or be withheld).
		deadline := time.Now().Add(10 * time.Second)
		echoesOut := func() int64 { return messagesOut(t, relay, fast.ID()) + messagesOut(t, relay, pub.ID()) }
		for echoesOut()+relay.Withheld()[gossip.Attestation] < n && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond) // anything more would show now
		echoes := echoesOut()
		withheld := relay.Withheld()[gossip.Attestation]
		t.Logf("withhold=%v: relay sent the others %d of %d messages (fast %d), withheld %d", withhold, echoes, n, messagesOut(t, relay, fast.ID()), withheld)
		if withhold {
			if echoes != 0 || withheld != n {
				t.Errorf("withholding relay: sent %d echoes and withheld %d, want 0 and %d", echoes, withheld, n)
			}
		} else if echoes != n || withheld != 0 {
			t.Errorf("go relay: sent %d echoes and withheld %d, want %d and 0 (the check above proves nothing)", echoes, withheld, n)
		}
		if got, got2 := messagesOut(t, pub, relay.ID()), messagesOut(t, fast, relay.ID()); got != n || got2 != n {
			t.Errorf("pub sent relay %d and fast sent relay %d of %d", got, got2, n)
		}
		for _, p := range nodes {
			if e := p.StreamErrors(); e != 0 {
				t.Errorf("%d stream errors", e)
			}
		}
	}
}
