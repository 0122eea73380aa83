package mesh_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsim/streamsim/internal/longtest"
	"github.com/streamsim/streamsim/scenarios/mesh"
	"github.com/streamsim/streamsim/scenarios/mesh/report"

	"github.com/streamsim/streamsim/sim/network/bubble"
	"github.com/streamsim/streamsim/sim/runner"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/sim/node"
	"github.com/streamsim/streamsim/trace"
)

// smallMeshParams are the 14-node test mesh's parameters (half the nodes on snappy-stream),
// with extra added or overriding.
func smallMeshParams(extra map[string]string) map[string]string {
	p := map[string]string{runner.ParamTimeScale: "3", runner.ParamValidators: "32768", runner.ParamSeed: "3",
		runner.ParamCodec: "snappy-stream", "compressed_share": "0.5", "observed_peers": "13", "degree": "5",
		"mix": "default:0.6,all-subnets:0.2,supernode:0.2"}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

// runMesh runs an embedded mesh of n nodes into dir and loads its report; the run's own
// error is the caller's to judge.
func runMesh(t *testing.T, dir string, n int, params map[string]string, timeout time.Duration) (*report.MeshReport, error) {
	t.Helper()
	e := &runner.Embedded{Scenario: mesh.Mesh.Name, Out: dir, Groups: []runner.Group{{ID: mesh.GroupNodes, Instances: n}}, Params: params}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	runErr := e.Run(ctx)
	r, err := report.LoadMeshRun(dir)
	if err != nil {
		t.Fatalf("load: %v (run: %v)", err, runErr)
	}
	return r, runErr
}

// checkMeshRecording holds the observed node's recording to its summary exactly: per peer and
// direction, frames, raw bytes per category, and control per kind (bytes, entries, ids), as
// an independent reader of the trace computes them.
func checkMeshRecording(t *testing.T, dir string, r *report.MeshReport) {
	t.Helper()
	o := r.Observed
	tr, err := trace.Open(filepath.Join(dir, o.Group, strconv.Itoa(o.Instance), runner.TraceFile))
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

// A small mesh (14 nodes, half of them offering snappy-stream, the rest plain) delivers every
// message of its topics to every node exactly once, with control traffic on the observed
// node's streams and message logs from which the report computes latency.
func TestMeshDeliversEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 14-node mesh")
	}
	dir := t.TempDir()
	r, runErr := runMesh(t, dir, 14, smallMeshParams(map[string]string{runner.ParamSlots: "1", runner.ParamRecord: "true"}), 3*time.Minute)
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
	longtest.Skip(t, "a mesh over shaped links on the real clock")
	if testing.Short() {
		t.Skip("runs a 10-node mesh for a slot in real time")
	}
	r, runErr := runMesh(t, t.TempDir(), 10, map[string]string{runner.ParamSlots: "1", runner.ParamTimeScale: "1", runner.ParamValidators: "32768", runner.ParamSeed: "2",
		runner.ParamCodec: "snappy-stream", "compressed_share": "1", "observed_peers": "9", "degree": "4",
		"mix": "default:0.5,all-subnets:0.25,supernode:0.25", mesh.ParamLinks: "true"}, 3*time.Minute)
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

// The tests' embedded runs on the virtual clock enter their bubble as streamsim run does, from
// inside the test binary.
func init() { runner.DefaultBubble = bubble.RunFromTest }
