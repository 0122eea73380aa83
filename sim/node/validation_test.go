package node

import (
	"strings"
	"testing"
	"time"

	"github.com/streamsim/streamsim/gossip"
)

// A seed fixes every draw; draws stay in the range, differ between nodes and cover it.
func TestValidationDelayDraws(t *testing.T) {
	r := DelayRange{5 * time.Millisecond, 50 * time.Millisecond}
	a, b, c := validationSeed{1, 0}, validationSeed{1, 0}, validationSeed{1, 1}
	var differ int
	lo, hi := r.Max, r.Min
	for i := range 2000 {
		id := string(rune('a'+i%26)) + strings.Repeat("x", i%7) + string(rune(i))
		da, db, dc := a.delay(r, id), b.delay(r, id), c.delay(r, id)
		if da != db {
			t.Fatalf("same seed, node and id: %v vs %v", da, db)
		}
		if da < r.Min || da > r.Max {
			t.Fatalf("draw %v outside %v", da, r)
		}
		if da != dc {
			differ++
		}
		lo, hi = min(lo, da), max(hi, da)
	}
	if differ < 1900 || lo > 6*time.Millisecond || hi < 49*time.Millisecond {
		t.Errorf("draws: %d of 2000 differ between nodes, range seen %v..%v", differ, lo, hi)
	}
}

// A node forwards a message only after validating it: with a fixed delay at the relay, the
// relay's own delivery and the leaf behind it both come no earlier than the delay (divided
// by the time scale). (Without the delay the same 20 messages take a few milliseconds.)
func TestValidationDelaysForwarding(t *testing.T) {
	const delay = 3 * time.Second // 300 ms at testNode's time scale 10
	relay := testNode(t, "", false, nil)
	relay.opts = append(relay.opts, WithValidationDelay(ValidationDelays{gossip.Attestation: {delay, delay}}), WithNodeSeed(1, 0))
	pub := testNode(t, "", false, nil)
	leaf := testNode(t, "", false, nil)
	star(t, relay, pub, leaf)
	rRelay, rLeaf := subscribeTest(t, relay), subscribeTest(t, leaf)
	subscribeTest(t, pub)
	waitTopicPeers(t, relay, pub.ID(), leaf.ID())
	waitTopicPeers(t, pub, relay.ID())
	waitTopicPeers(t, leaf, relay.ID())
	start := time.Now()
	publishN(t, pub, 9, 20, rRelay, rLeaf)
	if el := time.Since(start); el < delay/10 {
		t.Fatalf("20 messages through a relay validating %v each (scaled %v) arrived in %v", delay, delay/10, el)
	}
}
