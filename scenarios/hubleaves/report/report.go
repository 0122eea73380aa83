package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/streamsim/streamsim/analysis"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
)

// RunReport is a hub-leaves run read back from its outputs: the live-check table's content.
// Its JSON form is what `streamsim run --json` and `streamsim report --json` print.
type RunReport struct {
	Dir        string `json:"dir"`
	Profile    string `json:"profile"`
	Payload    string `json:"payload"`
	Publishers int    `json:"publishers"`
	analysis.Verdict
	Parity ParityReport `json:"parity"`
	Leaves []LeafReport `json:"leaves"`
	Hub    HubReport    `json:"hub"`
	// HubMemory is the hub's codec state per codec: encoders on its outbound streams plus
	// decoders on its inbound ones, summed over its peers on that codec (memory.go).
	HubMemory []HubCodecMemory `json:"hub_memory"`
	Drops     int64            `json:"drops"`
	DropsBy   map[string]int64 `json:"drops_by"`
	Errors    int64            `json:"stream_errors"`
	Schedule  ScheduleReport   `json:"schedule"`
	// Faults is the per-message accounting of a run with a fault schedule (faults.go): then
	// it, not count parity, decides each leaf's verdict, and drops are accounted per message.
	Faults *analysis.FaultAccounting `json:"faults,omitempty"`
	// Soak is the resource trend check (soak.go).
	Soak *analysis.SoakReport `json:"soak,omitempty"`
	// LatencyNote says why the leaves hold no delivery latency (latency.go), empty when they
	// do.
	LatencyNote string `json:"latency_note,omitempty"`

	Nodes   []*result.NodeSummary `json:"-"`
	faulted bool
}

// ParityReport compares what each leaf received with the published set.
type ParityReport struct {
	OK        bool                      `json:"ok"`
	Message   string                    `json:"message"`
	Published map[gossip.Category]int64 `json:"published"`
	Leaves    []LeafParity              `json:"leaves"`
}

// LeafParity is one leaf's parity verdict.
type LeafParity struct {
	Codec    string `json:"codec"`
	Group    string `json:"group"`
	Instance int    `json:"instance"`
	OK       bool   `json:"ok"`
	Diff     string `json:"diff,omitempty"`
}

// LeafReport is one leaf's column of the table.
type LeafReport struct {
	Codec    string `json:"codec"`
	Group    string `json:"group"`
	Instance int    `json:"instance"`
	PeerID   string `json:"peer_id"`
	Protocol string `json:"protocol"`
	// WireBytes and RawBytes: inbound from the hub, after and before stream compression.
	WireBytes int64 `json:"wire_bytes"`
	RawBytes  int64 `json:"raw_bytes"`
	// RelativeToPlain is WireBytes as a percentage of the plain leaf's, when the run has one.
	RelativeToPlain *float64                           `json:"relative_to_plain,omitempty"`
	Messages        map[gossip.Category]int64          `json:"messages"`
	Categories      map[gossip.Category]CategoryReport `json:"categories"`
	CPU             LeafCPU                            `json:"cpu"`
	// BandwidthIn is go-libp2p's BandwidthCounter for the leaf's protocol, inbound: WireBytes
	// plus multistream negotiation.
	BandwidthIn int64 `json:"bandwidth_counter_in"`
	// Latency is the leaf's delivery latency per category, from the publisher's publish call
	// to the leaf's first delivery, in wall ms (latency.go); absent when the run recorded no
	// message times (LatencyNote says why).
	Latency map[gossip.Category]*result.LatencyDist `json:"latency,omitempty"`
	// BySlot is the leaf's bytes per category per interval between its resource samples
	// (one slot at the default period; analysis.BytesBySlot), absent in runs from before
	// samples held byte totals.
	BySlot []analysis.SlotBytes `json:"by_slot,omitempty"`
}

// CategoryReport is one category of one leaf.
type CategoryReport struct {
	RawBytes        int64    `json:"raw_bytes"`
	WireBytes       int64    `json:"wire_bytes"`
	RelativeToPlain *float64 `json:"relative_to_plain,omitempty"`
}

