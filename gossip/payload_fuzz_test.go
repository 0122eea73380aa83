package gossip

import (
	"bytes"
	"testing"

	"github.com/golang/snappy"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
)

// publishedIDs returns the message id of every published message in a frame that
// SplitFrame accepts, reading topic and data as pubsub's unmarshalling does (the last
// occurrence of a field wins).
func publishedIDs(t *testing.T, frame []byte) [][MessageIDBytes]byte {
	t.Helper()
	body, _, err := FrameBody(frame)
	if err != nil {
		t.Fatal(err)
	}
	var ids [][MessageIDBytes]byte
	for f, err := range Fields(body) {
		if err != nil {
			t.Fatal(err)
		}
		if !f.Is(FieldPublish) {
			continue
		}
		var topic string
		var data []byte
		for mf, err := range Fields(f.Value) {
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case mf.Is(fieldMessageTopic):
				topic = string(mf.Value)
			case mf.Is(fieldMessageData):
				data = mf.Value
			}
		}
		ids = append(ids, MessageID(topic, data))
	}
	return ids
}

// FuzzPayloadTranscode: on any frame, AppendSSZFrame either fails leaving dst as it was,
// or gives a frame that splits into the same messages per category, whose payloads fit
// MaxPayloadBytes, which AppendSnappyFrame turns back into a frame with the same message
// ids (what the receiver of an ssz-payload stream computes) and which survives another
// round trip unchanged.
func FuzzPayloadTranscode(f *testing.F) {
	att, blk := Topic(digest, AttestationTopic(1)), Topic(digest, TopicBeaconBlock)
	ihave := att
	for _, rpc := range []*pb.RPC{
		{Publish: []*pb.Message{{Data: snappy.Encode(nil, bytes.Repeat([]byte("attestation "), 20)), Topic: &att}}},
		{Publish: []*pb.Message{
			{Data: snappy.Encode(nil, []byte("block")), Topic: &blk},
			{Data: snappy.Encode(nil, nil), Topic: &att},
		}, Control: &pb.ControlMessage{Ihave: []*pb.ControlIHave{{TopicID: &ihave, MessageIDs: []string{"id"}}}}},
		{Publish: []*pb.Message{{Data: []byte{0xff, 0xff, 0xff}, Topic: &att}}},       // not Snappy
		{Publish: []*pb.Message{{Data: []byte{0x80, 0x80, 0x80, 0x05}, Topic: &blk}}}, // declares 10 MiB + 1
		{Subscriptions: []*pb.RPC_SubOpts{{Topicid: &att}}},
	} {
		frame, err := AppendFrame(nil, rpc)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(frame)
	}
	prefix := []byte("dst")[:3:3] // appends must not share its array
	f.Fuzz(func(t *testing.T, frame []byte) {
		ssz, err := AppendSSZFrame(prefix, frame)
		if !bytes.Equal(ssz[:min(len(ssz), len(prefix))], prefix) {
			t.Fatal("dst not kept")
		}
		if err != nil {
			if len(ssz) != len(prefix) {
				t.Fatalf("failed (%v) but appended %d bytes", err, len(ssz)-len(prefix))
			}
			return
		}
		ssz = ssz[len(prefix):]
		before, err := SplitFrame(frame)
		if err != nil {
			t.Fatalf("transcoded a frame SplitFrame refuses: %v", err)
		}
		after, err := SplitFrame(ssz)
		if err != nil {
			t.Fatalf("ssz frame does not split: %v", err)
		}
		if before.Messages != after.Messages {
			t.Fatalf("messages per category %v, after transcoding %v", before.Messages, after.Messages)
		}
		back, err := AppendSnappyFrame(nil, ssz)
		if err != nil {
			t.Fatalf("ssz frame does not re-snappy: %v", err)
		}
		if got, want := publishedIDs(t, back), publishedIDs(t, frame); len(got) != len(want) {
			t.Fatalf("%d messages after the round trip, %d before", len(got), len(want))
		} else {
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("message %d: id changed by the round trip", i)
				}
			}
		}
		again, err := AppendSSZFrame(nil, back)
		if err != nil || !bytes.Equal(again, ssz) {
			t.Fatalf("second round trip differs (%v)", err)
		}
	})
}
