package sim

import (
	"context"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/sim/node"
	"github.com/streamsim/streamsim/trace"
)

func runEmbedded(t *testing.T, leaves string, params map[string]string) (*analysis.RunReport, string) {
	t.Helper()
	specs, err := node.ParseCodecs(leaves)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	params[ParamPublishers] = "2"
	e := &Embedded{Out: dir, Groups: HubLeavesGroups(2, specs), Params: params}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runErr := e.Run(ctx)
	r, err := analysis.LoadRun(dir)
	if err != nil {
		t.Fatalf("load run: %v (run: %v)", err, runErr)
	}
	if runErr != nil {
		t.Fatalf("run: %v\nproblems: %q\ndrops %v", runErr, r.Problems, r.DropsBy)
	}
	return r, dir
}

// smallMeshParams are the 14-node test mesh's parameters (half the nodes on snappy-stream),
// with extra added or overriding.
func smallMeshParams(extra map[string]string) map[string]string {
	p := map[string]string{ParamTimeScale: "3", ParamValidators: "32768", ParamSeed: "3",
		ParamCodec: "snappy-stream", "compressed_share": "0.5", "observed_peers": "13", "degree": "5",
		"mix": "default:0.6,all-subnets:0.2,supernode:0.2"}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

// runMesh runs an embedded mesh of n nodes into dir and loads its report; the run's own
// error is the caller's to judge.
func runMesh(t *testing.T, dir string, n int, params map[string]string, timeout time.Duration) (*analysis.MeshReport, error) {
	t.Helper()
	e := &Embedded{Scenario: Mesh.Name, Out: dir, Groups: []Group{{ID: GroupNodes, Instances: n}}, Params: params}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	runErr := e.Run(ctx)
	r, err := analysis.LoadMeshRun(dir)
	if err != nil {
		t.Fatalf("load: %v (run: %v)", err, runErr)
	}
	return r, runErr
}

// Parity holds for every codec in both payload modes, and a compressed leaf's attestation
// wire bytes are below the plain leaf's.
func TestHubLeavesParity(t *testing.T) {
	for _, payload := range []string{gossip.PayloadSSZSnappy, gossip.PayloadSSZ} {
		t.Run(payload, func(t *testing.T) {
			record := strconv.FormatBool(payload == gossip.PayloadSSZ)
			r, dir := runEmbedded(t, "plain,snappy-stream,zstd", map[string]string{
				ParamProfile: "default", ParamSlots: "1", ParamTimeScale: "12", ParamPayload: payload, ParamSeed: "7",
				ParamValidators: "32768", ParamRecord: record,
			})
			// Timing depends on the machine's load; parity and drops do not.
			if !r.Parity.OK || r.Drops != 0 || r.Errors != 0 {
				t.Fatalf("run not OK: %v / %v", r.Parity.Message, r.Problems)
			}
			if len(r.Leaves) != 3 || r.Leaves[0].Codec != "plain" {
				t.Fatalf("leaves %+v", r.Leaves)
			}
			plain := r.Leaves[0]
			if plain.Messages[gossip.Attestation] == 0 {
				t.Fatal("no attestations delivered")
			}
			for _, l := range r.Leaves[1:] {
				pa, la := plain.Categories[gossip.Attestation].WireBytes, l.Categories[gossip.Attestation].WireBytes
				if la >= pa || la == 0 {
					t.Errorf("%s: attestation wire bytes %d, plain %d", l.Codec, la, pa)
				}
				if l.CPU.Decode.Blocks == 0 || l.CPU.HubEncode.Blocks == 0 {
					t.Errorf("%s: no codec work metered: %+v", l.Codec, l.CPU)
				}
			}
			if plain.WireBytes != plain.RawBytes {
				t.Errorf("plain leaf: wire %d != raw %d", plain.WireBytes, plain.RawBytes)
			}
			if record == "true" {
				checkRecording(t, dir, r, 1)
			}
			checkHubOutIsLeafIn(t, r)
			t.Logf("payload %s: plain %d B, %s %.1f %%, %s %.1f %%", payload, plain.WireBytes,
				r.Leaves[1].Codec, *r.Leaves[1].RelativeToPlain, r.Leaves[2].Codec, *r.Leaves[2].RelativeToPlain)
		})
	}
}

// checkRecording reads a leaf's frame trace and compares it with the leaf's meters.
func checkRecording(t *testing.T, dir string, r *analysis.RunReport, leaf int) {
	t.Helper()
	l := r.Leaves[leaf]
	tr, err := trace.Open(filepath.Join(dir, l.Group, "0", TraceFile))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	frames := map[string]int64{}
	var attestations int64
	for {
		f, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		st, ok := tr.Stream(f.Stream)
		if !ok {
			t.Fatalf("frame of undeclared stream %d", f.Stream)
		}
		frames[st.Direction]++
		if st.Direction == trace.DirectionIn {
			parts, err := gossip.SplitFrame(f.Data)
			if err != nil {
				t.Fatal(err)
			}
			attestations += int64(parts.Messages[gossip.Attestation])
			if st.Codec != l.Codec || st.Protocol != l.Protocol {
				t.Errorf("stream %+v, leaf codec %s protocol %s", st, l.Codec, l.Protocol)
			}
		}
	}
	var metered int64
	for _, n := range r.Nodes {
		if n.Group == l.Group {
			for _, s := range n.Streams {
				if s.Direction == "in" {
					metered += s.Frames
				}
			}
		}
	}
	if frames["in"] != metered || attestations != l.Messages[gossip.Attestation] {
		t.Errorf("trace: %d inbound frames with %d attestations; meters %d frames, %d attestations delivered",
			frames["in"], attestations, metered, l.Messages[gossip.Attestation])
	}
}

// checkMeshRecording holds the observed node's recording to its summary exactly: per peer and
// direction, frames, raw bytes per category, and control per kind (bytes, entries, ids), as
// an independent reader of the trace computes them.
func checkMeshRecording(t *testing.T, dir string, r *analysis.MeshReport) {
	t.Helper()
	o := r.Observed
	tr, err := trace.Open(filepath.Join(dir, o.Group, strconv.Itoa(o.Instance), TraceFile))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	rec, err := trace.TallyFrames(tr)
	if err != nil {
		t.Fatal(err)
	}
	var summary *result.NodeSummary
	for _, n := range r.Summaries() {
		if n.Group == o.Group && n.Instance == o.Instance {
			summary = n
		}
	}
	if summary == nil || len(summary.Streams) == 0 || len(rec) == 0 {
		t.Fatalf("observed node: summary %v, %d recorded stream directions", summary != nil, len(rec))
	}
	for _, d := range trace.CompareStreams(summary.Streams, rec) {
		t.Error(d)
	}
}

// One instance failing (here a leaf with a bad codec parameter) makes the run fail quickly
// with that instance's error instead of leaving the others waiting until their timeout.
func TestHubLeavesFailsFast(t *testing.T) {
	specs, _ := node.ParseCodecs("plain,snappy-stream")
	groups := HubLeavesGroups(2, specs)
	groups[3].Params[ParamCodec] = "snappy-stream:3KiB:turbo"
	e := &Embedded{
		Out: t.TempDir(), Groups: groups,
		Params: map[string]string{ParamProfile: "default", ParamSlots: "1", ParamTimeScale: "12", ParamValidators: "32768", ParamPublishers: "2"},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	err := e.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "turbo") {
		t.Fatalf("run error %v, want the leaf's codec error", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("failing took %v", d)
	}
}

// checkHubOutIsLeafIn: what the hub's meters say it sent to each leaf, per category, is what
// the leaf's meters say it received, byte for byte (codec readers report each unit's wire
// bytes, so inbound attribution does not depend on how the transport split reads).
func checkHubOutIsLeafIn(t *testing.T, r *analysis.RunReport) {
	t.Helper()
	var hub *result.NodeSummary
	for _, n := range r.Nodes {
		if n.Role == result.RoleHub {
			hub = n
		}
	}
	for _, leaf := range r.Nodes {
		if leaf.Role != result.RoleLeaf {
			continue
		}
		var out, in *result.StreamStats
		for i := range hub.Streams {
			if s := &hub.Streams[i]; s.Peer == leaf.PeerID && s.Direction == "out" {
				out = s
			}
		}
		for i := range leaf.Streams {
			if s := &leaf.Streams[i]; s.Peer == hub.PeerID && s.Direction == "in" {
				in = s
			}
		}
		if out == nil || in == nil {
			t.Fatalf("leaf %s: hub out %v, leaf in %v", leaf.Codec, out, in)
		}
		if out.WireBytes != in.WireBytes || out.RawBytes != in.RawBytes {
			t.Errorf("leaf %s: hub sent %d wire / %d raw bytes, leaf received %d / %d", leaf.Codec, out.WireBytes, out.RawBytes, in.WireBytes, in.RawBytes)
		}
		for c, ob := range out.Categories {
			if ib := in.Categories[c]; ib != ob {
				t.Errorf("leaf %s %s: hub sent %+v, leaf received %+v", leaf.Codec, c, ob, ib)
			}
		}
	}
}

// A small mesh (14 nodes, half of them offering snappy-stream, the rest plain) delivers every
// message of its topics to every node exactly once, with control traffic on the observed
// node's streams and message logs from which the report computes latency.
func TestMeshDeliversEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 14-node mesh")
	}
	dir := t.TempDir()
	r, runErr := runMesh(t, dir, 14, smallMeshParams(map[string]string{ParamSlots: "1", ParamRecord: "true"}), 3*time.Minute)
	if runErr != nil || !r.Delivery.Complete {
		t.Fatalf("run: %v; incomplete: %v; problems %v", runErr, r.Delivery.Incomplete, r.Problems)
	}
	checkMeshRecording(t, dir, r)
	if r.Nodes != 14 || r.Observed.Kind != "observed" || r.Delivery.Expected[gossip.Attestation] == 0 {
		t.Fatalf("report: %d nodes, observed %+v, expected %v", r.Nodes, r.Observed.Kind, r.Delivery.Expected)
	}
	if r.Observed.ControlIn["ihave"].IDs == 0 || r.Observed.ControlIn["graft"].Entries == 0 {
		t.Errorf("observed node's control in: %+v", r.Observed.ControlIn)
	}
	if l := r.Latency[gossip.Attestation]; l == nil || l.Deliveries == 0 || l.P50Ms <= 0 {
		t.Errorf("attestation latency %+v", l)
	}
	if r.Observed.Protocols[string(node.SnappyStreamProtocol)] == 0 || r.Observed.Protocols[string(node.PlainProtocol)] == 0 {
		t.Errorf("a half-compressed mesh should give the observed node both protocols: %v", r.Observed.Protocols)
	}
}

