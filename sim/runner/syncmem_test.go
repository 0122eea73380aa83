package runner

import (
	"context"
	"testing"
	"time"

	"github.com/testground/sdk-go/sync"
)

// A subscriber that stops reading does not stall the others: Publish, SignalEntry and
// barriers go on (the SDK's in-memory client blocked every call behind the full channel).
func TestMemSyncSlowSubscriberBlocksNobody(t *testing.T) {
	c := newMemSync()
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	topic := sync.NewTopic("records", &peerRecord{})
	stuck := make(chan *peerRecord) // never read
	if _, err := c.Subscribe(ctx, topic, stuck); err != nil {
		t.Fatal(err)
	}
	gone, goneCancel := context.WithCancel(ctx)
	if _, err := c.Subscribe(gone, topic, make(chan *peerRecord, 1)); err != nil {
		t.Fatal(err)
	}
	goneCancel() // a subscriber whose wait is over
	got := make(chan *peerRecord, 1000)
	if _, err := c.Subscribe(ctx, topic, got); err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if _, err := c.Publish(ctx, topic, &peerRecord{Instance: i}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.SignalAndWait(ctx, "state", 1); err != nil {
		t.Fatalf("barrier behind a stuck subscriber: %v", err)
	}
	// A reading subscriber gets every record, in order, and a late one gets them replayed.
	late := make(chan *peerRecord, 10)
	if _, err := c.Subscribe(ctx, topic, late); err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		select {
		case r := <-got:
			if r.Instance != i {
				t.Fatalf("record %d arrived as %d", i, r.Instance)
			}
		case <-ctx.Done():
			t.Fatalf("record %d never arrived", i)
		}
	}
	for i := range 1000 {
		if r := <-late; r.Instance != i {
			t.Fatalf("replayed record %d arrived as %d", i, r.Instance)
		}
	}
}
