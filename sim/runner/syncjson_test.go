package runner

import (
	"encoding/json"
	"testing"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
)

// TestResultRecordSurvivesSyncService replays what Testground's sync service does to a
// payload (sync-service v0.1.0: decode into interface{}, encode again; sdk-go then decodes the
// text into the topic's type) and checks that a parity record's 64-bit digests come through.
func TestResultRecordSurvivesSyncService(t *testing.T) {
	topic := gossip.Topic("8c9f62fe", gossip.AttestationTopic(5))
	in := &resultRecord{Group: "publishers", Instance: 3, Topics: map[string]result.Tally{
		topic: {Messages: 1504, Digest: [2]uint64{0xfedcba9876543211, 1<<63 + 12345}},
	}}
	sent, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var onServer interface{}
	if err := json.Unmarshal(sent, &onServer); err != nil {
		t.Fatal(err)
	}
	relayed, err := json.Marshal(onServer)
	if err != nil {
		t.Fatal(err)
	}
	var out resultRecord
	if err := json.Unmarshal(relayed, &out); err != nil {
		t.Fatal(err)
	}
	if out.Group != in.Group || out.Instance != in.Instance || out.Topics[topic] != in.Topics[topic] {
		t.Fatalf("relayed record %+v, sent %+v", out, in)
	}

	// The plain encoding loses the digests' low bits on the same path.
	type bare resultRecord
	plain, _ := json.Marshal((*bare)(in))
	var server2 interface{}
	_ = json.Unmarshal(plain, &server2)
	relayed2, _ := json.Marshal(server2)
	var out2 bare
	if err := json.Unmarshal(relayed2, &out2); err == nil && out2.Topics[topic] == in.Topics[topic] {
		t.Fatal("expected the plain encoding to lose digest bits through interface{}; the test no longer shows the problem")
	}
}
