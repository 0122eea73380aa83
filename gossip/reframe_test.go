package gossip

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// goRPC is an RPC as go-libp2p-pubsub may build it: n messages, subscriptions, and control
// of every kind (two IHAVE topics, an IWANT, a GRAFT, a PRUNE with backoff, two IDONTWANTs).
func goRPC(n int) *pb.RPC {
	str := func(s string) *string { return &s }
	yes, backoff := true, uint64(60)
	rpc := &pb.RPC{Subscriptions: []*pb.RPC_SubOpts{{Subscribe: &yes, Topicid: str("t-a")}, {Subscribe: &yes, Topicid: str("t-b")}}}
	for i := range n {
		rpc.Publish = append(rpc.Publish, &pb.Message{Data: bytes.Repeat([]byte{byte(i)}, 100+i*37), Topic: str(fmt.Sprintf("topic-%d", i%3))})
	}
	id := func(i int) string { return fmt.Sprintf("%020d", i) }
	rpc.Control = &pb.ControlMessage{
		Ihave:     []*pb.ControlIHave{{TopicID: str("t-a"), MessageIDs: []string{id(1), id(2), id(3)}}, {TopicID: str("t-b"), MessageIDs: []string{id(4)}}},
		Iwant:     []*pb.ControlIWant{{MessageIDs: []string{id(5), id(6)}}},
		Graft:     []*pb.ControlGraft{{TopicID: str("t-c")}},
		Prune:     []*pb.ControlPrune{{TopicID: str("t-d"), Backoff: &backoff, Peers: []*pb.PeerInfo{{PeerID: []byte("peer")}}}},
		Idontwant: []*pb.ControlIDontWant{{MessageIDs: []string{id(7)}}, {MessageIDs: []string{id(8)}}},
	}
	return rpc
}

// splitFrames cuts out's frames at ends and unmarshals each.
func splitFrames(t *testing.T, out []byte, ends []int) ([][]byte, []*pb.RPC) {
	t.Helper()
	var frames [][]byte
	var rpcs []*pb.RPC
	start := 0
	for _, e := range ends {
		f := out[start:e]
		start = e
		var rpc pb.RPC
		consumeFrame(t, f, &rpc)
		frames, rpcs = append(frames, f), append(rpcs, &rpc)
	}
	if start != len(out) {
		t.Fatalf("ends stop at %d of %d bytes", start, len(out))
	}
	return frames, rpcs
}

// frameBytes is the length of rpc as one frame, computed by the protobuf library.
func frameBytes(rpc *pb.RPC) int {
	s := proto.Size(rpc)
	return protowire.SizeVarint(uint64(s)) + s
}

// A go-framed RPC with N messages and control becomes rust-libp2p's frames: one per item, in
// its queue's order (subscriptions; GRAFT, PRUNE, IDONTWANT; messages; IHAVE, IWANT), merging
// back to the same RPC, with exactly the bytes the protobuf library gives those RPCs.
func TestReframeRust(t *testing.T) {
	for _, n := range []int{0, 1, 5} {
		rpc := goRPC(n)
		frame := mustFrame(t, rpc)
		var r Reframer
		out, ends, err := r.Append([]byte("keep"), nil, FramingRust, frame)
		if err != nil {
			t.Fatal(err)
		}
		if string(out[:4]) != "keep" {
			t.Fatal("dst not appended to")
		}
		for i := range ends {
			ends[i] -= 4
		}
		frames, got := splitFrames(t, out[4:], ends)
		c := rpc.Control
		var want []*pb.RPC
		want = append(want, &pb.RPC{Subscriptions: rpc.Subscriptions})
		want = append(want, &pb.RPC{Control: &pb.ControlMessage{Graft: c.Graft}})
		want = append(want, &pb.RPC{Control: &pb.ControlMessage{Prune: c.Prune}})
		for _, d := range c.Idontwant {
			want = append(want, &pb.RPC{Control: &pb.ControlMessage{Idontwant: []*pb.ControlIDontWant{d}}})
		}
		for _, m := range rpc.Publish {
			want = append(want, &pb.RPC{Publish: []*pb.Message{m}})
		}
		for _, ih := range c.Ihave {
			want = append(want, &pb.RPC{Control: &pb.ControlMessage{Ihave: []*pb.ControlIHave{ih}}})
		}
		want = append(want, &pb.RPC{Control: &pb.ControlMessage{Iwant: c.Iwant}})
		if len(got) != len(want) || len(got) != 1+1+1+2+n+2+1 {
			t.Fatalf("n=%d: %d frames, want %d", n, len(got), len(want))
		}
		wantBytes := 0
		for i := range want {
			if !proto.Equal(got[i], want[i]) {
				t.Errorf("n=%d frame %d: %v, want %v", n, i, got[i], want[i])
			}
			if len(frames[i]) != frameBytes(want[i]) {
				t.Errorf("n=%d frame %d: %d bytes, protobuf gives %d", n, i, len(frames[i]), frameBytes(want[i]))
			}
			wantBytes += frameBytes(want[i])
		}
		merged := &pb.RPC{}
		for _, g := range got {
			proto.Merge(merged, g)
		}
		if !proto.Equal(merged, rpc) {
			t.Errorf("n=%d: merged frames differ from the RPC", n)
		}
		// The byte delta, independently: every frame beyond the first adds a length prefix,
		// and every control frame its own RPC.control tag and length.
		delta := 0
		for _, w := range want {
			delta += protowire.SizeVarint(uint64(proto.Size(w)))
			if w.Control != nil {
				delta += protowire.SizeTag(3) + protowire.SizeVarint(uint64(proto.Size(w.Control)))
			}
		}
		delta -= protowire.SizeVarint(uint64(proto.Size(rpc))) + protowire.SizeTag(3) + protowire.SizeVarint(uint64(proto.Size(rpc.Control)))
		if len(out)-4 != wantBytes || len(out)-4-len(frame) != delta {
			t.Errorf("n=%d: %d bytes (+%d over go's %d), want %d (+%d)", n, len(out)-4, len(out)-4-len(frame), len(frame), wantBytes, delta)
		}
	}
}

