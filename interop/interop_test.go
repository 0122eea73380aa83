package interop

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	snet "github.com/streamsim/streamsim/sim/network"
	"github.com/streamsim/streamsim/sim/node"

	"github.com/golang/snappy"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/workload"
)

// timeScale speeds up heartbeats on both implementations; seen TTLs (768 s / timeScale) still
// outlast the test.
const timeScale = 5

// goNode is a streamsim Go node as these tests use it.
type goNode struct {
	host  host.Host
	ps    func() *pubsub.PubSub
	topic func(name string) (*pubsub.Topic, error)
	start func(direct []peer.AddrInfo) error
	// stats are the node's stream meters; streamErrors counts its streams reset after a
	// codec or framing error.
	stats        func() []result.StreamStats
	streamErrors func() int64
}

func (n *goNode) id() peer.ID { return n.host.ID() }
func (n *goNode) addrInfo() peer.AddrInfo {
	return peer.AddrInfo{ID: n.host.ID(), Addrs: n.host.Addrs()}
}
func (n *goNode) connect(p peer.AddrInfo) error { return n.host.Connect(context.Background(), p) }

// newGoNode starts a Go node offering the given stream codecs (plain /meshsub/1.2.0 is always
// offered last). It is the only use of package node here, so a change of node's API touches
// this function alone.
func newGoNode(t *testing.T, codecs ...string) *goNode {
	t.Helper()
	var specs []codec.Spec
	for _, c := range codecs {
		s, err := codec.Parse(c)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	h, err := snet.NewHost("")
	if err != nil {
		t.Fatal(err)
	}
	g := &goNode{host: h.Host}
	var nd *node.Node
	t.Cleanup(func() {
		if nd != nil {
			nd.Close()
		} else {
			h.Close()
		}
	})
	// The node starts once its direct peers are known (nodes are not changed after
	// they are built).
	g.start = func(direct []peer.AddrInfo) error {
		nd, err = node.NewNode(h, node.WithCodecs(specs...), node.WithTimeScale(timeScale), node.WithDirectPeers(direct))
		if err == nil {
			g.ps, g.topic, g.stats, g.streamErrors = nd.PubSub, nd.Topic, nd.Stats, nd.StreamErrors
		}
		return err
	}
	return g
}

// inbox collects the messages a Go node delivers to its application, by message id.
type inbox struct {
	mu  sync.Mutex
	got map[[gossip.MessageIDBytes]byte]*pubsub.Message
	dup int
}

func (b *inbox) subscribe(t *testing.T, ctx context.Context, n *goNode, topics []string) {
	t.Helper()
	b.got = map[[gossip.MessageIDBytes]byte]*pubsub.Message{}
	for _, name := range topics {
		topic, err := n.topic(name)
		if err != nil {
			t.Fatal(err)
		}
		sub, err := topic.Subscribe(pubsub.WithBufferSize(4096))
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				m, err := sub.Next(ctx)
				if err != nil {
					return
				}
				var id [gossip.MessageIDBytes]byte
				copy(id[:], m.ID)
				b.mu.Lock()
				if b.got[id] != nil {
					b.dup++
				}
				b.got[id] = m
				b.mu.Unlock()
			}
		}()
	}
}

func (b *inbox) has(ids ...[gossip.MessageIDBytes]byte) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, id := range ids {
		if b.got[id] != nil {
			n++
		}
	}
	return n
}

// waitFor polls cond every 20 ms until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not done after %v: %s", what, timeout, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// workloadMessages returns the messages of the first slots of a seeded workload on the
// profile's topics.
func workloadMessages(t *testing.T, seed int64, slots int, prof workload.Profile) []workload.Message {
	t.Helper()
	p := workload.DefaultParams()
	p.Seed = seed
	p.Validators = 65536 // a few hundred messages a slot on the default profile
	g, err := workload.NewGenerator(p)
	if err != nil {
		t.Fatal(err)
	}
	var out []workload.Message
	for range slots {
		for _, m := range g.Next() {
			if prof.Wants(m.Topic) {
				out = append(out, m)
			}
		}
	}
	return out
}

