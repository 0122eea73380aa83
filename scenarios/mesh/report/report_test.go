package report

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/analysis"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
)

func meshSummary(kind string, pid int, inAtt int64, delivered, dups int64, expected, got int64) *result.NodeSummary {
	att := gossip.Attestation
	return &result.NodeSummary{
		Scenario: "mesh", Role: result.RoleNode, Group: "nodes", Kind: kind, Slots: 300, TimeScale: 1, Build: "optimized", Optimized: true,
		Streams: []result.StreamStats{{Peer: "p", Direction: "in", Protocol: "/meshsub/1.2.0",
			Categories: map[gossip.Category]result.CategoryBytes{att: {RawBytes: inAtt, WireBytes: inAtt / 2}},
			Control:    map[string]result.ControlBytes{"ihave": {RawBytes: 100, WireBytes: 90, Entries: 2, IDs: 7}}}},
		Pubsub: result.Pubsub{DeliveredBy: map[gossip.Category]int64{att: delivered}, DuplicatesBy: map[gossip.Category]int64{att: dups},
			MeshPeers: map[string]int{gossip.Topic("8c9f62fe", gossip.AttestationTopic(1)): 4}},
		Expected: &result.Parity{Messages: map[gossip.Category]int64{att: expected}, Digest: map[gossip.Category][2]uint64{att: {1, 2}}},
		Parity:   &result.Parity{Messages: map[gossip.Category]int64{att: got}, Digest: map[gossip.Category][2]uint64{att: {1, 2}}},
		Process:  &result.Process{Host: "h", PID: pid, CPUSeconds: 10, WallSeconds: 100, Cores: 2},
	}
}

func TestMeshReport(t *testing.T) {
	// 300 slots = one hour: 3188 MiB of attestations inbound is the recording's rate.
	obs := meshSummary("observed", 1, 3188<<20, 100, 60, 100, 100)
	other := meshSummary("default", 2, 10<<20, 50, 50, 50, 49)
	r := BuildMeshReport([]*result.NodeSummary{obs, other})
	if r.OK || r.Delivery.Complete || len(r.Delivery.Incomplete) != 1 || !strings.Contains(r.Delivery.Incomplete[0], "attestation 49 messages, published 50") {
		t.Fatalf("incomplete node not reported: ok %v, %v", r.OK, r.Delivery.Incomplete)
	}
	var cal *CalibrationRow
	for i := range r.Calibration {
		if r.Calibration[i].Category == gossip.Attestation {
			cal = &r.Calibration[i]
		}
	}
	if cal == nil || math.Abs(cal.RawMiBh-3188) > 0.01 || math.Abs(cal.WireMiBh-1594) > 0.01 || !cal.WithinTolerance {
		t.Fatalf("calibration %+v", cal)
	}
	if r.Copies[gossip.Attestation] != 1.6 || r.CopiesAll[gossip.Attestation] != 260.0/150 {
		t.Fatalf("copies %v / %v", r.Copies, r.CopiesAll)
	}
	if r.Observed.ControlIn["ihave"].IDs != 7 {
		t.Fatalf("control %+v", r.Observed.ControlIn)
	}
	// Every control kind is there, zero included: iwant was never counted.
	for _, k := range gossip.ControlKinds() {
		if _, ok := r.Observed.ControlIn[k.String()]; !ok {
			t.Errorf("control_in has no %s (a kind none was counted of is a measured zero)", k)
		}
	}
	// Copies per delivered message by node kind: each kind's (delivered + duplicates) over
	// delivered.
	for _, k := range r.Kinds {
		want := map[string]float64{"observed": 1.6, "default": 2}[k.Kind]
		if got := k.Copies[gossip.Attestation]; got != want {
			t.Errorf("kind %s: copies %v, want %v", k.Kind, got, want)
		}
	}
	// The observed node's attestations at the recording's rate are not flagged (its other
	// categories, absent here, are); at a tenth of the recording they flag the run.
	for _, f := range r.Flags {
		if f.Kind == analysis.FlagCalibration && strings.Contains(f.Reason, "attestation") {
			t.Errorf("flagged %q with the observed node at the recording's rate", f.Reason)
		}
	}
	low := BuildMeshReport([]*result.NodeSummary{meshSummary("observed", 1, 318<<20, 100, 60, 100, 100)})
	flagged := false
	for _, f := range low.Flags {
		flagged = flagged || (f.Kind == analysis.FlagCalibration && strings.Contains(f.Reason, "attestation"))
	}
	if !flagged {
		t.Errorf("an observed node at a tenth of the recording's attestations is not flagged outside calibration: %+v", low.Flags)
	}
	// 7 IHAVE ids offered to the observed node over the 100 messages it received.
	if r.IHaveIDsPerMessage != 0.07 {
		t.Errorf("IHAVE ids per message %v, want 0.07", r.IHaveIDsPerMessage)
	}
	// Two OS processes (local:exec): their CPU adds up, over both hosts' cores; 300 slots
	// are 60 simulated minutes.
	if r.Process.CPUSeconds != 20 || r.Process.Cores != 2 || r.Process.Utilization != 0.1 || math.Abs(r.CPUPerSimMinute-20.0/60) > 1e-12 {
		t.Fatalf("process %+v, %v CPU-s per simulated minute", r.Process, r.CPUPerSimMinute)
	}
	// The cost per simulated minute is stated: wall as well as CPU, and the peak memory.
	var table strings.Builder
	if err := r.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("cost per simulated minute: %.1f s of wall, %.1f CPU s; peak memory", r.WallPerSimMinute, r.CPUPerSimMinute); r.WallPerSimMinute <= 0 || !strings.Contains(table.String(), want) {
		t.Errorf("wall %v s per simulated minute; the table does not say %q", r.WallPerSimMinute, want)
	}
	// On the virtual clock a simulated minute is the simulated time the phase took.
	obs.Process.SimulatedSeconds, other.Process.SimulatedSeconds = 1800, 1800
	if r := BuildMeshReport([]*result.NodeSummary{obs, other}); math.Abs(r.CPUPerSimMinute-20.0/30) > 1e-12 {
		t.Errorf("virtual: %v CPU-s per simulated minute, want %v (20 CPU s over 30 simulated minutes)", r.CPUPerSimMinute, 20.0/30)
	}
	obs.Process.SimulatedSeconds, other.Process.SimulatedSeconds = 0, 0
	// One shared process (embedded): counted once.
	other.Process.PID = 1
	if r := BuildMeshReport([]*result.NodeSummary{obs, other}); r.Process.CPUSeconds != 10 {
		t.Fatalf("shared process counted %v CPU-s", r.Process.CPUSeconds)
	}
}

