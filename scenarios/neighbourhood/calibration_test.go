package neighbourhood

import (
	"context"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/link"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/sim/runner"
)

// The latency model: gossipsub-interop's latencies divided by the time scale, the boundary
// at 0 from every region, peer regions fixed by the topology seed; off gives none.
func TestLatencyModel(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TimeScale = 0.5
	lb, err := NewHosts(nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	plan := func() *NeighbourhoodPlan {
		pl, err := Plan(cfg.Population)
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	regions := func(p placement) string {
		var r []string
		for _, sh := range p.peers {
			r = append(r, sh.Region)
		}
		return strings.Join(r, ",")
	}
	place, err := placeHosts(cfg, plan())
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := lb.Regions.Latency(ObservedRegion, "na_east"); l != 140*time.Millisecond {
		t.Errorf("europe→na_east at 0.5×: %v, want 140ms (70 ms of simulated time)", l)
	}
	if l, _ := lb.Regions.Latency("australia", BoundaryRegion); l != 0 {
		t.Errorf("to the boundary: %v, want 0", l)
	}
	if place.observed.Region != ObservedRegion || place.boundary.Region != BoundaryRegion {
		t.Errorf("observed in %q, boundary in %q", place.observed.Region, place.boundary.Region)
	}
	place2, _ := placeHosts(cfg, plan())
	if len(place.peers) != 45 || regions(place) != regions(place2) {
		t.Errorf("peer regions not fixed by the seed: %v / %v", regions(place), regions(place2))
	}
	cfg.Population.Seed = 2
	other, _ := placeHosts(cfg, plan())
	if regions(place) == regions(other) {
		t.Error("topology seeds 1 and 2 drew the same regions")
	}
	cfg.Population.Latency = LatencyOff
	cfg.Bandwidth = Bandwidth{}
	off, err := placeHosts(cfg, plan())
	if err != nil || off.observed.Region != "" || off.boundary.Region != "" || len(off.peers) != 45 || regions(off) != strings.Repeat(",", 44) {
		t.Errorf("latency off: placement %+v, %v", off, err)
	}
	if lb, err := NewHosts(nil, cfg); err != nil || len(lb.Regions.Names()) != 0 {
		t.Errorf("latency off: regions %v, %v", lb.Regions.Names(), err)
	}
}

// The bandwidth classes: the observed node at allsubnets_bandwidth, each real peer at its
// class's rate (default nodes at ordinary_bandwidth, supernodes at supernode_bandwidth,
// all-subnets nodes at allsubnets_bandwidth), the boundary unlimited; with
// the latency model off every host in the one flat region; on Loopback the rates dilate by the
// time scale as the latencies do; bad rates and modes are refused naming the parameter.
func TestBandwidthClasses(t *testing.T) {
	cfg := DefaultConfig()
	bw, err := ParseBandwidth(BandwidthClasses, "10Mbit", "1Gbit", "200Mbit")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Bandwidth = bw
	rates := map[string]int64{BandwidthFullNode: 10e6, BandwidthSupernode: 1e9, BandwidthAllSubnets: 200e6}
	plan, err := Plan(cfg.Population)
	if err != nil {
		t.Fatal(err)
	}
	for _, lat := range []string{LatencyRegions, LatencyOff} {
		cfg.Population.Latency = lat
		place, err := placeHosts(cfg, plan)
		if err != nil {
			t.Fatal(err)
		}
		if o := place.observed; o.UpBitsPerSec != 200e6 || o.DownBitsPerSec != 200e6 || o.Class != BandwidthAllSubnets {
			t.Errorf("latency %s: observed node's link %v", lat, o)
		}
		if b := place.boundary; b.UpBitsPerSec != 0 || b.DownBitsPerSec != 0 || b.Region == "" {
			t.Errorf("latency %s: boundary link %+v, want unlimited and shaped (a region)", lat, b)
		}
		classes := map[string]int{}
		for i, sh := range place.peers {
			want := rates[plan.Peers[i].Bandwidth]
			classes[plan.Peers[i].Bandwidth]++
			if sh.UpBitsPerSec != want || sh.DownBitsPerSec != want || sh.Class != plan.Peers[i].Bandwidth {
				t.Errorf("latency %s: peer %d (%s): link %v, want %d bit/s", lat, i, plan.Peers[i].Kind, sh, want)
			}
			if lat == LatencyOff && sh.Region != FlatRegion {
				t.Errorf("latency off: peer %d in region %q, want %q", i, sh.Region, FlatRegion)
			}
		}
		if len(classes) != 3 {
			t.Errorf("classes %v among %d peers: the test needs all three", classes, len(place.peers))
		}
	}
	cfg.TimeScale = 0.25
	lb, err := NewHosts(nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sh := lb.dilate(link.Shape{Region: FlatRegion, UpBitsPerSec: 10e6, DownBitsPerSec: 20e6}); sh.UpBitsPerSec != 2.5e6 || sh.DownBitsPerSec != 5e6 {
		t.Errorf("at time scale 0.25 the link runs at %v, want 2.5Mbit up, 5Mbit down", sh)
	}
	for _, bad := range []struct{ mode, ord, sup, all, param string }{
		{"on", "50Mbit", "1Gbit", "1Gbit", ParamBandwidth},
		{BandwidthClasses, "-5Mbit", "1Gbit", "1Gbit", runner.ParamOrdinaryBandwidth},
		{BandwidthOff, "50Mbit", "fast", "1Gbit", runner.ParamSupernodeBandwidth},
		{BandwidthClasses, "50Mbit", "1Gbit", "-1Gbit", ParamAllSubnetsBandwidth},
		{BandwidthOff, "50Mbit", "1Gbit", "lots", ParamAllSubnetsBandwidth},
	} {
		if _, err := ParseBandwidth(bad.mode, bad.ord, bad.sup, bad.all); err == nil || !strings.Contains(err.Error(), bad.param) {
			t.Errorf("ParseBandwidth(%q, %q, %q, %q) = %v, want an error naming %s", bad.mode, bad.ord, bad.sup, bad.all, err, bad.param)
		}
	}
	if off, err := ParseBandwidth(BandwidthOff, "50Mbit", "1Gbit", "1Gbit"); err != nil || off.On() {
		t.Errorf("off: %+v, %v", off, err)
	}
}

// Hosts made for the run carry the dilated latency: a stream round trip between the
// observed node's region (Europe) and a peer in na_east at 4× takes 2 × 70 ms / 4, and one
// to a boundary peer none.
func TestHostLatencyIsDilated(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TimeScale = 4
	lb, err := NewHosts(nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rtt := func(from, to string) time.Duration {
		a, err := lb.Host(link.Shape{Region: from})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		b, err := lb.Host(link.Shape{Region: to})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		const echo = protocol.ID("/echo")
		b.SetStreamHandler(echo, func(s network.Stream) { io.Copy(s, s); s.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Connect(ctx, b.AddrInfo()); err != nil {
			t.Fatal(err)
		}
		s, err := a.NewStream(ctx, b.ID(), echo)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		buf := make([]byte, 1)
		best := time.Hour
		for range 5 {
			start := time.Now()
			if _, err := s.Write([]byte{1}); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(s, buf); err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	// −1 ms: the link aims each timed wait half a millisecond early (link/link.go, timerSlack).
	if got := rtt(ObservedRegion, "na_east"); got < 34*time.Millisecond || got > 60*time.Millisecond {
		t.Errorf("europe↔na_east round trip at 4×: %v, want 35 ms (+ the machine's own, < 25 ms)", got)
	}
	if got := rtt("na_east", BoundaryRegion); got > 20*time.Millisecond {
		t.Errorf("peer↔boundary round trip: %v, want the machine's own only", got)
	}
}

// The calibration over seeds: mean, sample sd and range per category, runs of different
// forms refused.
func TestWriteCalibration(t *testing.T) {
	run := func(att, copies float64, prunes int64) Summary {
		s := Summary{Subnets: 4, Slots: 10, TimeScale: 1, Complete: true, SimulatedS: 120, RecordingIDsH: 86e6, IHaveIDsPerH: 80e6,
			Control: map[string]result.ControlBytes{"prune": {Entries: prunes}},
			Subnet:  []SubnetView{{Subnet: 0, Subscribed: 14, FullSenders: 9, IHaveOnly: 5}},
			Timing:  Timing{Mesh: map[string]Spread{gossip.Aggregate.String(): {Mean: copies * 4}}}}
		for _, c := range orderedCategories() {
			s.Categories = append(s.Categories, CategorySummary{Category: c.String(), MiBh: Recording.MiBh[c], RecordingMiBh: Recording.MiBh[c], Copies: ptr(2)})
		}
		s.Categories[0].MiBh, s.Categories[0].Copies = att, ptr(copies)
		return s
	}
	var b strings.Builder
	if err := WriteCalibration(&b, []string{"seed 1", "seed 2", "seed 3"}, []Summary{run(3000, 1.5, 10), run(3200, 1.7, 20), run(3400, 1.9, 30)}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"3200.0 ± 200.0 (3000.0–3400.0)", // attestation MiB/h
		"1.70 (1.50–1.90)",               // its copies
		"PRUNE received per hour: 600 ± 300 (300–900)",
		"peers that sent full messages 9.0 ± 0.0 (9.0–9.0)",
		"aggregate 6.8 (6.0–7.6)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if !strings.Contains(out, gossip.Attestation.String()) {
		t.Error("no attestation row")
	}
	other := run(3000, 1.5, 10)
	other.TimeScale = 0.5
	if err := WriteCalibration(io.Discard, []string{"a", "b"}, []Summary{run(3000, 1.5, 10), other}); err == nil {
		t.Error("runs at 1× and 0.5× were combined")
	}
}

func TestParseArrival(t *testing.T) {
	a, err := ParseArrival("first:100-250ms, spread:0-50ms")
	if err != nil {
		t.Fatal(err)
	}
	if a.First.Min != 100*time.Millisecond || a.First.Max != 250*time.Millisecond || a.Spread.Max != 50*time.Millisecond {
		t.Errorf("parsed %v", a)
	}
	if back, err := ParseArrival(a.String()); err != nil || back != a {
		t.Errorf("round trip %v: %v, %v", a, back, err)
	}
	if d, _ := ParseArrival(""); d != DefaultArrival {
		t.Errorf("empty: %v", d)
	}
	if a.MeshNodes != 0 {
		t.Errorf("first:…,spread:… is the independent model, parsed mesh nodes %d", a.MeshNodes)
	}
	for in, nodes := range map[string]int{"mesh": DefaultOutsideNodes, " mesh:2000 ": 2000, "mesh:100": MinOutsideNodes} {
		m, err := ParseArrival(in)
		if err != nil || m.MeshNodes != nodes {
			t.Errorf("%q: %+v, %v", in, m, err)
		}
		if back, err := ParseArrival(m.String()); err != nil || back != m {
			t.Errorf("round trip %v: %v, %v", m, back, err)
		}
	}
	for _, bad := range []string{"first:400-50ms", "last:1-2ms", "first:-5ms", "spread", "mesh:99", "mesh:x", "mesh:-1", "mesh:200001"} {
		if _, err := ParseArrival(bad); err == nil || !strings.Contains(err.Error(), "param "+ParamArrival) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// Copies come from boundary peers in the real peer's mesh, in rotation from the drawn
// offset; only when too few are meshed does a copy go by one outside it.
func TestDeliverer(t *testing.T) {
	meshed := map[int]bool{2: true, 5: true, 6: true}
	in := func(i int) bool { return meshed[i] }
	cases := []struct{ offset, k, want int }{
		{0, 0, 2}, {0, 1, 5}, {0, 2, 6},
		{6, 0, 6}, {6, 1, 2}, // the rotation wraps
		{0, 3, 0}, {0, 4, 1}, // more copies than meshed peers: the others, in the same rotation
		{3, 3, 3},
	}
	for _, c := range cases {
		if got := deliverer(8, in, c.offset, c.k); got != c.want {
			t.Errorf("offset %d, copy %d: boundary peer %d, want %d", c.offset, c.k, got, c.want)
		}
	}
	seen := map[int]bool{}
	for k := range 8 {
		seen[deliverer(8, in, 4, k)] = true
	}
	if len(seen) != 8 {
		t.Errorf("copies 0..7 from offset 4 used %d distinct peers, want 8", len(seen))
	}
}

// The mesh share: time in each subscribed peer's mesh over the measured time, per category,
// averaged over (peer, topic) pairs, and summed over peers per topic for the meshes.
func TestMeshShares(t *testing.T) {
	att0, att1 := gossip.Topic("8c9f62fe", gossip.AttestationTopic(0)), gossip.Topic("8c9f62fe", gossip.AttestationTopic(1))
	blk := gossip.Topic("8c9f62fe", "beacon_block")
	plan := &NeighbourhoodPlan{ObservedTopics: []string{att0, att1, blk},
		Subscribers: map[string][]int{att0: {0, 1}, att1: {1}, blk: {0, 1}}}
	before := []map[string]time.Duration{{att0: time.Second}, {}}
	after := []map[string]time.Duration{{att0: 6 * time.Second, blk: 10 * time.Second}, {att0: 0, att1: 10 * time.Second, blk: 10 * time.Second}}
	got := meshShares(plan, before, after, 10*time.Second)
	want := []MeshShare{{Category: "attestation", Share: (0.5 + 0 + 1) / 3, Meshes: 1.5 / 2, Pairs: 3}, {Category: "block", Share: 1, Meshes: 2, Pairs: 2}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Category != w.Category || g.Pairs != w.Pairs || math.Abs(g.Share-w.Share) > 1e-9 || math.Abs(g.Meshes-w.Meshes) > 1e-9 {
			t.Errorf("%+v, want %+v", g, w)
		}
	}
	if meshShares(plan, before, after, 0) != nil {
		t.Error("no measured time gave shares")
	}
}

func ptr(v float64) *float64 { return &v }
