package node

import (
	"encoding/hex"
	"slices"
	"sync"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
)

// lostLog collects the ids of messages pubsub dropped, per reason and peer, up to maxLostIDs.
type lostLog struct {
	mu    sync.Mutex
	by    map[lostKey]*result.LostMessages
	order []lostKey
	kept  int
}

type lostKey struct{ reason, peer string }

const maxLostIDs = 1 << 20

func (l *lostLog) add(reason string, p peer.ID, ids ...[]byte) {
	if l == nil || len(ids) == 0 {
		return
	}
	k := lostKey{reason, ""}
	if p != "" {
		k.peer = p.String()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil {
		l.by = map[lostKey]*result.LostMessages{}
	}
	e := l.by[k]
	if e == nil {
		e = &result.LostMessages{Reason: reason, Peer: k.peer}
		l.by[k] = e
		l.order = append(l.order, k)
	}
	for _, id := range ids {
		if l.kept >= maxLostIDs {
			e.Truncated++
			continue
		}
		l.kept++
		e.IDs = append(e.IDs, hex.EncodeToString(id))
	}
}

// dropped records the messages of an RPC pubsub dropped for p.
func (l *lostLog) dropped(rpc *pubsub.RPC, p peer.ID) {
	if l == nil || rpc == nil {
		return
	}
	var ids [][]byte
	for _, m := range rpc.GetPublish() {
		id := gossip.MessageID(m.GetTopic(), m.GetData())
		ids = append(ids, id[:])
	}
	l.add(result.LostDropped, p, ids...)
}

func (l *lostLog) message(reason string, m *pubsub.Message) {
	if l == nil || m == nil {
		return
	}
	l.add(reason, "", []byte(m.ID))
}

func (l *lostLog) snapshot() []result.LostMessages {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]result.LostMessages, 0, len(l.order))
	for _, k := range l.order {
		e := *l.by[k]
		e.IDs = slices.Clone(e.IDs)
		out = append(out, e)
	}
	return out
}

// LostMessages returns what the node's lost log holds (nil without WithLostLog).
func (n *Node) LostMessages() []result.LostMessages { return n.tracer.lost.snapshot() }
