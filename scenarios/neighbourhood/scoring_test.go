package neighbourhood

import (
	"strings"
	"sync/atomic"
	"testing"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/sim/runner"
	"github.com/streamsim/streamsim/topology"
)

// scoring=off (the default) gives no node scoring options; client gives every client's node
// its scoring and the spec's profile none; anything else is refused naming the allowed values,
// and so is a time scale that takes the clients' 12 s decay interval below pubsub's 1 s.
func TestScoringParam(t *testing.T) {
	sc, err := runner.Lookup("neighbourhood")
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[string]string{"": ScoringOff, "off": ScoringOff, "client": ScoringClient} {
		vals := map[string]string{}
		if v != "" {
			vals[ParamScoring] = v
		}
		p, err := sc.ParseParams(vals)
		if err != nil {
			t.Fatalf("scoring=%s: %v", v, err)
		}
		if got := runner.Own[*Config](p).Scoring; got != want {
			t.Errorf("scoring=%s: rule %q, want %q", v, got, want)
		}
	}
	for _, name := range topology.ClientNames {
		cl, _ := topology.ClientProfile(name)
		off, err := nodeScoring(ScoringOff, cl, 1_000_000, nil)
		if err != nil || len(off) != 0 {
			t.Errorf("%s, scoring off: %d options, %v", name, len(off), err)
		}
		on, err := nodeScoring(ScoringClient, cl, 1_000_000, func(map[peer.ID]*pubsub.PeerScoreSnapshot) {})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 0, false: 2}[name == "spec"]; len(on) != want {
			t.Errorf("%s, scoring client: %d options, want %d", name, len(on), want)
		}
	}
	for _, v := range []string{"on", "Client", "score"} {
		_, err := sc.ParseParams(map[string]string{ParamScoring: v})
		if err == nil || !strings.Contains(err.Error(), ParamScoring) || !strings.Contains(err.Error(), "client, off") {
			t.Errorf("scoring=%s: %v, want an error naming %s and the allowed values", v, err, ParamScoring)
		}
	}
	if err := CheckScoring(ScoringClient, 1_000_000, 16); err == nil || !strings.Contains(err.Error(), ParamScoring) {
		t.Errorf("scoring at time scale 16: %v, want a refusal naming %s", err, ParamScoring)
	}
	if err := CheckScoring(ScoringClient, 1_000_000, 4); err != nil {
		t.Errorf("scoring at time scale 4: %v", err)
	}
}

// The watch counts only the measured slots, and reads the observed node's standing among a
// peer's outside peers and the outside peers' penalties.
func TestScoreWatch(t *testing.T) {
	var measuring atomic.Bool
	w := newScoreWatch(&measuring)
	w.obs = peer.ID("obs")
	snap := map[peer.ID]*pubsub.PeerScoreSnapshot{
		"obs": {Score: 0.5},
		"a":   {Score: 2}, "b": {Score: 1}, "c": {Score: 0.1}, "d": {Score: -5000, BehaviourPenalty: 3},
	}
	w.inspect(snap) // warm-up: not counted
	measuring.Store(true)
	w.inspect(snap)
	v := w.view()
	if v.Snapshots != 1 || v.ObservedScore != 0.5 || v.ObservedBelowShare != 0.5 || v.OutsideNegative != 1 || v.OutsideBelowGossip != 1 ||
		v.OutsideBehaviour != 1 || v.MaxOutsideBehaviour != 3 || v.OutsidePositive != 0.75 || v.ObservedPositive != 1 {
		t.Errorf("view %+v", *v)
	}
}

// firstDeliveries counts the measured slots' deliveries of the observed node's topics and the
// share whose first copy came from the observed node.
func TestFirstDeliveries(t *testing.T) {
	var measuring atomic.Bool
	att := gossip.Topic("8c9f62fe", gossip.AttestationTopic(0))
	other := gossip.Topic("8c9f62fe", gossip.AttestationTopic(9))
	f := &firstDeliveries{measuring: &measuring, obs: "obs", topics: map[string]bool{att: true}}
	msg := func(topic string, from peer.ID) *pubsub.Message {
		return &pubsub.Message{Message: &pb.Message{Topic: &topic}, ReceivedFrom: from}
	}
	f.DeliverMessage(msg(att, "obs")) // warm-up
	measuring.Store(true)
	for _, m := range []*pubsub.Message{msg(att, "obs"), msg(att, "a"), msg(att, "b"), msg(att, "obs"), msg(other, "obs")} {
		f.DeliverMessage(m)
	}
	if got := f.shares(); len(got) != 1 || got["attestation"] != 0.5 {
		t.Errorf("shares %v, want attestation 0.5 only", got)
	}
}
