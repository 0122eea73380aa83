package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
)

// manyLeavesRun is a hub-leaves run of two publishers, a hub, a plain leaf and n leaves of
// snappy-stream in one group (--leaves plain,snappy-stream*n). The hub's encoder for
// snappy-stream leaf i holds 300 000 + i bytes, its decoder 70 000; plain streams hold none.
func manyLeavesRun(n int) []*result.NodeSummary {
	att := gossip.Attestation
	parity := func() *result.Parity {
		return &result.Parity{Messages: map[gossip.Category]int64{att: 5}, Digest: map[gossip.Category][2]uint64{att: {2, 2}}}
	}
	hub := &result.NodeSummary{Role: result.RoleHub, Group: "hub", PeerID: "H", Duration: 2, Build: "optimized", Optimized: true}
	nodes := []*result.NodeSummary{hub}
	for i := range 2 {
		id := fmt.Sprintf("P%d", i)
		nodes = append(nodes, &result.NodeSummary{Role: result.RolePublisher, Group: "publishers", Instance: i, PeerID: id, TimeScale: 1, Slots: 1,
			Build: "optimized", Optimized: true, Parity: &result.Parity{Messages: map[gossip.Category]int64{att: int64(2 + i)}, Digest: map[gossip.Category][2]uint64{att: {1, 1}}},
			Schedule: &result.Schedule{Messages: int64(2 + i), SlotNs: 12e9, ScheduledNs: 12e9, ElapsedNs: 12e9}})
		hub.Streams = append(hub.Streams, result.StreamStats{Peer: id, Direction: "in", Codec: "plain", RawBytes: 100, WireBytes: 100})
	}
	leaf := func(group string, i int, codec, id string, wire int64) {
		nodes = append(nodes, &result.NodeSummary{Role: result.RoleLeaf, Group: group, Instance: i, Codec: codec, PeerID: id, Duration: 2, Parity: parity(),
			Streams: []result.StreamStats{{Peer: "H", Direction: "in", Codec: codec, Protocol: "/" + codec, Frames: 5, RawBytes: 1000, WireBytes: wire,
				Categories: map[gossip.Category]result.CategoryBytes{att: {RawBytes: 1000, WireBytes: wire}}}}})
	}
	leaf("leaf-0-plain", 0, "plain", "LP", 1000)
	hub.Streams = append(hub.Streams, result.StreamStats{Peer: "LP", Direction: "out", Codec: "plain", RawBytes: 1000, WireBytes: 1000})
	for i := range n {
		id := fmt.Sprintf("L%03d", i)
		leaf("leaf-1-snappy-stream", i, "snappy-stream", id, 400)
		hub.Streams = append(hub.Streams,
			result.StreamStats{Peer: id, Direction: "out", Codec: "snappy-stream", RawBytes: 1000, WireBytes: 400, CodecStats: result.CodecStats{Units: 5, RawBytes: 1000, StateBytes: 300_000 + int64(i)}},
			result.StreamStats{Peer: id, Direction: "in", Codec: "snappy-stream", RawBytes: 50, WireBytes: 40, CodecStats: result.CodecStats{Units: 1, RawBytes: 50, StateBytes: 70_000}})
	}
	return nodes
}

// The hub's codec state is summed per codec over its peers, with the state of its first 50,
// 100 and 200 peers where it had that many; a run with fewer has none of them.
func TestHubMemory(t *testing.T) {
	sum := func(n int) int64 { // n snappy-stream peers: encoders 300 000 + i, decoders 70 000
		return int64(n)*370_000 + int64(n*(n-1)/2)
	}
	r := BuildRunReport(manyLeavesRun(200))
	if !r.OK {
		t.Fatalf("problems %q", r.Problems)
	}
	if len(r.HubMemory) != 2 || r.HubMemory[0].Codec != "plain" || r.HubMemory[1].Codec != "snappy-stream" {
		t.Fatalf("hub memory %+v: want plain, then snappy-stream", r.HubMemory)
	}
	if p := r.HubMemory[0]; p.Peers != 3 || p.Bytes != 0 || len(p.PerNode) != 0 {
		t.Errorf("plain %+v: want its 3 peers (2 publishers, the plain leaf) and no state", p)
	}
	m := r.HubMemory[1]
	if m.Peers != 200 || m.EncoderBytes != 200*300_000+199*100 || m.DecoderBytes != 200*70_000 || m.Bytes != sum(200) || m.BytesPerPeer != float64(sum(200))/200 {
		t.Errorf("snappy-stream %+v", m)
	}
	want := []PeersMemory{{50, sum(50)}, {100, sum(100)}, {200, sum(200)}}
	if fmt.Sprint(m.PerNode) != fmt.Sprint(want) {
		t.Errorf("per node %v, want %v (the first n leaves in run order)", m.PerNode, want)
	}
	var buf bytes.Buffer
	if err := r.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, s := range []string{"leaf group leaf-1-snappy-stream: 200 leaves of snappy-stream, its first shown; parity OK at 200 of 200", "hub codec memory",
		"snappy-stream    200"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
	if header := strings.SplitN(out, "\n", 4)[2]; strings.Count(header, "snappy-stream") != 1 {
		t.Errorf("the table's header %q: want one column per leaf group", header)
	}

	r = BuildRunReport(manyLeavesRun(8))
	if m := r.HubMemory[1]; m.Peers != 8 || m.Bytes != sum(8) || len(m.PerNode) != 0 {
		t.Errorf("8 leaves: %+v, want 8 peers and no state at 50, 100 or 200", m)
	}
}

// A group's leaves that miss the same messages are named once.
func TestParityGroupsLeaves(t *testing.T) {
	nodes := manyLeavesRun(200)
	for _, n := range nodes {
		if n.Role == result.RoleLeaf && n.Codec == "snappy-stream" {
			n.Parity.Messages[gossip.Attestation] = 4
		}
	}
	r := BuildRunReport(nodes)
	if r.Parity.OK || !strings.Contains(r.Parity.Message, "snappy-stream (leaf-1-snappy-stream/0 to /199, 200 leaves): ") || strings.Contains(r.Parity.Message, "/17)") {
		t.Errorf("parity message %q", r.Parity.Message)
	}
}
