package gossip

import (
	"bytes"
	"testing"

	"github.com/golang/snappy"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
)

// MessageSnappy does today's per-message Snappy of exactly a frame's published messages: Encode
// compresses each message's SSZ (golang/snappy, the bytes it returns are those blocks'),
// Decode decompresses each message's data; control carries no messages, data that is not
// Snappy is left out, a malformed frame is refused.
func TestMessageSnappy(t *testing.T) {
	ssz := [][]byte{bytes.Repeat([]byte("attestation "), 20), []byte("a small one")}
	topic := AttestationTopic(3)
	rpc := &pb.RPC{}
	wantEnc := 0
	for _, s := range ssz {
		rpc.Publish = append(rpc.Publish, &pb.Message{Topic: &topic, Data: snappy.Encode(nil, s)})
		wantEnc += len(snappy.Encode(nil, s))
	}
	frame, err := AppendFrame(nil, rpc)
	if err != nil {
		t.Fatal(err)
	}
	var m MessageSnappy
	if err := m.Load(frame, true); err != nil {
		t.Fatal(err)
	}
	if m.Messages() != 2 {
		t.Fatalf("%d messages, want 2", m.Messages())
	}
	if got := m.Encode(); got != wantEnc {
		t.Errorf("Encode: %d bytes, want %d", got, wantEnc)
	}
	if got := m.Decode(); got != len(ssz[0])+len(ssz[1]) {
		t.Errorf("Decode: %d bytes, want %d", got, len(ssz[0])+len(ssz[1]))
	}

	ctl, err := AppendFrame(nil, &pb.RPC{Control: &pb.ControlMessage{Idontwant: []*pb.ControlIDontWant{{MessageIDs: []string{"x"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Load(ctl, true); err != nil || m.Messages() != 0 || m.Encode() != 0 {
		t.Errorf("control frame: %d messages, %v", m.Messages(), err)
	}

	bad, err := AppendFrame(nil, &pb.RPC{Publish: []*pb.Message{{Topic: &topic, Data: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x01}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Load(bad, true); err != nil || m.Messages() != 1 || m.Encode() != 0 || m.Decode() != 0 {
		t.Errorf("data that is not Snappy: %d messages, %v; want it loaded, encoded and decoded to nothing", m.Messages(), err)
	}
	if err := m.Load([]byte{5, 1}, true); err == nil {
		t.Error("malformed frame: no error")
	}
}

// FuzzMessageSnappy: any bytes as a frame are loaded or refused without a panic; what a receiver
// decodes is exactly what Load decoded for the publisher's encode, and each SSZ payload
// encodes to a Snappy block that decodes back to it.
func FuzzMessageSnappy(f *testing.F) {
	topic := AttestationTopic(1)
	good, _ := AppendFrame(nil, &pb.RPC{Publish: []*pb.Message{{Topic: &topic, Data: snappy.Encode(nil, []byte("some ssz bytes, some ssz bytes"))}}})
	f.Add(good)
	f.Add([]byte{3, 0x12, 1, 0xff})
	f.Fuzz(func(t *testing.T, frame []byte) {
		var m MessageSnappy
		if err := m.Load(frame, true); err != nil {
			return
		}
		if got, want := m.Decode(), len(m.sszBuf); got != want {
			t.Fatalf("Decode: %d bytes, Load decoded %d", got, want)
		}
		m.Encode()
		for _, s := range m.ssz {
			back, err := snappy.Decode(nil, snappy.Encode(nil, s))
			if err != nil || !bytes.Equal(back, s) {
				t.Fatalf("payload of %d bytes does not round-trip: %v", len(s), err)
			}
		}
	})
}