// LeafCPU is codec CPU on both ends of a leaf's inbound stream.
type LeafCPU struct {
	Decode    CPU `json:"decode"`     // the leaf decoding
	HubEncode CPU `json:"hub_encode"` // the hub encoding for this leaf
}

// CPU is codec work on one stream direction.
type CPU struct {
	Blocks     int64   `json:"blocks"`
	RawBytes   int64   `json:"raw_bytes"`
	TimeMs     float64 `json:"time_ms"`
	USPerBlock float64 `json:"us_per_block"`
	NsPerByte  float64 `json:"ns_per_byte"`
	CorePct    float64 `json:"core_pct"` // share of one core over the measured phase
	StateBytes int64   `json:"state_bytes"`
}

// HubReport is the hub's side.
type HubReport struct {
	PeerID       string  `json:"peer_id"`
	WireBytesIn  int64   `json:"wire_bytes_in"`
	WireBytesOut int64   `json:"wire_bytes_out"`
	RawBytesOut  int64   `json:"raw_bytes_out"`
	Encode       CPU     `json:"encode"`
	Decode       CPU     `json:"decode"`
	Duration     float64 `json:"duration_s"`
}

// ScheduleReport is the publishers' timing against the schedule.
type ScheduleReport struct {
	TimeScale    float64 `json:"time_scale"`
	Slots        int     `json:"slots"`
	SlotMs       float64 `json:"slot_ms"`
	Published    int64   `json:"published"`
	MaxLagMs     float64 `json:"max_lag_ms"`
	MeanLagMs    float64 `json:"mean_lag_ms"`
	LateMessages int64   `json:"late_messages"`
	ScheduledS   float64 `json:"scheduled_s"`
	ElapsedS     float64 `json:"elapsed_s"`
	// KeptUp: no message published more than one slot late and no drops.
	KeptUp bool `json:"kept_up"`
}

// LoadRun reads a hub-leaves run's outputs: every summary.json under dir (an embedded run's
// --out directory, a local:exec outputs directory or an extracted collect archive).
func LoadRun(dir string) (*RunReport, error) {
	paths, err := result.FindSummaries(dir)
	if err != nil {
		return nil, err
	}
	var nodes []*result.NodeSummary
	for _, p := range paths {
		s, err := result.ReadSummary(p)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, s)
	}
	r := BuildRunReport(nodes)
	r.Dir = dir
	if err := r.latency(paths, nodes); err != nil {
		return nil, err
	}
	if r.faulted {
		r.applyFaultAccounting(analysis.LoadFaultAccounting(dir))
	}
	return r, nil
}

// applyFaultAccounting makes the per-message accounting decide each leaf's verdict.
func (r *RunReport) applyFaultAccounting(a *analysis.FaultAccounting, err error) {
	if err != nil {
		r.Problem("fault accounting: %v", err)
		r.Parity.OK = false
		return
	}
	r.Faults = a
	ok := map[string]bool{}
	for _, ra := range a.Receivers {
		ok[ra.Node] = ra.OK
	}
	r.Parity.OK = a.OK
	for i := range r.Parity.Leaves {
		lp := &r.Parity.Leaves[i]
		lp.OK = ok[fmt.Sprintf("%s/%d", lp.Group, lp.Instance)]
	}
	if a.OK {
		r.Parity.Message = "faults injected: every message at every leaf received once or missing with a reason; identical over the intervals both ends were connected"
	} else {
		r.Parity.Message = "parity FAIL: " + strings.Join(a.Problems, "; ")
		r.Problem("%s", r.Parity.Message)
	}
}

