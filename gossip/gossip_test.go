package gossip

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"

	"github.com/golang/snappy"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"google.golang.org/protobuf/proto"
)

const digest = "8c9f62fe"

// The category cache stops growing at maxCachedTopics and still answers past it.
func TestTopicCategoryCacheBound(t *testing.T) {
	for i := range maxCachedTopics + 100 {
		topic := Topic(fmt.Sprintf("%08x", i), AttestationTopic(i%AttestationSubnets))
		if c := TopicCategory(topic); c != Attestation {
			t.Fatalf("%s: %v", topic, c)
		}
	}
	if n := len(*topicCategories.Load()); n > maxCachedTopics {
		t.Errorf("cache holds %d topics, bound %d", n, maxCachedTopics)
	}
	if c := TopicCategory(Topic("ffffffff", TopicBeaconBlock)); c != Block {
		t.Errorf("uncached topic past the bound: %v", c)
	}
}

func TestTopicCategories(t *testing.T) {
	cases := []struct {
		name string
		want Category
	}{
		{"beacon_attestation_0", Attestation},
		{"beacon_attestation_63", Attestation},
		{"beacon_attestation_64", Other},
		{"beacon_attestation_07", Other},
		{"beacon_aggregate_and_proof", Aggregate},
		{"beacon_block", Block},
		{"data_column_sidecar_127", DataColumn},
		{"data_column_sidecar_128", Other},
		{"sync_committee_3", SyncCommittee},
		{"sync_committee_4", Other},
		{"sync_committee_contribution_and_proof", SyncCommittee},
		{"voluntary_exit", Other},
	}
	for range 2 { // the second round reads the cache
		for _, c := range cases {
			topic := Topic(digest, c.name)
			if got := TopicCategory(topic); got != c.want {
				t.Errorf("%s: %v, want %v", topic, got, c.want)
			}
			if got := topicBytesCategory([]byte(topic)); got != c.want {
				t.Errorf("%s as bytes: %v, want %v", topic, got, c.want)
			}
		}
	}
	if TopicCategory("/meshsub/test") != Other {
		t.Error("foreign topic not Other")
	}
	if _, _, err := ParseTopic("/eth2/x/beacon_block/ssz"); err == nil {
		t.Error("wrong encoding accepted")
	}
	if s := Subnet("data_column_sidecar_17"); s != 17 {
		t.Errorf("subnet %d", s)
	}
	for _, c := range Categories() {
		back, err := ParseCategory(c.String())
		if err != nil || back != c {
			t.Errorf("category %v round trip: %v %v", c, back, err)
		}
	}
	if _, err := ParseCategory("blocks"); err == nil {
		t.Error("bad category accepted")
	}
}

// The vectors were computed independently (Python hashlib) from the spec's definition.
func TestMessageIDVectors(t *testing.T) {
	topic := Topic(digest, TopicBeaconBlock)
	valid := []byte{0x05, 0x10, 'h', 'e', 'l', 'l', 'o'} // Snappy block of "hello"
	if id := MessageID(topic, valid); hex.EncodeToString(id[:]) != "d58fc6bfe68c6db632dfb39698a85bdf1ff5975a" {
		t.Errorf("valid-snappy id %x", id)
	}
	if id := MessageID(topic, []byte{0xff, 0xff}); hex.EncodeToString(id[:]) != "961d172c7ecca48f6a2f560327b7553ca6c28d75" {
		t.Errorf("invalid-snappy id %x", id)
	}
	m := &pb.Message{Topic: &topic, Data: valid}
	if id := MessageID(topic, valid); PubsubMsgID(m) != string(id[:]) {
		t.Error("PubsubMsgID differs from MessageID")
	}
}

func TestAppendPublishFrameLayout(t *testing.T) {
	topic := "t"
	frame, err := AppendPublishFrame(nil, topic, []byte{0xAA, 0xBB})
	if err != nil {
		t.Fatal(err)
	}
	// RPC{publish(2): Message{data(2): AA BB, topic(4): "t"}} with a uvarint length prefix.
	want := []byte{9, 0x12, 7, 0x12, 2, 0xAA, 0xBB, 0x22, 1, 't'}
	if !bytes.Equal(frame, want) {
		t.Fatalf("frame % x, want % x", frame, want)
	}
}

