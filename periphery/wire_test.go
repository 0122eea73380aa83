package periphery

import (
	"reflect"
	"testing"

	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"google.golang.org/protobuf/proto"
)

// obeyed is what a boundary peer acts on, from proto.Unmarshal's result.
func obeyed(rpc *pb.RPC) (int, *pb.ControlMessage) {
	c := rpc.GetControl()
	if c == nil {
		return len(rpc.Publish), nil
	}
	out := &pb.ControlMessage{}
	for _, w := range c.Iwant {
		out.Iwant = append(out.Iwant, &pb.ControlIWant{MessageIDs: w.MessageIDs})
	}
	for _, g := range c.Graft {
		out.Graft = append(out.Graft, &pb.ControlGraft{TopicID: g.TopicID})
	}
	for _, p := range c.Prune {
		out.Prune = append(out.Prune, &pb.ControlPrune{TopicID: p.TopicID, Backoff: p.Backoff})
	}
	return len(rpc.Publish), out
}

func sameControl(a, b *pb.ControlMessage) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	if a == nil {
		return true
	}
	norm := func(c *pb.ControlMessage) [3]any {
		var iw [][]string
		for _, w := range c.Iwant {
			iw = append(iw, append([]string{}, w.MessageIDs...))
		}
		var gr, pt []string
		var bo []uint64
		for _, g := range c.Graft {
			gr = append(gr, g.GetTopicID())
		}
		for _, p := range c.Prune {
			pt = append(pt, p.GetTopicID())
			bo = append(bo, p.GetBackoff())
		}
		return [3]any{iw, gr, [2]any{pt, bo}}
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

func sampleRPCs() []*pb.RPC {
	t1, t2, yes := "/eth2/x/beacon_attestation_1/ssz_snappy", "/eth2/x/sync_committee_0/ssz_snappy", true
	bo := uint64(60)
	return []*pb.RPC{
		{},
		{Subscriptions: []*pb.RPC_SubOpts{{Subscribe: &yes, Topicid: &t1}}},
		{Publish: []*pb.Message{{Data: []byte("abc"), Topic: &t1}, {Data: make([]byte, 300), Topic: &t2}}},
		{Control: &pb.ControlMessage{Ihave: []*pb.ControlIHave{{TopicID: &t1, MessageIDs: []string{"aaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbb"}}},
			Iwant: []*pb.ControlIWant{{MessageIDs: []string{"cccccccccccccccccccc"}}}, Graft: []*pb.ControlGraft{{TopicID: &t2}},
			Prune:     []*pb.ControlPrune{{TopicID: &t1, Backoff: &bo, Peers: []*pb.PeerInfo{{PeerID: []byte("p")}}}, {TopicID: &t2}},
			Idontwant: []*pb.ControlIDontWant{{MessageIDs: []string{"dddddddddddddddddddd"}}}}},
		{Publish: []*pb.Message{{Data: []byte("x"), Topic: &t1}}, Control: &pb.ControlMessage{Ihave: []*pb.ControlIHave{{TopicID: &t2}}}},
	}
}

// readRPC gives what proto.Unmarshal gives for the fields a boundary peer obeys.
func TestReadRPCMatchesUnmarshal(t *testing.T) {
	for i, rpc := range sampleRPCs() {
		b, err := proto.Marshal(rpc)
		if err != nil {
			t.Fatal(err)
		}
		n, ctl, err := readRPC(b)
		wn, wctl := obeyed(rpc)
		if err != nil || n != wn || !sameControl(ctl, wctl) {
			t.Errorf("rpc %d: %d messages, control %v, %v; want %d, %v", i, n, ctl, err, wn, wctl)
		}
	}
	if _, _, err := readRPC([]byte{0x1a, 0x05, 0x0a}); err == nil {
		t.Error("a truncated control field was accepted")
	}
}

// Whatever proto.Unmarshal accepts, readRPC reads alike.
func FuzzReadRPC(f *testing.F) {
	for _, rpc := range sampleRPCs() {
		b, _ := proto.Marshal(rpc)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, ctl, err := readRPC(b)
		var rpc pb.RPC
		if proto.Unmarshal(b, &rpc) != nil {
			return
		}
		wn, wctl := obeyed(&rpc)
		if err != nil || n != wn || !sameControl(ctl, wctl) {
			t.Fatalf("%x: %d messages, control %v, %v; proto.Unmarshal: %d, %v", b, n, ctl, err, wn, wctl)
		}
	})
}
