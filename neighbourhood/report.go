package neighbourhood

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/topology"
)

// Recording is the recorded all-subnets node's inbound traffic per hour (reference.md §1) and
// its implied copies per unique message (§4); IHAVEIDsPerHour is §9's ≈ 86 M.
var Recording = struct {
	MiBh            map[gossip.Category]float64
	Copies          map[gossip.Category]float64
	IHAVEIDsPerHour float64
}{
	MiBh: map[gossip.Category]float64{gossip.Attestation: 3188, gossip.Aggregate: 138, gossip.Block: 154,
		gossip.DataColumn: 109, gossip.Control: 1946, gossip.SyncCommittee: 45},
	Copies: map[gossip.Category]float64{gossip.Attestation: 1.6, gossip.Aggregate: 9, gossip.Block: 9,
		gossip.DataColumn: 2, gossip.SyncCommittee: 1.7},
	IHAVEIDsPerHour: 86e6,
}

// Report is the observed node's view over the measured slots.
type Report struct {
	Config Config
	Plan   *topology.NeighbourhoodPlan
	// In is the observed node's inbound raw and wire bytes per category; Control by kind.
	In, Out map[gossip.Category]result.CategoryBytes
	Control map[string]result.ControlBytes
	// IHAVE ids and bytes received per topic category (the calibration form's attestation
	// share of them is scaled to 64 subnets in the table).
	IHaveIDs, IHaveBytes map[gossip.Category]int64
	Delivered, Dups      map[gossip.Category]int64
	expected             [gossip.NumCategories]int64
	Expected             map[gossip.Category]int64
	// Subnets: per attestation subnet topic, peers that sent full messages and peers that
	// sent only IHAVE.
	Subnets  []SubnetView
	Boundary struct {
		Published, IWantAnswered, IHaveIDs, GraftsSent, PrunesIn, MessagesIn int64
	}
	// BoundaryErrors counts deliveries a boundary peer could not make (its link failed).
	BoundaryErrors int64
	// ObservedPeers is the observed node's connected peers at the end: its real peers only.
	ObservedPeers int
	MaxLag        time.Duration
	// Streams and Pubsub are the observed node's meters over the whole run, warm-up
	// included, frozen when the run ended: what its recording holds (the summary's streams).
	Streams []result.StreamStats
	Pubsub  result.Pubsub
	// Timing: latency, the periphery's lateness, mesh sizes, drops, CPU (timing.go).
	Timing    Timing
	Wall      time.Duration
	Simulated time.Duration // measured slots, simulated time
	CPU       time.Duration // process CPU over the run
}

// SubnetView is the prediction the recording could confirm for one subnet.
type SubnetView struct {
	Subnet      int
	Subscribed  int // real peers subscribed
	FullSenders int // peers that sent the observed node at least one full message
	IHaveOnly   int // peers that sent only IHAVE
}