// BuildRunReport joins node summaries into a report.
func BuildRunReport(nodes []*result.NodeSummary) *RunReport {
	r := &RunReport{Verdict: analysis.NewVerdict(), Nodes: nodes, DropsBy: map[string]int64{}, faulted: analysis.Faulted(nodes)}
	var hub *result.NodeSummary
	var leaves, pubs []*result.NodeSummary
	for _, n := range nodes {
		switch n.Role {
		case result.RoleHub:
			hub = n
		case result.RoleLeaf:
			leaves = append(leaves, n)
		case result.RolePublisher:
			pubs = append(pubs, n)
		}
		r.Drops += analysis.AddDrops(r.DropsBy, n)
		r.Errors += n.StreamErrors
		if n.Failure != nil && n.Failure.Kind != result.FailParity { // parity is reported below
			r.Problem("%s %s/%d: %s", n.Role, n.Group, n.Instance, n.Failure.Message)
		}
		r.TakeBuild(n.Build, n.Optimized)
		r.Profile, r.Payload = n.Profile, n.Payload
		r.Schedule.TimeScale, r.Schedule.Slots = n.TimeScale, n.Slots
	}
	r.Publishers = len(pubs)
	sort.SliceStable(leaves, func(i, j int) bool {
		if leaves[i].Group != leaves[j].Group {
			return leaves[i].Group < leaves[j].Group
		}
		return leaves[i].Instance < leaves[j].Instance
	})
	// Order leaves as the run listed them when groups carry an index; plain first otherwise.
	sort.SliceStable(leaves, func(i, j int) bool { return leafOrder(leaves[i]) < leafOrder(leaves[j]) })
	if hub == nil {
		r.Problem("no hub summary")
	}
	if len(leaves) == 0 {
		r.Problem("no leaf summaries")
	}
	r.schedule(pubs)
	r.parity(pubs, leaves)
	r.leaves(hub, leaves)
	if hub != nil {
		r.Hub.PeerID = hub.PeerID
		r.Hub.Duration = hub.Duration
		var enc, dec []result.StreamStats
		for _, s := range hub.Streams {
			if s.Direction == "out" {
				r.Hub.WireBytesOut += s.WireBytes
				r.Hub.RawBytesOut += s.RawBytes
				enc = append(enc, s)
			} else {
				r.Hub.WireBytesIn += s.WireBytes
				dec = append(dec, s)
			}
		}
		r.Hub.Encode = cpuOf(hub.Duration, enc...)
		r.Hub.Decode = cpuOf(hub.Duration, dec...)
		r.HubMemory = hubMemory(hub, r.Leaves)
	}
	if r.Drops > 0 && !r.faulted { // with faults, drops are accounted per message (faults.go)
		r.Problem("pubsub dropped %d (%v): the run did not keep up", r.Drops, r.DropsBy)
	}
	if r.Soak = analysis.BuildSoakReport(nodes); r.Soak != nil && r.Soak.Judged && !r.Soak.OK {
		r.Problem("soak: a resource grew after warm-up (%s)", analysis.SoakRule)
	}
	if r.Schedule.Published > 0 && r.Schedule.MaxLagMs > r.Schedule.SlotMs {
		r.Late("publishing fell behind the schedule by up to %.0f ms (one slot is %.0f ms at time scale %g): lower the time scale",
			r.Schedule.MaxLagMs, r.Schedule.SlotMs, r.Schedule.TimeScale)
	}
	r.Schedule.KeptUp = r.Schedule.Published > 0 && r.Schedule.MaxLagMs <= r.Schedule.SlotMs && r.Drops == 0
	r.NoteBuild()
	return r
}

// leafOrder puts leaves in their run order: groups are named leaf-<index>-<codec>.
func leafOrder(n *result.NodeSummary) int {
	var i int
	if _, err := fmt.Sscanf(n.Group, "leaf-%d", &i); err == nil {
		return i
	}
	if n.Codec == "plain" {
		return -1
	}
	return 1 << 20
}

func (r *RunReport) schedule(pubs []*result.NodeSummary) {
	var lagSum float64
	for _, p := range pubs {
		s := p.Schedule
		if s == nil {
			continue
		}
		r.Schedule.Published += s.Messages
		r.Schedule.MaxLagMs = max(r.Schedule.MaxLagMs, float64(s.MaxLagNs)/1e6)
		lagSum += float64(s.MeanLagNs) / 1e6 * float64(s.Messages)
		r.Schedule.LateMessages += s.LateMessages
		r.Schedule.ScheduledS = max(r.Schedule.ScheduledS, float64(s.ScheduledNs)/1e9)
		r.Schedule.ElapsedS = max(r.Schedule.ElapsedS, float64(s.ElapsedNs)/1e9)
		r.Schedule.SlotMs = float64(s.SlotNs) / 1e6
	}
	if r.Schedule.Published > 0 {
		r.Schedule.MeanLagMs = lagSum / float64(r.Schedule.Published)
	}
}

