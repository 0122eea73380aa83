// Package result is the schema every streamsim scenario writes and every report reads: one
// summary per instance (node), its stream meters, parity, schedule, build and failure.
package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/streamsim/streamsim/gossip"
)

// SummaryFile is the name of the summary asset every instance writes into its outputs
// directory (Testground layout: <run>/<group>/<instance>/summary.json).
const SummaryFile = "summary.json"

// SummaryVersion is the version of NodeSummary this package writes. Version 1 (hub-leaves
// only, failures as bare strings) is still read.
const SummaryVersion = 2

// Roles of instances (topology.Role values, as strings so this package stays light).
const (
	RolePublisher = "publisher"
	RoleHub       = "hub"
	RoleLeaf      = "leaf"
	RoleNode      = "node"
)

// FailureKind classifies why an instance failed, so reports never parse messages.
type FailureKind string

const (
	// FailSetup: bad parameters, a host or the address exchange failed before the run.
	FailSetup FailureKind = "setup"
	// FailPeer: another instance announced its failure, so this one stopped.
	FailPeer FailureKind = "peer"
	// FailRun: the measured phase failed (publishing, a barrier, a timeout).
	FailRun FailureKind = "run"
	// FailParity: what the node received differs from what was published to it.
	FailParity FailureKind = "parity"
	// FailTimeout: the instance did not finish within its time budget (param timeout).
	FailTimeout FailureKind = "timeout"
	// FailCrash: the instance crashed (the fault schedule's crash); it writes no summary, so
	// this kind appears only in the run's error.
	FailCrash FailureKind = "crash"
)

// Failure is an instance's failure: its kind and a message for people.
type Failure struct {
	Kind    FailureKind `json:"kind"`
	Message string      `json:"message"`
}

func (f *Failure) Error() string { return string(f.Kind) + ": " + f.Message }

// NodeSummary is one instance's summary.json: what it measured on its streams and what it
// published or received.
type NodeSummary struct {
	Version int `json:"version"`
	// Scenario is the registered scenario that produced the summary ("hub-leaves", "mesh").
	Scenario string `json:"scenario,omitempty"`
	Role     string `json:"role"`
	Group    string `json:"group"`
	Instance int    `json:"instance"` // sequence number within the group, from 0
	PeerID   string `json:"peer_id"`
	// Codec is a leaf's stream codec spec (canonical); empty for other roles.
	Codec     string   `json:"codec,omitempty"`
	Protocols []string `json:"protocols"`

	Profile   string  `json:"profile"`
	Payload   string  `json:"payload"`
	Slots     int     `json:"slots"`
	TimeScale float64 `json:"time_scale"`
	Seed      int64   `json:"seed"`
	// Clock is the run's clock ("real" or "virtual"; empty in summaries from before it
	// existed: real), Transport what carried its connections ("tcp+noise+yamux",
	// "tcp+noise+yamux (link)", "quic+simnet", "memnet"; "memnet+noise+yamux" in summaries
	// from before memnet's connections were native).
	Clock     string `json:"clock,omitempty"`
	Transport string `json:"transport,omitempty"`
	Build     string `json:"build"` // "optimized" or why CPU figures are inflated
	// Optimized is false when the binary was built without compiler optimizations (CPU
	// figures inflated); see BuildOptimized.
	Optimized bool `json:"optimized"`

	// Start and Duration delimit the measured phase: from the start barrier until the node
	// has seen every published message (or gave up waiting).
	Start    time.Time `json:"start"`
	Duration float64   `json:"duration_s"`

	Streams []StreamStats `json:"streams"`
	// Parity: for a leaf, the messages delivered to it; for a publisher, the messages it
	// published within the leaves' profile.
	Parity   *Parity   `json:"parity,omitempty"`
	Schedule *Schedule `json:"schedule,omitempty"`
	Pubsub   Pubsub    `json:"pubsub"`
	// Bandwidth is go-libp2p's BandwidthCounter per protocol (stream level, after
	// compression, including multistream negotiation): the cross-check of wire bytes. Only
	// scenarios whose reports read it keep the counter (hub-leaves); null otherwise.
	Bandwidth    map[string]Traffic `json:"bandwidth"`
	StreamErrors int64              `json:"stream_errors"`
	// Failure is the instance's failure, if any.
	Failure *Failure `json:"failure,omitempty"`

	// Kind and Client describe a mesh node: its population kind ("observed", "default",
	// "all-subnets", "supernode") and the client whose GossipSub parameters it runs.
	Kind   string `json:"kind,omitempty"`
	Client string `json:"client,omitempty"`
	// Topics the node subscribed to (mesh nodes; hub-leaves leaves follow Profile).
	Topics []string `json:"topics,omitempty"`
	// Peers the node was connected to by the topology.
	Peers int `json:"peers,omitempty"`
	// Expected is what was published on the node's topics, for a node that checks what it
	// received (Parity then holds what it received).
	Expected *Parity `json:"expected,omitempty"`
	// Published is what the node published itself, every topic.
	Published *Parity `json:"published,omitempty"`
	// Messages is the node's message-time asset (MessagesFile), when the scenario records one.
	Messages string `json:"messages,omitempty"`
	// Link is the node's shaped link, when it had one.
	Link *Link `json:"link,omitempty"`
	// Process is the CPU use of the whole OS process over the measured phase (in an embedded
	// run every node shares it).
	Process *Process `json:"process,omitempty"`

	// Reliability records (reliability.go): the faults the node took part in, its link
	// outages, messages pubsub lost at it with their ids, instances it learned had vanished,
	// and periodic resource samples.
	Faults       []FaultEvent   `json:"faults,omitempty"`
	Outages      []Outage       `json:"outages,omitempty"`
	LostMessages []LostMessages `json:"lost_messages,omitempty"`
	LostPeers    []string       `json:"lost_peers,omitempty"`
	Samples      []Sample       `json:"samples,omitempty"`
	// Origin is the command, commit and machine that wrote the summary (WriteSummary fills
	// it in); absent from summaries written before it existed.
	Origin *Origin `json:"origin,omitempty"`
	// FaultSchedule is the run's fault schedule as given (param faults); empty without faults.
	FaultSchedule string `json:"fault_schedule,omitempty"`
	// Receiver: the node checks what it receives against what was published on its topics
	// (hub-leaves' leaves, a mesh's subscribed nodes), even when it failed before it could.
	Receiver bool `json:"receiver,omitempty"`
	// SeenTTLNs is how long the node's pubsub remembers a message id (its client's seen TTL,
	// scaled): memory grows until then, so the soak check starts after it.
	SeenTTLNs int64 `json:"seen_ttl_ns,omitempty"`
	// HeartbeatNs is the node's GossipSub heartbeat (its client's, scaled).
	HeartbeatNs int64 `json:"heartbeat_ns,omitempty"`
}

