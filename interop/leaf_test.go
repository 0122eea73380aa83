package interop

import (
	"context"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsim/streamsim/sim/node"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/workload"
)

// direction sums a node's stream meters with peer p in one direction ("in" or "out").
func direction(n *goNode, p peer.ID, dir string) (raw, wire int64) {
	for _, s := range n.stats() {
		if s.Peer == p.String() && s.Direction == dir {
			raw += s.RawBytes
			wire += s.WireBytes
		}
	}
	return raw, wire
}

func mustSpecs(t *testing.T, specs ...string) []codec.Spec {
	t.Helper()
	var out []codec.Spec
	for _, s := range specs {
		c, err := codec.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// jsIdentity returns a seeded Ed25519 key for a JS peer and appends its peer id (no
// addresses yet) to direct.
func jsIdentity(t *testing.T, seed int64, direct []peer.AddrInfo) (crypto.PrivKey, []peer.AddrInfo) {
	t.Helper()
	key, _, err := crypto.GenerateEd25519Key(rand.New(rand.NewSource(seed)))
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return key, append(direct, peer.AddrInfo{ID: id})
}

// jsLeaf is a JS peer as a leaf of the hub, with the codec it offers and the protocol the
// hub must negotiate with it.
type jsLeaf struct {
	name   string
	codecs []string
	want   protocol.ID
	peer   *Peer
	msgs   []workload.Message // what it publishes
	ids    [][gossip.MessageIDBytes]byte
}

// A js-libp2p node with Lodestar's GossipSub joins a streamsim hub as a compressed leaf,
// beside Go leaves on the same codecs: JS snappy-stream (the proposal's 64 KiB history), JS
// snappy-stream:4KiB, and a JS peer offering plain only; Go plain, snappy-stream and
// snappy-stream:4KiB leaves. The hub offers both snappy-stream IDs first and plain last, so
// each JS leaf must negotiate its own codec's ID (its JS encoder and decoder then carry the
// link) and the plain one falls back. Every JS leaf must receive exactly what the Go plain
// leaf received (per category, same message ids, same sizes), and what each JS leaf publishes
// must reach every Go node with the same message ids.
//
// Bytes: the hub meters every stream direction, and each JS leaf counts what its codec
// coded. The two counts of every compressed link must agree exactly. Downstream (hub → leaf:
// Go encoder, then the JS or the Go decoder) the JS and Go leaves of one codec must see wire
// bytes relative to plain within 1 % of each other. Upstream (leaf → hub: the JS or the Go
// encoder) the JS snappy-stream leaf publishes a slot of the workload, and so do a Go
// snappy-stream leaf and a Go plain leaf, each to a hub of its own (a message seen once is
// not published again); the JS encoder's relative bytes must be within 5 % of the Go
// encoder's (the encoders differ; the offline comparison is in TestCrossDecodeWorkload).
func TestJSPeerAsLeaf(t *testing.T) {
	requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
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
	// to the invalid-Snappy domain; a payload of exactly 10 MiB is valid (and its RPC is the
	// largest block a snappy-stream decoder must take).
	attTopic := gossip.Topic(fork, gossip.AttestationTopic(prof.AttestationSubnets[0]))
	blockTopic := gossip.Topic(fork, gossip.TopicBeaconBlock)
	edges := []workload.Message{
		{Topic: attTopic, Category: gossip.Attestation, Data: []byte("not a snappy block")},
		{Topic: attTopic, Category: gossip.Attestation, Data: []byte{0x80, 0x80, 0xc0, 0x05, 0x00}},
		{Topic: blockTopic, Category: gossip.Block, Data: maxPayload(1)},
	}
	// A few messages of each category from another seed, and edge cases.
	few := func(seed int64, extra ...workload.Message) []workload.Message {
		var out []workload.Message
		var perCat categoryCounts
		for _, m := range workloadMessages(t, seed, 1, prof) {
			if perCat[m.Category] < 5 {
				perCat[m.Category]++
				out = append(out, m)
			}
		}
		return append(out, extra...)
	}
	// Upstream: one slot of the workload, published by the JS snappy-stream leaf and by the
	// Go leaves of the side hubs.
	upstream := workloadMessages(t, 4, 1, prof)

	leaves := []*jsLeaf{
		{name: "js snappy-stream", codecs: []string{"snappy-stream"}, want: node.SnappyStreamProtocol, msgs: upstream},
		{name: "js snappy-stream:4KiB", codecs: []string{"snappy-stream:4KiB"}, want: "/streamsim/snappy-stream:4KiB/meshsub/1.2.0",
			msgs: few(2, workload.Message{Topic: attTopic, Category: gossip.Attestation, Data: []byte("js: not snappy")},
				workload.Message{Topic: blockTopic, Category: gossip.Block, Data: maxPayload(2)})},
		{name: "js plain", want: node.PlainProtocol, msgs: few(3)},
	}

	hub := newGoNode(t, "snappy-stream", "snappy-stream:4KiB")
	plain := newGoNode(t)
	goSnap := newGoNode(t, "snappy-stream")
	go4K := newGoNode(t, "snappy-stream:4KiB")
	goLeaves := []*goNode{plain, goSnap, go4K}
	goNames := []string{"go plain", "go snappy-stream", "go snappy-stream:4KiB"}
	// The hub's GossipSub runs before a JS leaf dials it: a leaf that connected earlier
	// would find only some of the hub's protocol handlers registered and could negotiate a
	// later ID of its list. So the JS leaves' ids are fixed first, by their keys.
	direct := []peer.AddrInfo{plain.addrInfo(), goSnap.addrInfo(), go4K.addrInfo()}
	keys := make([]crypto.PrivKey, len(leaves))
	for i := range leaves {
		keys[i], direct = jsIdentity(t, int64(i+1), direct)
	}
	if err := hub.start(direct); err != nil {
		t.Fatal(err)
	}
	// The JS leaves start side by side (each is a Node.js process loading js-libp2p).
	startErrs := make([]error, len(leaves))
	var started sync.WaitGroup
	for i, l := range leaves {
		opts := Options{Direct: []peer.AddrInfo{hub.addrInfo()}, Topics: topics, TimeScale: timeScale,
			Codecs: mustSpecs(t, l.codecs...), PrivateKey: keys[i]}
		started.Go(func() { l.peer, startErrs[i] = Start(ctx, opts) })
	}
	started.Wait()
	for _, l := range leaves {
		if l.peer != nil {
			defer l.peer.Stop()
		}
	}
	for i, l := range leaves {
		if startErrs[i] != nil {
			t.Fatal(startErrs[i])
		}
		if l.peer.ID() != direct[3+i].ID {
			t.Fatalf("%s runs as %s, its key gives %s", l.name, l.peer.ID(), direct[3+i].ID)
		}
		direct[3+i] = l.peer.AddrInfo()
	}
	// The side hubs of the upstream comparison, each with one publishing leaf.
	sideHubSnap, sideSnap := newGoNode(t, "snappy-stream"), newGoNode(t, "snappy-stream")
	sideHubPlain, sidePlain := newGoNode(t, "snappy-stream"), newGoNode(t)

	for _, leaf := range goLeaves {
		if err := leaf.start([]peer.AddrInfo{hub.addrInfo()}); err != nil {
			t.Fatal(err)
		}
	}
	for _, pair := range [][2]*goNode{{sideHubSnap, sideSnap}, {sideHubPlain, sidePlain}} {
		if err := pair[0].start([]peer.AddrInfo{pair[1].addrInfo()}); err != nil {
			t.Fatal(err)
		}
		if err := pair[1].start([]peer.AddrInfo{pair[0].addrInfo()}); err != nil {
			t.Fatal(err)
		}
		if err := pair[1].connect(pair[0].addrInfo()); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range direct {
		if err := hub.connect(p); err != nil {
			t.Fatal(err)
		}
	}
	var hubIn, plainIn, snapIn, in4K, sideHubSnapIn, sideHubPlainIn inbox
	hubIn.subscribe(t, ctx, hub, topics)
	plainIn.subscribe(t, ctx, plain, topics)
	snapIn.subscribe(t, ctx, goSnap, topics)
	in4K.subscribe(t, ctx, go4K, topics)
	sideHubSnapIn.subscribe(t, ctx, sideHubSnap, topics)
	sideHubPlainIn.subscribe(t, ctx, sideHubPlain, topics)
	goIn := []*inbox{&plainIn, &snapIn, &in4K}

	waitFor(t, 30*time.Second, "subscriptions", func() (bool, string) {
		for _, topic := range topics {
			hubPeers := hub.ps().ListPeers(topic)
			for _, want := range direct {
				if !slices.Contains(hubPeers, want.ID) {
					return false, fmt.Sprintf("hub does not see %s on %s", want.ID, topic)
				}
			}
			for _, l := range leaves {
				jsPeers, err := l.peer.Subscribers(topic)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(jsPeers, hub.id()) {
					return false, fmt.Sprintf("%s does not see the hub on %s", l.name, topic)
				}
			}
			for _, pair := range [][2]*goNode{{sideHubSnap, sideSnap}, {sideHubPlain, sidePlain}} {
				if !slices.Contains(pair[1].ps().ListPeers(topic), pair[0].id()) {
					return false, fmt.Sprintf("side leaf does not see its hub on %s", topic)
				}
			}
		}
		return true, ""
	})

	// Hub → leaves: the workload, then (after the downstream bytes are read) the edge cases.
	start := time.Now()
	var hubIDs [][gossip.MessageIDBytes]byte
	var want categoryCounts
	publish := func(msgs []workload.Message) {
		for _, m := range msgs {
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
	}
	arrived := func() (bool, string) {
		var state []string
		done := true
		for i, in := range goIn {
			n := in.has(hubIDs...)
			done = done && n == len(hubIDs)
			state = append(state, fmt.Sprintf("%s %d", goNames[i], n))
		}
		for _, l := range leaves {
			n, err := l.peer.Count()
			if err != nil {
				t.Fatal(err)
			}
			done = done && n >= len(hubIDs)
			state = append(state, fmt.Sprintf("%s %d", l.name, n))
		}
		return done, fmt.Sprintf("%s of %d", strings.Join(state, ", "), len(hubIDs))
	}
	publish(fromHub)
	waitFor(t, 60*time.Second, "hub workload at every leaf", arrived)
	// Downstream bytes, the workload's only: hub → leaf, wire relative to plain.
	_, plainDown := direction(hub, plain.id(), "out")
	down := map[string]float64{}
	downBytes := map[string]int64{"go plain": plainDown}
	for i, n := range goLeaves {
		_, w := direction(hub, n.id(), "out")
		down[goNames[i]], downBytes[goNames[i]] = float64(w)/float64(plainDown), w
	}
	for _, l := range leaves {
		_, w := direction(hub, l.peer.ID(), "out")
		down[l.name], downBytes[l.name] = float64(w)/float64(plainDown), w
	}
	publish(edges)
	waitFor(t, 60*time.Second, "hub edge cases at every leaf", arrived)
	t.Logf("hub published %d messages (%s) in %v", len(hubIDs), want, time.Since(start).Round(time.Millisecond))

	// JS leaves → every Go node and the other JS leaves; the side leaves → their hubs.
	var allJS [][gossip.MessageIDBytes]byte
	for _, l := range leaves {
		for _, m := range l.msgs {
			id, err := l.peer.Publish(m.Topic, m.Data)
			if err != nil {
				t.Fatal(err)
			}
			if goID := gossip.MessageID(m.Topic, m.Data); id != goID {
				t.Errorf("%s: message id %x for a %s message, Go's %x", l.name, id, m.Category, goID)
			}
			l.ids = append(l.ids, id)
		}
		allJS = append(allJS, l.ids...)
	}
	var upIDs [][gossip.MessageIDBytes]byte
	for _, m := range upstream {
		for _, side := range []*goNode{sideSnap, sidePlain} {
			topic, err := side.topic(m.Topic)
			if err != nil {
				t.Fatal(err)
			}
			if err := topic.Publish(ctx, m.Data); err != nil {
				t.Fatal(err)
			}
		}
		upIDs = append(upIDs, gossip.MessageID(m.Topic, m.Data))
	}
	waitFor(t, 60*time.Second, "JS leaves' messages at the Go nodes, side leaves' at their hubs", func() (bool, string) {
		h, s, p := hubIn.has(allJS...), sideHubSnapIn.has(upIDs...), sideHubPlainIn.has(upIDs...)
		done := h == len(allJS) && s == len(upIDs) && p == len(upIDs)
		state := fmt.Sprintf("hub %d of %d; side hubs %d, %d of %d", h, len(allJS), s, p, len(upIDs))
		for i, in := range goIn {
			n := in.has(allJS...)
			done = done && n == len(allJS)
			state += fmt.Sprintf("; %s %d", goNames[i], n)
		}
		for _, l := range leaves {
			n, err := l.peer.Count()
			if err != nil {
				t.Fatal(err)
			}
			wantN := len(hubIDs) + len(allJS) - len(l.ids)
			done = done && n >= wantN
			state += fmt.Sprintf("; %s %d of %d", l.name, n, wantN)
		}
		return done, state
	})
	for _, l := range leaves {
		for i, m := range l.msgs {
			for name, in := range map[string]*inbox{"hub": &hubIn, "go plain": &plainIn, "go snappy-stream": &snapIn} {
				in.mu.Lock()
				got := in.got[l.ids[i]]
				in.mu.Unlock()
				if got.GetTopic() != m.Topic || string(got.GetData()) != string(m.Data) || got.Message.From != nil || got.Message.Seqno != nil {
					t.Errorf("%s got %s's message %d altered: topic %q, %d bytes, from %x, seqno %x",
						name, l.name, i, got.GetTopic(), len(got.GetData()), got.Message.From, got.Message.Seqno)
				}
			}
		}
	}

	// Negotiated protocols, on both sides of every hub link.
	for _, l := range leaves {
		hubSide := gossipStreams(hub, l.peer.ID())
		if len(hubSide[network.DirOutbound]) == 0 || len(hubSide[network.DirInbound]) == 0 {
			t.Errorf("hub has no GossipSub stream in both directions with %s: %v", l.name, hubSide)
		}
		for dir, ids := range hubSide {
			for _, id := range ids {
				if id != l.want {
					t.Errorf("hub's %s stream with %s is %s, want %s", dir, l.name, id, l.want)
				}
			}
		}
		streams, streamErrors, err := l.peer.StreamReport()
		if err != nil {
			t.Fatal(err)
		}
		if streamErrors != 0 {
			t.Errorf("%s reset %d streams after codec errors", l.name, streamErrors)
		}
		var jsSide []string
		for _, s := range streams {
			if s.Peer != hub.id() || s.Protocol == "/ipfs/id/1.0.0" {
				continue
			}
			jsSide = append(jsSide, s.Direction+" "+string(s.Protocol))
			if s.Protocol != l.want {
				t.Errorf("%s's %s stream with the hub is %s, want %s", l.name, s.Direction, s.Protocol, l.want)
				continue
			}
			if l.want == node.PlainProtocol {
				continue
			}
			// The JS codec's count of each compressed direction and the hub's meter of it.
			hubDir := map[string]string{"inbound": "out", "outbound": "in"}[s.Direction]
			raw, wire := direction(hub, l.peer.ID(), hubDir)
			if s.RawBytes != raw || s.WireBytes != wire || s.Blocks == 0 {
				t.Errorf("%s %s stream: JS coded %d blocks, %d raw, %d wire bytes; the hub metered %d raw, %d wire",
					l.name, s.Direction, s.Blocks, s.RawBytes, s.WireBytes, raw, wire)
			}
		}
		t.Logf("%s: hub side %v, JS side %v", l.name, hubSide, jsSide)
	}
	if n := hub.streamErrors(); n != 0 {
		t.Errorf("hub reset %d streams after codec or framing errors", n)
	}
	for i, n := range goLeaves {
		if got := gossipStreams(hub, n.id())[network.DirOutbound]; len(got) != 1 || got[0] != node.ProtocolFor(mustSpecs(t, []string{"plain", "snappy-stream", "snappy-stream:4KiB"}[i])[0]) {
			t.Errorf("hub's outbound streams to %s: %v", goNames[i], got)
		}
	}

	// Each JS leaf's report against the Go plain leaf.
	plainIn.mu.Lock()
	plainGot := maps.Clone(plainIn.got)
	plainIn.mu.Unlock()
	hubSet := map[[gossip.MessageIDBytes]byte]bool{}
	for _, id := range hubIDs {
		hubSet[id] = true
	}
	for _, l := range leaves {
		received, err := l.peer.Stop()
		if err != nil {
			t.Fatal(err)
		}
		own := map[[gossip.MessageIDBytes]byte]bool{}
		for _, id := range l.ids {
			own[id] = true
		}
		jsGot := map[[gossip.MessageIDBytes]byte]Received{}
		for _, r := range received {
			if _, dup := jsGot[r.ID]; dup {
				t.Errorf("%s reported message %x twice", l.name, r.ID)
			}
			jsGot[r.ID] = r
		}
		var jsCats, plainCats categoryCounts
		for id, r := range jsGot {
			jsCats[gossip.TopicCategory(r.Topic)]++
			m := plainGot[id]
			if m == nil {
				t.Errorf("%s got %x on %s, the Go plain leaf did not", l.name, id, r.Topic)
				continue
			}
			if m.GetTopic() != r.Topic || len(m.GetData()) != r.Bytes {
				t.Errorf("message %x: %s %s %d bytes, Go plain leaf %s %d bytes", id, l.name, r.Topic, r.Bytes, m.GetTopic(), len(m.GetData()))
			}
			if r.From != hub.id() {
				t.Errorf("%s got %x from %s, want the hub %s", l.name, id, r.From, hub.id())
			}
		}
		for id, m := range plainGot {
			if own[id] {
				continue // its own messages: a node does not deliver them to itself
			}
			plainCats[gossip.TopicCategory(m.GetTopic())]++
			if _, ok := jsGot[id]; !ok {
				t.Errorf("the Go plain leaf got %x on %s, %s did not", id, m.GetTopic(), l.name)
			}
		}
		if jsCats != plainCats {
			t.Errorf("per category: %s %v, Go plain leaf %v", l.name, jsCats, plainCats)
		}
		for id := range hubSet {
			if _, ok := jsGot[id]; !ok {
				t.Errorf("%s missed hub message %x", l.name, id)
			}
		}
		t.Logf("%s received %d messages (%s), identical to the Go plain leaf's minus its own %d", l.name, len(received), jsCats, len(l.ids))
	}
	if plainIn.dup+snapIn.dup+in4K.dup+hubIn.dup != 0 {
		t.Errorf("duplicate deliveries: plain %d, snappy-stream %d, 4KiB %d, hub %d", plainIn.dup, snapIn.dup, in4K.dup, hubIn.dup)
	}

	// Bytes relative to plain.
	for _, c := range [][2]string{{"js snappy-stream", "go snappy-stream"}, {"js snappy-stream:4KiB", "go snappy-stream:4KiB"}} {
		js, goRel := down[c[0]], down[c[1]]
		t.Logf("downstream (hub's Go encoder → leaf), %d messages: %s %d B (%.4f of plain), %s %d B (%.4f), plain %d B; JS/Go %.4f",
			len(fromHub), c[0], downBytes[c[0]], js, c[1], downBytes[c[1]], goRel, plainDown, js/goRel)
		if js/goRel < 0.99 || js/goRel > 1.01 {
			t.Errorf("downstream: %s at %.4f of plain, %s at %.4f: more than 1 %% apart", c[0], js, c[1], goRel)
		}
	}
	if down["js plain"] < 0.99 || down["js plain"] > 1.01 {
		t.Errorf("downstream: the JS plain leaf at %.4f of the Go plain leaf's bytes", down["js plain"])
	}
	_, jsUp := direction(hub, leaves[0].peer.ID(), "in")
	_, goUp := direction(sideHubSnap, sideSnap.id(), "in")
	_, plainUp := direction(sideHubPlain, sidePlain.id(), "in")
	jsRel, goRel := float64(jsUp)/float64(plainUp), float64(goUp)/float64(plainUp)
	t.Logf("upstream (leaf's encoder → hub), %d messages: JS snappy-stream %d B (%.4f of plain), Go snappy-stream %d B (%.4f), plain %d B; JS/Go %.4f",
		len(upstream), jsUp, jsRel, goUp, goRel, plainUp, jsRel/goRel)
	if jsRel/goRel < 0.95 || jsRel/goRel > 1.05 {
		t.Errorf("upstream: the JS encoder at %.4f of plain, the Go encoder at %.4f: more than 5 %% apart", jsRel, goRel)
	}
}