func (r *RunReport) parity(pubs, leaves []*result.NodeSummary) {
	var published result.Parity
	for _, p := range pubs {
		if p.Parity != nil {
			published.Add(p.Parity)
		}
	}
	r.Parity.Published = published.Messages
	r.Parity.OK = len(leaves) > 0 && len(pubs) > 0
	for _, l := range leaves {
		lp := LeafParity{Codec: l.Codec, Group: l.Group, Instance: l.Instance, OK: true}
		switch {
		case l.Parity == nil:
			lp.OK, lp.Diff = false, "no parity record"
		case !l.Parity.Equal(&published):
			lp.OK, lp.Diff = false, l.Parity.Diff(&published)
		}
		if r.faulted {
			// Missing messages may have a reason: LoadRun's fault accounting decides.
			lp.OK = l.Parity != nil
		}
		if !lp.OK {
			r.Parity.OK = false
		}
		r.Parity.Leaves = append(r.Parity.Leaves, lp)
	}
	if r.faulted && r.Parity.OK {
		r.Parity.Message = "faults injected: judged per message from the message logs (LoadRun)"
		return
	}
	if r.Parity.OK {
		r.Parity.Message = fmt.Sprintf("every leaf received exactly the %d published messages", published.Total())
		return
	}
	// Leaves of one group with the same difference are named once (a group of 200 leaves).
	var bad []string
	ls := r.Parity.Leaves
	for i := 0; i < len(ls); i++ {
		lp := ls[i]
		if lp.OK {
			continue
		}
		j := i
		for j+1 < len(ls) && !ls[j+1].OK && ls[j+1].Group == lp.Group && ls[j+1].Diff == lp.Diff {
			j++
		}
		if j == i {
			bad = append(bad, fmt.Sprintf("%s (%s/%d): %s", lp.Codec, lp.Group, lp.Instance, lp.Diff))
		} else {
			bad = append(bad, fmt.Sprintf("%s (%s/%d to /%d, %d leaves): %s", lp.Codec, lp.Group, lp.Instance, ls[j].Instance, j-i+1, lp.Diff))
		}
		i = j
	}
	if len(pubs) == 0 {
		bad = append(bad, "no publisher summaries")
	}
	r.Parity.Message = "parity FAIL: " + strings.Join(bad, "; ")
	r.Problem("%s", r.Parity.Message)
}

func (r *RunReport) leaves(hub *result.NodeSummary, leaves []*result.NodeSummary) {
	var plain *LeafReport
	for _, l := range leaves {
		lr := LeafReport{
			Codec: l.Codec, Group: l.Group, Instance: l.Instance, PeerID: l.PeerID,
			Messages: map[gossip.Category]int64{}, Categories: map[gossip.Category]CategoryReport{},
		}
		var in []result.StreamStats
		for _, s := range l.Streams {
			if s.Direction != "in" || (hub != nil && s.Peer != hub.PeerID) {
				continue
			}
			in = append(in, s)
			lr.Protocol = s.Protocol
			lr.WireBytes += s.WireBytes
			lr.RawBytes += s.RawBytes
			for c, cb := range s.Categories {
				e := lr.Categories[c]
				e.RawBytes += cb.RawBytes
				e.WireBytes += cb.WireBytes
				lr.Categories[c] = e
			}
		}
		if l.Parity != nil {
			for c, n := range l.Parity.Messages {
				lr.Messages[c] = n
			}
		}
		lr.BandwidthIn = l.Bandwidth[lr.Protocol].In
		lr.BySlot = analysis.NodeBytesBySlot(l)
		lr.CPU.Decode = cpuOf(l.Duration, in...)
		if hub != nil {
			var out []result.StreamStats
			for _, s := range hub.Streams {
				if s.Direction == "out" && s.Peer == l.PeerID {
					out = append(out, s)
				}
			}
			lr.CPU.HubEncode = cpuOf(hub.Duration, out...)
		}
		r.Leaves = append(r.Leaves, lr)
	}
	for i := range r.Leaves {
		if r.Leaves[i].Codec == "plain" {
			plain = &r.Leaves[i]
			break
		}
	}
	if plain == nil {
		return
	}
	for i := range r.Leaves {
		l := &r.Leaves[i]
		l.RelativeToPlain = analysis.PercentOf(l.WireBytes, plain.WireBytes)
		for c, cb := range l.Categories {
			cb.RelativeToPlain = analysis.PercentOf(cb.WireBytes, plain.Categories[c].WireBytes)
			l.Categories[c] = cb
		}
	}
}