// Link is a node's shaped access link and what went through it (link.Link).
type Link struct {
	Region          string  `json:"region"`
	Class           string  `json:"class"`
	UpBitsPerSec    int64   `json:"up_bits_per_s"`
	DownBitsPerSec  int64   `json:"down_bits_per_s"`
	UpBytes         int64   `json:"up_bytes"`
	DownBytes       int64   `json:"down_bytes"`
	HandshakeErrors int64   `json:"handshake_errors,omitempty"`
	LateMeanMs      float64 `json:"late_mean_ms"` // how late the shaper's timed wake-ups came
	LateMaxMs       float64 `json:"late_max_ms"`
}

// Process is an OS process's CPU use over an interval.
type Process struct {
	// Host and PID identify the OS process: nodes of an embedded run share one, Testground's
	// local:exec runs one per node, so reports add up distinct processes.
	Host        string  `json:"host,omitempty"`
	PID         int     `json:"pid,omitempty"`
	CPUSeconds  float64 `json:"cpu_s"`     // user + system
	WallSeconds float64 `json:"wall_s"`    // the interval
	Cores       int     `json:"cores"`     // usable cores (GOMAXPROCS)
	Utilization float64 `json:"cpu_share"` // CPUSeconds / (WallSeconds × Cores)
	// PeakUtilization is the busiest SampleSeconds window's CPU share, and SaturatedSeconds
	// the time spent in windows at 85 % or more: a run can be idle on average and saturated
	// during the attestation burst.
	PeakUtilization  float64 `json:"peak_cpu_share"`
	SaturatedSeconds float64 `json:"saturated_s"` // in windows where the process or the machine was at ≥ 85 %
	SampleSeconds    float64 `json:"sample_s"`
	// MachinePeak is the busiest window's share of the whole machine's CPU, other processes
	// included (Linux /proc/stat; -1 when unknown).
	MachinePeak float64 `json:"machine_peak_cpu_share"`
	// MaxRSSBytes is the process's peak resident memory (Linux getrusage).
	MaxRSSBytes int64 `json:"max_rss_bytes,omitempty"`
	// SchedP99Ms and SchedMaxMs are how long goroutines that became runnable waited for a
	// CPU (Go's /sched/latencies histogram over the interval; bucket upper bounds): the delay
	// this machine added to every hand-off a message makes (read loop, pubsub's event loop,
	// write loop, link scheduler). SchedEvents is how many waits the histogram counted.
	SchedP99Ms  float64 `json:"sched_p99_ms,omitempty"`
	SchedMaxMs  float64 `json:"sched_max_ms,omitempty"`
	SchedEvents uint64  `json:"sched_events,omitempty"`
	// SimulatedSeconds is the interval in simulated time under the virtual clock (0 on the
	// real clock, where it is WallSeconds); WallSeconds is then what it cost on the machine.
	SimulatedSeconds float64 `json:"simulated_s,omitempty"`
}

