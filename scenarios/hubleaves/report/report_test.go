package report

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
)

// liveRun builds the summaries of a small hub-leaves run: two publishers, a hub, a plain and a
// compressed leaf.
func liveRun() []*result.NodeSummary {
	pub := func(i int, n int64, d uint64) *result.NodeSummary {
		return &result.NodeSummary{Role: result.RolePublisher, Group: "publishers", Instance: i, PeerID: "P" + string(rune('0'+i)),
			TimeScale: 4, Slots: 1, Build: "optimized", Optimized: true,
			Parity:   &result.Parity{Messages: map[gossip.Category]int64{gossip.Attestation: n}, Digest: map[gossip.Category][2]uint64{gossip.Attestation: {d, d}}},
			Schedule: &result.Schedule{Messages: n, MaxLagNs: 20e6, MeanLagNs: 1e6, SlotNs: 3e9, ScheduledNs: 3e9, ElapsedNs: 2e9}}
	}
	leafStream := func(proto string, raw, wire, attRaw, attWire int64) result.StreamStats {
		return result.StreamStats{Peer: "H", Direction: "in", Protocol: proto, Frames: 10, RawBytes: raw, WireBytes: wire,
			Categories: map[gossip.Category]result.CategoryBytes{gossip.Attestation: {RawBytes: attRaw, WireBytes: attWire}, gossip.Control: {RawBytes: raw - attRaw, WireBytes: wire - attWire}},
			CodecStats: result.CodecStats{Units: 10, RawBytes: raw, TimeNs: 50_000}}
	}
	both := &result.Parity{Messages: map[gossip.Category]int64{gossip.Attestation: 7}, Digest: map[gossip.Category][2]uint64{gossip.Attestation: {3, 3}}}
	return []*result.NodeSummary{
		pub(0, 4, 1), pub(1, 3, 2),
		{Role: result.RoleHub, Group: "hub", PeerID: "H", Duration: 2, Build: "optimized", Optimized: true, Streams: []result.StreamStats{
			{Peer: "L0", Direction: "out", RawBytes: 1000, WireBytes: 1000},
			{Peer: "L1", Direction: "out", RawBytes: 1000, WireBytes: 400, CodecStats: result.CodecStats{Units: 10, RawBytes: 1000, TimeNs: 200_000}},
		}},
		{Role: result.RoleLeaf, Group: "leaf-0-plain", Codec: "plain", PeerID: "L0", Duration: 2, Parity: both,
			Streams: []result.StreamStats{leafStream("/meshsub/1.2.0", 1000, 1000, 900, 900)}},
		{Role: result.RoleLeaf, Group: "leaf-1-snappy-stream", Codec: "snappy-stream", PeerID: "L1", Duration: 2, Parity: both,
			Streams: []result.StreamStats{leafStream("/snappy-stream/meshsub/1.2.0", 1000, 400, 900, 360)}},
	}
}

func TestRunReport(t *testing.T) {
	r := BuildRunReport(liveRun())
	if !r.OK || !r.Parity.OK || !r.Schedule.KeptUp {
		t.Fatalf("report not OK: %v %q", r.Parity.Message, r.Problems)
	}
	if r.Parity.Published[gossip.Attestation] != 7 || len(r.Leaves) != 2 || r.Leaves[0].Codec != "plain" {
		t.Fatalf("published %v, leaves %+v", r.Parity.Published, r.Leaves)
	}
	c := r.Leaves[1]
	if c.RelativeToPlain == nil || math.Abs(*c.RelativeToPlain-40) > 1e-9 {
		t.Fatalf("relative %v", c.RelativeToPlain)
	}
	if rel := c.Categories[gossip.Attestation].RelativeToPlain; rel == nil || math.Abs(*rel-40) > 1e-9 {
		t.Fatalf("attestation relative %v", rel)
	}
	// Hub encode for L1: 200 µs over 10 blocks and 1000 bytes, over 2 s.
	if e := c.CPU.HubEncode; e.Blocks != 10 || math.Abs(e.USPerBlock-20) > 1e-9 || math.Abs(e.NsPerByte-200) > 1e-9 || math.Abs(e.CorePct-0.01) > 1e-9 {
		t.Fatalf("hub encode %+v", e)
	}
	if r.Schedule.Published != 7 || r.Schedule.MaxLagMs != 20 || r.Schedule.SlotMs != 3000 {
		t.Fatalf("schedule %+v", r.Schedule)
	}
	var buf bytes.Buffer
	if err := r.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(40.0 %)", "identical", "result: OK", "messages attestation"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestRunReportFailures(t *testing.T) {
	nodes := liveRun()
	nodes[4].Parity = &result.Parity{Messages: map[gossip.Category]int64{gossip.Attestation: 7}, Digest: map[gossip.Category][2]uint64{gossip.Attestation: {3, 4}}}
	r := BuildRunReport(nodes)
	if r.OK || r.Parity.OK || r.Parity.Leaves[0].OK == false || r.Parity.Leaves[1].OK {
		t.Fatalf("digest mismatch not caught: %+v", r.Parity)
	}
	if !strings.Contains(r.Parity.Message, "different message ids") {
		t.Errorf("message %q", r.Parity.Message)
	}

	nodes = liveRun()
	nodes[0].Schedule.MaxLagNs = 4e9 // over one 3 s slot
	nodes[2].Pubsub.DroppedRPCs = 5
	r = BuildRunReport(nodes)
	if r.OK || r.Schedule.KeptUp || r.Drops != 5 || !r.Parity.OK {
		t.Fatalf("lag and drops not caught: ok %v kept up %v drops %d", r.OK, r.Schedule.KeptUp, r.Drops)
	}
}

func TestLoadRun(t *testing.T) {
	dir := t.TempDir()
	for _, n := range liveRun() {
		d := filepath.Join(dir, n.Group, "0")
		if n.Role == result.RolePublisher {
			d = filepath.Join(dir, n.Group, string(rune('0'+n.Instance)))
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := result.WriteSummary(filepath.Join(d, result.SummaryFile), n); err != nil {
			t.Fatal(err)
		}
	}
	r, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Nodes) != 5 || !r.OK || r.Parity.Leaves[1].Codec != "snappy-stream" {
		t.Fatalf("loaded %d nodes, ok %v, %+v", len(r.Nodes), r.OK, r.Parity)
	}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"parity"`, `"leaves"`, `"hub"`, `"drops"`, `"schedule"`, `"max_lag_ms"`, `"attestation"`} {
		if !strings.Contains(buf.String(), key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
	if _, err := LoadRun(t.TempDir()); err == nil {
		t.Error("empty directory loaded")
	}
}
