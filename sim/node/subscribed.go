package node

import (
	"context"
	"fmt"
	"slices"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
)

// WaitSubscribed waits until pubsub sees each listed peer subscribed to each topic.
func WaitSubscribed(ctx context.Context, ps *pubsub.PubSub, want map[string][]peer.ID) error {
	for {
		missing := 0
		var exampleID peer.ID
		var exampleTopic string
		for t, ids := range want {
			have := ps.ListPeers(t)
			for _, id := range ids {
				if !slices.Contains(have, id) {
					// Formatted only for the error: a peer id's base58 costs more than the check.
					missing++
					exampleID, exampleTopic = id, t
				}
			}
		}
		if missing == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for subscriptions: %d missing (e.g. %s on %s): %w", missing, exampleID, exampleTopic, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
