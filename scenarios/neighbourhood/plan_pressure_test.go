package neighbourhood

import (
	"strings"
	"testing"

	"github.com/streamsim/streamsim/gossip"
)

// The default pressure is on attestation and sync committee subnets only; the parameter
// takes topic kinds, all or none, and refuses anything else naming itself.
func TestPressure(t *testing.T) {
	p, err := ParseNeighbourhoodParams(nil)
	if err != nil {
		t.Fatal(err)
	}
	fd := p.ForkDigest
	topics := map[string]bool{
		gossip.Topic(fd, gossip.AttestationTopic(3)):              true,
		gossip.Topic(fd, gossip.SyncCommitteeTopic(1)):            true,
		gossip.Topic(fd, gossip.DataColumnTopic(7)):               false,
		gossip.Topic(fd, "beacon_block"):                          false,
		gossip.Topic(fd, "beacon_aggregate_and_proof"):            false,
		gossip.Topic(fd, "sync_committee_contribution_and_proof"): false,
	}
	for tp, want := range topics {
		if got := p.Presses(tp); got != want {
			t.Errorf("default pressure on %s: %v, want %v", tp, got, want)
		}
	}
	all, err := ParseNeighbourhoodParams(map[string]string{ParamPressure: "all"})
	if err != nil {
		t.Fatal(err)
	}
	none, err := ParseNeighbourhoodParams(map[string]string{ParamPressure: "none"})
	if err != nil {
		t.Fatal(err)
	}
	glob, err := ParseNeighbourhoodParams(map[string]string{ParamPressure: "global, column_subnets"})
	if err != nil {
		t.Fatal(err)
	}
	for tp := range topics {
		if !all.Presses(tp) || none.Presses(tp) {
			t.Errorf("%s: all %v, none %v", tp, all.Presses(tp), none.Presses(tp))
		}
		k := TopicKind(tp)
		if want := k == TopicsGlobal || k == TopicsColumn; glob.Presses(tp) != want {
			t.Errorf("global+columns on %s (%s): %v", tp, k, glob.Presses(tp))
		}
	}
	for k, v := range map[string]string{ParamPressure: "attestation", ParamLatency: "fast"} {
		if _, err := ParseNeighbourhoodParams(map[string]string{k: v}); err == nil || !strings.Contains(err.Error(), "param "+k) {
			t.Errorf("%s=%s: %v, want an error naming %s", k, v, err, k)
		}
	}
}
