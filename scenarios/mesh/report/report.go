package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/streamsim/streamsim/analysis"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/workload"
)

// recordingMiBPerHour is the recorded all-subnets node's inbound traffic per category
// (docs/inputs.md §1): the mesh's calibration target for the observed node's plain inbound bytes.
var recordingMiBPerHour = map[gossip.Category]float64{
	gossip.Attestation: 3188, gossip.Aggregate: 138, gossip.Block: 154, gossip.DataColumn: 109,
	gossip.Control: 1946, gossip.SyncCommittee: 45,
}

// MeshReport is a mesh run read back from its outputs.
type MeshReport struct {
	Dir       string   `json:"dir"`
	Nodes     int      `json:"nodes"`
	Slots     int      `json:"slots"`
	TimeScale float64  `json:"time_scale"`
	Seed      int64    `json:"seed"`
	Codecs    []string `json:"codecs"` // protocols offered across the mesh
	analysis.Verdict

	// Observed is the observed node: bytes per category and control kind in and out.
	Observed MeshNode `json:"observed"`
	// Calibration compares the observed node's inbound traffic per hour of simulated time
	// with the recording's, per category: raw bytes (the plain baseline) and wire bytes.
	Calibration []CalibrationRow `json:"calibration"`
	// Kinds sums the nodes of each population kind.
	Kinds []MeshKind `json:"kinds"`
	// Copies is received copies per unique delivered message, per category: the observed
	// node's and the mean over all nodes.
	Copies    map[gossip.Category]float64 `json:"copies_observed"`
	CopiesAll map[gossip.Category]float64 `json:"copies_all"`
	// IHaveIDsPerMessage is the message ids the observed node was offered in IHAVEs per
	// message it received (first copies, every topic).
	IHaveIDsPerMessage float64 `json:"ihave_ids_per_message"`
	// Delivery is completeness: expected and delivered messages over all nodes, per category,
	// and the nodes that missed any.
	Delivery MeshDelivery                 `json:"delivery"`
	Latency  map[gossip.Category]*Latency `json:"latency"`
	// LatencyByRegion is the same per receiving node's region, when links were shaped with
	// regions (without the CDF).
	LatencyByRegion map[string]map[gossip.Category]*Latency `json:"latency_by_region,omitempty"`
	MeshPeers       MeshPeers                               `json:"mesh_peers"`
	Drops           int64                                   `json:"drops"`
	// Links summarizes shaped links ("" when unshaped): node classes and rates, regions, and
	// the shaper's worst lateness (its accuracy).
	Links      string  `json:"links,omitempty"`
	LinkLateMs float64 `json:"link_late_max_ms,omitempty"`
	// MaxBacklog is the longest outbound queue of any node (RPCs), on MaxBacklogLink.
	MaxBacklog     int64  `json:"max_backlog"`
	MaxBacklogLink string `json:"max_backlog_link,omitempty"`
	// DropLinks lists the links whose outbound queue overflowed most: "from → to: n".
	DropLinks  []string         `json:"drop_links,omitempty"`
	DropsBy    map[string]int64 `json:"drops_by"`
	Errors     int64            `json:"stream_errors"`
	MaxLagMs   float64          `json:"max_lag_ms"`
	SlotMs     float64          `json:"slot_ms"`
	Process    *result.Process  `json:"process,omitempty"`
	CopiesCost float64          `json:"cpu_us_per_copy"` // process CPU per received copy (all nodes)
	// Clock and Transport: what the run's nodes ran on (real unless a summary says virtual).
	Clock     string `json:"clock"`
	Transport string `json:"transport,omitempty"`
	// Faults and Soak: reliability checks (faults.go, soak.go); with faults the per-message
	// accounting replaces the count check of delivery and drops.
	Faults *analysis.FaultAccounting `json:"faults,omitempty"`
	Soak   *analysis.SoakReport      `json:"soak,omitempty"`
	// CPUPerSimMinute and WallPerSimMinute are process CPU and wall seconds (every process of
	// the run, measured phase) per minute of simulated time (the virtual clock's simulated
	// seconds; on the real clock slots × 12 s, whatever the time scale): what a simulated
	// minute costs, beside the peak memory (Process.MaxRSSBytes).
	CPUPerSimMinute  float64 `json:"cpu_s_per_simulated_minute,omitempty"`
	WallPerSimMinute float64 `json:"wall_s_per_simulated_minute,omitempty"`

	nodes []*result.NodeSummary
}