// WallPerSimulatedMinute is the machine's wall seconds per simulated minute of a
// virtual-clock run (0 on the real clock).
func (p *Process) WallPerSimulatedMinute() float64 {
	if p == nil || p.SimulatedSeconds <= 0 {
		return 0
	}
	return p.WallSeconds / (p.SimulatedSeconds / 60)
}

// SaturationShare is the CPU share at which a sampling window counts as saturated.
const SaturationShare = 0.85

// SchedDelayLimitMs is the goroutine scheduling delay (p99) above which the machine, not the
// network, shapes latency figures: a message makes a handful of goroutine hand-offs per hop
// and a few hops, so a 1 % chance of waiting this long per hand-off moves the tail of a
// delivery latency measured in tens to hundreds of milliseconds.
const SchedDelayLimitMs = 10

// SaturatedShareLimit is the share of the interval spent in saturated sampling windows above
// which a run counts as saturated even when its scheduling delay stayed low.
const SaturatedShareLimit = 0.10

// Saturated reports whether the machine, not the network, shaped latency figures: the process
// used nearly all its cores (85 % or more) on average or for more than a tenth of the
// interval, or goroutines waited SchedDelayLimitMs or more for a CPU at the 99th percentile.
// A single busy window (a block's columns arriving at once) is not saturation by itself;
// the scheduling delay says whether it delayed anything.
func (p *Process) Saturated() bool {
	if p == nil {
		return false
	}
	return p.Utilization >= SaturationShare ||
		(p.WallSeconds > 0 && p.SaturatedSeconds >= SaturatedShareLimit*p.WallSeconds) ||
		p.SchedP99Ms >= SchedDelayLimitMs
}

// summaryV1 is the part of a version-1 summary that changed shape.
type summaryV1 struct {
	Error string `json:"error"`
}

// upgradeV1 converts a version-1 summary (hub-leaves, failures as strings; parity failures
// began with "parity FAIL") into the current shape.
func upgradeV1(s *NodeSummary, b []byte) error {
	var v1 summaryV1
	if err := json.Unmarshal(b, &v1); err != nil {
		return err
	}
	s.Scenario = "hub-leaves"
	s.Optimized = s.Build == "" || s.Build == "optimized"
	if v1.Error != "" {
		kind := FailRun
		if len(v1.Error) >= 11 && v1.Error[:11] == "parity FAIL" {
			kind = FailParity
		}
		s.Failure = &Failure{Kind: kind, Message: v1.Error}
	}
	s.Version = SummaryVersion
	return nil
}

// Traffic is bytes in and out.
type Traffic struct {
	In  int64 `json:"in"`
	Out int64 `json:"out"`
}

// StreamStats is one stream direction to one peer, summed over every stream to that peer in
// that direction (a reconnect opens a new stream).
type StreamStats struct {
	Peer      string `json:"peer"`
	PeerRole  string `json:"peer_role,omitempty"`
	Direction string `json:"direction"` // "in" or "out", from this node's view
	Protocol  string `json:"protocol"`
	Codec     string `json:"codec"`
	Streams   int    `json:"streams"`
	Frames    int64  `json:"frames"`
	RawBytes  int64  `json:"raw_bytes"`
	WireBytes int64  `json:"wire_bytes"`
	// Messages per category (published messages by topic; control entries for control).
	Messages   map[gossip.Category]int64         `json:"messages"`
	Categories map[gossip.Category]CategoryBytes `json:"categories"`
	// Control splits the control category by kind (gossip.ControlKind names).
	Control    map[string]ControlBytes `json:"control,omitempty"`
	CodecStats CodecStats              `json:"codec_stats"`
}