// nim-libp2p: subscriptions, each GRAFT, PRUNE and IDONTWANT, the rest of the control in one
// frame, the messages in one.
func TestReframeNim(t *testing.T) {
	rpc := goRPC(3)
	var r Reframer
	out, ends, err := r.Append(nil, nil, FramingNim, mustFrame(t, rpc))
	if err != nil {
		t.Fatal(err)
	}
	_, got := splitFrames(t, out, ends)
	c := rpc.Control
	want := []*pb.RPC{
		{Subscriptions: rpc.Subscriptions},
		{Control: &pb.ControlMessage{Graft: c.Graft}},
		{Control: &pb.ControlMessage{Prune: c.Prune}},
		{Control: &pb.ControlMessage{Idontwant: c.Idontwant[:1]}},
		{Control: &pb.ControlMessage{Idontwant: c.Idontwant[1:]}},
		{Control: &pb.ControlMessage{Ihave: c.Ihave, Iwant: c.Iwant}},
		{Publish: rpc.Publish},
	}
	if len(got) != len(want) {
		t.Fatalf("%d frames, want %d", len(got), len(want))
	}
	for i := range want {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("frame %d: %v, want %v", i, got[i], want[i])
		}
	}
}

// go, jvm and js frames pass unchanged, and so does a frame of one item in every framing.
func TestReframeUnchanged(t *testing.T) {
	big := mustFrame(t, goRPC(4))
	one := mustFrame(t, &pb.RPC{Publish: goRPC(1).Publish})
	ihave := mustFrame(t, &pb.RPC{Control: &pb.ControlMessage{Ihave: goRPC(0).Control.Ihave[:1]}})
	emptyCtl := mustFrame(t, &pb.RPC{Control: &pb.ControlMessage{}})
	var r Reframer
	for _, f := range Framings {
		for _, frame := range [][]byte{big, one, ihave, emptyCtl, {0}} {
			if f.Splits() && len(frame) == len(big) {
				continue
			}
			out, ends, err := r.Append(nil, nil, f, frame)
			if err != nil || !bytes.Equal(out, frame) || !slices.Equal(ends, []int{len(frame)}) {
				t.Errorf("%s: %d-byte frame became %d bytes in %d frames (%v)", f, len(frame), len(out), len(ends), err)
			}
		}
	}
}

func TestReframeErrors(t *testing.T) {
	var r Reframer
	good := mustFrame(t, goRPC(2))
	for name, frame := range map[string][]byte{
		"empty":          nil,
		"short prefix":   good[:len(good)-1],
		"bad field":      {2, 0x0f, 0x01},
		"bad control":    {4, 0x1a, 2, 0x0a, 5},
		"truncated item": {4, 0x12, 3, 1, 2}, // a message of 3 bytes, 2 present
	} {
		out, ends, err := r.Append([]byte("x"), nil, FramingRust, frame)
		if err == nil || string(out) != "x" || len(ends) != 0 {
			t.Errorf("%s: err %v, appended %d bytes", name, err, len(out)-1)
		}
	}
	if _, _, err := r.Append(nil, nil, Framing("quic"), good); err == nil {
		t.Error("unknown framing accepted")
	}
	if _, err := ParseFraming("lighthouse"); err == nil || !bytes.Contains([]byte(err.Error()), []byte("go, rust, nim, jvm, js")) {
		t.Errorf("ParseFraming: %v", err)
	}
	for _, f := range Framings {
		if g, err := ParseFraming(" " + string(f)); err != nil || g != f {
			t.Errorf("ParseFraming(%s) = %s, %v", f, g, err)
		}
	}
}

