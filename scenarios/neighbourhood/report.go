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

// Recording is the recorded all-subnets node's inbound traffic per hour (docs/inputs.md §1) and
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
	Plan   *NeighbourhoodPlan
	// Network is the network (transport and clock) the run's hosts were made on.
	Network string
	// In is the observed node's inbound raw and wire bytes per category; Control by kind.
	In, Out map[gossip.Category]result.CategoryBytes
	Control map[string]result.ControlBytes
	// ControlOut is the control the observed node sent, by kind (its IWANT ids ask for the
	// copies it gets by gossip).
	ControlOut map[string]result.ControlBytes
	// BySlot is In and Out per measured slot: the bytes between the observed node's byte
	// totals at the start of consecutive measured slots (result.BytesBySlot), the last
	// interval ending when its meters stopped (the last measured slot and the drain slot), so
	// the intervals add up to In and Out per category.
	BySlot []result.SlotBytes
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
	// Mechanism is how IHAVE reaches the observed node: eligible targets, heartbeats with
	// IHAVE, id recurrence (mechanism.go).
	Mechanism Mechanism
	// Churned counts outside peers replaced by churn; ChurnErrors replacements that failed.
	Churned, ChurnErrors int64
	// Scoring is the real peers' scores over the measured slots (ParamScoring client; nil
	// otherwise).
	Scoring *ScoringView
	// FirstFromObserved: per category, the share of the messages of the observed node's
	// topics its real peers delivered whose first copy came from the observed node (the
	// first deliveries P2 credits; measured slots).
	FirstFromObserved map[string]float64
	// MeshShares: per topic category of the observed node's topics, the share of the
	// measured time it spent in its subscribed peers' meshes (outside.go).
	MeshShares []MeshShare
	// SyncSubnets is Subnets' prediction for the sync committee subnets.
	SyncSubnets []SubnetView
	// Echoes: per category, copies the observed node received from a peer it had already
	// sent the message to (the all-go bias: rust-libp2p and nim-libp2p peers withhold them).
	Echoes map[gossip.Category]int64
	// Withheld: per category, forwards to the observed node that its real peers left out
	// because its copy had reached them first (ParamForwarding; measured slots).
	Withheld map[gossip.Category]int64
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
	CPU       time.Duration // process CPU over this run (setup and warm-up included)
}

// costPerSimMinute is the wall and process CPU seconds per simulated minute of the whole run:
// warm-up, measured slots and the slot the run settles in (setup counts in CPU and wall).
func (r *Report) costPerSimMinute() (wall, cpu float64) {
	simMin := float64(r.Config.Warmup+r.Config.Slots+1) * 12 / 60 // slots of 12 simulated s
	if simMin <= 0 {
		return 0, 0
	}
	return r.Wall.Seconds() / simMin, r.CPU.Seconds() / simMin
}