func TestSplitFrame(t *testing.T) {
	att := Topic(digest, AttestationTopic(3))
	blk := Topic(digest, TopicBeaconBlock)
	sub := true
	rpc := &pb.RPC{
		Subscriptions: []*pb.RPC_SubOpts{{Subscribe: &sub, Topicid: &att}},
		Publish: []*pb.Message{
			{Data: bytes.Repeat([]byte{1}, 226), Topic: &att},
			{Data: bytes.Repeat([]byte{2}, 5000), Topic: &blk},
		},
		Control: &pb.ControlMessage{
			Ihave: []*pb.ControlIHave{{TopicID: &att, MessageIDs: []string{"0123456789abcdefghij"}}},
			Graft: []*pb.ControlGraft{{TopicID: &blk}},
		},
	}
	frame, err := AppendFrame(nil, rpc)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := SplitFrame(frame)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, b := range parts.Bytes {
		sum += b
	}
	if sum != len(frame) {
		t.Fatalf("parts add up to %d, frame is %d", sum, len(frame))
	}
	if parts.Messages[Attestation] != 1 || parts.Messages[Block] != 1 || parts.Messages[Control] != 3 {
		t.Fatalf("messages %v", parts.Messages)
	}
	// The attestation part is its message's encoded size plus its share of the prefix.
	msgSize := proto.Size(rpc.Publish[0])
	if b := parts.Bytes[Attestation]; b < msgSize+2 || b > msgSize+4 {
		t.Fatalf("attestation bytes %d, message encodes to %d", b, msgSize)
	}
	if parts.Dominant() != Block {
		t.Fatalf("dominant %v", parts.Dominant())
	}
	if _, err := SplitFrame(frame[:len(frame)-1]); err == nil {
		t.Fatal("truncated frame accepted")
	}
}

func TestPayloadTranscodeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	att := Topic(digest, AttestationTopic(1))
	blk := Topic(digest, TopicBeaconBlock)
	raw1 := bytes.Repeat([]byte("attestation data "), 14)
	raw2 := make([]byte, 70000)
	rng.Read(raw2[:30000])
	ihaveTopic := att
	rpc := &pb.RPC{
		Publish: []*pb.Message{
			{Data: snappy.Encode(nil, raw1), Topic: &att},
			{Data: snappy.Encode(nil, raw2), Topic: &blk},
		},
		Control: &pb.ControlMessage{Ihave: []*pb.ControlIHave{{TopicID: &ihaveTopic, MessageIDs: []string{"x"}}}},
	}
	frame, _ := AppendFrame(nil, rpc)
	sszFrame, err := AppendSSZFrame(nil, frame)
	if err != nil {
		t.Fatal(err)
	}
	// The SSZ frame is exactly what pubsub would marshal for the RPC with raw payloads.
	rawRPC := proto.Clone(rpc).(*pb.RPC)
	rawRPC.Publish[0].Data, rawRPC.Publish[1].Data = raw1, raw2
	want, _ := AppendFrame(nil, rawRPC)
	if !bytes.Equal(sszFrame, want) {
		t.Fatal("ssz frame differs from the marshalled raw RPC")
	}
	back, err := AppendSnappyFrame([]byte("prefix"), sszFrame)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(back, []byte("prefix")) {
		t.Fatal("dst not appended to")
	}
	var got pb.RPC
	if _, n := consumeFrame(t, back[6:], &got); n == 0 {
		t.Fatal("bad frame")
	}
	for i, m := range got.Publish {
		if MessageID(m.GetTopic(), m.Data) != MessageID(rpc.Publish[i].GetTopic(), rpc.Publish[i].Data) {
			t.Fatalf("message %d id changed by transcoding", i)
		}
	}
	if _, err := AppendSSZFrame(nil, mustFrame(t, &pb.RPC{Publish: []*pb.Message{{Data: []byte{0xff, 0xff, 0xff}, Topic: &att}}})); err == nil {
		t.Fatal("invalid snappy payload accepted")
	}
}

func mustFrame(t *testing.T, rpc *pb.RPC) []byte {
	f, err := AppendFrame(nil, rpc)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func consumeFrame(t *testing.T, frame []byte, rpc *pb.RPC) (*pb.RPC, int) {
	t.Helper()
	size, n := binary.Uvarint(frame)
	if n <= 0 || int(size) != len(frame)-n {
		t.Fatalf("bad prefix")
	}
	if err := proto.Unmarshal(frame[n:], rpc); err != nil {
		t.Fatal(err)
	}
	return rpc, len(frame)
}

func FuzzSplitFrame(f *testing.F) {
	f.Add([]byte{9, 0x12, 7, 0x12, 2, 0xAA, 0xBB, 0x22, 1, 't'})
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, frame []byte) {
		parts, err := SplitFrame(frame)
		if err != nil {
			return
		}
		sum := 0
		for _, b := range parts.Bytes {
			if b < 0 {
				t.Fatal("negative share")
			}
			sum += b
		}
		if sum != len(frame) {
			t.Fatalf("shares add to %d of %d", sum, len(frame))
		}
		_, _ = AppendSSZFrame(nil, frame)
	})
}