// maxPayload is the Snappy block of a seeded random payload of the largest allowed size
// (gossip.MaxPayloadBytes): the largest message either implementation must accept.
func maxPayload(seed int64) []byte {
	raw := make([]byte, gossip.MaxPayloadBytes)
	rand.New(rand.NewSource(seed)).Read(raw)
	return snappy.Encode(nil, raw)
}

// gossipStreams lists the protocols of n's open GossipSub streams with p, by direction.
func gossipStreams(n *goNode, p peer.ID) map[network.Direction][]protocol.ID {
	out := map[network.Direction][]protocol.ID{}
	for _, c := range n.host.Network().ConnsToPeer(p) {
		for _, s := range c.GetStreams() {
			if _, ok := node.SpecFor(s.Protocol()); ok || s.Protocol() == "/meshsub/1.1.0" {
				out[s.Stat().Direction] = append(out[s.Stat().Direction], s.Protocol())
			}
		}
	}
	return out
}

type categoryCounts [gossip.NumCategories]int

func (c categoryCounts) String() string {
	s := ""
	for cat, n := range c {
		if n > 0 {
			s += fmt.Sprintf("%s %d ", gossip.Category(cat), n)
		}
	}
	return s
}

// The JS peer in a mixed mesh: it offers snappy-stream and snappy-stream:4KiB and dials three
// Go nodes, none of them direct peers: A offers snappy-stream, B plain only, C
// snappy-stream:4KiB; the Go nodes are connected with each other too. Each link must
// negotiate what its two ends share (JS↔A snappy-stream, JS↔C the 4 KiB variant, every link
// with B and A↔C plain). Once GossipSub meshes form across the implementations and codecs,
// every node receives every message the others publish, exactly once, under the same message
// id, and no stream is reset.
func TestJSPeerInMesh(t *testing.T) {
	requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	prof, err := workload.ParseProfile("default")
	if err != nil {
		t.Fatal(err)
	}
	topics := prof.Topics(workload.DefaultParams().ForkDigest)
	msgs := workloadMessages(t, 3, 1, prof)

	goA := newGoNode(t, "snappy-stream")
	goB := newGoNode(t)
	goC := newGoNode(t, "snappy-stream:4KiB")
	gos := []*goNode{goA, goB, goC}
	names := map[peer.ID]string{goA.id(): "go A", goB.id(): "go B", goC.id(): "go C"}
	for _, n := range gos {
		if err := n.start(nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range [][2]*goNode{{goB, goA}, {goC, goA}, {goC, goB}} {
		if err := c[0].connect(c[1].addrInfo()); err != nil {
			t.Fatal(err)
		}
	}
	ins := make([]inbox, len(gos))
	for i, n := range gos {
		ins[i].subscribe(t, ctx, n, topics)
	}
	var dial []peer.AddrInfo
	for _, n := range gos {
		dial = append(dial, n.addrInfo())
	}
	js, err := Start(ctx, Options{Dial: dial, Topics: topics, TimeScale: timeScale, Codecs: mustSpecs(t, "snappy-stream", "snappy-stream:4KiB")})
	if err != nil {
		t.Fatal(err)
	}
	defer js.Stop()
	names[js.ID()] = "js"

	waitFor(t, 20*time.Second, "meshes", func() (bool, string) {
		for _, topic := range topics {
			mesh, err := js.Mesh(topic)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range gos {
				if !slices.Contains(mesh, n.id()) {
					return false, fmt.Sprintf("JS peer's mesh on %s: %v", topic, mesh)
				}
				if !slices.Contains(n.ps().ListPeers(topic), js.ID()) {
					return false, fmt.Sprintf("%s does not see the JS peer on %s", names[n.id()], topic)
				}
			}
		}
		return true, ""
	})
	// The JS peer's GRAFTs reach the Go nodes at once and each Go heartbeat (140 ms here)
	// grafts the JS peer too; allow a few before publishing.
	time.Sleep(3 * 700 * time.Millisecond / timeScale)

	// Round robin over the four publishers.
	var ids [][gossip.MessageIDBytes]byte
	published := map[string]int{}
	fromJS := map[[gossip.MessageIDBytes]byte]bool{}
	for i, m := range msgs {
		id := gossip.MessageID(m.Topic, m.Data)
		if k := i % 4; k < len(gos) {
			topic, err := gos[k].topic(m.Topic)
			if err != nil {
				t.Fatal(err)
			}
			if err := topic.Publish(ctx, m.Data); err != nil {
				t.Fatal(err)
			}
			published[names[gos[k].id()]]++
		} else {
			jsID, err := js.Publish(m.Topic, m.Data)
			if err != nil {
				t.Fatal(err)
			}
			if jsID != id {
				t.Errorf("JS peer's message id %x, Go's %x", jsID, id)
			}
			published["js"]++
			fromJS[id] = true
		}
		ids = append(ids, id)
	}
	// Each Go node gets every message (pubsub delivers its own to its subscribers too); the JS
	// peer all but its own.
	waitFor(t, 30*time.Second, "delivery", func() (bool, string) {
		n, err := js.Count()
		if err != nil {
			t.Fatal(err)
		}
		done := n >= len(ids)-len(fromJS)
		state := fmt.Sprintf("JS peer %d of %d", n, len(ids)-len(fromJS))
		for i := range ins {
			got := ins[i].has(ids...)
			done = done && got == len(ids)
			state += fmt.Sprintf(", %s %d of %d", names[gos[i].id()], got, len(ids))
		}
		return done, state
	})
	streams, streamErrors, err := js.StreamReport()
	if err != nil {
		t.Fatal(err)
	}
	received, err := js.Stop()
	if err != nil {
		t.Fatal(err)
	}
	got := map[[gossip.MessageIDBytes]byte]bool{}
	for _, r := range received {
		if got[r.ID] || fromJS[r.ID] {
			t.Errorf("JS peer delivered %x twice or its own message", r.ID)
		}
		got[r.ID] = true
	}
	for _, id := range ids {
		if !got[id] && !fromJS[id] {
			t.Errorf("JS peer missed %x", id)
		}
	}
	for i := range ins {
		if ins[i].dup != 0 {
			t.Errorf("%s: %d duplicate deliveries", names[gos[i].id()], ins[i].dup)
		}
	}

	// Negotiated protocols, from the Go side of every link and the JS side of its own.
	snap4K := node.ProtocolFor(mustSpecs(t, "snappy-stream:4KiB")[0])
	want := map[[2]peer.ID]protocol.ID{
		{goA.id(), js.ID()}: node.SnappyStreamProtocol, {goC.id(), js.ID()}: snap4K, {goB.id(), js.ID()}: node.PlainProtocol,
		{goA.id(), goB.id()}: node.PlainProtocol, {goA.id(), goC.id()}: node.PlainProtocol, {goB.id(), goC.id()}: node.PlainProtocol,
	}
	for pair, w := range want {
		for _, ends := range [][2]peer.ID{pair, {pair[1], pair[0]}} {
			var n *goNode
			for _, g := range gos {
				if g.id() == ends[0] {
					n = g
				}
			}
			if n == nil {
				continue // the JS end: below
			}
			for dir, protos := range gossipStreams(n, ends[1]) {
				if !slices.Equal(protos, []protocol.ID{w}) {
					t.Errorf("%s's %s streams with %s: %v, want %s", names[ends[0]], dir, names[ends[1]], protos, w)
				}
			}
			if n.streamErrors() != 0 {
				t.Errorf("%s reset %d streams", names[ends[0]], n.streamErrors())
			}
		}
	}
	var jsSide []string
	for _, s := range streams {
		w, ok := want[[2]peer.ID{s.Peer, js.ID()}]
		if !ok || s.Protocol == "/ipfs/id/1.0.0" {
			continue
		}
		jsSide = append(jsSide, fmt.Sprintf("%s %s %s (%d blocks)", names[s.Peer], s.Direction, s.Protocol, s.Blocks))
		if s.Protocol != w {
			t.Errorf("JS peer's %s stream with %s is %s, want %s", s.Direction, names[s.Peer], s.Protocol, w)
		}
		if w != node.PlainProtocol && s.Blocks == 0 {
			t.Errorf("JS peer's %s %s stream with %s coded no block", s.Direction, s.Protocol, names[s.Peer])
		}
	}
	if streamErrors != 0 {
		t.Errorf("JS peer reset %d streams", streamErrors)
	}
	t.Logf("mesh of 4 over %d topics: published %v, %d messages; JS peer received %d, Go nodes all %d; JS streams: %s",
		len(topics), published, len(ids), len(received), len(ids), strings.Join(jsSide, "; "))
}