// MeshNode is one node's traffic.
type MeshNode struct {
	Group    string `json:"group"`
	Instance int    `json:"instance"`
	Kind     string `json:"kind"`
	Client   string `json:"client"`
	Peers    int    `json:"peers"`
	// In and Out are raw and wire bytes per category.
	In  map[gossip.Category]result.CategoryBytes `json:"in"`
	Out map[gossip.Category]result.CategoryBytes `json:"out"`
	// WireOfRawPct is, per direction ("in", "out") and category (and "total"), wire bytes as
	// a percentage of the same bytes raw (before stream compression): what the codec left of
	// the traffic this run carried, comparable between runs whose traffic differs (gossip's
	// randomness is not seeded). A category without raw bytes is absent.
	WireOfRawPct map[string]map[string]float64 `json:"wire_of_raw_pct"`
	// ControlIn and ControlOut split control by kind.
	ControlIn  map[string]result.ControlBytes `json:"control_in"`
	ControlOut map[string]result.ControlBytes `json:"control_out"`
	// BySlot is the node's bytes per category in and out per interval between its resource
	// samples (one slot at the default period; analysis.BytesBySlot), absent in runs from
	// before samples held byte totals.
	BySlot []analysis.SlotBytes `json:"by_slot,omitempty"`
	// Codec time over every stream direction, and the largest codec state of one direction.
	CodecTimeMs     float64        `json:"codec_time_ms"`
	CodecStateBytes int64          `json:"codec_state_bytes"`
	Protocols       map[string]int `json:"protocols"` // stream directions per protocol
}

// CalibrationRow is one category of the calibration table.
type CalibrationRow struct {
	Category        gossip.Category `json:"category"`
	RecordingMiBh   float64         `json:"recording_mib_h"`
	RawMiBh         float64         `json:"raw_mib_h"`
	WireMiBh        float64         `json:"wire_mib_h"`
	RawVsRecording  float64         `json:"raw_vs_recording"` // RawMiBh / RecordingMiBh
	WithinTolerance bool            `json:"within_25pct"`
}

// MeshKind is the nodes of one kind, summed.
type MeshKind struct {
	Kind  string                                   `json:"kind"`
	Nodes int                                      `json:"nodes"`
	In    map[gossip.Category]result.CategoryBytes `json:"in"`
	Out   map[gossip.Category]result.CategoryBytes `json:"out"`
	// Copies is received copies (first plus duplicates) per delivered message over the
	// kind's nodes, per category they delivered.
	Copies          map[gossip.Category]float64 `json:"copies"`
	delivered, dups [gossip.NumCategories]int64
}

// MeshDelivery is completeness over the mesh.
type MeshDelivery struct {
	Expected   map[gossip.Category]int64 `json:"expected"`
	Delivered  map[gossip.Category]int64 `json:"delivered"`
	Complete   bool                      `json:"complete"`
	Incomplete []string                  `json:"incomplete,omitempty"` // node: what it missed
}

// Latency is delivery latency from publish to first delivery at each subscribed node (origin
// excluded), and the time until 95 % of a message's subscribers had it.
type Latency struct {
	Deliveries int64   `json:"deliveries"`
	P50Ms      float64 `json:"p50_ms"`
	P90Ms      float64 `json:"p90_ms"`
	P99Ms      float64 `json:"p99_ms"`
	MaxMs      float64 `json:"max_ms"`
	// T95 is, over messages, the median and the largest time to reach 95 % of subscribers.
	T95P50Ms float64 `json:"t95_p50_ms"`
	T95MaxMs float64 `json:"t95_max_ms"`
	// CDFMs is the distribution the percentiles come from: the latency at 0, 2, 4, … 100 %
	// of deliveries (CDFStepPct apart), what the report's CDF charts draw.
	CDFMs []float64 `json:"cdf_ms,omitempty"`
}

// CDFStepPct is the step between the points of a Latency's CDFMs, in percent.
const CDFStepPct = result.CDFStepPct

// latencyCDF samples a sorted latency list at every CDFStepPct percent.
func latencyCDF(sorted []float64) []float64 { return result.LatencyCDF(sorted) }

// MeshPeers summarizes mesh sizes at the end of the run: the observed node's per topic kind,
// and all nodes' mean.
type MeshPeers struct {
	ObservedMean map[gossip.Category]float64 `json:"observed_mean"`
	AllMean      map[gossip.Category]float64 `json:"all_mean"`
}

// GossipMeshKind is the report of a gossip mesh run: the observed node against the recording,
// control by kind, copies, delivery and latency. Runs that differ in codec, seed or links
// join into an A/B comparison.
const GossipMeshKind = result.GossipMeshKind