// SubnetView is the prediction the recording could confirm for one subnet.
type SubnetView struct {
	Subnet      int
	Subscribed  int // real peers subscribed
	FullSenders int // peers that sent the observed node at least one full message
	// Forwarders: of FullSenders, the peers that sent at least one message unasked (from
	// their mesh), the others sending only what the observed node asked for by IWANT.
	Forwarders int `json:"forwarders"`
	IHaveOnly  int // peers that sent only IHAVE
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
	diff := func(after, before map[string]result.ControlBytes) map[string]result.ControlBytes {
		out := map[string]result.ControlBytes{}
		for _, k := range gossip.ControlKinds() { // every kind, zero included
			out[k.String()] = result.ControlBytes{}
		}
		for k, v := range after {
			b := before[k]
			out[k] = result.ControlBytes{RawBytes: v.RawBytes - b.RawBytes, WireBytes: v.WireBytes - b.WireBytes,
				Entries: v.Entries - b.Entries, IDs: v.IDs - b.IDs}
		}
		return out
	}
	r.Control, r.ControlOut = diff(after.control, before.control), diff(after.controlOut, before.controlOut)
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
		dst := &r.Subnets
		switch {
		case strings.HasPrefix(name, "beacon_attestation_"):
		case strings.HasPrefix(name, "sync_committee_") && gossip.Subnet(name) >= 0:
			dst = &r.SyncSubnets
		default:
			continue
		}
		v := SubnetView{Subnet: gossip.Subnet(name), Subscribed: len(r.Plan.Subscribers[t])}
		v.FullSenders, v.Forwarders = len(ct.full[t]), len(ct.forwarded[t])
		for p := range ct.gossiped[t] {
			if !ct.full[t][p] {
				v.IHaveOnly++
			}
		}
		*dst = append(*dst, v)
	}
	ct.mu.Unlock()
	r.Echoes = map[gossip.Category]int64{}
	for c, v := range ct.echoes {
		if v > 0 {
			r.Echoes[gossip.Category(c)] = v
		}
	}
	for _, l := range [][]SubnetView{r.Subnets, r.SyncSubnets} {
		sort.Slice(l, func(i, j int) bool { return l[i].Subnet < l[j].Subnet })
	}
	r.MaxLag, r.Wall = lag, wall
	r.Simulated = time.Duration(r.Config.Slots) * 12 * time.Second
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
	var pressed []string
	for _, k := range TopicKinds {
		if cfg.Population.Pressure[k] {
			pressed = append(pressed, k)
		}
	}
	if len(pressed) == 0 {
		pressed = []string{"none"}
	}
	fmt.Fprintf(w, "inputs: dialled share %g, %d copies per message per peer, arrival %s, boundary presses %s, latency %s (observed node in %s), bandwidth %s (boundary unshaped), network %s\n",
		cfg.Population.DialledShare, cfg.Copies, cfg.Arrival.Describe(),
		strings.Join(pressed, "+"), cfg.Population.Latency, ObservedRegion, cfg.Bandwidth, r.Network)
	churn := "off"
	if cfg.Churn > 0 {
		churn = fmt.Sprintf("mean session %v (%d outside peers replaced, %d failed)", cfg.Churn, r.Churned, r.ChurnErrors)
	}
	fmt.Fprintf(w, "outside: %d outside peers (%s), all-subnets share %g (fitted, param %s), supernodes %g, %d subscriptions added by subnet search; re-graft %v after a backoff, churn %s; observed client %s (%s)\n",
		r.Plan.BoundaryTotal, outsideKindsLine(r.Plan), cfg.Population.OutsideAllSubnets, ParamOutsideAllSubnets, cfg.Population.OutsideSupernodes, r.Plan.toppedUp(),
		cfg.Regraft, churn, r.Plan.ObservedClient.Name, idontwantLabel(r.Plan.ObservedClient.IDontWantThresholdBytes))
	fmt.Fprintf(w, "framing: %s\n", framingLabel(cfg.Framing))
	fmt.Fprintf(w, "forwarding: %s\n", forwardingLabel(cfg.Forwarding))
	if cfg.Scoring != "" {
		fmt.Fprintf(w, "scoring: %s\n", scoringLabel(cfg.Scoring))
	}
	if len(r.FirstFromObserved) > 0 {
		var parts []string
		for _, c := range orderedCategories() {
			if v, ok := r.FirstFromObserved[c.String()]; ok {
				parts = append(parts, fmt.Sprintf("%s %.1f %%", c, 100*v))
			}
		}
		fmt.Fprintf(w, "first deliveries at the real peers made by the observed node (what P2 credits), share of the messages of its topics they delivered: %s\n", strings.Join(parts, ", "))
	}
	if v := r.Scoring; v != nil {
		fmt.Fprintf(w, "scores at the real peers (%d snapshots, one per peer and slot): observed node %.3g (positive %.0f %%), outside peers %.3g (positive %.0f %%); outside peers scoring above the observed node %.0f %%; "+
			"outside negative %d, below the gossip threshold %d, with a behaviour penalty %d (max %.3g); observed node negative %d, with a behaviour penalty %d\n",
			v.Snapshots, v.ObservedScore, 100*v.ObservedPositive, v.OutsideScore, 100*v.OutsidePositive, 100*v.ObservedBelowShare,
			v.OutsideNegative, v.OutsideBelowGossip, v.OutsideBehaviour, v.MaxOutsideBehaviour, v.ObservedNegative, v.ObservedBehaviour)
	}
	wallMin, cpuMin := r.costPerSimMinute()
	fmt.Fprintf(w, "delivery complete: %v; max lag of the periphery's schedule %v; wall %v (%.2f× real time), process CPU %v\n",
		r.Complete(), r.MaxLag.Round(time.Millisecond), r.Wall.Round(time.Second), 60/wallMin, r.CPU.Round(time.Second))
	fmt.Fprintf(w, "cost per simulated minute: %.1f s of wall, %.1f CPU s; peak resident memory %.2f GiB\n\n", wallMin, cpuMin, float64(r.Timing.PeakRSSBytes)/(1<<30))
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
	r.Mechanism.print(w)
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
	fmt.Fprintln(w, "\nprediction the recording could confirm, per attestation and sync committee subnet: peers subscribed, peers that sent messages, peers that sent only IHAVE")
	for _, s := range r.Subnets {
		fmt.Fprintf(w, "  attestation subnet %d: %d subscribed, %d sent messages (%d unasked, from their mesh), %d only IHAVE\n", s.Subnet, s.Subscribed, s.FullSenders, s.Forwarders, s.IHaveOnly)
	}
	for _, s := range r.SyncSubnets {
		fmt.Fprintf(w, "  sync committee subnet %d: %d subscribed, %d sent messages (%d unasked, from their mesh), %d only IHAVE\n", s.Subnet, s.Subscribed, s.FullSenders, s.Forwarders, s.IHaveOnly)
	}
	fmt.Fprint(w, "echoes: copies per delivered message from peers the observed node had already sent it to (go, jvm and js peers forward those; rust and nim peers leave out the ones that reached them before their forward):")
	for _, c := range gossip.Categories() {
		if r.Delivered[c] > 0 && c != gossip.Control {
			fmt.Fprintf(w, " %s %.2f", c, float64(r.Echoes[c])/float64(r.Delivered[c]))
		}
	}
	fmt.Fprint(w, "\nwithheld: forwards per delivered message the real peers left out because the observed node's copy reached them first:")
	for _, c := range gossip.Categories() {
		if r.Delivered[c] > 0 && c != gossip.Control {
			fmt.Fprintf(w, " %s %.2f", c, float64(r.Withheld[c])/float64(r.Delivered[c]))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "the observed node in its peers' meshes (the model's own figure): per category, share of the measured time in one subscribed peer's mesh, and peers whose mesh holds it per topic")
	for _, m := range r.MeshShares {
		fmt.Fprintf(w, "  %s: %.2f of the time (%d peer-topic pairs), in %.1f peers' meshes\n", m.Category, m.Share, m.Pairs, m.Meshes)
	}
	var delivered int64
	for c, v := range r.Delivered {
		if c != gossip.Control {
			delivered += v
		}
	}
	fmt.Fprintf(w, "IWANT ids the observed node sent per delivered message: %.2f (go-libp2p-pubsub asks every peer that advertised an unseen id within the heartbeat, so one message can be asked of several)\n",
		float64(r.ControlOut["iwant"].IDs)/float64(max(delivered, 1)))
	g, p := r.Control["graft"].Entries, r.Control["prune"].Entries
	fmt.Fprintf(w, "GRAFT received %.0f/h, PRUNE received %.0f/h\n", float64(g)*perHour, float64(p)*perHour)
	b := r.Boundary
	fmt.Fprintf(w, "periphery: %d messages delivered (%d of them on IWANT), %d IHAVE ids, %d GRAFTs sent, %d PRUNEs received, %d forwards discarded, %d failed deliveries\n",
		b.Published, b.IWantAnswered, b.IHaveIDs, b.GraftsSent, b.PrunesIn, b.MessagesIn, r.BoundaryErrors)
}

