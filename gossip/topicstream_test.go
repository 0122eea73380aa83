package gossip

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// A frame built by hand: subscription {subscribe: true, topicid: "t"} then publish
// {data: "ab", topic: "t"}. Its bytes, and those of what a Topic Streams sender writes, are
// worked out from the protobuf rules, not by the code under test.
func TestSplitTopicStreamsKnownBytes(t *testing.T) {
	frame := mustHex(t, "10"+ // body of 16 bytes
		"0a05"+"0801"+"120174"+ // RPC.subscriptions (1): SubOpts{subscribe (1) = true, topicid (2) = "t"}
		"1207"+"12026162"+"220174") // RPC.publish (2): Message{data (2) = "ab", topic (4) = "t"}
	main, topics, err := SplitTopicStreams(frame)
	if err != nil {
		t.Fatal(err)
	}
	if want := mustHex(t, "07"+"0a05"+"0801"+"120174"); !bytes.Equal(main, want) {
		t.Errorf("control stream frame %x, want %x", main, want)
	}
	// TopicRPC{publish (1): TopicScopedMessage{data (2) = "ab"}}: no topic.
	if len(topics) != 1 || topics[0].Topic != "t" || !bytes.Equal(topics[0].Frame, mustHex(t, "06"+"0a04"+"12026162")) {
		t.Errorf("topic frames %+v, want one for \"t\": 060a0412026162", topics)
	}
	if h := AppendTopicHeaderFrame(nil, "t"); !bytes.Equal(h, mustHex(t, "03"+"0a0174")) {
		t.Errorf("header %x, want 030a0174", h)
	}
	// A frame with no application message is the control stream's as it is.
	ctl := mustHex(t, "07"+"0a05"+"0801"+"120174")
	if main, topics, err := SplitTopicStreams(ctl); err != nil || !bytes.Equal(main, ctl) || len(topics) != 0 {
		t.Errorf("control-only frame: %x %v %v", main, topics, err)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// joinTopicStreams is what a receiver does: each TopicRPC's message gets its stream's topic
// back, and the control stream's fields are kept. It returns the messages in order and the
// control stream's RPC.
func joinTopicStreams(t *testing.T, main []byte, topics []TopicFrame) (msgs []*pb.Message, partial []*pb.PartialMessagesExtension, rest *pb.RPC) {
	t.Helper()
	rest = &pb.RPC{}
	if main != nil {
		body, _, err := FrameBody(main)
		if err != nil {
			t.Fatal(err)
		}
		if err := proto.Unmarshal(body, rest); err != nil {
			t.Fatal(err)
		}
	}
	for _, tf := range topics {
		body, _, err := FrameBody(tf.Frame)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		for f, err := range Fields(body) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			switch f.Num {
			case fieldTopicPublish:
				var m pb.Message
				if err := proto.Unmarshal(f.Value, &m); err != nil {
					t.Fatal(err)
				}
				if m.Topic != nil {
					t.Errorf("topic %q on the wire of a topic stream", m.GetTopic())
				}
				m.Topic = proto.String(tf.Topic)
				msgs = append(msgs, &m)
			case fieldTopicPartial:
				var p pb.PartialMessagesExtension
				if err := proto.Unmarshal(f.Value, &p); err != nil {
					t.Fatal(err)
				}
				if p.TopicID != nil {
					t.Errorf("topicID %q on the wire of a topic stream", p.GetTopicID())
				}
				p.TopicID = proto.String(tf.Topic)
				partial = append(partial, &p)
			default:
				t.Errorf("TopicRPC field %d", f.Num)
			}
		}
		if n != 1 {
			t.Errorf("TopicRPC with %d fields, want exactly one", n)
		}
	}
	return msgs, partial, rest
}

func TestSplitTopicStreamsRoundTrip(t *testing.T) {
	att, blk, agg := Topic("8c9f62fe", AttestationTopic(3)), Topic("8c9f62fe", TopicBeaconBlock), Topic("8c9f62fe", TopicAggregateAndProof)
	yes := true
	rpc := &pb.RPC{
		Subscriptions: []*pb.RPC_SubOpts{{Subscribe: &yes, Topicid: &att}},
		Publish: []*pb.Message{
			{Data: []byte("attestation"), Topic: &att, From: []byte("peer"), Seqno: []byte{1, 2}},
			{Data: []byte("block"), Topic: &blk},
			{Data: []byte("another attestation"), Topic: &att},
			{Data: []byte("aggregate"), Topic: &agg, Signature: []byte("sig"), Key: []byte("key")},
		},
		Control: &pb.ControlMessage{
			Ihave:     []*pb.ControlIHave{{TopicID: &att, MessageIDs: []string{"id1", "id2"}}},
			Idontwant: []*pb.ControlIDontWant{{MessageIDs: []string{"id3"}}},
		},
		Partial: &pb.PartialMessagesExtension{TopicID: &blk, GroupID: []byte("g"), PartsMetadata: []byte{7}},
	}
	frame, err := AppendFrame(nil, rpc)
	if err != nil {
		t.Fatal(err)
	}
	main, topics, err := SplitTopicStreams(frame)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tf := range topics {
		got = append(got, tf.Topic)
	}
	if want := []string{att, blk, att, agg, blk}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("topic frames for %v, want %v", got, want)
	}
	msgs, partial, rest := joinTopicStreams(t, main, topics)
	if len(msgs) != len(rpc.Publish) {
		t.Fatalf("%d messages back, want %d", len(msgs), len(rpc.Publish))
	}
	for i := range msgs {
		if !proto.Equal(msgs[i], rpc.Publish[i]) {
			t.Errorf("message %d: %v, want %v", i, msgs[i], rpc.Publish[i])
		}
	}
	if len(partial) != 1 || !proto.Equal(partial[0], rpc.Partial) {
		t.Errorf("partial %v, want %v", partial, rpc.Partial)
	}
	want := &pb.RPC{Subscriptions: rpc.Subscriptions, Control: rpc.Control}
	if !proto.Equal(rest, want) {
		t.Errorf("control stream %v, want %v", rest, want)
	}
	// Bytes: each message loses its topic field (tag, length, topic) and gains a TopicRPC
	// tag and length; the control stream keeps its fields' bytes.
	wantMain, _ := AppendFrame(nil, want)
	if !bytes.Equal(main, wantMain) {
		t.Errorf("control stream frame %x, want %x", main, wantMain)
	}
	for i, m := range rpc.Publish {
		scoped := proto.Size(m) - protowire.SizeTag(4) - protowire.SizeBytes(len(m.GetTopic()))
		body := protowire.SizeTag(1) + protowire.SizeBytes(scoped)
		if n := protowire.SizeVarint(uint64(body)) + body; len(topics[i].Frame) != n {
			t.Errorf("message %d: topic frame of %d bytes, want %d", i, len(topics[i].Frame), n)
		}
	}
}

