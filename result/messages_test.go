package result

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestMessageLogRoundTrip writes more events than the writer's buffer holds (so records are
// built across flushes), published and delivered, and reads back exactly what was written.
func TestMessageLogRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), MessagesFile)
	l, err := CreateMessageLog(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []MessageEvent
	for i := range 20000 {
		var e MessageEvent
		copy(e.ID[:], fmt.Sprintf("id-%017d", i))
		e.At = int64(i) * 1_000_003
		if i%7 == 0 {
			e.Published, e.Topic = true, fmt.Sprintf("/eth2/6a95a1a9/beacon_attestation_%d/ssz_snappy", i%64)
		}
		id := string(e.ID[:])
		if i%11 == 0 {
			id = id[:5] // shorter ids are zero-padded
			clear(e.ID[5:])
		}
		l.Add(id, e.At, e.Published, e.Topic)
		want = append(want, e)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMessages(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d events, wrote %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d: read %+v, wrote %+v", i, got[i], want[i])
		}
	}
}

// BenchmarkMessageLogAdd is one first-delivery record, as every node writes for every
// message it receives (the runner's deliveries): no allocation.
func BenchmarkMessageLogAdd(b *testing.B) {
	l, err := CreateMessageLog(filepath.Join(b.TempDir(), MessagesFile))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	id := "0123456789abcdefghij"
	b.ReportAllocs()
	at := int64(0)
	for b.Loop() {
		at++
		l.Add(id, at, false, "")
	}
}
