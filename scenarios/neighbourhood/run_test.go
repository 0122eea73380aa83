package neighbourhood

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/internal/longtest"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/trace"
)

// A small neighbourhood with grafting pressure (8 peers, each with 14 boundary peers, more
// than any client's Dhi), snappy-stream on the observed node's links and its frames recorded:
// the observed node gets every message of its topics from its real peers only, the peers
// prune their boundary, IHAVE reaches the observed node, its links compress, and the trace
// holds its streams with its peers.
func TestSmallNeighbourhood(t *testing.T) {
	longtest.Skip(t, "the small neighbourhood on the real clock")
	if testing.Short() {
		t.Skip("runs 9 real nodes and 112 boundary peers for 5 slots at 2×")
	}
	var err error
	cfg := DefaultConfig()
	pop := smallPopulation(t)
	cfg.Population, cfg.Slots, cfg.Warmup, cfg.TimeScale, cfg.Validators = pop, 2, 2, 2, 200_000
	cfg.Churn = 5 * time.Minute // about 30 of the ~190 outside peers replaced in the run's 35 simulated s
	if cfg.Codec, err = codec.Parse("snappy-stream"); err != nil {
		t.Fatal(err)
	}
	tracePath := filepath.Join(t.TempDir(), "frames.trace.gz")
	if cfg.Trace, err = trace.Create(tracePath, trace.Header{Version: trace.Version, Source: "recorder"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Trace.Close(); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	r.Print(&b)
	t.Log("\n" + b.String())
	if !r.Complete() {
		t.Fatalf("delivery incomplete: delivered %v, expected %v", r.Delivered, r.Expected)
	}
	if r.ObservedPeers != 8 {
		t.Errorf("the observed node has %d peers, want its 8 real peers only", r.ObservedPeers)
	}
	// The outside: 24 outside peers per real peer, those on the pressed attestation subnet
	// grafting; churn replaced some outside peers and delivery stayed complete (checked above).
	if r.Plan.BoundaryTotal != 8*24 || r.Boundary.GraftsSent == 0 || r.Churned == 0 || r.ChurnErrors != 0 {
		t.Errorf("outside: %d outside peers sent %d GRAFTs; churn replaced %d (%d failed)", r.Plan.BoundaryTotal, r.Boundary.GraftsSent, r.Churned, r.ChurnErrors)
	}
	// The mechanism is reported: eligible targets and IHAVE heartbeats on the attestation
	// subnet, and the recurrence counts the IHAVE ids the observed node's control meter counted.
	mk := map[string]MechanismKind{}
	for _, k := range r.Mechanism.Kinds {
		mk[k.Kind] = k
	}
	if a := mk[TopicsAttestation]; a.Eligible.N == 0 || a.IHaveShare.N == 0 || a.IHaveShare.Max > 1 || a.Eligible.Min < 0 {
		t.Errorf("mechanism on attestation subnets: %+v", a)
	}
	if rec := r.Mechanism.Recurrence; rec.Mentions != r.Control["ihave"].IDs || rec.Within[len(rec.Within)-1] > rec.Mentions {
		t.Errorf("recurrence %+v against %d IHAVE ids received", rec, r.Control["ihave"].IDs)
	}
	// The observed node's share of its peers' meshes, from their pubsub's own mesh events:
	// a share of time, and on a topic at most as many meshes as subscribed peers.
	shares := map[string]MeshShare{}
	for _, m := range r.MeshShares {
		shares[m.Category] = m
	}
	for _, c := range []string{"attestation", "block"} {
		m, ok := shares[c]
		if !ok || m.Share <= 0 || m.Share > 1.0001 || m.Meshes > float64(m.Pairs) {
			t.Errorf("mesh share of %s: %+v (all: %+v)", c, m, r.MeshShares)
		}
	}
	if e, got := r.Echoes[gossip.Attestation], r.Delivered[gossip.Attestation]+r.Dups[gossip.Attestation]; e > got {
		t.Errorf("%d echoed attestation copies of %d received", e, got)
	}
	// Forwarding as each client forwards (the default): the Lighthouse and Nimbus peers leave
	// the observed node out of some forwards; never more than one per message and peer.
	withholders := 0
	for _, p := range r.Plan.Peers {
		if p.Client.WithholdsEchoes() {
			withholders++
		}
	}
	var withheld int64
	for c, v := range r.Withheld {
		withheld += v
		if v > r.Delivered[c]*int64(withholders) {
			t.Errorf("%s: %d forwards withheld from %d messages by %d peers", c, v, r.Delivered[c], withholders)
		}
	}
	if withholders > 0 && withheld == 0 {
		t.Errorf("%d Lighthouse or Nimbus peers withheld no forward", withholders)
	}
	for _, v := range append(append([]SubnetView(nil), r.Subnets...), r.SyncSubnets...) {
		if v.Forwarders > v.FullSenders || v.FullSenders+v.IHaveOnly > v.Subscribed {
			t.Errorf("subnet view %+v: forwarders within full senders, senders within subscribers", v)
		}
	}
	if len(r.SyncSubnets) == 0 {
		t.Error("no sync committee subnet view")
	}
	// PRUNEs to the observed node itself in two measured slots at 2× are a handful at most
	// (0 to 5 measured), so the pressure is judged by the peers pruning their boundary peers,
	// and gossip by IHAVE reaching the observed node at all. With 8 peers the observed node is
	// in every peer's mesh of a global topic, so its IHAVE comes from a peer that pruned it
	// from the pressed subnet's mesh during the two measured slots and then had ids to
	// advertise: a run can miss that (seen once in CI, under load: 2 PRUNEs to it and
	// no IHAVE). A miss is run again once (the same seeds; gossip's own randomness, unseeded,
	// differs run to run); both runs missing fails.
	pressure := func(r *Report) string {
		if r.Control["ihave"].IDs > 0 && r.Boundary.PrunesIn > 0 {
			return ""
		}
		return fmt.Sprintf("no grafting pressure: IHAVE ids %d, PRUNEs to the observed node %d, to the boundary %d",
			r.Control["ihave"].IDs, r.Control["prune"].Entries, r.Boundary.PrunesIn)
	}
	if miss := pressure(r); miss != "" {
		t.Logf("%s; running again", miss)
		again := cfg
		again.Trace = nil
		ctx2, cancel2 := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel2()
		r2, err := Run(ctx2, again)
		if err != nil {
			t.Fatal(err)
		}
		if miss2 := pressure(r2); miss2 != "" {
			t.Errorf("twice: %s; then %s", miss, miss2)
		}
	}
	if r.In[gossip.Attestation].RawBytes == 0 || r.MiBh(gossip.Attestation) <= 0 {
		t.Errorf("attestation bytes %+v", r.In[gossip.Attestation])
	}
	// Attestations repeat most of their bytes across messages: a 64 KiB history takes well
	// over a third off (the hub-leaves and mesh runs measure about 45 %); blocks barely
	// compress, so the test asks only that the stream codec ran on the observed node's links.
	if a := r.In[gossip.Attestation]; a.WireBytes*10 > a.RawBytes*8 {
		t.Errorf("attestations on snappy-stream: wire %d of raw %d", a.WireBytes, a.RawBytes)
	}
	for _, l := range r.Wire() {
		if l.Category == "total" && (l.RelativePct <= 0 || l.RelativePct >= 100) {
			t.Errorf("%s total wire/raw %.1f %%, want compressed", l.Direction, l.RelativePct)
		}
	}
	// Timing: every measured attestation's latency is at least the arrival model's first
	// copy (50 ms, simulated) and the mesh was sampled once per measured slot.
	tm := r.Timing
	if l := tm.Latency["attestation"]; l.Messages == 0 || l.Messages > int(r.Expected[gossip.Attestation]) || l.P50Ms < 50 || l.P99Ms < l.P50Ms {
		t.Errorf("attestation latency %+v (expected %d)", l, r.Expected[gossip.Attestation])
	}
	checkBySlot(t, r)
	if len(tm.MeshSlots) != cfg.Slots || tm.Mesh["attestation"].Mean <= 0 || tm.ObservedDrops != 0 || tm.Utilization <= 0 || tm.PeakRSSBytes < 64<<20 || len(tm.RSSBySlot) != cfg.Slots {
		t.Errorf("timing %+v", tm)
	}
	// The recording: the observed node's streams with its 8 peers, both directions, every
	// one on snappy-stream, and frames in each direction.
	tr, err := trace.Open(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	rec, err := trace.TallyFrames(tr)
	if err != nil {
		t.Fatal(err)
	}
	frames := map[string]int64{}
	for k, tl := range rec {
		frames[k.Direction] += tl.Frames
	}
	// The summary's streams (the observed node's meters, frozen at the end) and the
	// recording agree exactly, as an independent reader of the trace counts them.
	for _, d := range trace.CompareStreams(r.Streams, rec) {
		t.Error(d)
	}
	peers := map[string]bool{}
	for _, s := range tr.Streams() {
		peers[s.Peer] = true
		if !strings.Contains(s.Protocol, "snappy-stream") {
			t.Errorf("recorded stream %d on %s, want snappy-stream", s.ID, s.Protocol)
		}
	}
	if len(peers) != 8 || frames["in"] == 0 || frames["out"] == 0 {
		t.Errorf("trace: %d peers, frames %v", len(peers), frames)
	}
}

// Bad configurations are refused before any node starts.
func TestRunRejects(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Copies = 20 // more than the subscribers a peer has on a subnet
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "param copies: 20: peer") {
		t.Errorf("copies above the boundary: %v", err)
	}
	cfg = DefaultConfig()
	cfg.MemoryBytes = 64 << 20 // ~6 700 outside peers need about 2.6 GiB
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "MiB available") {
		t.Errorf("a periphery larger than the machine: %v", err)
	}
	cfg = DefaultConfig()
	cfg.Arrival.First.Min = -time.Second
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "arrival") {
		t.Errorf("negative arrival: %v", err)
	}
	cfg = DefaultConfig()
	cfg.Population.Mix = map[string]float64{topology.KindDefault: 0.5}
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "param mix") {
		t.Errorf("shares not summing to 1: %v", err)
	}
}

