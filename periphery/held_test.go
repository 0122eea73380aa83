package periphery

import (
	"bytes"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/network"

	"github.com/streamsim/streamsim/gossip"
)

// queuedOnly is a stream that is there and never written: the tests below read the writer's
// queue instead.
type queuedOnly struct{ network.Stream }

// bare is a started peer on topics without a host or a writer.
func bare(topics ...string) *Peer {
	p := &Peer{cfg: Config{Topics: topics, Heartbeat: time.Second, PruneBackoff: time.Minute, HistoryGossip: 3},
		topic: map[string]int{}, meshed: make([]atomic.Bool, len(topics)), pressed: make([]bool, len(topics)), first: make([]int, len(topics)),
		backoff: map[string]time.Time{}, regraft: map[string]time.Time{}, pending: map[string][]pendingID{},
		done: make(chan struct{}), queue: newQueue(), out: queuedOnly{}}
	for i, t := range topics {
		p.topic[t] = i
		p.first[i] = i
	}
	return p
}

func drain(p *Peer) []outgoing {
	var out []outgoing
	for {
		o, ok := p.queue.pop()
		if !ok {
			return out
		}
		out = append(out, o)
	}
}

func ihaveIDs(t *testing.T, p *Peer) []string {
	t.Helper()
	p.tick(time.Now())
	var ids []string
	for _, o := range drain(p) {
		for _, h := range o.rpc.GetControl().GetIhave() {
			ids = append(ids, h.MessageIDs...)
		}
	}
	slices.Sort(ids)
	return ids
}

func iwant(t *testing.T, p *Peer, ids ...string) []*pb.Message {
	t.Helper()
	p.control(&pb.ControlMessage{Iwant: []*pb.ControlIWant{{MessageIDs: ids}}})
	var got []*pb.Message
	for _, o := range drain(p) {
		got = append(got, o.rpc.GetPublish()...)
	}
	return got
}