func TestMeshLatency(t *testing.T) {
	dir := t.TempDir()
	topic := gossip.Topic("8c9f62fe", gossip.AttestationTopic(1))
	write := func(name string, f func(l *result.MessageLog)) string {
		l, err := result.CreateMessageLog(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		f(l)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, name)
	}
	id := strings.Repeat("a", 20)
	// Node 0 publishes at 1 s (and delivers to itself: not a latency); nodes 1 and 2 get it
	// 10 and 30 ms later.
	logs := []string{
		write("0", func(l *result.MessageLog) { l.Add(id, 1e9, true, topic); l.Add(id, 1e9, false, "") }),
		write("1", func(l *result.MessageLog) { l.Add(id, 1e9+10e6, false, "") }),
		write("2", func(l *result.MessageLog) { l.Add(id, 1e9+30e6, false, "") }),
	}
	r := &MeshReport{Latency: map[gossip.Category]*Latency{}}
	for i, region := range []string{"europe", "europe", "asia"} {
		n := &result.NodeSummary{Topics: []string{topic}}
		if i > 0 {
			n.Link = &result.Link{Region: region}
		}
		r.nodes = append(r.nodes, n)
	}
	if err := r.latency(logs); err != nil {
		t.Fatal(err)
	}
	l := r.Latency[gossip.Attestation]
	if l == nil || l.Deliveries != 2 || l.P50Ms != 10 || l.MaxMs != 30 || l.T95MaxMs != 30 {
		t.Fatalf("latency %+v", l)
	}
	// The CDF the page draws: 0..100 % every CDFStepPct, from the same two deliveries.
	if len(l.CDFMs) != 100/CDFStepPct+1 || l.CDFMs[0] != 10 || l.CDFMs[25] != 10 || l.CDFMs[26] != 30 || l.CDFMs[50] != 30 {
		t.Errorf("cdf %v", l.CDFMs)
	}
	// Per receiving node's region.
	eu, asia := r.LatencyByRegion["europe"][gossip.Attestation], r.LatencyByRegion["asia"][gossip.Attestation]
	if eu == nil || asia == nil || eu.Deliveries != 1 || eu.P99Ms != 10 || asia.Deliveries != 1 || asia.P50Ms != 30 {
		t.Errorf("by region %+v %+v", eu, asia)
	}
}

// The A/B comparison puts each codec against plain in the same seed's run and gives the
// mean and range over seeds, per category and in total, for the observed node and all nodes.
func TestMeshAB(t *testing.T) {
	att := gossip.Attestation
	// Raw bytes differ between a seed's runs (gossip's randomness): % of plain moves with
	// them, % of the run's own raw bytes does not.
	report := func(obsWire, obsRaw, allWire int64) *MeshReport {
		return &MeshReport{Verdict: analysis.Verdict{Checks: analysis.Checks{OK: true}},
			Observed: MeshNode{In: map[gossip.Category]result.CategoryBytes{att: {WireBytes: obsWire, RawBytes: obsRaw}}},
			Kinds:    []MeshKind{{In: map[gossip.Category]result.CategoryBytes{att: {WireBytes: allWire, RawBytes: 2 * allWire}}}}}
	}
	runs := []analysis.ABRun{{Seed: 1, Codec: "plain"}, {Seed: 1, Codec: "snappy-stream"}, {Seed: 2, Codec: "plain"}, {Seed: 2, Codec: "snappy-stream"}}
	ab := MeshAB(runs, []*MeshReport{report(1000, 1000, 10000), report(400, 800, 5000), report(2000, 2000, 10000), report(1000, 1600, 6000)})
	var obs, all *ABRow
	for i := range ab.Rows {
		r := &ab.Rows[i]
		if r.Codec == "snappy-stream" && r.Category == "total" && r.Scope == "observed in" {
			obs = r
		}
		if r.Codec == "snappy-stream" && r.Category == "attestation" && r.Scope == "all nodes in" {
			all = r
		}
	}
	if obs == nil || obs.Seeds != 2 || obs.Mean != 45 || obs.Min != 40 || obs.Max != 50 {
		t.Fatalf("observed total row %+v", obs)
	}
	if obs.OfRaw == nil || *obs.OfRaw != (analysis.Spread{Mean: 56.25, Min: 50, Max: 62.5}) {
		t.Fatalf("observed total, %% of raw: %+v", obs.OfRaw)
	}
	if all == nil || all.Mean != 55 || all.Min != 50 || all.Max != 60 || all.OfRaw == nil || all.OfRaw.Mean != 50 {
		t.Fatalf("all-nodes attestation row %+v", all)
	}
	if !ab.OK {
		t.Fatal("all runs were OK")
	}
}