func TestReadFrameAndShareOut(t *testing.T) {
	f1, err := AppendPublishFrame(nil, "/eth2/8c9f62fe/beacon_attestation_3/ssz_snappy", bytes.Repeat([]byte{7}, 300))
	if err != nil {
		t.Fatal(err)
	}
	f2, _ := AppendPublishFrame(nil, "/eth2/8c9f62fe/beacon_block/ssz_snappy", bytes.Repeat([]byte{9}, 70000))
	r := bytes.NewReader(append(append([]byte{}, f1...), f2...))
	var buf []byte
	for i, want := range [][]byte{f1, f2} {
		buf, err = ReadFrame(r, buf, 1<<20)
		if err != nil || !bytes.Equal(buf, want) {
			t.Fatalf("frame %d: err %v, equal %v", i, err, bytes.Equal(buf, want))
		}
	}
	if _, err := ReadFrame(r, buf, 1<<20); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
	if _, err := ReadFrame(bytes.NewReader(f2[:100]), nil, 1<<20); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated frame: %v, want ErrUnexpectedEOF", err)
	}
	if _, err := ReadFrame(bytes.NewReader(f2), nil, 1000); err == nil || !strings.Contains(err.Error(), "exceeds the bound of 1000") {
		t.Fatalf("oversized frame: %v", err)
	}
	if _, err := ReadFrame(bytes.NewReader(bytes.Repeat([]byte{0xff}, 11)), nil, 1<<20); err == nil {
		t.Fatal("an 11-byte varint was accepted")
	}
	w := [NumCategories]int{Attestation: 3, Block: 1}
	got := ShareOut(10, &w)
	if got[Attestation] != 8 || got[Block] != 2 { // 7 + remainder 1 to the heaviest, 2
		t.Fatalf("ShareOut(10, 3:1) = %v", got)
	}
	var none [NumCategories]int
	if got := ShareOut(5, &none); got[Other] != 5 {
		t.Fatalf("ShareOut without weights = %v", got)
	}
}

func TestSplitFrameControlKinds(t *testing.T) {
	topic := "/eth2/8c9f62fe/beacon_aggregate_and_proof/ssz_snappy"
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = string(bytes.Repeat([]byte{byte(i)}, 20))
		}
		return out
	}
	rpc := &pb.RPC{
		Subscriptions: []*pb.RPC_SubOpts{{Subscribe: proto.Bool(true), Topicid: proto.String(topic)}},
		Control: &pb.ControlMessage{
			Ihave:     []*pb.ControlIHave{{TopicID: proto.String(topic), MessageIDs: ids(7)}, {TopicID: proto.String(topic), MessageIDs: ids(3)}},
			Iwant:     []*pb.ControlIWant{{MessageIDs: ids(2)}},
			Graft:     []*pb.ControlGraft{{TopicID: proto.String(topic)}},
			Prune:     []*pb.ControlPrune{{TopicID: proto.String(topic)}},
			Idontwant: []*pb.ControlIDontWant{{MessageIDs: ids(5)}},
		},
	}
	frame, err := AppendFrame(nil, rpc)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := SplitFrame(frame)
	if err != nil {
		t.Fatal(err)
	}
	if parts.Bytes[Control] != len(frame) {
		t.Fatalf("control bytes %d, frame %d", parts.Bytes[Control], len(frame))
	}
	sum := 0
	for _, p := range parts.Control {
		sum += p.Bytes
	}
	if sum != len(frame) {
		t.Fatalf("control kinds add up to %d, frame has %d", sum, len(frame))
	}
	want := map[ControlKind][2]int{Subscriptions: {1, 0}, IHave: {2, 10}, IWant: {1, 2}, Graft: {1, 0}, Prune: {1, 0}, IDontWant: {1, 5}}
	for k, w := range want {
		if p := parts.Control[k]; p.Entries != w[0] || p.IDs != w[1] {
			t.Errorf("%s: %d entries, %d ids; want %v", k, p.Entries, p.IDs, w)
		}
	}
	// IHAVE is the heaviest kind: its entries plus the control field's tag and length and the
	// frame's length prefix (a few bytes).
	only, _ := proto.Marshal(&pb.ControlMessage{Ihave: rpc.Control.Ihave})
	if b := parts.Control[IHave].Bytes; b < len(only) || b > len(only)+6 {
		t.Errorf("IHAVE bytes %d, its entries encode to %d", b, len(only))
	}
}