// With shaped links (regions 2–220 ms apart, 50 Mbit/s and 1 Gbit/s), the mesh still delivers
// everything, and delivery takes at least the latency between regions.
func TestMeshOverShapedLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 10-node mesh for a slot in real time")
	}
	r, runErr := runMesh(t, t.TempDir(), 10, map[string]string{ParamSlots: "1", ParamTimeScale: "1", ParamValidators: "32768", ParamSeed: "2",
		ParamCodec: "snappy-stream", "compressed_share": "1", "observed_peers": "9", "degree": "4",
		"mix": "default:0.5,all-subnets:0.25,supernode:0.25", ParamLinks: "true"}, 3*time.Minute)
	if runErr != nil || !r.Delivery.Complete {
		t.Fatalf("run: %v; incomplete: %v; problems %v", runErr, r.Delivery.Incomplete, r.Problems)
	}
	if !strings.Contains(r.Links, "fullnode at 50 Mbit/s") {
		t.Errorf("links %q", r.Links)
	}
	for _, n := range r.Summaries() {
		if n.Link == nil || n.Link.UpBytes == 0 || n.Link.DownBytes == 0 {
			t.Fatalf("node %s/%d link %+v", n.Group, n.Instance, n.Link)
		}
	}
	if l := r.Latency[gossip.Attestation]; l == nil || l.P50Ms < 2 {
		t.Errorf("attestation latency over shaped links %+v", l)
	}
	t.Logf("links: %s; attestation latency %+v", r.Links, r.Latency[gossip.Attestation])
}