func (r *Report) fill(before, after snapshot, ct *controlTracer, lag, wall time.Duration) {
	r.In = map[gossip.Category]result.CategoryBytes{}
	for c, v := range after.in {
		b := before.in[c]
		r.In[c] = result.CategoryBytes{RawBytes: v.RawBytes - b.RawBytes, WireBytes: v.WireBytes - b.WireBytes}
	}
	r.Out = map[gossip.Category]result.CategoryBytes{}
	for c, v := range after.out {
		b := before.out[c]
		r.Out[c] = result.CategoryBytes{RawBytes: v.RawBytes - b.RawBytes, WireBytes: v.WireBytes - b.WireBytes}
	}
	r.Control = map[string]result.ControlBytes{}
	for k, v := range after.control {
		b := before.control[k]
		r.Control[k] = result.ControlBytes{RawBytes: v.RawBytes - b.RawBytes, WireBytes: v.WireBytes - b.WireBytes,
			Entries: v.Entries - b.Entries, IDs: v.IDs - b.IDs}
	}
	r.Delivered, r.Dups, r.Expected = map[gossip.Category]int64{}, map[gossip.Category]int64{}, map[gossip.Category]int64{}
	for c, v := range after.ps.DeliveredBy {
		r.Delivered[c] = v - before.ps.DeliveredBy[c]
	}
	for c, v := range after.ps.DuplicatesBy {
		r.Dups[c] = v - before.ps.DuplicatesBy[c]
	}
	for c, v := range r.expected {
		if v > 0 {
			r.Expected[gossip.Category(c)] = v
		}
	}
	ct.mu.Lock()
	r.IHaveIDs, r.IHaveBytes = map[gossip.Category]int64{}, map[gossip.Category]int64{}
	for c := range ct.ihaveIDs {
		if ct.ihaveIDs[c] > 0 {
			r.IHaveIDs[gossip.Category(c)] = ct.ihaveIDs[c]
			r.IHaveBytes[gossip.Category(c)] = ct.ihaveB[c]
		}
	}
	for _, t := range r.Plan.ObservedTopics {
		_, name, _ := gossip.ParseTopic(t)
		if !strings.HasPrefix(name, "beacon_attestation_") {
			continue
		}
		v := SubnetView{Subnet: gossip.Subnet(name), Subscribed: len(r.Plan.Subscribers[t])}
		for p := range ct.full[t] {
			_ = p
			v.FullSenders++
		}
		for p := range ct.gossiped[t] {
			if !ct.full[t][p] {
				v.IHaveOnly++
			}
		}
		r.Subnets = append(r.Subnets, v)
	}
	ct.mu.Unlock()
	sort.Slice(r.Subnets, func(i, j int) bool { return r.Subnets[i].Subnet < r.Subnets[j].Subnet })
	r.MaxLag, r.Wall = lag, wall
	r.Simulated = time.Duration(r.Config.Slots) * 12 * time.Second
	r.CPU = processCPU()
}

// Complete reports whether the observed node received every message of its topics in the
// measured slots (a message published in the warm-up but delivered after counts too, so
// delivered may exceed expected by the warm-up's tail).
func (r *Report) Complete() bool {
	for c, v := range r.Expected {
		if r.Delivered[c] < v {
			return false
		}
	}
	return len(r.Expected) > 0
}

// scale is the calibration form's factor for per-subnet figures: 64 / subnets.
func (r *Report) scale() float64 {
	return float64(gossip.AttestationSubnets) / float64(r.Config.Population.Subnets)
}

// MiBh is category c's inbound raw (plain) bytes per simulated hour, attestations scaled to
// 64 subnets; control adds the attestation IHAVE scaled the same way.
func (r *Report) MiBh(c gossip.Category) float64 {
	perHour := 3600 / r.Simulated.Seconds() / (1 << 20)
	v := float64(r.In[c].RawBytes)
	switch c {
	case gossip.Attestation:
		v *= r.scale()
	case gossip.Control:
		v += float64(r.IHaveBytes[gossip.Attestation]) * (r.scale() - 1)
	}
	return v * perHour
}

// IHaveIDsPerHour is IHAVE ids per simulated hour, attestation ids scaled to 64 subnets.
func (r *Report) IHaveIDsPerHour() float64 {
	var ids float64
	for c, v := range r.IHaveIDs {
		if c == gossip.Attestation {
			ids += float64(v) * r.scale()
		} else {
			ids += float64(v)
		}
	}
	return ids * 3600 / r.Simulated.Seconds()
}

// Copies is received copies per unique delivered message of category c.
func (r *Report) Copies(c gossip.Category) float64 {
	if r.Delivered[c] == 0 {
		return math.NaN()
	}
	return float64(r.Delivered[c]+r.Dups[c]) / float64(r.Delivered[c])
}