func init() {
	analysis.RegisterKind(analysis.Kind{
		Name:    GossipMeshKind,
		Load:    func(dir string) (analysis.Report, error) { return LoadMeshRun(dir) },
		Section: meshSection,
		Compare: func(runs []analysis.ABRun, reps []analysis.Report) (analysis.Report, error) {
			reports := make([]*MeshReport, len(reps))
			for i, r := range reps {
				mr, ok := r.(*MeshReport)
				if !ok {
					return nil, fmt.Errorf("run %d: not a %s report", i, GossipMeshKind)
				}
				reports[i] = mr
			}
			return MeshAB(runs, reports), nil
		},
	})
}

// LoadMeshRun reads a mesh run's outputs (summaries and message logs).
func LoadMeshRun(dir string) (*MeshReport, error) {
	paths, err := result.FindSummaries(dir)
	if err != nil {
		return nil, err
	}
	var nodes []*result.NodeSummary
	var logs []string
	for _, p := range paths {
		s, err := result.ReadSummary(p)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, s)
		if s.Messages != "" {
			logs = append(logs, filepath.Join(filepath.Dir(p), s.Messages))
		} else {
			logs = append(logs, "")
		}
	}
	r := BuildMeshReport(nodes)
	r.Dir = dir
	if err := r.latency(logs); err != nil {
		r.Problem("latency: %v", err)
	}
	if analysis.Faulted(nodes) { // reliability hook (faults.go)
		if r.Faults, err = analysis.LoadFaultAccounting(dir); err != nil {
			r.Problem("fault accounting: %v", err)
		} else if !r.Faults.OK {
			r.Problem("fault accounting: %s", strings.Join(r.Faults.Problems, "; "))
		}
	}
	return r, nil
}

// Summaries returns the node summaries the report was built from.
func (r *MeshReport) Summaries() []*result.NodeSummary { return r.nodes }