func TestSplitTopicStreamsErrors(t *testing.T) {
	topic := "t"
	for _, tc := range []struct {
		name, want string
		frame      []byte
	}{
		{"no topic", "no topic", mustFrame(t, &pb.RPC{Publish: []*pb.Message{{Data: []byte("x")}}})},
		{"no data", "no data", mustFrame(t, &pb.RPC{Publish: []*pb.Message{{Topic: &topic}}})},
		{"partial without topic", "no topic", mustFrame(t, &pb.RPC{Partial: &pb.PartialMessagesExtension{GroupID: []byte("g")}})},
		{"two topics", "two topics", []byte{11, 0x12, 9, 0x12, 1, 'x', 0x22, 1, 'a', 0x22, 1, 'b'}},
		{"cut short", "length prefix", mustFrame(t, &pb.RPC{Publish: []*pb.Message{{Data: []byte("x"), Topic: &topic}}})[:5]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := SplitTopicStreams(tc.frame)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func FuzzSplitTopicStreams(f *testing.F) {
	topic := "/eth2/8c9f62fe/beacon_attestation_1/ssz_snappy"
	for _, rpc := range []*pb.RPC{
		{Publish: []*pb.Message{{Data: []byte("abc"), Topic: &topic}}},
		{Publish: []*pb.Message{{Data: []byte("abc"), Topic: &topic}}, Control: &pb.ControlMessage{Graft: []*pb.ControlGraft{{TopicID: &topic}}}},
		{Partial: &pb.PartialMessagesExtension{TopicID: &topic, GroupID: []byte("g")}},
	} {
		b, _ := AppendFrame(nil, rpc)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		main, topics, err := SplitTopicStreams(frame)
		if err != nil {
			return
		}
		// What was split must be well formed and account for every byte but the topics.
		if main != nil {
			if _, _, err := FrameBody(main); err != nil {
				t.Fatalf("control stream frame: %v", err)
			}
		}
		for _, tf := range topics {
			if tf.Topic == "" {
				t.Fatal("topic frame without a topic")
			}
			if _, _, err := FrameBody(tf.Frame); err != nil {
				t.Fatalf("topic frame: %v", err)
			}
		}
	})
}