// shareOutByDivision is ShareOut's rule written out: each category n·w/total rounded down,
// the remainder to the heaviest (the first of equals, from Other), everything to Other
// without weights.
func shareOutByDivision(n int64, weights *[NumCategories]int) [NumCategories]int64 {
	var out [NumCategories]int64
	var total int64
	for _, w := range weights {
		total += int64(w)
	}
	if total <= 0 {
		out[Other] = n
		return out
	}
	var given int64
	best := Other
	for c, w := range weights {
		out[c] = n * int64(w) / total
		given += out[c]
		if w > weights[best] {
			best = Category(c)
		}
	}
	out[best] += n - given
	return out
}

// ShareOut's shortcuts (one weighted category, n equal to the total) give exactly what the
// division gives, over seeded random weights and totals of every shape.
func TestShareOutShortcuts(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	for i := range 200000 {
		var w [NumCategories]int
		for c := range w {
			if rng.Intn(3) == 0 { // often one or no category
				w[c] = rng.Intn(5000)
			}
		}
		total := int64(0)
		for _, x := range w {
			total += int64(x)
		}
		n := int64(rng.Intn(7000))
		if i%3 == 0 {
			n = total // a plain stream: wire bytes are the raw bytes
		}
		if got, want := ShareOut(n, &w), shareOutByDivision(n, &w); got != want {
			t.Fatalf("ShareOut(%d, %v) = %v, the division gives %v", n, w, got, want)
		}
	}
}

// BenchmarkSplitFrame splits the frames a mesh node reads most: a message, an IDONTWANT of
// one id, an IHAVE of 8 ids (SplitFrame runs for every frame on both sides of every stream).
func BenchmarkSplitFrame(b *testing.B) {
	topic := "/eth2/8c9f62fe/beacon_attestation_3/ssz_snappy"
	ids := make([]string, 8)
	for i := range ids {
		ids[i] = string(bytes.Repeat([]byte{byte(i)}, 20))
	}
	msg, _ := AppendPublishFrame(nil, topic, bytes.Repeat([]byte{7}, 300))
	dontWant, _ := AppendFrame(nil, &pb.RPC{Control: &pb.ControlMessage{Idontwant: []*pb.ControlIDontWant{{MessageIDs: ids[:1]}}}})
	have, _ := AppendFrame(nil, &pb.RPC{Control: &pb.ControlMessage{Ihave: []*pb.ControlIHave{{TopicID: proto.String(topic), MessageIDs: ids}}}})
	frames := [][]byte{msg, dontWant, have}
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range frames {
			if _, err := SplitFrame(f); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(frames)), "ns/frame")
}

// onlyRead hides a reader's ReadByte: readFrame then reads the prefix with io.ReadFull.
type onlyRead struct{ r io.Reader }

func (o onlyRead) Read(p []byte) (int, error) { return o.r.Read(p) }

// TestReadFrameByteReader: a reader with ReadByte (asked for each byte of the prefix) reads
// the same frames and fails with the same errors as one read with io.ReadFull, at every cut of
// a stream of frames and on a bad prefix and an oversized frame.
func TestReadFrameByteReader(t *testing.T) {
	f1, err := AppendPublishFrame(nil, "/eth2/8c9f62fe/beacon_attestation_3/ssz_snappy", bytes.Repeat([]byte{7}, 300))
	if err != nil {
		t.Fatal(err)
	}
	f2, _ := AppendPublishFrame(nil, "/eth2/8c9f62fe/beacon_block/ssz_snappy", bytes.Repeat([]byte{9}, 20000))
	stream := append(append([]byte{}, f1...), f2...)
	read := func(r io.Reader, maxBytes int) string {
		var out []string
		var hdr [binary.MaxVarintLen64]byte
		for {
			f, err := ReadPooledFrame(r, hdr[:], maxBytes)
			if err != nil {
				return strings.Join(append(out, err.Error()), " | ")
			}
			out = append(out, fmt.Sprintf("%d:%x", len(f), f[:min(len(f), 8)]))
		}
	}
	cases := [][]byte{bytes.Repeat([]byte{0xff}, 11), {0x80, 0x00}}
	for cut := 0; cut <= len(stream); cut++ {
		if cut < 400 || cut > len(stream)-4 || cut%97 == 0 {
			cases = append(cases, stream[:cut])
		}
	}
	for _, in := range cases {
		for _, maxBytes := range []int{1 << 20, 1000} {
			byByte := read(bytes.NewReader(in), maxBytes)
			byRead := read(onlyRead{bytes.NewReader(in)}, maxBytes)
			if byByte != byRead {
				t.Fatalf("%d bytes, bound %d: with ReadByte %q, with Read %q", len(in), maxBytes, byByte, byRead)
			}
		}
	}
	if got := read(bytes.NewReader(stream), 1<<20); !strings.HasSuffix(got, " | EOF") || strings.Count(got, "|") != 2 {
		t.Fatalf("the whole stream: %q", got)
	}
}