// BuildMeshReport joins node summaries into a mesh report (latency needs the message logs:
// LoadMeshRun).
func BuildMeshReport(nodes []*result.NodeSummary) *MeshReport {
	r := &MeshReport{Verdict: analysis.NewVerdict(), Nodes: len(nodes), nodes: nodes, DropsBy: map[string]int64{},
		Copies: map[gossip.Category]float64{}, CopiesAll: map[gossip.Category]float64{},
		Delivery:  MeshDelivery{Expected: map[gossip.Category]int64{}, Delivered: map[gossip.Category]int64{}, Complete: true},
		Latency:   map[gossip.Category]*Latency{},
		MeshPeers: MeshPeers{ObservedMean: map[gossip.Category]float64{}, AllMean: map[gossip.Category]float64{}}}
	var observed *result.NodeSummary
	kinds := map[string]*MeshKind{}
	var delivered, dups [gossip.NumCategories]int64
	var meshSum [gossip.NumCategories]float64
	var meshN [gossip.NumCategories]int
	codecs := map[string]bool{}
	var copiesTotal int64
	procs := map[[2]string]*result.Process{}
	var backlogFrom *result.NodeSummary
	var backlogTo string
	for _, n := range nodes {
		if n.Kind == "observed" {
			observed = n
		}
		r.Slots, r.TimeScale, r.Seed = n.Slots, n.TimeScale, n.Seed
		r.TakeBuild(n.Build, n.Optimized)
		if n.Failure != nil && n.Failure.Kind != result.FailParity {
			r.Problem("node %s/%d: %s", n.Group, n.Instance, n.Failure.Message)
		}
		r.Drops += analysis.AddDrops(r.DropsBy, n)
		r.Errors += n.StreamErrors
		r.Clock, r.Transport = cmp.Or(n.Clock, "real"), n.Transport
		if n.Schedule != nil {
			r.MaxLagMs = max(r.MaxLagMs, float64(n.Schedule.MaxLagNs)/1e6)
			r.SlotMs = float64(n.Schedule.SlotNs) / 1e6
		}
		// Nodes sharing a process report it over their own phases: keep the longest.
		if n.Process != nil {
			key := [2]string{n.Process.Host, fmt.Sprint(n.Process.PID)}
			if old := procs[key]; old == nil || n.Process.WallSeconds > old.WallSeconds {
				procs[key] = n.Process
			}
		}
		if n.Pubsub.MaxBacklog > r.MaxBacklog {
			r.MaxBacklog = n.Pubsub.MaxBacklog
			backlogFrom, backlogTo = n, n.Pubsub.MaxBacklogTo
		}
		for _, p := range n.Protocols {
			codecs[p] = true
		}
		k := kinds[n.Kind]
		if k == nil {
			k = &MeshKind{Kind: n.Kind, In: map[gossip.Category]result.CategoryBytes{}, Out: map[gossip.Category]result.CategoryBytes{}, Copies: map[gossip.Category]float64{}}
			kinds[n.Kind] = k
		}
		k.Nodes++
		mn := meshNode(n)
		for c, b := range mn.In {
			k.In[c] = addBytes(k.In[c], b)
		}
		for c, b := range mn.Out {
			k.Out[c] = addBytes(k.Out[c], b)
		}
		for c, v := range n.Pubsub.DeliveredBy {
			delivered[c] += v
			k.delivered[c] += v
			copiesTotal += v
		}
		for c, v := range n.Pubsub.DuplicatesBy {
			dups[c] += v
			k.dups[c] += v
			copiesTotal += v
		}
		for t, m := range n.Pubsub.MeshPeers {
			c := gossip.TopicCategory(t)
			meshSum[c] += float64(m)
			meshN[c]++
		}
		if n.Expected != nil {
			for c, v := range n.Expected.Messages {
				r.Delivery.Expected[c] += v
			}
			got := n.Parity
			if got == nil {
				got = &result.Parity{}
			}
			for c, v := range got.Messages {
				r.Delivery.Delivered[c] += v
			}
			if !got.Equal(n.Expected) && n.FaultSchedule == "" { // with faults: per-message accounting (faults.go)
				r.Delivery.Complete = false
				r.Delivery.Incomplete = append(r.Delivery.Incomplete, fmt.Sprintf("%s/%d (%s): %s; its pubsub drops %d",
					n.Group, n.Instance, n.Kind, got.Diff(n.Expected), n.Pubsub.Drops()))
			}
		}
	}
	for c := range delivered {
		if delivered[c] > 0 {
			r.CopiesAll[gossip.Category(c)] = float64(delivered[c]+dups[c]) / float64(delivered[c])
		}
		if meshN[c] > 0 {
			r.MeshPeers.AllMean[gossip.Category(c)] = meshSum[c] / float64(meshN[c])
		}
	}
	r.Process = combineProcesses(procs)
	if p := r.Process; p != nil && r.Slots > 0 {
		simMin := float64(r.Slots) * workload.SlotDuration.Minutes()
		if p.SimulatedSeconds > 0 {
			simMin = p.SimulatedSeconds / 60
		}
		r.CPUPerSimMinute, r.WallPerSimMinute = p.CPUSeconds/simMin, p.WallSeconds/simMin
	}
	r.DropLinks = dropLinks(nodes)
	r.Links, r.LinkLateMs = linkSummary(nodes)
	if backlogFrom != nil {
		to := backlogTo
		for _, n := range nodes {
			if n.PeerID == backlogTo {
				to = fmt.Sprintf("%s/%d (%s)", n.Group, n.Instance, n.Kind)
			}
		}
		r.MaxBacklogLink = fmt.Sprintf("%s/%d (%s) → %s", backlogFrom.Group, backlogFrom.Instance, backlogFrom.Kind, to)
	}
	for c := range codecs {
		r.Codecs = append(r.Codecs, c)
	}
	sort.Strings(r.Codecs)
	for _, k := range kinds {
		for c, d := range k.delivered {
			if d > 0 {
				k.Copies[gossip.Category(c)] = float64(d+k.dups[c]) / float64(d)
			}
		}
		r.Kinds = append(r.Kinds, *k)
	}
	sort.Slice(r.Kinds, func(i, j int) bool { return r.Kinds[i].Kind < r.Kinds[j].Kind })
	if observed == nil {
		r.Problem("no observed node among %d summaries", len(nodes))
	} else {
		r.Observed = meshNode(observed)
		var uniques int64
		for c, v := range observed.Pubsub.DeliveredBy {
			uniques += v
			if v > 0 {
				r.Copies[c] = float64(v+observed.Pubsub.DuplicatesBy[c]) / float64(v)
			}
		}
		if uniques > 0 {
			r.IHaveIDsPerMessage = float64(r.Observed.ControlIn[gossip.IHave.String()].IDs) / float64(uniques)
		}
		var oSum [gossip.NumCategories]float64
		var oN [gossip.NumCategories]int
		for t, m := range observed.Pubsub.MeshPeers {
			c := gossip.TopicCategory(t)
			oSum[c] += float64(m)
			oN[c]++
		}
		for c := range oN {
			if oN[c] > 0 {
				r.MeshPeers.ObservedMean[gossip.Category(c)] = oSum[c] / float64(oN[c])
			}
		}
		hours := float64(r.Slots) * workload.SlotDuration.Hours()
		for _, c := range gossip.Categories() {
			rec, ok := recordingMiBPerHour[c]
			if !ok {
				continue
			}
			b := r.Observed.In[c]
			row := CalibrationRow{Category: c, RecordingMiBh: rec}
			if hours > 0 {
				row.RawMiBh = float64(b.RawBytes) / (1 << 20) / hours
				row.WireMiBh = float64(b.WireBytes) / (1 << 20) / hours
			}
			row.RawVsRecording = row.RawMiBh / rec
			row.WithinTolerance = math.Abs(row.RawVsRecording-1) <= 0.25
			if !row.WithinTolerance {
				r.Flag(analysis.FlagCalibration, "calibration: the observed node's %s %.0f MiB/h raw is %.2f× the recording's %.0f (outside ±25 %%)", c, row.RawMiBh, row.RawVsRecording, rec)
			}
			r.Calibration = append(r.Calibration, row)
		}
	}
	if !r.Delivery.Complete {
		r.Problem("delivery incomplete at %d node(s)", len(r.Delivery.Incomplete))
	}
	if r.Drops > 0 && !analysis.Faulted(nodes) {
		r.Problem("pubsub dropped %d (%v)", r.Drops, r.DropsBy)
	}
	if r.Soak = analysis.BuildSoakReport(nodes); r.Soak != nil && r.Soak.Judged && !r.Soak.OK { // soak.go
		r.Problem("soak: a resource grew after warm-up (%s)", analysis.SoakRule)
	}
	if r.SlotMs > 0 && r.MaxLagMs > r.SlotMs {
		r.Late("publishing fell behind the schedule by up to %.0f ms (one slot is %.0f ms): lower the time scale", r.MaxLagMs, r.SlotMs)
	}
	if r.MaxBacklog > 1000 {
		r.Notes = append(r.Notes, fmt.Sprintf("an outbound queue grew to %d RPCs (%s): Ethereum clients drop above about 1000, so latency on that link reflects this machine's per-RPC write cost as much as gossip",
			r.MaxBacklog, r.MaxBacklogLink))
	}
	if r.Process.Saturated() {
		r.Flag(analysis.FlagSaturated, "the machine was saturated (process CPU %.0f %% of %d cores on average, %.0f %% in the busiest window, machine %.0f %%, %.1f s of %.1f s at ≥ 85 %%; goroutines waited for a CPU %.1f ms at p99, limit %d ms): latency figures show queueing in this machine, not the network",
			100*r.Process.Utilization, r.Process.Cores, 100*r.Process.PeakUtilization, 100*r.Process.MachinePeak, r.Process.SaturatedSeconds, r.Process.WallSeconds,
			r.Process.SchedP99Ms, result.SchedDelayLimitMs)
	}
	if r.Process != nil && copiesTotal > 0 {
		r.CopiesCost = r.Process.CPUSeconds * 1e6 / float64(copiesTotal)
	}
	r.NoteBuild()
	return r
}

