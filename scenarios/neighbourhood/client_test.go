package neighbourhood

import (
	"context"
	"crypto/rand"
	"sync"
	"testing"
	"time"

	"github.com/streamsim/streamsim/sim/network"
	"github.com/streamsim/streamsim/sim/node"

	"github.com/golang/snappy"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/topology"
)

// idontwantCounter counts IDONTWANT ids a node receives, per sender.
type idontwantCounter struct {
	meshShare // the no-op RawTracer methods
	mu        sync.Mutex
	from      map[peer.ID]int
}

func (c *idontwantCounter) RecvRPC(rpc *pubsub.RPC) {
	if rpc.Control == nil {
		return
	}
	c.mu.Lock()
	for _, d := range rpc.Control.Idontwant {
		c.from[rpc.From()] += len(d.MessageIDs)
	}
	c.mu.Unlock()
}

func (c *idontwantCounter) count(p peer.ID) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.from[p]
}

func (*idontwantCounter) Graft(peer.ID, string)        {}
func (*idontwantCounter) Prune(peer.ID, string)        {}
func (*idontwantCounter) RemovePeer(peer.ID)           {}
func (*idontwantCounter) SendRPC(*pubsub.RPC, peer.ID) {}

// The observed node's client against unmodified pubsub: a node on Teku's profile (the
// neighbourhood's observed node) sends IDONTWANT to its mesh only for messages of at least
// jvm-libp2p's 16 KiB, where a node on the spec's (go-libp2p-pubsub's 1 KiB) sends it for a
// 4 KiB message too. Three nodes, one topic, all meshed: a publisher, the node under test, a
// listener; the node under test sends IDONTWANT to whichever of the two it did not get the
// message from first, so both count what it sends.
func TestObservedClientIDontWant(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs of three real nodes, ~3 s each, side by side")
	}
	teku, _ := topology.ClientProfile("teku")
	spec, _ := topology.ClientProfile("spec")
	if teku.IDontWantThresholdBytes != 16384 {
		t.Fatalf("teku's IDONTWANT threshold %d, want jvm-libp2p's 16384 (docs/inputs.md §9)", teku.IDontWantThresholdBytes)
	}
	for _, c := range []struct {
		client       topology.Client
		small, large int // IDONTWANT ids wanted for a 4 KiB and (at least) a 20 KiB message
	}{{teku, 0, 1}, {spec, 1, 1}} {
		// Each client's three nodes are their own; the two runs wait on the real clock side by side.
		t.Run(c.client.Name, func(t *testing.T) {
			t.Parallel()
			small, large := idontwantsSent(t, c.client)
			if small != c.small || large < c.large || large > 2 {
				t.Errorf("%s (threshold %d B): IDONTWANT for a 4 KiB message %d, for a 20 KiB one %d; want %d and %d",
					c.client.Name, c.client.IDontWantThresholdBytes, small, large, c.small, c.large)
			}
		})
	}
}

// idontwantsSent publishes a 4 KiB and then a 20 KiB message and returns the IDONTWANT ids
// the node on cl sent the listener after each.
func idontwantsSent(t *testing.T, cl topology.Client) (small, large int) {
	t.Helper()
	topic := gossip.Topic("8c9f62fe", "beacon_block")
	counter := &idontwantCounter{from: map[peer.ID]int{}}
	var nodes []*node.Node
	for i, opts := range [][]node.Option{{node.WithRawTracers(counter)}, {node.WithClient(cl)}, {node.WithRawTracers(counter)}} {
		h, err := network.NewHost("")
		if err != nil {
			t.Fatal(err)
		}
		n, err := node.NewNode(h, append(opts, node.WithNodeSeed(1, i))...)
		if err != nil {
			h.Close()
			t.Fatal(err)
		}
		defer n.Close()
		nodes = append(nodes, n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range nodes {
		for j := i + 1; j < len(nodes); j++ {
			if err := nodes[i].Host().Connect(ctx, nodes[j].AddrInfo()); err != nil {
				t.Fatal(err)
			}
		}
	}
	var pub *pubsub.Topic
	for i, n := range nodes {
		tp, err := n.Topic(topic)
		if err != nil {
			t.Fatal(err)
		}
		sub, err := tp.Subscribe()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				if _, err := sub.Next(ctx); err != nil {
					return
				}
			}
		}()
		if i == 0 {
			pub = tp
		}
	}
	time.Sleep(2 * time.Second) // meshes form (heartbeat 700 ms)
	under := nodes[1].ID()
	for k, size := range []int{4 << 10, 20 << 10} {
		raw := make([]byte, size)
		rand.Read(raw)
		before := counter.count(under)
		if err := pub.Publish(ctx, snappy.Encode(nil, raw)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		if k == 0 {
			small = counter.count(under) - before
		} else {
			large = counter.count(under) - before
		}
	}
	return small, large
}