// Latency differences are taken against plain in the same seed and link setting: a seed
// whose baseline failed compares nothing, and a saturated run marks its row.
func TestMeshABLatencyDiff(t *testing.T) {
	att := gossip.Attestation
	report := func(ok bool, p50, p99 float64, saturated bool) *MeshReport {
		r := &MeshReport{Verdict: analysis.Verdict{Checks: analysis.Checks{OK: ok}}, Latency: map[gossip.Category]*Latency{att: {P50Ms: p50, P99Ms: p99}}}
		if saturated {
			r.Process = &result.Process{SchedP99Ms: result.SchedDelayLimitMs}
		}
		return r
	}
	runs := []analysis.ABRun{
		{Seed: 1, Codec: "plain", Bandwidth: "10Mbit"}, {Seed: 1, Codec: "zstd", Bandwidth: "10Mbit"},
		{Seed: 2, Codec: "plain", Bandwidth: "10Mbit"}, {Seed: 2, Codec: "zstd", Bandwidth: "10Mbit"},
		{Seed: 3, Codec: "plain", Bandwidth: "10Mbit"}, {Seed: 3, Codec: "zstd", Bandwidth: "10Mbit"}, // baseline failed
		{Seed: 1, Codec: "plain", Bandwidth: "50Mbit"}, {Seed: 1, Codec: "zstd", Bandwidth: "50Mbit"},
	}
	ab := MeshAB(runs, []*MeshReport{
		report(true, 500, 3000, false), report(true, 400, 2000, false),
		report(true, 600, 3200, false), report(true, 700, 2000, false),
		report(false, 100, 100, false), report(true, 9000, 9000, false),
		report(true, 100, 1000, false), report(true, 150, 1100, true),
	})
	if len(ab.LatencyDiff) != 2 {
		t.Fatalf("diff rows %+v", ab.LatencyDiff)
	}
	d10, d50 := ab.LatencyDiff[0], ab.LatencyDiff[1]
	if d10.Bandwidth != "10Mbit" || d10.Seeds != 2 || d10.P50 != (analysis.Spread{Mean: 0, Min: -100, Max: 100}) ||
		d10.P99 != (analysis.Spread{Mean: -1100, Min: -1200, Max: -1000}) || d10.Saturated {
		t.Fatalf("10 Mbit/s row %+v", d10)
	}
	if d50.Bandwidth != "50Mbit" || d50.Seeds != 1 || d50.P50.Mean != 50 || !d50.Saturated {
		t.Fatalf("50 Mbit/s row %+v", d50)
	}
	var buf strings.Builder
	if err := ab.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "-1100 [-1200, -1000]") {
		t.Fatalf("table lacks the p99 difference:\n%s", buf.String())
	}
}

// The observed node's wire bytes as a percentage of its raw bytes, per direction, category
// and in total; a category without raw bytes has none.
func TestWireOfRaw(t *testing.T) {
	n := &result.NodeSummary{Streams: []result.StreamStats{
		{Direction: "in", Categories: map[gossip.Category]result.CategoryBytes{gossip.Attestation: {RawBytes: 1000, WireBytes: 400}, gossip.Block: {RawBytes: 3000, WireBytes: 2900}}},
		{Direction: "in", Categories: map[gossip.Category]result.CategoryBytes{gossip.Attestation: {RawBytes: 1000, WireBytes: 600}}},
		{Direction: "out", Categories: map[gossip.Category]result.CategoryBytes{gossip.Aggregate: {}}},
	}}
	m := meshNode(n)
	in, out := m.WireOfRawPct["in"], m.WireOfRawPct["out"]
	if in["attestation"] != 50 || math.Abs(in["block"]-2900.0/30) > 1e-9 || math.Abs(in["total"]-3900.0/50) > 1e-9 || len(in) != 3 {
		t.Errorf("in: %v", in)
	}
	if len(out) != 0 {
		t.Errorf("out without raw bytes: %v", out)
	}
}