// ControlBytes is one control kind on a stream direction: raw and wire bytes (wire shared out
// like the frame's raw bytes), entries, and message ids carried.
type ControlBytes struct {
	RawBytes  int64 `json:"raw_bytes"`
	WireBytes int64 `json:"wire_bytes"`
	Entries   int64 `json:"entries"`
	IDs       int64 `json:"ids"`
}

// CategoryBytes is raw and wire bytes of one category.
type CategoryBytes struct {
	RawBytes  int64 `json:"raw_bytes"`
	WireBytes int64 `json:"wire_bytes"`
}

// CodecStats is the stream codec's own accounting for a stream direction.
type CodecStats struct {
	Units     int64 `json:"units"`      // blocks encoded or decoded
	RawBytes  int64 `json:"raw_bytes"`  // bytes before compression
	WireBytes int64 `json:"wire_bytes"` // bytes after compression
	// TimeNs is the codec's CPU: the thread CPU of its own work, its meter's cost taken out
	// (docs/results-schema.md, "codec CPU"); for plain, today's per-message Snappy.
	TimeNs int64 `json:"time_ns"`
	// MeterNs is what measuring TimeNs cost (the clock reads, thread CPU), not in TimeNs.
	MeterNs int64 `json:"meter_ns"`
	// PreemptedFrames were descheduled during their codec work; TimeNs counts each at the
	// direction's rate on the frames that were not (docs/results-schema.md, "codec CPU").
	PreemptedFrames int64 `json:"preempted_frames"`
	// FirstFrameNs is the part of TimeNs spent on each stream's first frame, which holds the
	// codec's setup (allocating its state and first touching it).
	FirstFrameNs int64 `json:"first_frame_ns"`
	StateBytes   int64 `json:"state_bytes"` // memory held, largest seen
}

// Parity is what a node delivered (leaf) or published (publisher), per category: a count and
// an order-independent digest of message ids (two 64-bit lanes, each the sum mod 2^64 of the
// ids' leading words), so publishers' digests add up to the published set's.
type Parity struct {
	Messages map[gossip.Category]int64     `json:"messages"`
	Digest   map[gossip.Category][2]uint64 `json:"digest"`
}

// Equal reports whether two parity records agree in every category.
func (p *Parity) Equal(q *Parity) bool {
	for _, c := range gossip.Categories() {
		if p.Messages[c] != q.Messages[c] || p.Digest[c] != q.Digest[c] {
			return false
		}
	}
	return true
}

// Diff describes how p (what was received) differs from want (what was published), category
// by category; "" when they agree.
func (p *Parity) Diff(want *Parity) string {
	var out []string
	for _, c := range gossip.Categories() {
		g, w := p.Messages[c], want.Messages[c]
		switch {
		case g != w:
			out = append(out, fmt.Sprintf("%s %d messages, published %d", c, g, w))
		case p.Digest[c] != want.Digest[c]:
			out = append(out, fmt.Sprintf("%s same count, different message ids", c))
		}
	}
	return strings.Join(out, ", ")
}

// Add adds q's counts and digests into p.
func (p *Parity) Add(q *Parity) {
	if p.Messages == nil {
		p.Messages = map[gossip.Category]int64{}
		p.Digest = map[gossip.Category][2]uint64{}
	}
	for c, n := range q.Messages {
		p.Messages[c] += n
	}
	for c, d := range q.Digest {
		e := p.Digest[c]
		p.Digest[c] = [2]uint64{e[0] + d[0], e[1] + d[1]}
	}
}

// Total is the number of messages over all categories.
func (p *Parity) Total() int64 {
	var n int64
	for _, v := range p.Messages {
		n += v
	}
	return n
}

// Schedule is a publisher's timing: scheduled versus achieved send times.
type Schedule struct {
	Messages int64 `json:"messages"`
	// MaxLagNs and MeanLagNs: how late Publish returned after the scheduled (scaled) time.
	MaxLagNs  int64 `json:"max_lag_ns"`
	MeanLagNs int64 `json:"mean_lag_ns"`
	// LateMessages published more than one (scaled) slot after their time.
	LateMessages int64 `json:"late_messages"`
	// ScheduledNs is the scaled span of the schedule; ElapsedNs the time publishing took.
	ScheduledNs int64 `json:"scheduled_ns"`
	ElapsedNs   int64 `json:"elapsed_ns"`
	SlotNs      int64 `json:"slot_ns"` // one scaled slot
}