// linkSummary describes the nodes' shaped links: classes with their rates and counts, and
// the number of regions.
func linkSummary(nodes []*result.NodeSummary) (string, float64) {
	classes := map[string]int{}
	rates := map[string]int64{}
	regions := map[string]bool{}
	var late float64
	for _, n := range nodes {
		if l := n.Link; l != nil {
			classes[l.Class]++
			rates[l.Class] = l.UpBitsPerSec
			regions[l.Region] = true
			late = max(late, l.LateMaxMs)
		}
	}
	if len(classes) == 0 {
		return "", 0
	}
	var parts []string
	for c, n := range classes {
		parts = append(parts, fmt.Sprintf("%d %s at %.0f Mbit/s", n, c, float64(rates[c])/1e6))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%s; %d regions", strings.Join(parts, ", "), len(regions)), late
}

// dropLinks names the links with the most RPCs pubsub dropped at a full outbound queue, most
// first (at most 8).
func dropLinks(nodes []*result.NodeSummary) []string {
	name := map[string]string{}
	for _, n := range nodes {
		name[n.PeerID] = fmt.Sprintf("%s/%d (%s, %s)", n.Group, n.Instance, n.Kind, n.Client)
	}
	type link struct {
		s string
		n int64
	}
	var links []link
	for _, n := range nodes {
		for to, d := range n.Pubsub.DroppedTo {
			dst := name[to]
			if dst == "" {
				dst = to
			}
			links = append(links, link{fmt.Sprintf("%s → %s: %d", name[n.PeerID], dst, d), d})
		}
	}
	sort.Slice(links, func(i, j int) bool { return links[i].n > links[j].n })
	var out []string
	for i := 0; i < len(links) && i < 8; i++ {
		out = append(out, links[i].s)
	}
	return out
}

// combineProcesses adds up the CPU of distinct OS processes (one in an embedded run, one per
// node under local:exec): the longest wall time, the cores of every distinct host.
func combineProcesses(procs map[[2]string]*result.Process) *result.Process {
	if len(procs) == 0 {
		return nil
	}
	out := &result.Process{}
	hosts := map[string]int{}
	for _, p := range procs {
		out.CPUSeconds += p.CPUSeconds
		out.WallSeconds = max(out.WallSeconds, p.WallSeconds)
		hosts[p.Host] = p.Cores
		// Under local:exec each node is its own process: their windows do not line up, so
		// the peak is a lower bound there (exact in an embedded run).
		out.PeakUtilization = max(out.PeakUtilization, p.PeakUtilization)
		out.SaturatedSeconds = max(out.SaturatedSeconds, p.SaturatedSeconds)
		out.SampleSeconds = p.SampleSeconds
		out.MachinePeak = max(out.MachinePeak, p.MachinePeak)
		out.MaxRSSBytes += p.MaxRSSBytes
		out.SchedP99Ms = max(out.SchedP99Ms, p.SchedP99Ms)
		out.SchedMaxMs = max(out.SchedMaxMs, p.SchedMaxMs)
		out.SchedEvents += p.SchedEvents
		out.SimulatedSeconds = max(out.SimulatedSeconds, p.SimulatedSeconds)
	}
	for _, c := range hosts {
		out.Cores += c
	}
	if out.WallSeconds > 0 && out.Cores > 0 {
		out.Utilization = out.CPUSeconds / out.WallSeconds / float64(out.Cores)
	}
	return out
}

func addBytes(a, b result.CategoryBytes) result.CategoryBytes {
	return result.CategoryBytes{RawBytes: a.RawBytes + b.RawBytes, WireBytes: a.WireBytes + b.WireBytes}
}

func meshNode(n *result.NodeSummary) MeshNode {
	m := MeshNode{Group: n.Group, Instance: n.Instance, Kind: n.Kind, Client: n.Client, Peers: n.Peers,
		In: map[gossip.Category]result.CategoryBytes{}, Out: map[gossip.Category]result.CategoryBytes{},
		ControlIn: map[string]result.ControlBytes{}, ControlOut: map[string]result.ControlBytes{}, Protocols: map[string]int{}}
	// Every control kind is in the JSON, zero included: a kind none was counted of is a
	// measured zero, not a missing figure.
	for _, k := range gossip.ControlKinds() {
		m.ControlIn[k.String()], m.ControlOut[k.String()] = result.ControlBytes{}, result.ControlBytes{}
	}
	for _, s := range n.Streams {
		cats, ctl := m.In, m.ControlIn
		if s.Direction == "out" {
			cats, ctl = m.Out, m.ControlOut
		}
		for c, b := range s.Categories {
			cats[c] = addBytes(cats[c], b)
		}
		for k, b := range s.Control {
			x := ctl[k]
			x.RawBytes += b.RawBytes
			x.WireBytes += b.WireBytes
			x.Entries += b.Entries
			x.IDs += b.IDs
			ctl[k] = x
		}
		m.CodecTimeMs += float64(s.CodecStats.TimeNs) / 1e6
		m.CodecStateBytes = max(m.CodecStateBytes, s.CodecStats.StateBytes)
		m.Protocols[s.Protocol]++
	}
	m.WireOfRawPct = map[string]map[string]float64{"in": wireOfRaw(m.In), "out": wireOfRaw(m.Out)}
	m.BySlot = analysis.NodeBytesBySlot(n)
	return m
}

// wireOfRaw is wire bytes as a percentage of raw bytes per category and in total, over the
// categories with raw bytes.
func wireOfRaw(cats map[gossip.Category]result.CategoryBytes) map[string]float64 {
	out := map[string]float64{}
	var t result.CategoryBytes
	for c, b := range cats {
		if pct, ok := result.PercentOf(float64(b.WireBytes), float64(b.RawBytes)); ok {
			out[c.String()] = pct
			t = addBytes(t, b)
		}
	}
	if pct, ok := result.PercentOf(float64(t.WireBytes), float64(t.RawBytes)); ok {
		out["total"] = pct
	}
	return out
}

// latency reads every node's message log and computes delivery latency per category.
func (r *MeshReport) latency(logs []string) error {
	type pub struct {
		at     int64
		topic  string
		origin int
	}
	pubs := map[[result.IDBytes]byte]pub{}
	dels := make([][]result.MessageEvent, len(logs))
	for i, path := range logs {
		if path == "" {
			continue
		}
		evs, err := result.ReadMessages(path)
		if err != nil {
			return err
		}
		for _, e := range evs {
			if e.Published {
				pubs[e.ID] = pub{e.At, e.Topic, i}
			} else {
				dels[i] = append(dels[i], e)
			}
		}
	}
	if len(pubs) == 0 {
		return nil
	}
	// Subscribers per topic (the origin excluded per message below).
	subs := map[string]int{}
	for _, n := range r.nodes {
		for _, t := range n.Topics {
			subs[t]++
		}
	}
	lat := map[gossip.Category][]float64{}
	byRegion := map[string]map[gossip.Category][]float64{}
	perMsg := map[[result.IDBytes]byte][]float64{}
	for i, evs := range dels {
		region := ""
		if l := r.nodes[i].Link; l != nil {
			region = l.Region
		}
		for _, e := range evs {
			p, ok := pubs[e.ID]
			if !ok || p.origin == i {
				continue
			}
			ms := float64(e.At-p.at) / 1e6
			c := gossip.TopicCategory(p.topic)
			lat[c] = append(lat[c], ms)
			perMsg[e.ID] = append(perMsg[e.ID], ms)
			if region != "" {
				if byRegion[region] == nil {
					byRegion[region] = map[gossip.Category][]float64{}
				}
				byRegion[region][c] = append(byRegion[region][c], ms)
			}
		}
	}
	for region, cats := range byRegion {
		if r.LatencyByRegion == nil {
			r.LatencyByRegion = map[string]map[gossip.Category]*Latency{}
		}
		r.LatencyByRegion[region] = map[gossip.Category]*Latency{}
		for c, ls := range cats {
			sort.Float64s(ls)
			r.LatencyByRegion[region][c] = &Latency{Deliveries: int64(len(ls)), P50Ms: result.Quantile(ls, 0.5), P90Ms: result.Quantile(ls, 0.9), P99Ms: result.Quantile(ls, 0.99), MaxMs: ls[len(ls)-1]}
		}
	}
	t95 := map[gossip.Category][]float64{}
	for id, ls := range perMsg {
		p := pubs[id]
		n := subs[p.topic]
		if slices.Contains(r.nodes[p.origin].Topics, p.topic) {
			n--
		}
		need := int(math.Ceil(0.95 * float64(n)))
		if need < 1 || len(ls) < need {
			continue
		}
		sort.Float64s(ls)
		t95[gossip.TopicCategory(p.topic)] = append(t95[gossip.TopicCategory(p.topic)], ls[need-1])
	}
	for c, ls := range lat {
		sort.Float64s(ls)
		l := &Latency{Deliveries: int64(len(ls)), P50Ms: result.Quantile(ls, 0.5), P90Ms: result.Quantile(ls, 0.9), P99Ms: result.Quantile(ls, 0.99), MaxMs: ls[len(ls)-1], CDFMs: latencyCDF(ls)}
		if ts := t95[c]; len(ts) > 0 {
			sort.Float64s(ts)
			l.T95P50Ms, l.T95MaxMs = result.Quantile(ts, 0.5), ts[len(ts)-1]
		}
		r.Latency[c] = l
	}
	return nil
}

// SetDir labels the report with the run's name (streamsim report: the run's label).
func (r *MeshReport) SetDir(dir string) { r.Dir = dir }

// WriteJSON writes the report as one indented JSON object.
func (r *MeshReport) WriteJSON(w io.Writer) error { return analysis.WriteJSON(w, r) }

// WriteTable prints the mesh report.
func (r *MeshReport) WriteTable(w io.Writer) error {
	virtual := r.Clock == "virtual"
	pace := fmt.Sprintf("%g× real time", r.TimeScale)
	if virtual {
		pace = "on the virtual clock"
	}
	fmt.Fprintf(w, "mesh: %d nodes, %d slots %s, seed %d; protocols %s\n", r.Nodes, r.Slots, pace, r.Seed, strings.Join(r.Codecs, ", "))
	switch {
	case r.Links != "" && virtual:
		fmt.Fprintf(w, "shaped links: %s, in simulated time\n", r.Links)
	case r.Links != "":
		fmt.Fprintf(w, "shaped links: %s; the shaper woke up to %.1f ms late\n", r.Links, r.LinkLateMs)
	case virtual:
		fmt.Fprintln(w, "links: unshaped simulated links (latency is the charged codec CPU and any validation delay)")
	default:
		fmt.Fprintln(w, "links: unshaped loopback (latency is processing and queueing in this machine)")
	}
	fmt.Fprintln(w)
	o := r.Observed
	fmt.Fprintf(w, "observed node %s/%d (%s, %d peers): inbound per hour of simulated time against the recording (plain = raw bytes)\n", o.Group, o.Instance, o.Client, o.Peers)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "category\trecording MiB/h\traw MiB/h\tvs recording\twire MiB/h\twire/raw\tcopies\t")
	for _, row := range r.Calibration {
		ok := ""
		if !row.WithinTolerance {
			ok = " (outside ±25 %)"
		}
		wr := 0.0
		if row.RawMiBh > 0 {
			wr = row.WireMiBh / row.RawMiBh
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.1f\t%.0f %%%s\t%.1f\t%.1f %%\t%.2f\t\n", row.Category, row.RecordingMiBh, row.RawMiBh, 100*row.RawVsRecording, ok,
			row.WireMiBh, 100*wr, r.Copies[row.Category])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nobserved node's control traffic by kind")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tin raw\tin wire\tin ids\tout raw\tout wire\tout ids\t")
	for _, k := range gossip.ControlKinds() {
		in, out := o.ControlIn[k.String()], o.ControlOut[k.String()]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%d\t\n", k, analysis.MB(in.RawBytes), analysis.MB(in.WireBytes), in.IDs, analysis.MB(out.RawBytes), analysis.MB(out.WireBytes), out.IDs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nnodes by kind: inbound and outbound wire bytes (raw in parentheses), copies per delivered message")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tnodes\tcategory\tin\tout\t")
	for _, k := range r.Kinds {
		for _, c := range gossip.Categories() {
			in, out := k.In[c], k.Out[c]
			if in.RawBytes == 0 && out.RawBytes == 0 {
				continue
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s (%s)\t%s (%s)\t\n", k.Kind, k.Nodes, c, analysis.MB(in.WireBytes), analysis.MB(in.RawBytes), analysis.MB(out.WireBytes), analysis.MB(out.RawBytes))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\ndelivery: latency from publish to first delivery (origin excluded), time to 95 % of subscribers, copies (all nodes)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "category\texpected\tdelivered\tp50 ms\tp90 ms\tp99 ms\tmax ms\tt95 p50 ms\tt95 max ms\tcopies\tmesh (obs/all)\t")
	for _, c := range gossip.Categories() {
		l := r.Latency[c]
		if r.Delivery.Expected[c] == 0 && l == nil {
			continue
		}
		if l == nil {
			l = &Latency{}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t%.1f/%.1f\t\n", c, r.Delivery.Expected[c], r.Delivery.Delivered[c],
			l.P50Ms, l.P90Ms, l.P99Ms, l.MaxMs, l.T95P50Ms, l.T95MaxMs, r.CopiesAll[c], r.MeshPeers.ObservedMean[c], r.MeshPeers.AllMean[c])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\npubsub drops: %d; stream errors: %d; max publish lag %.0f ms (slot %.0f ms); build: %s\n", r.Drops, r.Errors, r.MaxLagMs, r.SlotMs, r.Build)
	if p := r.Process; p != nil {
		if p.SimulatedSeconds > 0 {
			// The virtual clock: no CPU windows (simulated time says nothing of this machine's).
			fmt.Fprintf(w, "clock: %s (%s): %.1f s simulated in %.1f s wall; process CPU %.1f s; %.1f µs per received copy\n",
				r.Clock, r.Transport, p.SimulatedSeconds, p.WallSeconds, p.CPUSeconds, r.CopiesCost)
		} else {
			fmt.Fprintf(w, "process CPU: %.1f s over %.1f s on %d cores (%.0f %% on average, %.0f %% in the busiest %.2f s, machine %.0f %%, %.1f s at ≥ 85 %%); goroutines waited for a CPU %.1f ms at p99 (max %.0f ms); %.1f µs per received copy\n",
				p.CPUSeconds, p.WallSeconds, p.Cores, 100*p.Utilization, 100*p.PeakUtilization, p.SampleSeconds, 100*p.MachinePeak, p.SaturatedSeconds, p.SchedP99Ms, p.SchedMaxMs, r.CopiesCost)
		}
		fmt.Fprintf(w, "cost per simulated minute: %.1f s of wall, %.1f CPU s; peak memory %s\n", r.WallPerSimMinute, r.CPUPerSimMinute, analysis.MB(p.MaxRSSBytes))
		var state, dirs int64
		for _, n := range r.nodes {
			for _, st := range n.Streams {
				if st.CodecStats.StateBytes > 0 {
					state += st.CodecStats.StateBytes
					dirs++
				}
			}
		}
		if dirs > 0 {
			fmt.Fprintf(w, "codec state: %s over %d compressed stream directions (%s each on average)\n", analysis.MB(state), dirs, analysis.MB(state/dirs))
		}
	}
	for _, l := range r.DropLinks {
		fmt.Fprintf(w, "dropped at a full queue: %s\n", l)
	}
	if r.Delivery.Complete {
		fmt.Fprintln(w, "delivery: complete (every node received every message of its topics exactly once)")
	} else {
		for _, s := range r.Delivery.Incomplete {
			fmt.Fprintf(w, "incomplete: %s\n", s)
		}
	}
	if r.Faults != nil { // reliability (faults.go, soak.go)
		if err := analysis.WriteFaultAccounting(w, r.Faults); err != nil {
			return err
		}
	}
	if err := analysis.WriteSoak(w, r.Soak); err != nil {
		return err
	}
	return r.WriteFooter(w)
}
