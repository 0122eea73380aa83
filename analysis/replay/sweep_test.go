package replay

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang/snappy"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/trace"
	"github.com/streamsim/streamsim/workload"
)

const testDigest = "8c9f62fe"

// testMessage is one published message of a test trace, kept with its raw SSZ.
type testMessage struct {
	at    time.Duration
	topic string
	raw   []byte
	frame []byte
}

// testTrace writes a small all-subnets-like trace: two inbound streams, every attestation
// and sync subnet, aggregates, blocks, all 128 columns, with shared structure inside a slot
// (so stream compression has something to find), and control frames (subscriptions, IHAVE,
// IWANT, IDONTWANT, GRAFT, PRUNE) naming wanted, unwanted and unknown topics and ids.
func testTrace(t testing.TB, dir string, slots int) (path string, msgs []testMessage, control [][]byte) {
	t.Helper()
	rng := rand.New(rand.NewSource(7))
	path = filepath.Join(dir, "test.trace")
	w, err := trace.Create(path, trace.Header{Version: trace.Version, Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for id := uint32(1); id <= 2; id++ {
		if err := w.AddStream(trace.Stream{ID: id, Node: "n", Peer: "p", Direction: trace.DirectionIn, Protocol: "/meshsub/1.2.0", Codec: "plain"}); err != nil {
			t.Fatal(err)
		}
	}
	random := func(n int) []byte {
		b := make([]byte, n)
		rng.Read(b)
		return b
	}
	var topics []string
	for s := range gossip.AttestationSubnets {
		topics = append(topics, gossip.AttestationTopic(s))
	}
	for s := range gossip.SyncCommitteeSubnets {
		topics = append(topics, gossip.SyncCommitteeTopic(s))
	}
	for c := range gossip.DataColumnSubnets {
		topics = append(topics, gossip.DataColumnTopic(c))
	}
	topics = append(topics, gossip.TopicBeaconBlock, gossip.TopicAggregateAndProof, gossip.TopicContribution)
	var ids []string
	write := func(at time.Duration, stream uint32, frame []byte) {
		parts, err := gossip.SplitFrame(frame)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteFrame(trace.Frame{At: at, Stream: stream, Category: parts.Dominant(), Data: frame}); err != nil {
			t.Fatal(err)
		}
	}
	for slot := range slots {
		shared := random(128) // AttestationData of the slot
		for i, name := range topics {
			topic := gossip.Topic(testDigest, name)
			var raw []byte
			switch gossip.NameCategory(name) {
			case gossip.Attestation, gossip.Aggregate:
				raw = append(append(random(16), shared...), random(96)...)
			case gossip.Block:
				raw = append(bytes.Repeat(shared[:64], 40), random(2000)...)
			case gossip.DataColumn:
				raw = random(2500)
			default:
				raw = append(append(random(8), shared[:32]...), random(104)...)
			}
			frame, err := gossip.AppendPublishFrame(nil, topic, snappy.Encode(nil, raw))
			if err != nil {
				t.Fatal(err)
			}
			at := time.Duration(slot)*12*time.Second + time.Duration(i)*10*time.Millisecond
			write(at, uint32(1+i%2), frame)
			m := &pb.Message{Topic: &topic, Data: snappy.Encode(nil, raw)}
			ids = append(ids, gossip.PubsubMsgID(m))
			msgs = append(msgs, testMessage{at: at, topic: topic, raw: raw, frame: frame})
		}
		// Control: one frame per kind, topics of every kind.
		att0, att9 := gossip.Topic(testDigest, gossip.AttestationTopic(0)), gossip.Topic(testDigest, gossip.AttestationTopic(9))
		yes := true
		ctl := []*pb.RPC{
			{Subscriptions: []*pb.RPC_SubOpts{{Subscribe: &yes, Topicid: &att0}, {Subscribe: &yes, Topicid: &att9}}},
			{Control: &pb.ControlMessage{Ihave: []*pb.ControlIHave{{TopicID: &att0, MessageIDs: ids[len(ids)-3:]}, {TopicID: &att9, MessageIDs: ids[:2]}}}},
			{Control: &pb.ControlMessage{Iwant: []*pb.ControlIWant{{MessageIDs: []string{ids[len(ids)-len(topics)], ids[len(ids)-len(topics)+9], "unknown-id-0123456789"}}}}},
			{Control: &pb.ControlMessage{Idontwant: []*pb.ControlIDontWant{{MessageIDs: []string{ids[len(ids)-len(topics)+9]}}}}},
			{Control: &pb.ControlMessage{Graft: []*pb.ControlGraft{{TopicID: &att9}}, Prune: []*pb.ControlPrune{{TopicID: &att0}}}},
		}
		for i, rpc := range ctl {
			frame, err := gossip.AppendFrame(nil, rpc)
			if err != nil {
				t.Fatal(err)
			}
			write(time.Duration(slot)*12*time.Second+time.Duration(5+i)*time.Second, 1, frame)
			control = append(control, frame)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, msgs, control
}

func findResult(t *testing.T, rep *Report, view, payload, config string) *Result {
	t.Helper()
	for i := range rep.Results {
		r := &rep.Results[i]
		if r.View == view && r.Payload == payload && r.Config == config {
			return r
		}
	}
	t.Fatalf("no result for %s/%s/%s", view, payload, config)
	return nil
}

func TestSweepPlainAndNone(t *testing.T) {
	path, msgs, control := testTrace(t, t.TempDir(), 3)
	rep, err := Sweep([]string{path}, Options{
		Grid:       mustGrid(t, "none,plain,snappy-stream:4KiB:fast,snappy-stream:64KiB:better,zstd:3:64KiB,zstd+dict:3:64KiB"),
		Profiles:   []string{"recorded"},
		TrainSplit: 0.3,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Evaluated part: frames at or after 30 % of the last frame's time.
	var last time.Duration
	for _, m := range msgs {
		last = max(last, m.at)
	}
	last = max(last, 2*12*time.Second+9*time.Second) // the last control frame
	split := time.Duration(0.3 * float64(last))
	var wantPlain, wantNone [gossip.NumCategories]int64
	for _, m := range msgs {
		if m.at < split {
			continue
		}
		c := gossip.TopicCategory(m.topic)
		wantPlain[c] += int64(len(m.frame))
		// Independently of AppendSSZFrame: the frame pubsub would write with raw SSZ.
		f, err := gossip.AppendPublishFrame(nil, m.topic, m.raw)
		if err != nil {
			t.Fatal(err)
		}
		wantNone[c] += int64(len(f))
	}
	for i, f := range control {
		if time.Duration(i/5)*12*time.Second+time.Duration(5+i%5)*time.Second >= split {
			wantPlain[gossip.Control] += int64(len(f))
			wantNone[gossip.Control] += int64(len(f))
		}
	}

	plain := findResult(t, rep, "recorded", "", "plain")
	none := findResult(t, rep, "recorded", gossip.PayloadSSZ, "none")
	for c := range gossip.NumCategories {
		if plain.PlainBytes[c] != wantPlain[c] {
			t.Errorf("%s: plain bytes %d, want %d", c, plain.PlainBytes[c], wantPlain[c])
		}
		if wantPlain[c] > 0 && plain.Relative[c] != 100 {
			t.Errorf("%s: plain is %v %%, want 100", c, plain.Relative[c])
		}
		if math.Abs(none.Bytes[c]-float64(wantNone[c])) > 1e-6 {
			t.Errorf("%s: none bytes %v, want the raw-payload frames' %d", c, none.Bytes[c], wantNone[c])
		}
	}
	if plain.RelativeTotal != 100 {
		t.Errorf("plain total %v %%, want 100", plain.RelativeTotal)
	}
	if none.Bytes[gossip.Block] <= float64(plain.PlainBytes[gossip.Block]) {
		t.Errorf("raw SSZ blocks (%v B) not larger than Snappy ones (%d B)", none.Bytes[gossip.Block], plain.PlainBytes[gossip.Block])
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		if !r.Verified {
			t.Errorf("%s/%s not verified", r.Config, r.Payload)
		}
		if r.PlainTotal != plain.PlainTotal {
			t.Errorf("%s/%s baseline %d, plain's %d", r.Config, r.Payload, r.PlainTotal, plain.PlainTotal)
		}
		var sum float64
		for _, b := range r.Bytes {
			sum += b
		}
		if math.Abs(sum-r.Total) > 1e-6*r.Total {
			t.Errorf("%s/%s categories add up to %v, total %v", r.Config, r.Payload, sum, r.Total)
		}
		if r.Config != "none" && r.Config != "plain" {
			// The attestations share 128 of 240 bytes within a slot: any history finds them.
			if r.Relative[gossip.Attestation] >= 90 {
				t.Errorf("%s/%s attestations at %.1f %%", r.Config, r.Payload, r.Relative[gossip.Attestation])
			}
			if r.EncoderStateBytes <= 0 || r.DecoderStateBytes <= 0 {
				t.Errorf("%s/%s state %d + %d", r.Config, r.Payload, r.EncoderStateBytes, r.DecoderStateBytes)
			}
		}
	}
	if d := findResult(t, rep, "recorded", gossip.PayloadSSZ, "zstd+dict:3:64KiB"); d.DictBytes == 0 {
		t.Error("no dictionary trained")
	}
	// 6 configurations: none and plain once, four codecs in two payload modes.
	if len(rep.Results) != 2+4*2 {
		t.Errorf("%d results, want 10", len(rep.Results))
	}
}

func mustGrid(t testing.TB, s string) []Config {
	t.Helper()
	g, err := ParseGrid(s)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestDefaultFilterKeepsProfileTopics(t *testing.T) {
	_, msgs, control := testTrace(t, t.TempDir(), 1)
	prof, err := workload.ParseProfile("default")
	if err != nil {
		t.Fatal(err)
	}
	topics := map[string]string{}
	for _, m := range msgs {
		if err := addMessageTopics(topics, map[string]string{}, m.frame); err != nil {
			t.Fatal(err)
		}
	}
	f := &TopicFilter{Wants: prof.Wants, Known: knownFor(topics, prof.Wants)}
	kept := map[string]bool{}
	for _, m := range msgs {
		out, ok, err := f.AppendFiltered(nil, m.frame)
		if err != nil {
			t.Fatal(err)
		}
		if ok != prof.Wants(m.topic) {
			t.Errorf("%s: kept %v", m.topic, ok)
		}
		if ok {
			if !bytes.Equal(out, m.frame) {
				t.Errorf("%s: kept frame changed", m.topic)
			}
			kept[m.topic] = true
		}
	}
	// The trace has every topic, so what is kept is exactly the profile's topics.
	var keptTopics []string
	for topic := range kept {
		keptTopics = append(keptTopics, topic)
	}
	slices.Sort(keptTopics)
	if want := prof.Topics(testDigest); !slices.Equal(keptTopics, want) {
		t.Errorf("kept topics %v,\nprofile's %v", keptTopics, want)
	}
	if len(keptTopics) != 2+4+3 {
		t.Errorf("kept %d topics, want 2 attestation subnets + 4 custody columns + 3 global", len(keptTopics))
	}

	att0 := gossip.Topic(testDigest, gossip.AttestationTopic(0))
	att9 := gossip.Topic(testDigest, gossip.AttestationTopic(9))
	if !prof.Wants(att0) || prof.Wants(att9) {
		t.Fatal("test assumes the default profile has subnet 0 and not 9")
	}
	got := make([]*pb.RPC, len(control))
	for i, frame := range control {
		out, ok, err := f.AppendFiltered(nil, frame)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			continue
		}
		size, n := binary.Uvarint(out)
		if int(size) != len(out)-n {
			t.Fatalf("control frame %d: length prefix %d for %d bytes", i, size, len(out)-n)
		}
		got[i] = &pb.RPC{}
		if err := proto.Unmarshal(out[n:], got[i]); err != nil {
			t.Fatal(err)
		}
	}
	subs := got[0].GetSubscriptions()
	if len(subs) != 1 || subs[0].GetTopicid() != att0 {
		t.Errorf("subscriptions %v, want only %s", subs, att0)
	}
	ihave := got[1].GetControl().GetIhave()
	if len(ihave) != 1 || ihave[0].GetTopicID() != att0 {
		t.Errorf("IHAVE %v, want only %s", ihave, att0)
	}
	// IWANT named a subnet-0 message (kept), a subnet-9 one (dropped) and an unknown id (kept).
	iwant := got[2].GetControl().GetIwant()
	if len(iwant) != 1 || len(iwant[0].MessageIDs) != 2 || iwant[0].MessageIDs[1] != "unknown-id-0123456789" {
		t.Errorf("IWANT %v", iwant)
	}
	// IDONTWANT named only a subnet-9 message: the frame is gone.
	if got[3] != nil {
		t.Errorf("IDONTWANT frame kept: %v", got[3])
	}
	ctl := got[4].GetControl()
	if len(ctl.GetGraft()) != 0 || len(ctl.GetPrune()) != 1 || ctl.Prune[0].GetTopicID() != att0 {
		t.Errorf("GRAFT/PRUNE %v", ctl)
	}
}

func TestSweepDefaultView(t *testing.T) {
	path, msgs, _ := testTrace(t, t.TempDir(), 2)
	prof, _ := workload.ParseProfile("default")
	rep, err := Sweep([]string{path}, Options{Grid: mustGrid(t, "plain"), Profiles: []string{"all-subnets", "default"}, TrainSplit: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	var want [gossip.NumCategories]int64
	for _, m := range msgs {
		if m.at >= time.Duration(0.25*float64(12*time.Second+9*time.Second)) && prof.Wants(m.topic) {
			want[gossip.TopicCategory(m.topic)]++
		}
	}
	v := rep.Views[1]
	if v.View != "default" {
		t.Fatalf("views %v", rep.Views)
	}
	for c := range gossip.Control {
		if v.Messages[c] != want[c] {
			t.Errorf("default view: %d %s messages, want %d", v.Messages[c], c, want[c])
		}
	}
	if all := rep.Views[0]; all.Bytes[gossip.DataColumn] <= v.Bytes[gossip.DataColumn] || all.Messages[gossip.DataColumn] != 2*v.Messages[gossip.DataColumn] {
		t.Errorf("all-subnets columns %d (%d B), default %d (%d B): want custody 8 vs 4", all.Messages[gossip.DataColumn],
			all.Bytes[gossip.DataColumn], v.Messages[gossip.DataColumn], v.Bytes[gossip.DataColumn])
	}
}

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct{ in, name string }{
		{"none", "none"},
		{"plain", "plain"},
		{"snappy-stream", "snappy-stream:64KiB:fast"},
		{"snappy-stream:1MiB", "snappy-stream:1MiB:fast"},
		{"snappy-stream:64KiB:better", "snappy-stream:64KiB:better"},
		{"zstd", "zstd:3:2MiB"},
		{"zstd+dict", "zstd+dict:3:2MiB"},
		{"zstd+dict:1:64KiB", "zstd+dict:1:64KiB"},
	} {
		c, err := ParseConfig(tc.in)
		if err != nil || c.Name != tc.name {
			t.Errorf("ParseConfig(%q) = %q, %v; want %q", tc.in, c.Name, err, tc.name)
		}
	}
	for _, bad := range []string{"gzip", "zstd+dict:2", "snappy-stream:3KiB:slow", ""} {
		if _, err := ParseConfig(bad); err == nil {
			t.Errorf("ParseConfig(%q) accepted", bad)
		}
	}
	if g := DefaultGrid(); len(g) != 10 {
		t.Errorf("default grid has %d entries, want 10", len(g))
	}
}

func TestSweepRejectsDictWithoutTraining(t *testing.T) {
	path, _, _ := testTrace(t, t.TempDir(), 1)
	_, err := Sweep([]string{path}, Options{Grid: mustGrid(t, "zstd+dict"), TrainSplit: 0})
	if err == nil {
		t.Fatal("dictionary without a training part accepted")
	}
	// The test trace has inbound streams only.
	if _, err := Sweep([]string{path}, Options{Grid: mustGrid(t, "plain"), Direction: "out"}); err == nil || !strings.Contains(err.Error(), "no out stream") {
		t.Errorf("outbound-only sweep of an inbound trace: %v", err)
	}
	rep, err := Sweep([]string{path}, Options{Grid: mustGrid(t, "plain"), Direction: "in", Profiles: []string{"recorded"}})
	if err != nil || rep.Views[0].Streams != 2 {
		t.Errorf("inbound sweep: %v", err)
	}
}

// TestReplayDetectsMismatch corrupts a frame between its encoding and the comparison: the
// decoded stream then differs from what the replay compares it with.
func TestReplayDetectsMismatch(t *testing.T) {
	path, _, _ := testTrace(t, t.TempDir(), 1)
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var frames []frameIn
	var plain TrafficSummary
	err = forFrames(r, func(f trace.Frame) error {
		s, _ := r.Stream(f.Stream)
		if s.Direction != trace.DirectionIn {
			return nil
		}
		parts, err := gossip.SplitFrame(f.Data)
		if err != nil {
			return err
		}
		frames = append(frames, frameIn{stream: "0/" + strconv.Itoa(int(f.Stream)), data: slices.Clone(f.Data), parts: parts.Bytes})
		for c, n := range parts.Bytes {
			plain.Bytes[c] += int64(n)
			plain.Total += int64(n)
		}
		return nil
	})
	r.Close()
	if err != nil || len(frames) < 2 {
		t.Fatalf("%d frames: %v", len(frames), err)
	}
	cfg := mustGrid(t, "snappy-stream:4KiB")[0]
	if _, err := replayFrames(cfg, gossip.PayloadSSZSnappy, frames, plain, nil); err != nil {
		t.Fatal(err)
	}
	corrupt := func(batch []frameIn) { batch[len(batch)/2].data[0] ^= 0xff }
	if _, err := replayFrames(cfg, gossip.PayloadSSZSnappy, frames, plain, corrupt); !errors.Is(err, ErrMismatch) {
		t.Fatalf("corrupted replay: %v, want ErrMismatch", err)
	}
}

func TestViewCoverage(t *testing.T) {
	all, _ := workload.ParseProfile("all-subnets")
	def, _ := workload.ParseProfile("default")
	super, _ := workload.ParseProfile("supernode")
	infos := func(profile string, custody int) []TraceInfo {
		return []TraceInfo{{Path: "x", Params: map[string]string{"profile": profile, "custody_columns": strconv.Itoa(custody)}}}
	}
	for _, tc := range []struct {
		recorded string
		custody  int
		view     workload.Profile
		notes    int
	}{
		{"all-subnets", 8, def, 0},
		{"all-subnets", 8, all, 0},
		{"default", 4, all, 1},
		{"all-subnets", 8, super, 1},   // 120 columns missing
		{"all-subnets", 128, super, 0}, // --custody 128
		{"supernode", 128, def, 0},
	} {
		if got := viewCoverage(infos(tc.recorded, tc.custody), tc.view); len(got) != tc.notes {
			t.Errorf("recorded %s (custody %d), view %s: notes %q", tc.recorded, tc.custody, tc.view.Name, got)
		}
	}
}

func TestAtProposalMix(t *testing.T) {
	r := Result{View: "all-subnets", Config: "snappy-stream:64KiB:fast"}
	for c := range gossip.Control {
		r.Relative[c], r.PlainBytes[c] = 50, 1
	}
	// docs/inputs.md §1: 3188 + 138 + 154 + 109 + 45 MiB/h at 50 %, control 1946 MiB/h at 93 %.
	want := math.Round((50*(3188+138+154+109+45)+93*1946)/(3188+138+154+109+45+1946.0)*10) / 10
	if got := atProposalMix(&r); got != want {
		t.Errorf("at proposal mix %v, want %v", got, want)
	}
	r.View = "default" // control 62 %
	want = math.Round((50*(107+138+154+109+7.5)+62*92)/(107+138+154+109+7.5+92)*10) / 10
	if got := atProposalMix(&r); got != want {
		t.Errorf("default at proposal mix %v, want %v", got, want)
	}
	r.PlainBytes[gossip.Block] = 0 // traffic without blocks cannot be reweighted
	if got := atProposalMix(&r); got != 0 {
		t.Errorf("without blocks: %v, want 0", got)
	}
	r.PlainBytes[gossip.Block], r.Config = 1, "snappy-stream:16KiB:fast" // nothing published
	if got := atProposalMix(&r); got != 0 {
		t.Errorf("unpublished configuration: %v, want 0", got)
	}
}

// A recorder's frame times are wall time: per hour figures are per simulated hour, the
// header's time scale times the trace's time (a workload trace's times are simulated).
func TestTimeScaleOf(t *testing.T) {
	for v, want := range map[string]float64{"0.2": 0.2, "8": 8, "": 1, "x": 1, "-1": 1} {
		if got := timeScaleOf(TraceInfo{Params: map[string]string{"time_scale": v}}); got != want {
			t.Errorf("time_scale %q: %g, want %g", v, got, want)
		}
	}
	if got := timeScaleOf(TraceInfo{}); got != 1 {
		t.Errorf("no header params: %g", got)
	}
}

// TestTopicStreamsLayout replays a recording of three topics and control, inbound and
// outbound, under both layouts and checks the topic streams' streams, frames and bytes
// against what the protobuf rules give, worked out here from the messages.
func TestTopicStreamsLayout(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "three.trace")
	w, err := trace.Create(path, trace.Header{Version: trace.Version, Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for id, d := range map[uint32]string{1: trace.DirectionIn, 2: trace.DirectionOut} {
		if err := w.AddStream(trace.Stream{ID: id, Node: "n", Peer: "p", Direction: d, Protocol: "/meshsub/1.2.0", Codec: "plain"}); err != nil {
			t.Fatal(err)
		}
	}
	topics := []string{gossip.Topic(testDigest, gossip.AttestationTopic(1)), gossip.Topic(testDigest, gossip.TopicBeaconBlock), gossip.Topic(testDigest, gossip.TopicAggregateAndProof)}
	rng := rand.New(rand.NewSource(3))
	var (
		wantPlain    int64 // one stream, as recorded
		wantTopic    int64 // topic streams
		wantFrames   int64
		dirPlain     [2]int64
		at           time.Duration
		skippedBytes int64
		opened       = map[string]bool{}
		frameSize    = func(body int) int64 { return int64(protowire.SizeVarint(uint64(body)) + body) }
		write        = func(stream uint32, frame []byte) {
			at += 10 * time.Millisecond
			if err := w.WriteFrame(trace.Frame{At: at, Stream: stream, Data: frame}); err != nil {
				t.Fatal(err)
			}
		}
	)
	yes := true
	for i := range 60 {
		stream := uint32(1 + i%2)
		var rpc pb.RPC
		// Two messages per RPC on two topics, a control entry every third RPC.
		for k := range 2 {
			topic := topics[(i+k)%3]
			data := make([]byte, 100+rng.Intn(200))
			rng.Read(data[:20])
			rpc.Publish = append(rpc.Publish, &pb.Message{Data: data, Topic: &topic, Seqno: []byte{byte(i)}})
			scoped := proto.Size(&pb.Message{Data: data, Seqno: []byte{byte(i)}})
			wantTopic += frameSize(protowire.SizeTag(1) + protowire.SizeBytes(scoped))
			wantFrames++
			if name := strconv.Itoa(int(stream)) + topic; !opened[name] {
				opened[name] = true
				wantTopic += frameSize(protowire.SizeTag(1) + protowire.SizeBytes(len(topic)))
				wantFrames++
			}
		}
		if i%3 == 0 {
			rpc.Subscriptions = []*pb.RPC_SubOpts{{Subscribe: &yes, Topicid: &topics[i%3]}}
			rest, err := gossip.AppendFrame(nil, &pb.RPC{Subscriptions: rpc.Subscriptions})
			if err != nil {
				t.Fatal(err)
			}
			wantTopic += int64(len(rest))
			wantFrames++
		}
		frame, err := gossip.AppendFrame(nil, &rpc)
		if err != nil {
			t.Fatal(err)
		}
		wantPlain += int64(len(frame))
		dirPlain[i%2] += int64(len(frame))
		write(stream, frame)
	}
	// A message with no topic cannot go on a topic stream: the frame is left out of both
	// layouts and counted.
	bad, _ := gossip.AppendFrame(nil, &pb.RPC{Publish: []*pb.Message{{Data: []byte("orphan")}}})
	// A frame cut short: its length prefix says more than it holds.
	cut, _ := gossip.AppendFrame(nil, &pb.RPC{Publish: []*pb.Message{{Data: []byte("cut"), Topic: &topics[0]}}})
	cut = cut[:len(cut)-2]
	skippedBytes = int64(len(bad) + len(cut))
	write(1, bad)
	write(2, cut)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	rep, err := Sweep([]string{path}, Options{
		Grid:     mustGrid(t, "plain,snappy-stream:64KiB:fast"),
		Profiles: []string{"recorded"}, Payloads: []string{gossip.PayloadSSZSnappy},
		Layouts: []string{LayoutOneStream, LayoutTopicStreams},
	})
	if err != nil {
		t.Fatal(err)
	}
	v := rep.Views[0]
	if v.Total != wantPlain || v.DirTotal != dirPlain {
		t.Errorf("baseline %d bytes (%v by direction), want %d (%v)", v.Total, v.DirTotal, wantPlain, dirPlain)
	}
	if v.Skipped.Frames != 2 || v.Skipped.Bytes != skippedBytes || len(v.Skipped.First) != 2 ||
		!strings.Contains(v.Skipped.First[0], "frame #61") || !strings.Contains(v.Skipped.First[0], "no topic") ||
		!strings.Contains(v.Skipped.First[1], "frame #62") || !strings.Contains(v.Skipped.First[1], "length prefix") {
		t.Errorf("skipped %+v, want frames #61 (no topic) and #62 (cut short), %d bytes", v.Skipped, skippedBytes)
	}
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "2 frame(s)") {
		t.Errorf("notes %q, want one about the two frames left out", rep.Notes)
	}
	find := func(layout, config string) *Result {
		for i := range rep.Results {
			if r := &rep.Results[i]; r.Layout == layout && r.Config == config {
				return r
			}
		}
		t.Fatalf("no %s result for %s", layout, config)
		return nil
	}
	one, ts := find(LayoutOneStream, "plain"), find(LayoutTopicStreams, "plain")
	if one.Total != float64(wantPlain) || one.Streams != 2 || one.Frames != 60 {
		t.Errorf("one stream: %v bytes, %d streams, %d frames; want %d, 2, 60", one.Total, one.Streams, one.Frames, wantPlain)
	}
	// Each direction: a control stream and three topic streams.
	if math.Abs(ts.Total-float64(wantTopic)) > 1e-6 || ts.Streams != 8 || ts.Frames != wantFrames {
		t.Errorf("topic streams: %v bytes, %d streams, %d frames; want %d, 8, %d", ts.Total, ts.Streams, ts.Frames, wantTopic, wantFrames)
	}
	if want := 100 * float64(wantTopic) / float64(wantPlain); math.Abs(ts.RelativeTotal-want) > 1e-9 || ts.RelativeTotal >= 100 {
		t.Errorf("topic streams plain at %v %% of today, want %v %% (< 100: no topic per message)", ts.RelativeTotal, want)
	}
	if d := ts.DirTotal[0] + ts.DirTotal[1]; math.Abs(d-ts.Total) > 1e-6 {
		t.Errorf("directions add up to %v, total %v", d, ts.Total)
	}
	t.Logf("plain %v, topic streams %v (%.1f %%), frames %d, streams %d", one.Total, ts.Total, ts.RelativeTotal, ts.Frames, ts.Streams)
	snappy := find(LayoutTopicStreams, "snappy-stream:64KiB:fast")
	if !snappy.Verified || snappy.Streams != 8 {
		t.Errorf("snappy-stream under topic streams: verified %v, %d streams", snappy.Verified, snappy.Streams)
	}
	m := snappy.Memory
	if m.Streams != 8 || m.Peers != 1 || m.Nodes != 1 || m.MaxStreamsPerPeer != 8 {
		t.Errorf("memory %+v: want 8 streams, 1 peer, 1 node, 8 streams for the peer", m)
	}
	if m.MeanNodeEncoderBytes <= 0 || m.MeanNodeDecoderBytes <= 0 || m.PeakNodeBytes < int64(m.MeanNodeEncoderBytes+m.MeanNodeDecoderBytes) {
		t.Errorf("memory %+v: the node holds encoders and decoders, its peak at least its end", m)
	}
	// Every stream carries less than the 64 KiB window: the history in use is every byte
	// replayed, the node holding the inbound streams' decoders and the outbound ones' encoders.
	if m.MeanNodeHistoryBytes != float64(snappy.InputBytes) {
		t.Errorf("history in use %v, want the %d bytes replayed", m.MeanNodeHistoryBytes, snappy.InputBytes)
	}
	if om := find(LayoutOneStream, "snappy-stream:64KiB:fast").Memory; om.Streams != 2 || om.MaxPeerBytes >= m.MaxPeerBytes {
		t.Errorf("one stream memory %+v: want 2 streams holding less than 8 (%d B)", om, m.MaxPeerBytes)
	}
	var md strings.Builder
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	row := fmt.Sprintf("| plain | ssz_snappy | topic-streams | %.1f %% |", ts.RelativeTotal)
	for _, want := range []string{"Stream layouts, view `recorded`", row, "| snappy-stream:64KiB:fast | ssz_snappy | topic-streams | 8 | 1 | 8 |", "Left out (cannot be read, or laid out as topic streams): 2 frames"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}