// Pubsub counts go-libp2p-pubsub events from its RawTracer.
type Pubsub struct {
	Delivered  int64 `json:"delivered"`
	Duplicates int64 `json:"duplicates"`
	// DeliveredBy and DuplicatesBy split Delivered and Duplicates by category.
	DeliveredBy  map[gossip.Category]int64 `json:"delivered_by,omitempty"`
	DuplicatesBy map[gossip.Category]int64 `json:"duplicates_by,omitempty"`
	// MeshPeers is the node's mesh size per topic at the end of the run (grafts minus prunes).
	MeshPeers map[string]int `json:"mesh_peers,omitempty"`
	// Grafts and Prunes count the mesh changes the node made.
	Grafts      int64            `json:"grafts,omitempty"`
	Prunes      int64            `json:"prunes,omitempty"`
	Rejected    map[string]int64 `json:"rejected,omitempty"`
	DroppedRPCs int64            `json:"dropped_rpcs"`
	// DroppedTo splits DroppedRPCs by the peer whose outbound queue was full (peer id); a
	// peer that disconnected takes its count with it.
	DroppedTo map[string]int64 `json:"dropped_to,omitempty"`
	// MaxBacklog is the longest any outbound queue of the node grew (RPCs), to MaxBacklogTo.
	MaxBacklog    int64  `json:"max_backlog,omitempty"`
	MaxBacklogTo  string `json:"max_backlog_to,omitempty"`
	Undeliverable int64  `json:"undeliverable"`
	Throttled     int64  `json:"throttled"`
}

// Drops is everything pubsub lost: dropped RPCs, undeliverable messages and rejections.
func (p Pubsub) Drops() int64 {
	n := p.DroppedRPCs + p.Undeliverable
	for _, v := range p.Rejected {
		n += v
	}
	return n
}

// ReadSummary reads one summary.json.
func ReadSummary(path string) (*NodeSummary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s NodeSummary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch s.Version {
	case SummaryVersion:
	case 1:
		if err := upgradeV1(&s, b); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	default:
		return nil, fmt.Errorf("%s: summary version %d, want 1 or %d", path, s.Version, SummaryVersion)
	}
	return &s, nil
}

// WriteSummary writes s as indented JSON to path.
func WriteSummary(path string, s *NodeSummary) error {
	s.Version = SummaryVersion
	if s.Origin == nil {
		s.Origin = CurrentOrigin()
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// FindSummaries returns every summary.json under dir, sorted.
func FindSummaries(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == SummaryFile {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no " + SummaryFile + " under " + dir)
	}
	sort.Strings(out)
	return out, nil
}

// Tally is a count of messages and an order-independent digest of their ids (two 64-bit
// lanes, each the sum mod 2^64 of the ids' leading words), so tallies of parts add up to the
// tally of the whole.
type Tally struct {
	Messages int64     `json:"messages"`
	Digest   [2]uint64 `json:"digest"`
}

// Add adds u into t.
func (t *Tally) Add(u Tally) {
	t.Messages += u.Messages
	t.Digest[0] += u.Digest[0]
	t.Digest[1] += u.Digest[1]
}

// AddTally adds a tally into category c of p.
func (p *Parity) AddTally(c gossip.Category, t Tally) {
	if p.Messages == nil {
		p.Messages = map[gossip.Category]int64{}
		p.Digest = map[gossip.Category][2]uint64{}
	}
	if t.Messages == 0 {
		return
	}
	p.Messages[c] += t.Messages
	d := p.Digest[c]
	p.Digest[c] = [2]uint64{d[0] + t.Digest[0], d[1] + t.Digest[1]}
}

// ReportKind names the report a scenario's outputs are read with: the scenario declares it
// (runner.Scenario.Report) and its report registers under the same constant (package
// analysis), so neither spells it as text.
type ReportKind string

// The report kinds whose report packages read only outputs: defined here rather than in their
// scenarios, so that a report package need not import its scenario (and link go-libp2p with
// it: scenarios/hubleaves/report and scenarios/mesh/report build and test without it).
const (
	LiveCheckKind  ReportKind = "live-check"  // hub-leaves' (scenarios/hubleaves/report)
	GossipMeshKind ReportKind = "gossip-mesh" // mesh's (scenarios/mesh/report)
)
