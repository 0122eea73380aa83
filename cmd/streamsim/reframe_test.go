package main

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"google.golang.org/protobuf/proto"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/trace"
)

// reframe rewrites the chosen direction's frames, one RPC item per frame for rust, and copies
// the other direction's frames as they were; the content merges back to the same RPC.
func TestReframeTrace(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.trace.gz"), filepath.Join(dir, "out.trace")
	topic := gossip.Topic("8c9f62fe", gossip.AttestationTopic(3))
	rpc := &pb.RPC{
		Publish: []*pb.Message{{Data: []byte("one"), Topic: &topic}, {Data: []byte("two"), Topic: &topic}},
		Control: &pb.ControlMessage{Ihave: []*pb.ControlIHave{{TopicID: &topic, MessageIDs: []string{"a", "b"}}}, Iwant: []*pb.ControlIWant{{MessageIDs: []string{"c"}}}},
	}
	frame, err := gossip.AppendFrame(nil, rpc)
	if err != nil {
		t.Fatal(err)
	}
	w, err := trace.Create(in, trace.Header{Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range []string{trace.DirectionIn, trace.DirectionOut} {
		if err := w.AddStream(trace.Stream{ID: uint32(i + 1), Node: "n", Peer: "p", Direction: d}); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteFrame(trace.Frame{At: time.Second, Stream: uint32(i + 1), Category: gossip.Attestation, Data: frame}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := runReframe([]string{"-framing", "rust", "-direction", "in", in, out}); err != nil {
		t.Fatal(err)
	}
	r, err := trace.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Header().Params["reframed"] != "rust:in" {
		t.Errorf("header %v", r.Header())
	}
	merged := &pb.RPC{}
	var inFrames, outFrames int
	var cats []gossip.Category
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if f.At != time.Second {
			t.Errorf("frame at %v", f.At)
		}
		s, _ := r.Stream(f.Stream)
		if s.Direction == trace.DirectionOut {
			outFrames++
			if string(f.Data) != string(frame) {
				t.Error("the outbound frame changed")
			}
			continue
		}
		inFrames++
		cats = append(cats, f.Category)
		body, _, err := gossip.FrameBody(f.Data)
		if err != nil {
			t.Fatal(err)
		}
		var one pb.RPC
		if err := proto.Unmarshal(body, &one); err != nil {
			t.Fatal(err)
		}
		proto.Merge(merged, &one)
	}
	if inFrames != 4 || outFrames != 1 {
		t.Fatalf("%d inbound frames (want 4: two messages, IHAVE, IWANT), %d outbound (want 1)", inFrames, outFrames)
	}
	if !proto.Equal(merged, rpc) {
		t.Error("re-framed frames do not merge to the recorded RPC")
	}
	want := []gossip.Category{gossip.Attestation, gossip.Attestation, gossip.Control, gossip.Control}
	for i := range want {
		if cats[i] != want[i] {
			t.Errorf("frame %d recorded as %v, want %v", i, cats[i], want[i])
		}
	}
	for _, args := range [][]string{{"-framing", "lighthouse", in, out}, {"-direction", "up", in, out}, {in}} {
		err := runReframe(args)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	if err := runReframe([]string{"-framing", "quic", in, out}); err == nil || !strings.Contains(err.Error(), "go, rust, nim, jvm, js") {
		t.Errorf("unknown framing: %v", err)
	}
}