// pieces lists a frame's content as the multiset re-framing keeps: each top-level field, with
// a non-empty ControlMessage opened into its entries.
func pieces(t *testing.T, frame []byte) []string {
	body, _, err := FrameBody(frame)
	if err != nil {
		t.Fatalf("output frame: %v", err)
	}
	var out []string
	for f, err := range Fields(body) {
		if err != nil {
			t.Fatalf("output frame: %v", err)
		}
		if f.Is(FieldControl) && len(f.Value) > 0 {
			for c, err := range Fields(f.Value) {
				if err != nil {
					t.Fatalf("output control: %v", err)
				}
				out = append(out, "c"+string(c.All))
			}
			continue
		}
		out = append(out, "t"+string(f.All))
	}
	return out
}

func FuzzReframe(f *testing.F) {
	f.Add(byte(1), []byte(nil))
	f.Add(byte(1), []byte{9, 0x12, 7, 0x12, 2, 0xAA, 0xBB, 0x22, 1, 't'})
	f.Add(byte(2), []byte{4, 0x1a, 2, 0x0a, 0})
	for i, n := range []int{0, 2, 3} {
		fr, _ := AppendFrame(nil, goRPC(n))
		f.Add(byte(i), fr)
	}
	f.Fuzz(func(t *testing.T, which byte, frame []byte) {
		fm := Framings[int(which)%len(Framings)]
		var r Reframer
		out, ends, err := r.Append([]byte{7}, nil, fm, frame)
		if err != nil {
			if len(out) != 1 || len(ends) != 0 {
				t.Fatal("appended on error")
			}
			if _, _, e := FrameBody(frame); e == nil && !fm.Splits() {
				t.Fatalf("%s refused a whole frame: %v", fm, err)
			}
			return
		}
		out = out[1:]
		if len(ends) == 0 || ends[len(ends)-1]-1 != len(out) {
			t.Fatalf("ends %v for %d bytes", ends, len(out))
		}
		if !fm.Splits() || len(ends) == 1 {
			if !bytes.Equal(out, frame) {
				t.Fatal("an unsplit frame changed")
			}
			return
		}
		var in, got []string
		in = pieces(t, frame)
		start := 0
		for _, e := range ends {
			e--
			fr := out[start:e]
			start = e
			p := pieces(t, fr)
			if len(p) == 0 {
				t.Fatal("an empty frame")
			}
			if fm == FramingRust && len(p) > 1 && p[0][0] == 'c' {
				t.Fatalf("rust frame with %d control entries", len(p))
			}
			got = append(got, p...)
		}
		slices.Sort(in)
		slices.Sort(got)
		if !slices.Equal(in, got) {
			t.Fatalf("content changed: %d pieces in, %d out", len(in), len(got))
		}
		// Protobuf's view: the frames merged in order are the RPC (unknown fields aside,
		// whose order re-framing may change).
		var want, merged pb.RPC
		dis := proto.UnmarshalOptions{DiscardUnknown: true}
		body, _, _ := FrameBody(frame)
		if dis.Unmarshal(body, &want) != nil {
			return
		}
		start = 0
		for _, e := range ends {
			e--
			b, _, _ := FrameBody(out[start:e])
			start = e
			var one pb.RPC
			if err := dis.Unmarshal(b, &one); err != nil {
				t.Fatalf("an output frame does not parse: %v", err)
			}
			proto.Merge(&merged, &one)
		}
		if !proto.Equal(&want, &merged) {
			t.Fatal("merged frames differ from the input RPC")
		}
	})
}

// The cost of re-framing a heartbeat's frame (IHAVE on 8 topics of 300 ids, an IWANT, two
// forwarded attestations) as rust-libp2p does, per frame.
func BenchmarkReframeRust(b *testing.B) {
	topic := "t"
	rpc := &pb.RPC{Control: &pb.ControlMessage{Iwant: []*pb.ControlIWant{{MessageIDs: []string{"01234567890123456789"}}}}}
	for i := range 8 {
		ih := &pb.ControlIHave{TopicID: &topic}
		for j := range 300 {
			ih.MessageIDs = append(ih.MessageIDs, fmt.Sprintf("%020d", i*1000+j))
		}
		rpc.Control.Ihave = append(rpc.Control.Ihave, ih)
	}
	for range 2 {
		rpc.Publish = append(rpc.Publish, &pb.Message{Data: bytes.Repeat([]byte{1}, 230), Topic: &topic})
	}
	frame, err := AppendFrame(nil, rpc)
	if err != nil {
		b.Fatal(err)
	}
	var r Reframer
	var out []byte
	var ends []int
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if out, ends, err = r.Append(out[:0], ends[:0], FramingRust, frame); err != nil || len(ends) != 11 {
			b.Fatal(len(ends), err)
		}
	}
}
