package node

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand"
	"runtime"
	"strings"
	gosync "sync"
	"testing"
	"time"

	snet "github.com/streamsim/streamsim/sim/network"

	"github.com/golang/snappy"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
)

const testFork = "8c9f62fe"

var testTopic = gossip.Topic(testFork, gossip.AttestationTopic(0))

// testNode starts a node offering codecs (comma-separated specs, "" for plain only).
func testNode(t *testing.T, codecs string, ssz bool, log *slog.Logger) *testPeer {
	t.Helper()
	var specs []codec.Spec
	if codecs != "" {
		var err error
		if specs, err = ParseCodecs(codecs); err != nil {
			t.Fatal(err)
		}
	}
	h, err := snet.NewHost("")
	if err != nil {
		t.Fatal(err)
	}
	opts := []Option{WithCodecs(specs...), WithPayloadSSZ(ssz), WithTimeScale(10)}
	if log != nil {
		opts = append(opts, WithLogger(log))
	}
	n := &testPeer{host: h, opts: opts}
	t.Cleanup(func() {
		if n.Node != nil {
			n.Node.Close()
		} else {
			h.Close()
		}
	})
	return n
}

// testPeer is a host whose node starts once its direct peers are known (star).
type testPeer struct {
	*Node
	host *snet.Host
	opts []Option
}

func (p *testPeer) ID() peer.ID             { return p.host.ID() }
func (p *testPeer) AddrInfo() peer.AddrInfo { return p.host.AddrInfo() }
func (p *testPeer) Host() host.Host         { return p.host.Host }
func (p *testPeer) Start(direct []peer.AddrInfo) (err error) {
	p.Node, err = NewNode(p.host, append(p.opts, WithDirectPeers(direct))...)
	return err
}

// star makes hub and leaves direct peers of each other, starts pubsub on all and connects
// the leaves to the hub.
func star(t *testing.T, hub *testPeer, leaves ...*testPeer) {
	t.Helper()
	var infos []peer.AddrInfo
	for _, l := range leaves {
		infos = append(infos, l.AddrInfo())
	}
	if err := hub.Start(infos); err != nil {
		t.Fatal(err)
	}
	for _, l := range leaves {
		if err := l.Start([]peer.AddrInfo{hub.AddrInfo()}); err != nil {
			t.Fatal(err)
		}
		if err := l.Host().Connect(context.Background(), hub.AddrInfo()); err != nil {
			t.Fatal(err)
		}
	}
}

// receiver counts messages delivered on testTopic.
type receiver struct {
	mu  gosync.Mutex
	ids map[string]bool
}

func subscribeTest(t *testing.T, n *testPeer) *receiver {
	t.Helper()
	topic, err := n.Topic(testTopic)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := topic.Subscribe(pubsub.WithBufferSize(4096))
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{ids: map[string]bool{}}
	go func() {
		for {
			m, err := sub.Next(n.ctx)
			if err != nil {
				return
			}
			r.mu.Lock()
			r.ids[m.ID] = true
			r.mu.Unlock()
		}
	}()
	return r
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ids)
}

// attestationPayload is an ssz_snappy payload shaped like a SingleAttestation: a shared
// AttestationData and a unique index and signature.
func attestationPayload(rng *rand.Rand, i int) []byte {
	raw := make([]byte, 240)
	binary.LittleEndian.PutUint64(raw, uint64(i))
	copy(raw[16:], bytes.Repeat([]byte("head-vote-data.."), 8))
	rng.Read(raw[144:])
	return snappy.Encode(nil, raw)
}

