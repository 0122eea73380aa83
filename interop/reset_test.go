package interop

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsim/streamsim/sim/network"
	"github.com/streamsim/streamsim/sim/node"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/workload"
)

// lockedBuffer is a bytes.Buffer safe for the JS peer's stderr copier and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Hostile snappy-stream input on a live link: a rogue host opens /snappy-stream/meshsub/1.2.0
// streams to the JS peer (bypassing any encoder) and sends a block declaring more than the
// JS peer's bound (the header alone: it must be refused before the body arrives), a copy
// reaching beyond the history, and a block cut off by the end of the stream. The JS peer must
// reset each of those streams with an error naming the rule, and only those: its
// snappy-stream link with the hub keeps delivering every message.
func TestJSPeerResetsBadStream(t *testing.T) {
	requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prof, err := workload.ParseProfile("default")
	if err != nil {
		t.Fatal(err)
	}
	topics := prof.Topics(workload.DefaultParams().ForkDigest)

	hub := newGoNode(t, "snappy-stream")
	key, direct := jsIdentity(t, 1, nil)
	if err := hub.start(direct); err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	const maxRPC = 1 << 20
	js, err := Start(ctx, Options{Direct: []peer.AddrInfo{hub.addrInfo()}, Topics: topics, TimeScale: timeScale,
		Codecs: mustSpecs(t, "snappy-stream"), MaxRPCBytes: maxRPC, Log: &stderr, PrivateKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer js.Stop()
	if err := hub.connect(js.AddrInfo()); err != nil {
		t.Fatal(err)
	}
	var hubIn inbox
	hubIn.subscribe(t, ctx, hub, topics)
	rogue, err := network.NewHost("")
	if err != nil {
		t.Fatal(err)
	}
	defer rogue.Close()
	if err := rogue.Host.Connect(ctx, js.AddrInfo()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "subscriptions", func() (bool, string) {
		peers, err := js.Subscribers(topics[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range peers {
			if p == hub.id() {
				return true, ""
			}
		}
		return false, fmt.Sprintf("JS peer sees %v on %s", peers, topics[0])
	})

	// The JS peer's bound is its largest RPC plus a 10-byte length prefix.
	tooLarge := binary.AppendUvarint(nil, maxRPC+10+1)
	lit := append([]byte{4 << 2}, "hello"...)
	for i, c := range []struct {
		name  string
		input []byte
		want  string // in the JS peer's error
	}{
		{"declared length above the bound", tooLarge, fmt.Sprintf("declares %d bytes, bound is %d", maxRPC+10+1, maxRPC+10)},
		{"offset beyond history", append(block(5, lit), block(4, copy2(6, 4))...), "copy offset 6 at output byte 0, valid offsets are 1..5"},
		{"truncated block", block(100, lit)[:4], "stream ends inside the block"},
	} {
		s, err := rogue.Host.NewStream(ctx, js.ID(), node.SnappyStreamProtocol)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write(c.input); err != nil {
			t.Fatal(err)
		}
		if c.name == "truncated block" {
			_ = s.CloseWrite()
		}
		waitFor(t, 10*time.Second, c.name, func() (bool, string) {
			_, n, err := js.StreamReport()
			if err != nil {
				t.Fatal(err)
			}
			return n == i+1 && strings.Contains(stderr.String(), c.want), fmt.Sprintf("%d streams reset; stderr: %s", n, stderr.String())
		})
		// The rogue sees its stream reset (yamux RST), not merely closed.
		_ = s.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := s.Read(make([]byte, 1)); err == nil || !strings.Contains(err.Error(), "reset") {
			t.Errorf("%s: the rogue's read after the JS peer's verdict: %v, want a stream reset", c.name, err)
		}
		_ = s.Reset()
	}

	// The hub's link is untouched.
	msgs := workloadMessages(t, 5, 1, prof)[:50]
	var ids [][gossip.MessageIDBytes]byte
	for _, m := range msgs {
		topic, err := hub.topic(m.Topic)
		if err != nil {
			t.Fatal(err)
		}
		if err := topic.Publish(ctx, m.Data); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, gossip.MessageID(m.Topic, m.Data))
	}
	waitFor(t, 30*time.Second, "hub messages at the JS peer", func() (bool, string) {
		n, err := js.Count()
		if err != nil {
			t.Fatal(err)
		}
		return n >= len(ids), fmt.Sprintf("%d of %d", n, len(ids))
	})
	streams, n, err := js.StreamReport()
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("JS peer reset %d streams, want the 3 hostile ones", n)
	}
	var fromHub int64
	for _, s := range streams {
		if s.Peer == hub.id() && s.Direction == "inbound" {
			fromHub += s.Blocks
		}
	}
	if fromHub < int64(len(ids)) || hub.streamErrors() != 0 {
		t.Errorf("hub link: %d blocks decoded from the hub for %d messages; hub reset %d streams", fromHub, len(ids), hub.streamErrors())
	}
	received, err := js.Stop()
	if err != nil {
		t.Fatal(err)
	}
	got := map[[gossip.MessageIDBytes]byte]bool{}
	for _, r := range received {
		got[r.ID] = true
	}
	for _, id := range ids {
		if !got[id] {
			t.Errorf("JS peer missed hub message %x", id)
		}
	}
	t.Logf("JS peer stderr:\n%s", stderr.String())
}