// cpuOf sums codec work over stream directions; durationS is the phase it is a share of.
func cpuOf(durationS float64, streams ...result.StreamStats) CPU {
	var c CPU
	var ns int64
	for _, s := range streams {
		// Codecs that do not delimit blocks themselves (zstd's reader) count none: one block
		// per RPC frame is the codecs' contract.
		if s.CodecStats.Units > 0 {
			c.Blocks += s.CodecStats.Units
		} else {
			c.Blocks += s.Frames
		}
		c.RawBytes += s.CodecStats.RawBytes
		ns += s.CodecStats.TimeNs
		c.StateBytes += s.CodecStats.StateBytes
	}
	c.TimeMs = float64(ns) / 1e6
	if c.Blocks > 0 {
		c.USPerBlock = float64(ns) / 1e3 / float64(c.Blocks)
	}
	if c.RawBytes > 0 {
		c.NsPerByte = float64(ns) / float64(c.RawBytes)
	}
	if durationS > 0 {
		c.CorePct = float64(ns) / 1e9 / durationS * 100
	}
	return c
}

// SetDir labels the report with the run's name (streamsim report: the run's label).
func (r *RunReport) SetDir(dir string) { r.Dir = dir }

// WriteJSON writes the report as one indented JSON object.
func (r *RunReport) WriteJSON(w io.Writer) error { return analysis.WriteJSON(w, r) }

