package gossip

import (
	"bytes"
	"hash/maphash"
	"testing"

	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"google.golang.org/protobuf/proto"
)

func withholdFrame(t testing.TB, msgs []*pb.Message, ctrl *pb.ControlMessage) []byte {
	t.Helper()
	f, err := AppendFrame(nil, &pb.RPC{Publish: msgs, Control: ctrl})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func msg(topic, data string) *pb.Message {
	return &pb.Message{Topic: proto.String(topic), Data: []byte(data)}
}

// DropMessages leaves out exactly the messages it is told to and keeps every other field in
// order; the rest parses as the same RPC without them.
func TestDropMessages(t *testing.T) {
	seed := maphash.MakeSeed()
	a, b, c := msg("t/a", "alpha"), msg("t/b", "bravo"), msg("t/a", "charlie")
	ctrl := &pb.ControlMessage{Ihave: []*pb.ControlIHave{{TopicID: proto.String("t/a"), MessageIDs: []string{"id1", "id2"}}}}
	frame := withholdFrame(t, []*pb.Message{a, b, c}, ctrl)
	keyB := MessageKey(seed, mustMarshal(t, b))
	if MessageKey(seed, mustMarshal(t, msg("t/b", "bravo"))) != keyB || MessageKey(seed, mustMarshal(t, msg("t/a", "bravo"))) == keyB ||
		MessageKey(seed, mustMarshal(t, msg("t/b", "bravO"))) == keyB {
		t.Fatal("MessageKey: same topic and data must agree, another topic or data differ")
	}
	drop := func(k uint64) func([]byte) bool { return func(m []byte) bool { return MessageKey(seed, m) == k } }

	out, n, err := DropMessages(nil, frame, drop(keyB))
	if err != nil || n != 1 {
		t.Fatalf("dropped %d, err %v", n, err)
	}
	want := withholdFrame(t, []*pb.Message{a, c}, ctrl)
	if !bytes.Equal(out, want) {
		t.Fatalf("without b:\n got %x\nwant %x", out, want)
	}
	// Nothing to drop: the frame itself.
	out, n, err = DropMessages(make([]byte, 0, 64), frame, drop(0))
	if err != nil || n != 0 || &out[0] != &frame[0] {
		t.Fatalf("nothing dropped: n %d, err %v, same frame %v", n, err, err == nil && &out[0] == &frame[0])
	}
	// Everything dropped and no other field: empty.
	only := withholdFrame(t, []*pb.Message{b}, nil)
	if out, n, err = DropMessages([]byte("scratch"), only, drop(keyB)); err != nil || n != 1 || len(out) != 0 {
		t.Fatalf("only b: %x, %d, %v", out, n, err)
	}
	// Dropped messages leave the control: one IHAVE frame.
	if out, _, _ = DropMessages(nil, withholdFrame(t, []*pb.Message{b}, ctrl), drop(keyB)); !bytes.Equal(out, withholdFrame(t, nil, ctrl)) {
		t.Fatalf("b and control: %x", out)
	}
	// A long kept part whose length prefix grows by a byte is still right.
	big := msg("t/a", string(bytes.Repeat([]byte{7}, 200)))
	if out, _, _ = DropMessages(nil, withholdFrame(t, []*pb.Message{b, big}, nil), drop(keyB)); !bytes.Equal(out, withholdFrame(t, []*pb.Message{big}, nil)) {
		t.Fatalf("b and a long message: %x", out)
	}
	if _, _, err := DropMessages(nil, frame[:len(frame)-1], drop(keyB)); err == nil {
		t.Fatal("a truncated frame is an error")
	}
	var got []string
	for m := range PublishedMessages(frame) {
		got = append(got, MessageTopic(m))
	}
	if len(got) != 3 || got[1] != "t/b" || MessageCategory(mustMarshal(t, b)) != Other {
		t.Fatalf("PublishedMessages: %v", got)
	}
}

func mustMarshal(t testing.TB, m *pb.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Whatever the frame, DropMessages either fails or returns a frame that parses and holds
// exactly the fields it kept.
func FuzzDropMessages(f *testing.F) {
	f.Add(withholdFrame(f, []*pb.Message{msg("t/a", "x"), msg("t/b", "yy")}, nil), uint8(1))
	f.Add(withholdFrame(f, []*pb.Message{msg("t/a", "x")}, &pb.ControlMessage{Graft: []*pb.ControlGraft{{TopicID: proto.String("t/a")}}}), uint8(0))
	f.Fuzz(func(t *testing.T, frame []byte, mask uint8) {
		i := 0
		out, n, err := DropMessages(nil, frame, func([]byte) bool { d := mask>>(i%8)&1 == 1; i++; return d })
		if err != nil {
			return
		}
		if n == 0 {
			if !bytes.Equal(out, frame) {
				t.Fatal("nothing dropped but the frame changed")
			}
			return
		}
		if len(out) == 0 {
			return
		}
		body, _, err := FrameBody(out)
		if err != nil {
			t.Fatalf("result does not parse: %v", err)
		}
		for _, err := range Fields(body) {
			if err != nil {
				t.Fatalf("result's fields: %v", err)
			}
		}
	})
}