// TestDeliverSharedMessage: a message delivered by several peers is sent in full as the frame
// the writer would marshal, one frame for all; held back where the peer is out of the mesh,
// advertised by IHAVE for HistoryGossip heartbeats and answered on IWANT until then, the
// latest copy of an id given twice answered.
func TestDeliverSharedMessage(t *testing.T) {
	a, b := "/eth2/x/beacon_attestation_1/ssz_snappy", "/eth2/x/beacon_attestation_2/ssz_snappy"
	in, out := bare(a, b), bare(b, a)
	in.meshed[0].Store(true)

	m1 := NewMessage(a, []byte("one"), "id-1")
	if err := in.Deliver(m1, 0); err != nil {
		t.Fatal(err)
	}
	if err := out.Deliver(m1, 1); err != nil { // out of the mesh of a: held back
		t.Fatal(err)
	}
	sent := drain(in)
	want, err := gossip.AppendFrame(nil, &pb.RPC{Publish: []*pb.Message{{Data: []byte("one"), Topic: &a}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 1 || !bytes.Equal(sent[0].frame, want) {
		t.Fatalf("meshed peer queued %+v, want the frame %x", sent, want)
	}
	if q := drain(out); len(q) != 0 {
		t.Fatalf("peer out of the mesh sent %+v at once", q)
	}
	in2 := bare(a)
	in2.meshed[0].Store(true)
	if err := in2.Deliver(m1, -1); err != nil { // looked up by name
		t.Fatal(err)
	}
	if q := drain(in2); len(q) != 1 || &q[0].frame[0] != &sent[0].frame[0] {
		t.Fatalf("second meshed peer queued %+v: not the shared frame", q)
	}

	// Held back: IHAVE for HistoryGossip heartbeats, IWANT answered meanwhile.
	if got := ihaveIDs(t, out); !slices.Equal(got, []string{"id-1"}) {
		t.Fatalf("IHAVE %v, want [id-1]", got)
	}
	if got := iwant(t, out, "id-1", "unknown"); len(got) != 1 || string(got[0].Data) != "one" {
		t.Fatalf("IWANT answered %v", got)
	}
	m2 := NewMessage(a, []byte("two"), "id-2")
	if err := out.Deliver(m2, 1); err != nil {
		t.Fatal(err)
	}
	if got := ihaveIDs(t, out); !slices.Equal(got, []string{"id-1", "id-2"}) {
		t.Fatalf("second heartbeat: IHAVE %v", got)
	}
	// The third heartbeat still advertises id-1 (given in the oldest of the 3 windows), then
	// ages it out of IHAVE and IWANT.
	if got := ihaveIDs(t, out); !slices.Equal(got, []string{"id-1", "id-2"}) {
		t.Fatalf("third heartbeat: IHAVE %v", got)
	}
	if got := iwant(t, out, "id-1"); len(got) != 0 {
		t.Fatalf("expired id-1 answered: %v", got)
	}
	if got := iwant(t, out, "id-2"); len(got) != 1 {
		t.Fatalf("id-2 not answered: %v", got)
	}
	// The same id given again (another copy of the message) is answered from the latest,
	// and advertised once per copy while each is held.
	again := NewMessage(a, []byte("two, again"), "id-2")
	if err := out.Deliver(again, 1); err != nil {
		t.Fatal(err)
	}
	if got := iwant(t, out, "id-2"); len(got) != 1 || string(got[0].Data) != "two, again" {
		t.Fatalf("id-2 given twice: answered %v", got)
	}
	for i, want := range [][]string{{"id-2", "id-2"}, {"id-2"}, {"id-2"}, nil} {
		if got := ihaveIDs(t, out); !slices.Equal(got, want) {
			t.Fatalf("heartbeat %d: IHAVE %v, want %v", 4+i, got, want)
		}
	}
	if got := iwant(t, out, "id-2"); len(got) != 0 {
		t.Fatalf("expired id-2 answered: %v", got)
	}
	if n, held := len(out.windows), len(out.windows[0])+len(out.windows[1])+len(out.windows[2]); n != 3 || held != 0 {
		t.Fatalf("%d windows holding %d messages, want HistoryGossip's 3 holding none", n, held)
	}
}

// TestQueue: entries leave in order; a full queue makes push wait until pop frees room, or
// stop ends the wait; a drained queue lets its large buffer go.
func TestQueue(t *testing.T) {
	q := newQueue()
	for i := range queueLen {
		if !q.push(outgoing{frame: []byte{byte(i)}}, nil) {
			t.Fatal("push refused below the bound")
		}
	}
	stop := make(chan struct{})
	pushed := make(chan bool)
	go func() { pushed <- q.push(outgoing{frame: []byte("last")}, stop) }()
	select {
	case <-pushed:
		t.Fatal("push into a full queue did not wait")
	case <-time.After(50 * time.Millisecond):
	}
	for i := range 1500 { // past the compaction point, freeing room at the first
		o, ok := q.pop()
		if !ok || o.frame[0] != byte(i) {
			t.Fatalf("pop %d: %v %v", i, o.frame, ok)
		}
	}
	if !<-pushed {
		t.Fatal("waiting push refused after pop freed room")
	}
	for i := 1500; i < queueLen; i++ {
		if o, ok := q.pop(); !ok || o.frame[0] != byte(i) {
			t.Fatalf("pop %d: %v %v", i, o.frame, ok)
		}
	}
	if o, ok := q.pop(); !ok || string(o.frame) != "last" {
		t.Fatalf("last pop %q %v", o.frame, ok)
	}
	if _, ok := q.pop(); ok || q.items != nil {
		t.Fatalf("drained queue: pop ok %v, buffer of %d kept", ok, cap(q.items))
	}
	for range queueLen {
		q.push(outgoing{}, nil)
	}
	close(stop)
	if q.push(outgoing{}, stop) {
		t.Fatal("push into a full queue with stop closed succeeded")
	}
}