// Print writes the calibration table, control by kind and the predictions.
func (r *Report) Print(w io.Writer) {
	cfg := r.Config
	fmt.Fprintf(w, "neighbourhood: %d peers (%s), %d attestation subnets of 64 (per-subnet figures ×%.0f to 64 subnets), %d boundary peers, %d+%d slots at %g×, seed %d / topology seed %d\n",
		len(r.Plan.Peers), kindsLine(r.Plan), cfg.Population.Subnets, r.scale(), r.Plan.BoundaryTotal, cfg.Warmup, cfg.Slots, cfg.TimeScale, cfg.Seed, cfg.Population.Seed)
	simMin := float64(cfg.Warmup+cfg.Slots+1) * 12 / 60
	fmt.Fprintf(w, "delivery complete: %v; max lag of the periphery's schedule %v; wall %v (%.2f× real time), process CPU %v (%.1f CPU s per simulated minute)\n\n",
		r.Complete(), r.MaxLag.Round(time.Millisecond), r.Wall.Round(time.Second), simMin*60/r.Wall.Seconds(), r.CPU.Round(time.Second), r.CPU.Seconds()/simMin)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "category\trecording MiB/h\tplain MiB/h\tvs recording\twithin ±25 %\tcopies\trecording copies\tdelivered/expected\t")
	for _, c := range orderedCategories() {
		rec, got := Recording.MiBh[c], r.MiBh(c)
		ratio := got / rec
		cp, rcp := "", ""
		if c != gossip.Control {
			cp, rcp = fmt.Sprintf("%.2f", r.Copies(c)), fmt.Sprintf("%.1f", Recording.Copies[c])
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.1f\t%.2f\t%v\t%s\t%s\t%d/%d\t\n", c, rec, got, ratio, math.Abs(ratio-1) <= 0.25, cp, rcp, r.Delivered[c], r.Expected[c])
	}
	fmt.Fprintf(tw, "IHAVE ids/h\t%.3g\t%.3g\t%.2f\t%v\t\t\t\t\n", Recording.IHAVEIDsPerHour, r.IHaveIDsPerHour(), r.IHaveIDsPerHour()/Recording.IHAVEIDsPerHour,
		math.Abs(r.IHaveIDsPerHour()/Recording.IHAVEIDsPerHour-1) <= 0.25)
	tw.Flush()
	r.printWire(w)
	r.printTiming(w)
	fmt.Fprintln(w, "\ncontrol received by kind (measured, not scaled):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\traw bytes\tentries\tids\tper hour (entries)\t")
	perHour := 3600 / r.Simulated.Seconds()
	for _, k := range gossip.ControlKinds() {
		v := r.Control[k.String()]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.0f\t\n", k, v.RawBytes, v.Entries, v.IDs, float64(v.Entries)*perHour)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nIHAVE received by topic category (measured):")
	for _, c := range gossip.Categories() {
		if r.IHaveIDs[c] > 0 {
			fmt.Fprintf(w, "  %s: %d ids, %d bytes, %.2f ids per delivered message\n", c, r.IHaveIDs[c], r.IHaveBytes[c], float64(r.IHaveIDs[c])/float64(max(r.Delivered[c], 1)))
		}
	}
	fmt.Fprintln(w, "\nprediction the recording could confirm, per attestation subnet: peers subscribed, peers that sent messages, peers that sent only IHAVE")
	for _, s := range r.Subnets {
		fmt.Fprintf(w, "  subnet %d: %d subscribed, %d sent messages, %d only IHAVE\n", s.Subnet, s.Subscribed, s.FullSenders, s.IHaveOnly)
	}
	g, p := r.Control["graft"].Entries, r.Control["prune"].Entries
	fmt.Fprintf(w, "GRAFT received %.0f/h, PRUNE received %.0f/h\n", float64(g)*perHour, float64(p)*perHour)
	b := r.Boundary
	fmt.Fprintf(w, "periphery: %d messages delivered (%d of them on IWANT), %d IHAVE ids, %d GRAFTs sent, %d PRUNEs received, %d forwards discarded, %d failed deliveries\n",
		b.Published, b.IWantAnswered, b.IHaveIDs, b.GraftsSent, b.PrunesIn, b.MessagesIn, r.BoundaryErrors)
}

func kindsLine(pl *topology.NeighbourhoodPlan) string {
	k := map[string]int{}
	for _, p := range pl.Peers {
		k[p.Kind]++
	}
	var parts []string
	for _, name := range topology.MixKinds {
		parts = append(parts, fmt.Sprintf("%s %d", name, k[name]))
	}
	return strings.Join(parts, ", ")
}