// WriteTable prints the live-check table: one column per leaf, shaped like the proposal's
// (docs/inputs.md §1).
func (r *RunReport) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "hub-leaves: profile %s, payload %s, %d slot(s) at %g× real time, %d publishers, 1 hub, %d leaves\n\n",
		r.Profile, r.Payload, r.Schedule.Slots, r.Schedule.TimeScale, r.Publishers, len(r.Leaves))
	shown := r.ShownLeaves()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(label string, cells []string) {
		fmt.Fprint(tw, label+"\t")
		for _, c := range cells {
			fmt.Fprint(tw, c+"\t")
		}
		fmt.Fprintln(tw)
	}
	cells := func(f func(l *LeafReport) string) []string {
		out := make([]string, len(shown))
		for i, j := range shown {
			out[i] = f(&r.Leaves[j])
		}
		return out
	}
	row("", cells(func(l *LeafReport) string { return l.Codec }))
	row("bytes on the wire", cells(func(l *LeafReport) string {
		return analysis.MB(l.WireBytes) + pct(l.RelativeToPlain)
	}))
	row("same data decoded", cells(func(l *LeafReport) string { return analysis.MB(l.RawBytes) }))
	cats := usedCategories(r)
	for _, c := range cats {
		first := r.Leaves[0].Messages[c]
		if !anyMessages(r, c) {
			continue // control entries are not delivered messages
		}
		row("messages "+c.String(), cells(func(l *LeafReport) string {
			if l != &r.Leaves[0] && l.Messages[c] == first {
				return "identical"
			}
			return groupDigits(l.Messages[c])
		}))
	}
	for _, c := range cats {
		row("wire "+c.String(), cells(func(l *LeafReport) string {
			cb := l.Categories[c]
			return analysis.MB(cb.WireBytes) + pct(cb.RelativeToPlain)
		}))
	}
	row("leaf decode µs/block", cells(func(l *LeafReport) string { return fmt.Sprintf("%.2f", l.CPU.Decode.USPerBlock) }))
	row("leaf decode ns/byte", cells(func(l *LeafReport) string { return fmt.Sprintf("%.2f", l.CPU.Decode.NsPerByte) }))
	row("leaf decode % core", cells(func(l *LeafReport) string { return fmt.Sprintf("%.3f %%", l.CPU.Decode.CorePct) }))
	row("hub encode µs/block", cells(func(l *LeafReport) string { return fmt.Sprintf("%.2f", l.CPU.HubEncode.USPerBlock) }))
	row("hub encode ns/byte", cells(func(l *LeafReport) string { return fmt.Sprintf("%.2f", l.CPU.HubEncode.NsPerByte) }))
	row("hub encode % core", cells(func(l *LeafReport) string { return fmt.Sprintf("%.3f %%", l.CPU.HubEncode.CorePct) }))
	row("BandwidthCounter in", cells(func(l *LeafReport) string {
		return fmt.Sprintf("%s (%+d B)", analysis.MB(l.BandwidthIn), l.BandwidthIn-l.WireBytes)
	}))
	row("parity", cells(r.leafParity))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "codec CPU: the codec's own work, the meter's cost apart; plain's is today's per-message Snappy of its messages (docs/results-schema.md)")
	for _, g := range r.leafGroups() {
		if g.n > 1 {
			ok := 0
			for _, p := range r.Parity.Leaves {
				if p.Group == g.group && p.OK {
					ok++
				}
			}
			fmt.Fprintf(w, "leaf group %s: %d leaves of %s, its first shown; parity OK at %d of %d (every leaf in the JSON)\n", g.group, g.n, g.codec, ok, g.n)
		}
	}
	if err := writeHubMemory(w, r.HubMemory); err != nil {
		return err
	}
	s := r.Schedule
	fmt.Fprintf(w, "\nschedule: %d messages published over %.1f s (scheduled %.1f s); lag max %.0f ms, mean %.1f ms; one slot = %.0f ms\n",
		s.Published, s.ElapsedS, s.ScheduledS, s.MaxLagMs, s.MeanLagMs, s.SlotMs)
	fmt.Fprintf(w, "pubsub drops: %d", r.Drops)
	if r.Drops > 0 {
		fmt.Fprintf(w, " %v", r.DropsBy)
	}
	fmt.Fprintf(w, "; stream errors: %d; build: %s\n", r.Errors, r.Build)
	fmt.Fprintf(w, "parity: %s\n", r.Parity.Message)
	if r.Faults != nil {
		if err := analysis.WriteFaultAccounting(w, r.Faults); err != nil {
			return err
		}
	}
	if err := analysis.WriteSoak(w, r.Soak); err != nil {
		return err
	}
	return r.WriteFooter(w)
}

// ShownLeaves are the indexes of the leaves the table and the page show one by one: every
// leaf group's first leaf (a group of many leaves of one codec, --leaves <spec>*<count>,
// would be a column each; they receive the same messages on the same codec).
func (r *RunReport) ShownLeaves() []int {
	var out []int
	for i, l := range r.Leaves {
		if i == 0 || l.Group != r.Leaves[i-1].Group {
			out = append(out, i)
		}
	}
	return out
}

type leafGroup struct {
	group, codec string
	n            int
}

// leafGroups are the run's leaf groups in run order with their sizes.
func (r *RunReport) leafGroups() []leafGroup {
	var out []leafGroup
	for i, l := range r.Leaves {
		if i == 0 || l.Group != r.Leaves[i-1].Group {
			out = append(out, leafGroup{group: l.Group, codec: l.Codec})
		}
		out[len(out)-1].n++
	}
	return out
}

// usedCategories lists categories that carry messages or bytes at any leaf, in report order.
func usedCategories(r *RunReport) []gossip.Category {
	var out []gossip.Category
	for _, c := range gossip.Categories() {
		for _, l := range r.Leaves {
			if l.Messages[c] > 0 || l.Categories[c].WireBytes > 0 {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

func anyMessages(r *RunReport, c gossip.Category) bool {
	for _, l := range r.Leaves {
		if l.Messages[c] > 0 {
			return true
		}
	}
	return false
}

func pct(v *float64) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf(" (%.1f %%)", *v)
}

func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(ch)
	}
	return b.String()
}