// smallPopulation is the small neighbourhood of TestSmallNeighbourhood and its virtual-clock
// twin: 8 real peers on one attestation subnet, 24 outside peers each, 80 % of them on every
// subnet (so a peer's ~20 subscribers on the subnet exceed its Dhi and it prunes).
// Pressure on the attestation subnet only: with 4 subscribers per sync subnet and the observed
// node pushed out of their meshes, a sync message reaches it only by IHAVE, which a peer sends
// each heartbeat to a random quarter of its ~20 non-mesh subscribers, so over 800 sync messages
// an unlucky one is sometimes never advertised to it (seen once in go test ./... on a loaded
// machine: 794 of 798). That is gossipsub, not a fault; the tests ask for complete delivery,
// so they keep the sync subnets unpressed.
func smallPopulation(t testing.TB) NeighbourhoodParams {
	t.Helper()
	pop, err := ParseNeighbourhoodParams(map[string]string{topology.ParamObservedPeers: "8", ParamSubnets: "1",
		topology.ParamMix: "default:0.25,all-subnets:0.5,supernode:0.25", ParamBoundary: "24", ParamDialledShare: "1",
		ParamPressure: TopicsAttestation, ParamOutsideAllSubnets: "0.8", ParamOutsideSupernodes: "0.1"})
	if err != nil {
		t.Fatal(err)
	}
	return pop
}
