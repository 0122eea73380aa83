package interop

import (
	"context"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/golang/snappy"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/sim"
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
}

func (n *goNode) id() peer.ID { return n.host.ID() }
func (n *goNode) addrInfo() peer.AddrInfo {
	return peer.AddrInfo{ID: n.host.ID(), Addrs: n.host.Addrs()}
}
func (n *goNode) connect(p peer.AddrInfo) error { return n.host.Connect(context.Background(), p) }

// newGoNode starts a Go node offering the given stream codecs (plain /meshsub/1.2.0 is always
// offered last). It is the only use of package sim here, so a change of sim's API touches
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
	h, err := sim.NewHost("")
	if err != nil {
		t.Fatal(err)
	}
	g := &goNode{host: h.Host}
	var node *sim.Node
	t.Cleanup(func() {
		if node != nil {
			node.Close()
		} else {
			h.Close()
		}
	})
	// The node starts once its direct peers are known (sim nodes are not changed after
	// they are built).
	g.start = func(direct []peer.AddrInfo) error {
		node, err = sim.NewNode(h, sim.WithCodecs(specs...), sim.WithTimeScale(timeScale), sim.WithDirectPeers(direct))
		if err == nil {
			g.ps, g.topic = node.PubSub, node.Topic
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
			if _, ok := sim.SpecFor(s.Protocol()); ok || s.Protocol() == "/meshsub/1.1.0" {
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

// A js-libp2p node with Lodestar's GossipSub joins a streamsim hub as a plain leaf, beside a
// Go plain leaf and a Go snappy-stream leaf. The hub offers snappy-stream, so it must fall
// back to plain GossipSub with the JS peer; the JS peer must receive exactly what the Go plain
// leaf received (per category, same message ids, same sizes), and what the JS peer publishes
// must reach every Go node with the same message ids.
func TestJSPeerAsLeaf(t *testing.T) {
	requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	prof, err := workload.ParseProfile("default")
	if err != nil {
		t.Fatal(err)
	}
	fork := workload.DefaultParams().ForkDigest
	topics := prof.Topics(fork)
	fromHub := workloadMessages(t, 1, 2, prof)
	// Edge cases of the message id and the size bounds: data that is not a valid Snappy
	// block, and a block declaring 11 MiB (above the 10 MiB payload bound), must both fall back
	// to the invalid-Snappy domain; a payload of exactly 10 MiB is valid.
	attTopic := gossip.Topic(fork, gossip.AttestationTopic(prof.AttestationSubnets[0]))
	blockTopic := gossip.Topic(fork, gossip.TopicBeaconBlock)
	fromHub = append(fromHub,
		workload.Message{Topic: attTopic, Category: gossip.Attestation, Data: []byte("not a snappy block")},
		workload.Message{Topic: attTopic, Category: gossip.Attestation, Data: []byte{0x80, 0x80, 0xc0, 0x05, 0x00}},
		workload.Message{Topic: blockTopic, Category: gossip.Block, Data: maxPayload(1)})
	// The JS peer publishes a few messages of each category from another seed, and one
	// invalid-Snappy one.
	var fromJS []workload.Message
	var perCat categoryCounts
	for _, m := range workloadMessages(t, 2, 1, prof) {
		if perCat[m.Category] < 5 {
			perCat[m.Category]++
			fromJS = append(fromJS, m)
		}
	}
	fromJS = append(fromJS,
		workload.Message{Topic: attTopic, Category: gossip.Attestation, Data: []byte("js: not snappy")},
		workload.Message{Topic: blockTopic, Category: gossip.Block, Data: maxPayload(2)})

	hub := newGoNode(t, "snappy-stream")
	plain := newGoNode(t)
	snap := newGoNode(t, "snappy-stream")
	js, err := Start(ctx, Options{Direct: []peer.AddrInfo{hub.addrInfo()}, Topics: topics, TimeScale: timeScale})
	if err != nil {
		t.Fatal(err)
	}
	defer js.Stop()

	if err := hub.start([]peer.AddrInfo{plain.addrInfo(), snap.addrInfo(), js.AddrInfo()}); err != nil {
		t.Fatal(err)
	}
	for _, leaf := range []*goNode{plain, snap} {
		if err := leaf.start([]peer.AddrInfo{hub.addrInfo()}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []peer.AddrInfo{plain.addrInfo(), snap.addrInfo(), js.AddrInfo()} {
		if err := hub.connect(p); err != nil {
			t.Fatal(err)
		}
	}
	var hubIn, plainIn, snapIn inbox
	hubIn.subscribe(t, ctx, hub, topics)
	plainIn.subscribe(t, ctx, plain, topics)
	snapIn.subscribe(t, ctx, snap, topics)

	waitFor(t, 20*time.Second, "subscriptions", func() (bool, string) {
		for _, topic := range topics {
			hubPeers := hub.ps().ListPeers(topic)
			for _, want := range []peer.ID{plain.id(), snap.id(), js.ID()} {
				if !slices.Contains(hubPeers, want) {
					return false, fmt.Sprintf("hub does not see %s on %s", want, topic)
				}
			}
			jsPeers, err := js.Subscribers(topic)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(jsPeers, hub.id()) {
				return false, fmt.Sprintf("JS peer does not see the hub on %s", topic)
			}
		}
		return true, ""
	})

	// Hub → leaves.
	start := time.Now()
	var hubIDs [][gossip.MessageIDBytes]byte
	var want categoryCounts
	for _, m := range fromHub {
		topic, err := hub.topic(m.Topic)
		if err != nil {
			t.Fatal(err)
		}
		if err := topic.Publish(ctx, m.Data); err != nil {
			t.Fatal(err)
		}
		hubIDs = append(hubIDs, gossip.MessageID(m.Topic, m.Data))
		want[m.Category]++
	}
	waitFor(t, 30*time.Second, "hub messages at the Go leaves", func() (bool, string) {
		p, s := plainIn.has(hubIDs...), snapIn.has(hubIDs...)
		return p == len(hubIDs) && s == len(hubIDs), fmt.Sprintf("plain %d, snappy-stream %d of %d", p, s, len(hubIDs))
	})
	waitFor(t, 30*time.Second, "hub messages at the JS peer", func() (bool, string) {
		n, err := js.Count()
		if err != nil {
			t.Fatal(err)
		}
		return n >= len(hubIDs), fmt.Sprintf("%d of %d", n, len(hubIDs))
	})
	t.Logf("hub published %d messages (%s) in %v", len(fromHub), want, time.Since(start).Round(time.Millisecond))

	// JS peer → every Go node.
	var jsIDs [][gossip.MessageIDBytes]byte
	for _, m := range fromJS {
		id, err := js.Publish(m.Topic, m.Data)
		if err != nil {
			t.Fatal(err)
		}
		if goID := gossip.MessageID(m.Topic, m.Data); id != goID {
			t.Errorf("JS peer's message id %x for a %s message, Go's %x", id, m.Category, goID)
		}
		jsIDs = append(jsIDs, id)
	}
	waitFor(t, 20*time.Second, "JS peer's messages at the Go nodes", func() (bool, string) {
		h, p, s := hubIn.has(jsIDs...), plainIn.has(jsIDs...), snapIn.has(jsIDs...)
		return h+p+s == 3*len(jsIDs), fmt.Sprintf("hub %d, plain %d, snappy-stream %d of %d", h, p, s, len(jsIDs))
	})
	for i, m := range fromJS {
		for name, in := range map[string]*inbox{"hub": &hubIn, "plain": &plainIn, "snappy-stream": &snapIn} {
			in.mu.Lock()
			got := in.got[jsIDs[i]]
			in.mu.Unlock()
			if got.GetTopic() != m.Topic || string(got.GetData()) != string(m.Data) || got.Message.From != nil || got.Message.Seqno != nil {
				t.Errorf("%s leaf got JS message %d altered: topic %q, %d bytes, from %x, seqno %x",
					name, i, got.GetTopic(), len(got.GetData()), got.Message.From, got.Message.Seqno)
			}
		}
	}

	// Negotiated protocols: the hub offered snappy-stream first and got it from the
	// snappy-stream leaf; with the JS peer both sides used plain /meshsub/1.2.0.
	hubToJS := gossipStreams(hub, js.ID())
	if len(hubToJS[network.DirOutbound]) == 0 || len(hubToJS[network.DirInbound]) == 0 {
		t.Errorf("hub has no GossipSub stream in both directions with the JS peer: %v", hubToJS)
	}
	for dir, ids := range hubToJS {
		for _, id := range ids {
			if id != sim.PlainProtocol {
				t.Errorf("hub's %s stream with the JS peer is %s, want %s", dir, id, sim.PlainProtocol)
			}
		}
	}
	if got := gossipStreams(hub, snap.id())[network.DirOutbound]; !slices.Equal(got, []protocol.ID{sim.SnappyStreamProtocol}) {
		t.Errorf("hub's outbound streams to the snappy-stream leaf: %v, want %s", got, sim.SnappyStreamProtocol)
	}
	jsStreams, err := js.Streams()
	if err != nil {
		t.Fatal(err)
	}
	var jsSide []string
	for _, s := range jsStreams {
		if s.Peer == hub.id() && s.Protocol != "/ipfs/id/1.0.0" {
			jsSide = append(jsSide, s.Direction+" "+string(s.Protocol))
			if s.Protocol != sim.PlainProtocol {
				t.Errorf("JS peer's %s stream with the hub is %s, want %s", s.Direction, s.Protocol, sim.PlainProtocol)
			}
		}
	}
	t.Logf("protocols: hub↔JS %v (hub side), %v (JS side); hub→snappy-stream leaf %v",
		hubToJS, jsSide, gossipStreams(hub, snap.id())[network.DirOutbound])

	// The JS peer's report against the Go plain leaf.
	received, err := js.Stop()
	if err != nil {
		t.Fatal(err)
	}
	jsGot := map[[gossip.MessageIDBytes]byte]Received{}
	for _, r := range received {
		if _, dup := jsGot[r.ID]; dup {
			t.Errorf("JS peer reported message %x twice", r.ID)
		}
		jsGot[r.ID] = r
	}
	plainIn.mu.Lock()
	defer plainIn.mu.Unlock()
	var jsCats, plainCats categoryCounts
	for id, r := range jsGot {
		jsCats[gossip.TopicCategory(r.Topic)]++
		m := plainIn.got[id]
		if m == nil {
			t.Errorf("JS peer got %x on %s, the Go plain leaf did not", id, r.Topic)
			continue
		}
		if m.GetTopic() != r.Topic || len(m.GetData()) != r.Bytes {
			t.Errorf("message %x: JS peer %s %d bytes, Go plain leaf %s %d bytes", id, r.Topic, r.Bytes, m.GetTopic(), len(m.GetData()))
		}
		if r.From != hub.id() {
			t.Errorf("JS peer got %x from %s, want the hub %s", id, r.From, hub.id())
		}
	}
	isJS := map[[gossip.MessageIDBytes]byte]bool{}
	for _, id := range jsIDs {
		isJS[id] = true
	}
	for id, m := range plainIn.got {
		if isJS[id] {
			continue // the JS peer's own messages: it does not deliver them to itself
		}
		plainCats[gossip.TopicCategory(m.GetTopic())]++
		if _, ok := jsGot[id]; !ok {
			t.Errorf("the Go plain leaf got %x on %s, the JS peer did not", id, m.GetTopic())
		}
	}
	if jsCats != plainCats || jsCats != want {
		t.Errorf("per category: JS peer %v, Go plain leaf %v, hub published %v", jsCats, plainCats, want)
	}
	hubSet := map[[gossip.MessageIDBytes]byte]bool{}
	for _, id := range hubIDs {
		hubSet[id] = true
	}
	if len(hubSet) != len(hubIDs) || len(jsGot) != len(hubSet) || !maps.EqualFunc(jsGot, hubSet, func(Received, bool) bool { return true }) {
		t.Errorf("JS peer's %d message ids differ from the %d ids of what the hub published", len(jsGot), len(hubIDs))
	}
	if plainIn.dup+snapIn.dup+hubIn.dup != 0 {
		t.Errorf("duplicate deliveries: plain %d, snappy-stream %d, hub %d", plainIn.dup, snapIn.dup, hubIn.dup)
	}
	t.Logf("JS peer received %d messages (%s), identical to the Go plain leaf; its %d messages reached hub, plain and snappy-stream leaves with Go's ids",
		len(received), jsCats, len(jsIDs))
}

// The JS peer as an ordinary mesh member: it dials two Go nodes that offer snappy-stream and
// speak it with each other, none of them direct peers; the JS peer gets plain /meshsub/1.2.0
// from both. Once GossipSub meshes form across the implementations, every node receives every
// message the others publish, exactly once, under the same message id.
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
	goB := newGoNode(t, "snappy-stream")
	for _, n := range []*goNode{goA, goB} {
		if err := n.start(nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := goB.connect(goA.addrInfo()); err != nil {
		t.Fatal(err)
	}
	var aIn, bIn inbox
	aIn.subscribe(t, ctx, goA, topics)
	bIn.subscribe(t, ctx, goB, topics)
	js, err := Start(ctx, Options{Dial: []peer.AddrInfo{goA.addrInfo(), goB.addrInfo()}, Topics: topics, TimeScale: timeScale})
	if err != nil {
		t.Fatal(err)
	}
	defer js.Stop()

	waitFor(t, 20*time.Second, "meshes", func() (bool, string) {
		for _, topic := range topics {
			mesh, err := js.Mesh(topic)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(mesh, goA.id()) || !slices.Contains(mesh, goB.id()) {
				return false, fmt.Sprintf("JS peer's mesh on %s: %v", topic, mesh)
			}
			for _, n := range []*goNode{goA, goB} {
				if !slices.Contains(n.ps().ListPeers(topic), js.ID()) {
					return false, fmt.Sprintf("%s does not see the JS peer on %s", n.id(), topic)
				}
			}
		}
		return true, ""
	})
	// The JS peer's GRAFTs reach the Go nodes at once and each Go heartbeat (140 ms here)
	// grafts the JS peer too; allow a few before publishing.
	time.Sleep(3 * 700 * time.Millisecond / timeScale)

	// Round robin over the three publishers.
	var ids [][gossip.MessageIDBytes]byte
	published := map[string]int{}
	var jsIDs []int
	for i, m := range msgs {
		id := gossip.MessageID(m.Topic, m.Data)
		switch i % 3 {
		case 0, 1:
			n, name := goA, "go-a"
			if i%3 == 1 {
				n, name = goB, "go-b"
			}
			topic, err := n.topic(m.Topic)
			if err != nil {
				t.Fatal(err)
			}
			if err := topic.Publish(ctx, m.Data); err != nil {
				t.Fatal(err)
			}
			published[name]++
		case 2:
			jsID, err := js.Publish(m.Topic, m.Data)
			if err != nil {
				t.Fatal(err)
			}
			if jsID != id {
				t.Errorf("JS peer's message id %x, Go's %x", jsID, id)
			}
			published["js"]++
			jsIDs = append(jsIDs, i)
		}
		ids = append(ids, id)
	}
	fromJS := map[[gossip.MessageIDBytes]byte]bool{}
	for _, i := range jsIDs {
		fromJS[ids[i]] = true
	}
	// Each Go node gets every message but its own (pubsub delivers own messages to its
	// subscribers too, so all of them); the JS peer gets all but its own.
	waitFor(t, 30*time.Second, "delivery", func() (bool, string) {
		n, err := js.Count()
		if err != nil {
			t.Fatal(err)
		}
		p, s := aIn.has(ids...), bIn.has(ids...)
		return p == len(ids) && s == len(ids) && n >= len(ids)-len(fromJS),
			fmt.Sprintf("Go A %d, Go B %d of %d; JS peer %d of %d", p, s, len(ids), n, len(ids)-len(fromJS))
	})
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
	if aIn.dup+bIn.dup != 0 {
		t.Errorf("duplicate deliveries: Go A %d, Go B %d", aIn.dup, bIn.dup)
	}
	for _, c := range []struct {
		a, b *goNode
		want protocol.ID
	}{{goA, goB, sim.SnappyStreamProtocol}, {goB, goA, sim.SnappyStreamProtocol}} {
		if got := gossipStreams(c.a, c.b.id())[network.DirOutbound]; !slices.Equal(got, []protocol.ID{c.want}) {
			t.Errorf("%s → %s streams %v, want %s", c.a.id(), c.b.id(), got, c.want)
		}
	}
	for _, n := range []*goNode{goA, goB} {
		for dir, protos := range gossipStreams(n, js.ID()) {
			if !slices.Equal(protos, []protocol.ID{sim.PlainProtocol}) {
				t.Errorf("%s's %s streams with the JS peer: %v, want %s", n.id(), dir, protos, sim.PlainProtocol)
			}
		}
	}
	t.Logf("mesh of 3 over %d topics: published %v, %d messages; JS peer received %d, Go nodes all %d",
		len(topics), published, len(ids), len(received), len(ids))
}