// outsideKindsLine counts the outside peers by kind.
func outsideKindsLine(pl *NeighbourhoodPlan) string {
	k := map[string]int{}
	for _, p := range pl.Peers {
		for _, o := range p.Outside {
			k[o.Kind]++
		}
	}
	var parts []string
	for _, name := range topology.MixKinds {
		parts = append(parts, fmt.Sprintf("%s %d", name, k[name]))
	}
	return strings.Join(parts, ", ")
}

// toppedUp counts the subscriptions the real peers' subnet search added.
func (pl *NeighbourhoodPlan) toppedUp() int {
	n := 0
	for _, p := range pl.Peers {
		n += p.ToppedUp
	}
	return n
}

func kindsLine(pl *NeighbourhoodPlan) string {
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

// spread is the mean, sample standard deviation, minimum and maximum of a figure over runs.
type spread struct{ mean, sd, min, max float64 }

func spreadOf(v []float64) spread {
	if len(v) == 0 {
		return spread{}
	}
	s := spread{min: v[0], max: v[0]}
	for _, x := range v {
		s.mean += x
		s.min, s.max = min(s.min, x), max(s.max, x)
	}
	s.mean /= float64(len(v))
	if len(v) > 1 {
		for _, x := range v {
			s.sd += (x - s.mean) * (x - s.mean)
		}
		s.sd = math.Sqrt(s.sd / float64(len(v)-1))
	}
	return s
}

func (s spread) String(format string) string {
	f := func(x float64) string { return fmt.Sprintf(format, x) }
	return f(s.mean) + " ± " + f(s.sd) + " (" + f(s.min) + "–" + f(s.max) + ")"
}

// WriteCalibration prints the calibration over several runs (seeds) of one form: per
// category the recording, the mean ± sd and the range of plain MiB/h, the mean's ratio to
// the recording, and copies; IHAVE ids, GRAFT and PRUNE received per hour; control by kind;
// and per attestation subnet the peers that sent full messages and those that sent only
// IHAVE. labels name the runs (their seeds).
func WriteCalibration(w io.Writer, labels []string, runs []Summary) error {
	if len(runs) == 0 {
		return fmt.Errorf("calibration: no runs")
	}
	first := runs[0]
	for i, r := range runs {
		if r.Subnets != first.Subnets || r.TimeScale != first.TimeScale || r.Slots != first.Slots {
			return fmt.Errorf("calibration: run %s is %d subnets, %d slots at %g×, run %s %d subnets, %d slots at %g×: only runs of one form combine",
				labels[i], r.Subnets, r.Slots, r.TimeScale, labels[0], first.Subnets, first.Slots, first.TimeScale)
		}
	}
	complete, lag := true, 0.0
	for _, r := range runs {
		complete = complete && r.Complete
		lag = max(lag, r.MaxLagMs)
	}
	fmt.Fprintf(w, "calibration over %d runs (%s): %d attestation subnets (per-subnet figures ×%.0f to 64), %d slots at %g×; delivery complete in every run: %v; max lag %.0f ms\n\n",
		len(runs), strings.Join(labels, ", "), first.Subnets, float64(gossip.AttestationSubnets)/float64(first.Subnets), first.Slots, first.TimeScale, complete, lag)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "category\trecording MiB/h\tplain MiB/h: mean ± sd (min–max)\tmean vs recording\twithin ±25 %\tcopies: mean (min–max)\trecording copies\t")
	for ci, c := range first.Categories {
		var mib, cp []float64
		for _, r := range runs {
			mib = append(mib, r.Categories[ci].MiBh)
			if v := r.Categories[ci].Copies; v != nil {
				cp = append(cp, *v)
			}
		}
		m, k := spreadOf(mib), spreadOf(cp)
		ratio := m.mean / c.RecordingMiBh
		copies, rec := "", ""
		if len(cp) < len(runs) {
			copies = "not measured"
		} else if c.Category != gossip.Control.String() {
			copies, rec = fmt.Sprintf("%.2f (%.2f–%.2f)", k.mean, k.min, k.max), fmt.Sprintf("%.1f", c.RecordingCopies)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%.2f\t%v\t%s\t%s\t\n", c.Category, c.RecordingMiBh, m.String("%.1f"), ratio, math.Abs(ratio-1) <= 0.25, copies, rec)
	}
	var ids, graft, prune []float64
	for _, r := range runs {
		perHour := 3600 / r.SimulatedS
		ids = append(ids, r.IHaveIDsPerH/1e6)
		graft = append(graft, float64(r.Control["graft"].Entries)*perHour)
		prune = append(prune, float64(r.Control["prune"].Entries)*perHour)
	}
	is := spreadOf(ids)
	fmt.Fprintf(tw, "IHAVE M ids/h\t%.0f\t%s\t%.2f\t%v\t\t\t\n", first.RecordingIDsH/1e6, is.String("%.1f"), is.mean*1e6/first.RecordingIDsH, math.Abs(is.mean*1e6/first.RecordingIDsH-1) <= 0.25)
	tw.Flush()
	fmt.Fprintf(w, "\nGRAFT received per hour: %s; PRUNE received per hour: %s\n", spreadOf(graft).String("%.0f"), spreadOf(prune).String("%.0f"))
	writeMechanismSpread(w, runs)
	fmt.Fprintln(w, "\ncontrol received by kind per simulated hour (measured, not scaled to 64 subnets):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tMiB/h: mean ± sd (min–max)\tids per hour: mean (min–max)\t")
	for _, k := range gossip.ControlKinds() {
		var b, n []float64
		for _, r := range runs {
			perHour := 3600 / r.SimulatedS
			v := r.Control[k.String()]
			b = append(b, float64(v.RawBytes)*perHour/(1<<20))
			n = append(n, float64(v.IDs)*perHour)
		}
		ns := spreadOf(n)
		fmt.Fprintf(tw, "%s\t%s\t%.3g (%.3g–%.3g)\t\n", k, spreadOf(b).String("%.1f"), ns.mean, ns.min, ns.max)
	}
	tw.Flush()
	var subscribed, full, fwd, only []float64
	for _, r := range runs {
		for _, s := range r.Subnet {
			subscribed = append(subscribed, float64(s.Subscribed))
			full = append(full, float64(s.FullSenders))
			fwd = append(fwd, float64(s.Forwarders))
			only = append(only, float64(s.IHaveOnly))
		}
	}
	fmt.Fprint(w, "\nthe observed node's mesh per topic, mean size over the measured slots: mean (min–max) over runs:")
	for _, c := range gossip.Categories() {
		var v []float64
		for _, r := range runs {
			if x, ok := r.Timing.Mesh[c.String()]; ok {
				v = append(v, x.Mean)
			}
		}
		if len(v) > 0 {
			m := spreadOf(v)
			fmt.Fprintf(w, " %s %.1f (%.1f–%.1f)", c, m.mean, m.min, m.max)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "\nper attestation subnet (%d subnet views over the runs): subscribed peers %s, peers that sent full messages %s (unasked, from their mesh: %s), peers that sent only IHAVE %s\n",
		len(full), spreadOf(subscribed).String("%.1f"), spreadOf(full).String("%.1f"), spreadOf(fwd).String("%.1f"), spreadOf(only).String("%.1f"))
	subscribed, full, only = nil, nil, nil
	for _, r := range runs {
		for _, s := range r.SyncSubnet {
			subscribed = append(subscribed, float64(s.Subscribed))
			full = append(full, float64(s.FullSenders))
			only = append(only, float64(s.IHaveOnly))
		}
	}
	if len(full) > 0 {
		fmt.Fprintf(w, "per sync committee subnet (%d subnet views over the runs): subscribed peers %s, peers that sent full messages %s, peers that sent only IHAVE %s\n",
			len(full), spreadOf(subscribed).String("%.1f"), spreadOf(full).String("%.1f"), spreadOf(only).String("%.1f"))
	}
	shares, meshes := map[string][]float64{}, map[string][]float64{}
	var cats []string
	for _, r := range runs {
		for _, m := range r.MeshShares {
			if _, ok := shares[m.Category]; !ok {
				cats = append(cats, m.Category)
			}
			shares[m.Category] = append(shares[m.Category], m.Share)
			meshes[m.Category] = append(meshes[m.Category], m.Meshes)
		}
	}
	echo, withheld := map[string][]float64{}, map[string][]float64{}
	for _, r := range runs {
		for _, c := range r.Categories {
			if c.Category != gossip.Control.String() {
				echo[c.Category] = append(echo[c.Category], r.EchoesPerMsg[c.Category])
				withheld[c.Category] = append(withheld[c.Category], r.WithheldPerMsg[c.Category])
			}
		}
	}
	var iw []float64
	for _, r := range runs {
		iw = append(iw, r.IWantSentPerMsg)
	}
	fmt.Fprintf(w, "\nIWANT ids the observed node sent per delivered message: %s\n", spreadOf(iw).String("%.2f"))
	fmt.Fprint(w, "echoes, copies per message from peers the observed node had already sent it to, mean (min–max) over runs:")
	for _, c := range first.Categories {
		if v, ok := echo[c.Category]; ok {
			e := spreadOf(v)
			fmt.Fprintf(w, " %s %.2f (%.2f–%.2f)", c.Category, e.mean, e.min, e.max)
		}
	}
	fmt.Fprint(w, "\nwithheld forwards per message (the real peers' copies left out because the observed node's reached them first), mean (min–max) over runs:")
	for _, c := range first.Categories {
		if v, ok := withheld[c.Category]; ok {
			e := spreadOf(v)
			fmt.Fprintf(w, " %s %.2f (%.2f–%.2f)", c.Category, e.mean, e.min, e.max)
		}
	}
	fmt.Fprintln(w)
	if len(cats) > 0 {
		fmt.Fprintln(w, "\nthe observed node in its peers' meshes, per category: share of the time in one subscribed peer's mesh, and peers whose mesh holds it per topic, mean ± sd (min–max) over runs:")
		for _, c := range cats {
			fmt.Fprintf(w, "  %s: share %s, meshes %s\n", c, spreadOf(shares[c]).String("%.2f"), spreadOf(meshes[c]).String("%.1f"))
		}
	}
	return nil
}