// publishN publishes n attestations from pub and waits until each receiver has them all.
func publishN(t *testing.T, pub *testPeer, seed int64, n int, rs ...*receiver) {
	t.Helper()
	topic, err := pub.Topic(testTopic)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(seed))
	before := make([]int, len(rs))
	for i, r := range rs {
		before[i] = r.count()
	}
	for i := range n {
		if err := topic.Publish(context.Background(), attestationPayload(rng, int(seed)*1_000_000+i)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for i, r := range rs {
		for r.count() < before[i]+n {
			if time.Now().After(deadline) {
				t.Fatalf("receiver %d got %d of %d messages", i, r.count()-before[i], n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func waitTopicPeers(t *testing.T, n *testPeer, ids ...peer.ID) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := WaitSubscribed(ctx, n.PubSub(), map[string][]peer.ID{testTopic: ids}); err != nil {
		t.Fatal(err)
	}
}

// side returns the metered stream direction of n towards p.
func side(t *testing.T, n *testPeer, p peer.ID, dir string) (protocol.ID, int64, int64) {
	t.Helper()
	for _, s := range n.Stats() {
		if s.Peer == p.String() && s.Direction == dir {
			return protocol.ID(s.Protocol), s.RawBytes, s.WireBytes
		}
	}
	t.Fatalf("%s has no %s stream with %s", n.ID(), dir, p)
	return "", 0, 0
}

// A hub offering compressed codecs serves a plain leaf (fallback to /meshsub/1.2.0) and
// compressed leaves (their compressed IDs) at once; every leaf receives every message.
func TestInteropAndNegotiation(t *testing.T) {
	for _, ssz := range []bool{false, true} {
		t.Run(fmt.Sprintf("ssz=%v", ssz), func(t *testing.T) {
			hub := testNode(t, "snappy-stream,zstd", ssz, nil)
			plain := testNode(t, "", ssz, nil)
			snap := testNode(t, "snappy-stream", ssz, nil)
			zst := testNode(t, "zstd:1", ssz, nil) // hub lacks zstd:1: falls back to plain
			zstd := testNode(t, "zstd", ssz, nil)
			star(t, hub, plain, snap, zst, zstd)
			leaves := []*testPeer{plain, snap, zst, zstd}
			var rs []*receiver
			for _, l := range leaves {
				rs = append(rs, subscribeTest(t, l))
			}
			subscribeTest(t, hub)
			waitTopicPeers(t, hub, plain.ID(), snap.ID(), zst.ID(), zstd.ID())
			publishN(t, hub, 1, 200, rs...)

			want := []protocol.ID{PlainProtocol, SnappyStreamProtocol, PlainProtocol, "/streamsim/zstd/meshsub/1.2.0"}
			for i, l := range leaves {
				proto, raw, wire := side(t, l, hub.ID(), "in")
				if proto != want[i] {
					t.Errorf("leaf %d negotiated %s, want %s", i, proto, want[i])
				}
				hp, hraw, hwire := side(t, hub, l.ID(), "out")
				if hp != proto || hraw != raw || hwire != wire {
					t.Errorf("leaf %d: hub sent %s %d/%d, leaf read %s %d/%d", i, hp, hraw, hwire, proto, raw, wire)
				}
				if proto == PlainProtocol && raw != wire {
					t.Errorf("leaf %d: plain stream raw %d != wire %d", i, raw, wire)
				}
				if proto != PlainProtocol && wire >= raw {
					t.Errorf("leaf %d: compressed stream wire %d >= raw %d", i, wire, raw)
				}
			}
			// The leaves' own streams to the hub use the same protocols.
			if p, _, _ := side(t, snap, hub.ID(), "out"); p != SnappyStreamProtocol {
				t.Errorf("snappy leaf's outbound stream is %s", p)
			}
		})
	}
}

// A node metering only some peers (WithMeteredPeers) delivers to and from every peer alike;
// its stats hold the metered peer's streams and the compressed one, never the unmetered plain
// one, and the metered streams' bytes match what the peers metered.
func TestMeteredPeers(t *testing.T) {
	hub := testNode(t, "snappy-stream", false, nil)
	metered := testNode(t, "", false, nil)
	bare := testNode(t, "", false, nil)
	snap := testNode(t, "snappy-stream", false, nil)
	hub.opts = append(hub.opts, WithMeteredPeers(func(p peer.ID) bool { return p == metered.ID() }))
	star(t, hub, metered, bare, snap)
	leaves := []*testPeer{metered, bare, snap}
	var rs []*receiver
	for _, l := range leaves {
		rs = append(rs, subscribeTest(t, l))
	}
	hubR := subscribeTest(t, hub)
	waitTopicPeers(t, hub, metered.ID(), bare.ID(), snap.ID())
	publishN(t, hub, 1, 100, rs...)
	for i, l := range leaves {
		waitTopicPeers(t, l, hub.ID())
		publishN(t, l, int64(10+i), 20, hubR)
	}
	for _, s := range hub.Stats() {
		if s.Peer == bare.ID().String() {
			t.Errorf("hub metered its unmetered peer's %s stream: %+v", s.Direction, s)
		}
	}
	for _, l := range []*testPeer{metered, snap} {
		for _, dir := range []string{"out", "in"} {
			other := map[string]string{"out": "in", "in": "out"}[dir]
			_, hraw, hwire := side(t, hub, l.ID(), dir)
			_, raw, wire := side(t, l, hub.ID(), other)
			if hraw == 0 || hraw != raw || hwire != wire {
				t.Errorf("hub %s %s: %d/%d bytes, the leaf metered %d/%d", dir, l.ID(), hraw, hwire, raw, wire)
			}
		}
	}
	// The unmetered peer's own meter saw the traffic the hub did not meter.
	if _, raw, _ := side(t, bare, hub.ID(), "in"); raw == 0 {
		t.Error("the unmetered leaf received no bytes")
	}
}

// logBuffer collects log output from several goroutines.
type logBuffer struct {
	mu gosync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Bytes injected into a compressed stream reset that stream with a logged error; the node
// keeps receiving from its other peers.
func TestGarbageResetsOnlyThatStream(t *testing.T) {
	var logs logBuffer
	hub := testNode(t, "snappy-stream", false, nil)
	leaf := testNode(t, "snappy-stream", false, slog.New(slog.NewTextHandler(&logs, nil)))
	star(t, hub, leaf)
	r := subscribeTest(t, leaf)
	waitTopicPeers(t, hub, leaf.ID())
	publishN(t, hub, 1, 50, r)

	// A third host speaks the compressed protocol to the leaf: one valid block, then a block
	// whose copy reaches 65535 bytes back into a history of a few dozen bytes.
	rogue := testNode(t, "", false, nil)
	if err := rogue.Host().Connect(context.Background(), leaf.AddrInfo()); err != nil {
		t.Fatal(err)
	}
	s, err := rogue.Host().NewStream(context.Background(), leaf.ID(), SnappyStreamProtocol)
	if err != nil {
		t.Fatal(err)
	}
	w := mustParse("snappy-stream").NewWriter(s)
	sub := true
	frame, err := gossip.AppendFrame(nil, &pb.RPC{Subscriptions: []*pb.RPC_SubOpts{{Subscribe: &sub, Topicid: &testTopic}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(frame); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte{0x10, 0x3e, 0xff, 0xff}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for leaf.StreamErrors() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("garbage did not reset the stream")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := s.Read(make([]byte, 1)); err == nil {
		t.Error("rogue stream still readable after the reset")
	}
	if !strings.Contains(logs.String(), "gossip stream reset") || !strings.Contains(logs.String(), rogue.ID().String()) {
		t.Errorf("no logged error naming the peer: %q", logs.String())
	}
	publishN(t, hub, 2, 50, r)
	if leaf.StreamErrors() != 1 {
		t.Errorf("%d stream errors, want 1", leaf.StreamErrors())
	}
}

// A reconnect opens new streams with empty histories on both ends, and they decode.
func TestReconnectStartsFreshHistory(t *testing.T) {
	for _, spec := range []string{"snappy-stream", "zstd"} {
		t.Run(spec, func(t *testing.T) {
			hub := testNode(t, spec, false, nil)
			leaf := testNode(t, spec, false, nil)
			star(t, hub, leaf)
			r := subscribeTest(t, leaf)
			waitTopicPeers(t, hub, leaf.ID())
			publishN(t, hub, 1, 100, r)

			if err := hub.Host().Network().ClosePeer(leaf.ID()); err != nil {
				t.Fatal(err)
			}
			// A liveness bound, not a timing figure: on a loaded 2-core machine pubsub's
			// dead-peer notice took over 5 s once.
			deadline := time.Now().Add(30 * time.Second)
			for slices_contains(hub.PubSub().ListPeers(testTopic), leaf.ID()) {
				if time.Now().After(deadline) {
					t.Fatal("hub still lists the leaf after closing the connection")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := leaf.Host().Connect(context.Background(), hub.AddrInfo()); err != nil {
				t.Fatal(err)
			}
			waitTopicPeers(t, hub, leaf.ID())
			publishN(t, hub, 2, 100, r) // same messages' shapes: history would make them tiny
			for _, st := range leaf.Stats() {
				if st.Peer == hub.ID().String() && st.Direction == "in" && st.Streams < 2 {
					t.Errorf("leaf read %d streams from the hub, want 2", st.Streams)
				}
			}
			if leaf.StreamErrors() != 0 || hub.StreamErrors() != 0 {
				t.Errorf("stream errors: leaf %d, hub %d", leaf.StreamErrors(), hub.StreamErrors())
			}
		})
	}
}

func slices_contains(ids []peer.ID, id peer.ID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// Closing nodes ends every goroutine they started.
func TestNoGoroutineLeak(t *testing.T) {
	cycle := func() {
		hub := testNode(t, "snappy-stream,zstd", false, nil)
		a := testNode(t, "snappy-stream", false, nil)
		b := testNode(t, "zstd", true, nil)
		star(t, hub, a, b)
		ra, rb := subscribeTest(t, a), subscribeTest(t, b)
		waitTopicPeers(t, hub, a.ID(), b.ID())
		publishN(t, hub, 1, 20, ra, rb)
		for _, n := range []*testPeer{hub, a, b} {
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	cycle() // starts process-wide singletons (flow-metrics sweeper, …)
	time.Sleep(200 * time.Millisecond)
	base := runtime.NumGoroutine()
	cycle()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines after closing, %d before:\n%s", runtime.NumGoroutine(), base, buf[:n])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var _ = network.DirInbound

// A peer that leaves with RPCs still queued for it leaves no backlog behind: reads from the
// other peers go on without waiting (pubsub v0.19 never calls RemovePeer on a RawTracer, so
// the node watches stream closes and disconnects itself). With flow control off, no backlog
// ever makes a read wait.
func TestBacklogOfAGonePeerDoesNotStallReads(t *testing.T) {
	a, b := testNode(t, "", false, nil), testNode(t, "", false, nil)
	star(t, a, b)
	waitConnected := func() {
		for i := 0; i < 200 && a.Host().Network().Connectedness(b.ID()) != network.Connected; i++ {
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitConnected()
	stalled := func(n *Node) time.Duration {
		start := time.Now()
		n.AwaitBacklog("")
		return time.Since(start)
	}
	// RPCs queued for b that pubsub has not written: a backlog over the limit.
	for range backlogLimit + 10 {
		a.tracer.SendRPC(nil, b.ID())
	}
	if d := stalled(a.Node); d < backlogWait/2 {
		t.Fatalf("a backlog of %d did not hold reads (%v)", backlogLimit+10, d)
	}
	a.tracer.OnClosedOutboundStream(b.ID())
	if d := stalled(a.Node); d >= backlogWait/2 {
		t.Fatalf("after b.s stream closed, reads waited %v", d)
	}
	// The same after a disconnect.
	for range backlogLimit + 10 {
		a.tracer.SendRPC(nil, b.ID())
	}
	if err := a.Host().Network().ClosePeer(b.ID()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for a.tracer.maxBacklog("") > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if d := stalled(a.Node); d >= backlogWait/2 {
		t.Fatalf("after b disconnected, reads waited %v (backlog %d)", d, a.tracer.maxBacklog(""))
	}

	// Flow control off: a backlog never holds reads.
	h, err := snet.NewHost("")
	if err != nil {
		t.Fatal(err)
	}
	// testNode's time scale: pubsub's backoff slack is one value per process (timing.go).
	off, err := NewNode(h, WithFlowControl(false), WithTimeScale(10))
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	for range backlogLimit + 10 {
		off.tracer.SendRPC(nil, b.ID())
	}
	if d := stalled(off); d >= backlogWait/2 {
		t.Fatalf("flow control off, reads waited %v", d)
	}
}

// The tracer keeps each node's longest outbound queue and the peer it was for.
func TestMaxBacklogIsKept(t *testing.T) {
	var tr tracer
	a, b := peer.ID("a"), peer.ID("b")
	for range 5 {
		tr.SendRPC(nil, a)
	}
	for range 3 {
		tr.SendRPCCompleted(nil, a, 0)
	}
	tr.SendRPC(nil, b)
	if s := tr.snapshot(); s.MaxBacklog != 5 || s.MaxBacklogTo != a.String() {
		t.Fatalf("max backlog %d to %q, want 5 to a", s.MaxBacklog, s.MaxBacklogTo)
	}
}
