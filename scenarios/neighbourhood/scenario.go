package neighbourhood

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/streamsim/streamsim/sim/network"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/sim/runner"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/trace"
)

// The neighbourhood as a registered scenario: one instance runs the whole neighbourhood (the
// observed node, its real peers and their boundary peers) in its own process, so `streamsim
// run --scenario neighbourhood`, `streamsim scenarios`, `streamsim report` and Testground
// (a test case of one instance) all reach it through the registry. The run's report is
// written beside the instance's summary: ReportFile (JSON) and TableFile (the table).

// Files the instance writes into its outputs directory.
const (
	ReportFile = "neighbourhood.json"
	TableFile  = "neighbourhood.txt"
)

// Name is the scenario's registered name.
const Name = "neighbourhood"

// GroupName is the scenario's one group; it has one instance.
const GroupName = "neighbourhood"

// Parameters of the scenario beside the common ones and the population's (topology).
const (
	ParamWarmup          = "warmup" // warm-up slots before the measured ones
	ParamCopies          = "copies" // boundary peers delivering each message to each real peer
	ParamValidationDelay = runner.ParamValidationDelay
)

// ReportKind is the report kind the scenario's outputs are read with (package
// neighbourhood/report registers it).
const ReportKind result.ReportKind = "neighbourhood"

// Scenario is the neighbourhood: see docs/neighbourhood.md.
var Scenario = &runner.Scenario{
	Name:    Name,
	Summary: "the recorded node's view of mainnet: the observed node and its ~45 peers as real nodes, boundary peers applying mainnet's grafting pressure; calibration against the recording, control by kind",
	Params:  params(),
	// The calibration form: 10 measured slots (after the warm-up); time scale 1 on the real clock.
	Defaults:     map[string]string{runner.ParamSlots: strconv.Itoa(DefaultConfig().Slots), runner.ParamTimeScale: "1"},
	MinInstances: 1, MaxInstances: 1, DefaultInstances: 1,
	Role:  func(string) topology.Role { return topology.RoleNode },
	Parse: parse,
	Check: func(p *runner.Params, groups map[string]int) error {
		for g, n := range groups {
			if n != 1 {
				return fmt.Errorf("group %s has %d instances: the neighbourhood runs in one instance", g, n)
			}
		}
		return nil
	},
	Run:          runInstance,
	Report:       ReportKind,
	VirtualClock: true,
	// Measured (docs/overhead.md, "An in-process transport for the virtual clock"): the
	// shortened calibration form took 41 s of wall on the virtual clock over memnet against 74 s
	// on the real clock, which ran up to 473 ms late and shrank the attestation mesh to 3; on
	// the virtual clock the schedule is never late, whatever else the machine runs.
	EmbeddedClock: network.ClockVirtual,
	Flags:         flags,
}

func init() { runner.Register(Scenario) }

// params declares the scenario's own parameters with the calibration form's defaults.
func params() []runner.Param {
	d := DefaultConfig()
	pop := d.Population
	return []runner.Param{
		{Name: ParamWarmup, Type: "int", Unit: "slots", Default: strconv.Itoa(d.Warmup), Desc: "warm-up slots before the measured ones (meshes form and the periphery's pressure settles; not counted)"},
		{Name: ParamCopies, Type: "int", Default: strconv.Itoa(d.Copies), Desc: "boundary peers that deliver each message to each real peer (at most boundary)"},
		{Name: ParamValidationDelay, Type: "string", Default: runner.DefaultValidationDelay, Desc: "seeded validation delay per category before a node forwards (category:min-max, comma-separated; off: none; sim/node/validation.go cites the figures)"},
		{Name: topology.ParamTopologySeed, Type: "int", Default: strconv.FormatInt(pop.Seed, 10), Desc: "seed of the population: kinds, clients, degrees, dialled links, boundary peers"},
		{Name: topology.ParamObservedPeers, Type: "int", Unit: "peers", Default: strconv.Itoa(pop.Peers), Desc: "the observed node's real peers (the recorded node had about 45)"},
		{Name: topology.ParamObservedClient, Type: "string", Default: pop.ObservedClient, Desc: "client profile of the observed node: " + strings.Join(topology.ClientNames, ", ")},
		{Name: ParamObservedIDontWant, Type: "string", Default: IDontWantClient, Desc: "the observed node's IDONTWANT threshold: " + IDontWantClient + " (its client profile's; Teku 16 KiB), " + IDontWantOff + " (never sends IDONTWANT, as before gossipsub v1.2) or a message size in bytes"},
		{Name: ParamFraming, Type: "string", Default: FramingClient, Desc: "how the observed node and its real peers frame their outbound RPCs: " + FramingClient + " (each as its client's library: Lighthouse rust-libp2p, every message and control entry its own frame; Nimbus nim-libp2p, control apart from messages; Prysm, Teku, Lodestar as go-libp2p-pubsub) or one for all: " + gossip.FramingNames()},
		{Name: ParamForwarding, Type: "string", Default: ForwardingClient, Desc: "which mesh peers a real node leaves out when it forwards: " + ForwardingClient + " (each as its client's library: Lighthouse rust-libp2p and Nimbus nim-libp2p every peer whose copy arrived while they validated; Prysm, Teku, Lodestar only the first sender), " + ForwardingGo + " (every node as go-libp2p-pubsub) or " + ForwardingWithhold + " (every node as rust-libp2p)"},
		{Name: ParamScoring, Type: "string", Default: ScoringOff, Desc: "peer scoring on the observed node and its real peers: " + ScoringClient + " (gossipsub v1.1 scoring with each node's client's Ethereum parameters, computed for the run's validators; Dscore and thresholds per client) or " + ScoringOff + " (no node scores; a peer over Dhi prunes at random)"},
		{Name: ParamSubnets, Type: "int", Unit: "subnets", Default: strconv.Itoa(pop.Subnets), Desc: "attestation subnets the observed node subscribes to and the workload carries (the first n; 64: the full form); per-subnet figures are scaled to 64 in the calibration table"},
		{Name: topology.ParamMix, Type: "string", Default: topology.FormatShares(pop.Mix, topology.MixKinds), Desc: "the peers' population by kind: " + strings.Join(topology.MixKinds, ", ") + " (kind:share, summing to 1)"},
		{Name: topology.ParamClients, Type: "string", Default: topology.FormatShares(pop.Clients, topology.ClientNames), Desc: "the peers' client mix (client:share, summing to 1): " + strings.Join(topology.ClientNames, ", ")},
		{Name: ParamDegrees, Type: "string", Default: DefaultDegrees, Desc: "each client's own peer count on mainnet, client:min-max for every client"},
		{Name: ParamDialledShare, Type: "float", Default: strconv.FormatFloat(pop.DialledShare, 'g', -1, 64), Desc: "share of the observed node's links it dialled (a peer at Dhi refuses GRAFTs on links it did not dial)"},
		{Name: ParamBoundary, Type: "string", Default: BoundaryByDegree, Desc: "outside peers of each real peer, standing for its own peers on mainnet: " + BoundaryByDegree + " (its degree minus its link to the observed node) or a cap"},
		{Name: ParamOutsideAllSubnets, Type: "float", Default: strconv.FormatFloat(pop.OutsideAllSubnets, 'g', -1, 64), Desc: "share of the real peers' own peers on every attestation subnet (unpublished: fitted to the IHAVE id recurrence the recording implies; docs/neighbourhood.md)"},
		{Name: ParamOutsideSupernodes, Type: "float", Default: strconv.FormatFloat(pop.OutsideSupernodes, 'g', -1, 64), Desc: "share of supernodes (custody 128) among the real peers' own peers (mainnet ENRs, June 2026)"},
		{Name: ParamArrival, Type: "string", Default: DefaultArrival.String(), Desc: "the periphery's arrival model: mesh[:nodes] (each real peer's copies arrive when its client's D − 1 mesh peers in a random mesh of that many outside nodes forward them; docs/neighbourhood.md) or first:min-max,spread:min-max (independent draws per peer: first copy after first, further ones spread apart)"},
		{Name: ParamPressure, Type: "string", Default: DefaultPressure, Desc: "topic kinds the boundary peers keep grafting (" + strings.Join(TopicKinds, ", ") + ", or all, none); on the others they only accept the real peer's grafts"},
		{Name: ParamRegraft, Type: "string", Default: d.Regraft.String(), Desc: "mean further delay (exponential) of an outside peer's GRAFT after a PRUNE's backoff; 0s: as the backoff ends"},
		{Name: ParamChurn, Type: "string", Default: d.Churn.String(), Desc: "mean session of an outside peer before a new one replaces it (ProbeLab's Hermes study; docs/neighbourhood.md); off: none"},
		{Name: ParamBandwidth, Type: "string", Default: BandwidthClasses, Desc: "access links of the observed node and its real peers: " + BandwidthClasses + " (uplink and downlink at " + runner.ParamOrdinaryBandwidth + ", " + runner.ParamSupernodeBandwidth + " for supernodes, " + ParamAllSubnetsBandwidth + " for all-subnets nodes and the observed node, in simulated time; boundary peers unshaped) or " + BandwidthOff},
		{Name: runner.ParamOrdinaryBandwidth, Type: "string", Unit: "bit/s", Default: runner.DefaultOrdinaryBandwidth, Desc: "with bandwidth classes: uplink and downlink of default-node peers (gossipsub-interop's full node; e.g. 10Mbit, 50Mbit, 1Gbit)"},
		{Name: runner.ParamSupernodeBandwidth, Type: "string", Unit: "bit/s", Default: runner.DefaultSupernodeBandwidth, Desc: "with bandwidth classes: uplink and downlink of supernode peers (gossipsub-interop's supernode)"},
		{Name: ParamAllSubnetsBandwidth, Type: "string", Unit: "bit/s", Default: DefaultAllSubnetsBandwidth, Desc: "with bandwidth classes: uplink and downlink of all-subnets peers and the observed node (an assumption: forwarding 64 subnets' attestations needs ≈ 55 Mbit/s up, more than the ordinary class; docs/neighbourhood.md)"},
		{Name: ParamLatency, Type: "string", Default: pop.Latency, Desc: "latency of the links between the observed node and its peers, in simulated time: " + LatencyRegions + " (gossipsub-interop's regions, divided by the time scale) or " + LatencyOff},
	}
}

// parse turns the parameters into the run's Config, once.
func parse(p *runner.Params) (any, error) {
	cfg := DefaultConfig()
	m := map[string]string{}
	for _, k := range []string{topology.ParamTopologySeed, topology.ParamObservedPeers, topology.ParamObservedClient, ParamSubnets,
		topology.ParamMix, topology.ParamClients, ParamDegrees, ParamDialledShare, ParamBoundary, ParamPressure, ParamLatency,
		ParamOutsideAllSubnets, ParamOutsideSupernodes} {
		m[k] = p.Values[k]
	}
	var err error
	if cfg.Population, err = ParseNeighbourhoodParams(m); err != nil {
		return nil, err
	}
	if cfg.Warmup, err = p.Int(ParamWarmup, 0); err != nil {
		return nil, err
	}
	if cfg.Copies, err = p.Int(ParamCopies, 1); err != nil {
		return nil, err
	}
	if cfg.Validation, err = runner.ParseValidationDelays(p.Values[ParamValidationDelay]); err != nil {
		return nil, err
	}
	if cfg.Arrival, err = ParseArrival(p.Values[ParamArrival]); err != nil {
		return nil, err
	}
	if cfg.Regraft, cfg.Churn, err = parseOutside(p.Values[ParamRegraft], p.Values[ParamChurn]); err != nil {
		return nil, err
	}
	if cfg.ObservedIDontWant, err = ParseObservedIDontWant(p.Values[ParamObservedIDontWant]); err != nil {
		return nil, err
	}
	if cfg.Framing, err = ParseFraming(p.Values[ParamFraming]); err != nil {
		return nil, err
	}
	if cfg.Forwarding, err = ParseForwarding(p.Values[ParamForwarding]); err != nil {
		return nil, err
	}
	if cfg.Scoring, err = ParseScoring(p.Values[ParamScoring]); err != nil {
		return nil, err
	}
	if cfg.Bandwidth, err = ParseBandwidth(p.Values[ParamBandwidth], p.Values[runner.ParamOrdinaryBandwidth], p.Values[runner.ParamSupernodeBandwidth], p.Values[ParamAllSubnetsBandwidth]); err != nil {
		return nil, err
	}
	cfg.Slots, cfg.TimeScale, cfg.Seed, cfg.Validators, cfg.Codec = p.Slots, p.TimeScale, p.Seed, p.Validators, p.Codec
	cfg.Era = p.Era
	cfg.Clock, cfg.CodecCPU = p.Clock, p.CodecCPU
	return &cfg, nil
}

// body runs the neighbourhood and writes its report; an incomplete delivery fails the run.
// runInstance is the scenario's instance: the whole neighbourhood on the run's network, its report
// beside the summary.
func runInstance(ctx context.Context, e *runner.Env) error {
	return e.Finish(body(ctx, e.Params, e.Net, e.Outputs, e.Summary))
}

func body(ctx context.Context, p *runner.Params, net network.Network, outputs string, summary *result.NodeSummary) error {
	cfg := *runner.Own[*Config](p)
	// Info: one progress line per slot (run.progress) besides the warnings.
	cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	summary.Kind, summary.Client, summary.Codec = topology.KindObserved, cfg.Population.ObservedClient, cfg.Codec.String()
	if cfg.Clock != net.Clock() {
		return fmt.Errorf("clock %s on a network of the %s clock", cfg.Clock, net.Clock())
	}
	cfg.Network = net
	simStart, wallStart, cpuStart := time.Now(), network.WallNow(), processCPU()
	if p.Record {
		tw, err := createTrace(filepath.Join(outputs, runner.TraceFile), p, &cfg)
		if err != nil {
			return err
		}
		cfg.Trace = tw
	}
	rep, err := Run(ctx, cfg)
	if cfg.Trace != nil {
		if cerr := cfg.Trace.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("trace: %w", cerr)
		}
	}
	if err != nil {
		return err
	}
	var table strings.Builder
	rep.Print(&table)
	if err := os.WriteFile(filepath.Join(outputs, TableFile), []byte(table.String()), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", TableFile, err)
	}
	b, err := json.MarshalIndent(rep.Summary(), "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", ReportFile, err)
	}
	if err := os.WriteFile(filepath.Join(outputs, ReportFile), b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", ReportFile, err)
	}
	summary.Peers = rep.ObservedPeers
	summary.Streams, summary.Pubsub = rep.Streams, rep.Pubsub
	summary.Duration = rep.Simulated.Seconds()
	if cfg.Clock == network.ClockVirtual {
		summary.Process = &result.Process{CPUSeconds: (processCPU() - cpuStart).Seconds(), WallSeconds: (network.WallNow() - wallStart).Seconds(),
			SimulatedSeconds: time.Since(simStart).Seconds(), Cores: runtime.GOMAXPROCS(0), MachinePeak: -1}
	}
	if !rep.Complete() {
		return errors.New("the observed node did not receive every message of its topics in the measured slots")
	}
	return nil
}

// createTrace opens the observed node's frame recorder. Its header says what a replay needs:
// the observed node's profile (all-subnets in the full form; the calibration form keeps
// only the first subnets, which the header says), the seeds and the time scale.
func createTrace(path string, p *runner.Params, cfg *Config) (*trace.Writer, error) {
	params := map[string]string{"scenario": Name, "role": string(topology.RoleNode), "kind": topology.KindObserved,
		"group": GroupName, "instance": "0", "payload": p.Payload, "client": cfg.Population.ObservedClient,
		"subnets": strconv.Itoa(cfg.Population.Subnets), "slots": strconv.Itoa(cfg.Slots), "warmup_slots": strconv.Itoa(cfg.Warmup),
		"time_scale": strconv.FormatFloat(cfg.TimeScale, 'g', -1, 64), "seed": strconv.FormatInt(cfg.Seed, 10),
		"topology_seed": strconv.FormatInt(cfg.Population.Seed, 10), "codec": cfg.Codec.String(), "bandwidth": cfg.Bandwidth.String(),
		"note": "the observed node's frames as go-libp2p-pubsub wrote or read them (ssz_snappy payloads), before stream compression; warm-up slots included"}
	if cfg.Population.Subnets == gossip.AttestationSubnets {
		params["profile"] = "all-subnets"
	}
	w, err := trace.Create(path, trace.Header{Version: trace.Version, Source: "recorder", Params: params})
	if err != nil {
		return nil, fmt.Errorf("frame recorder: %w", err)
	}
	return w, nil
}

// Summary is the report's JSON form: the figures the table prints, per category against
// the recording.
type Summary struct {
	Subnets       int                            `json:"subnets"`
	Codec         string                         `json:"codec"`
	Seed          int64                          `json:"seed"`
	TopologySeed  int64                          `json:"topology_seed"`
	Peers         int                            `json:"peers"`
	Slots         int                            `json:"slots"`
	TimeScale     float64                        `json:"time_scale"`
	Network       string                         `json:"network"`
	Bandwidth     string                         `json:"bandwidth,omitempty"`
	Complete      bool                           `json:"complete"`
	Categories    []CategorySummary              `json:"categories"`
	IHaveIDsPerH  float64                        `json:"ihave_ids_per_hour"`
	RecordingIDsH float64                        `json:"recording_ihave_ids_per_hour"`
	Control       map[string]result.ControlBytes `json:"control_in"`
	ControlOut    map[string]result.ControlBytes `json:"control_out,omitempty"`
	// IWantSentPerMsg is the IWANT ids the observed node sent per delivered message.
	IWantSentPerMsg float64      `json:"iwant_sent_per_message"`
	Subnet          []SubnetView `json:"subnets_view"`
	SyncSubnet      []SubnetView `json:"sync_subnets_view,omitempty"`
	MeshShares      []MeshShare  `json:"mesh_shares,omitempty"`
	Outside         int          `json:"outside_peers"`
	// Mechanism: eligible gossip targets, heartbeats with IHAVE, IHAVE id recurrence.
	Mechanism Mechanism `json:"ihave_mechanism"`
	Churned   int64     `json:"outside_churned"`
	// ScoringRule is ParamScoring; Scoring the real peers' scores when they score.
	ScoringRule string       `json:"scoring_rule,omitempty"`
	Scoring     *ScoringView `json:"scoring,omitempty"`
	// FirstFromObserved: per category, the share of the real peers' deliveries of the
	// observed node's topics whose first copy came from it (Report.FirstFromObserved).
	FirstFromObserved map[string]float64 `json:"first_from_observed_share,omitempty"`
	// EchoesPerMsg: per category, copies per delivered message from peers the observed
	// node had already sent the message to (the all-go bias).
	EchoesPerMsg map[string]float64 `json:"echo_copies_per_message,omitempty"`
	// WithheldPerMsg: per category, forwards to the observed node its real peers left out
	// per delivered message, because its copy had reached them first (ParamForwarding).
	WithheldPerMsg map[string]float64 `json:"withheld_forwards_per_message,omitempty"`
	MaxLagMs       float64            `json:"max_lag_ms"`
	WallS          float64            `json:"wall_s"`
	SimulatedS     float64            `json:"simulated_s"`
	CPUS           float64            `json:"cpu_s"`
	// WallPerSimMin and CPUPerSimMin are what a simulated minute of the whole run (setup,
	// warm-up and measured slots) cost: wall and process CPU seconds; the peak memory is
	// Timing.PeakRSSBytes.
	WallPerSimMin float64 `json:"wall_s_per_simulated_minute"`
	CPUPerSimMin  float64 `json:"cpu_s_per_simulated_minute"`
	// Wire is the observed node's traffic per category and direction, raw and after the
	// codec, as measured (not scaled).
	Wire []WireLine `json:"wire"`
	// BySlot is the observed node's raw and wire bytes per category in and out per measured
	// slot (Report.BySlot; absent in runs from before it was recorded).
	BySlot []result.SlotBytes `json:"by_slot,omitempty"`
	// Timing is latency, the periphery's lateness, mesh sizes, drops and CPU.
	Timing Timing `json:"timing"`
}

// CategorySummary is one category of the observed node's inbound traffic per hour of
// simulated time against the recording.
type CategorySummary struct {
	Category      string  `json:"category"`
	MiBh          float64 `json:"mib_per_hour"`
	RecordingMiBh float64 `json:"recording_mib_per_hour"`
	// VsRecording is MiBh as a percentage of the recording's; Within says whether it is
	// within ±25 %.
	VsRecording float64 `json:"vs_recording_pct"`
	Within      bool    `json:"within_25_pct"`
	// Copies is received copies per delivered message; null (not measured) when the observed
	// node delivered no message of the category (control has none).
	Copies          *float64 `json:"copies"`
	RecordingCopies float64  `json:"recording_copies,omitempty"`
}

// Summary is the report's figures for JSON.
func (r *Report) Summary() Summary {
	s := Summary{Subnets: r.Config.Population.Subnets, Codec: r.Config.Codec.String(), Seed: r.Config.Seed, TopologySeed: r.Config.Population.Seed, Wire: r.Wire(), BySlot: r.BySlot, Timing: r.Timing, Peers: r.ObservedPeers, Slots: r.Config.Slots, TimeScale: r.Config.TimeScale, Network: r.Network, Bandwidth: r.Config.Bandwidth.String(),
		Complete: r.Complete(), IHaveIDsPerH: finite(r.IHaveIDsPerHour()), RecordingIDsH: Recording.IHAVEIDsPerHour, Control: r.Control, ControlOut: r.ControlOut,
		Subnet: r.Subnets, SyncSubnet: r.SyncSubnets, MeshShares: r.MeshShares, Outside: r.Plan.BoundaryTotal, Mechanism: r.Mechanism, Churned: r.Churned, MaxLagMs: float64(r.MaxLag.Milliseconds()), WallS: r.Wall.Seconds(), SimulatedS: r.Simulated.Seconds(), CPUS: r.CPU.Seconds()}
	s.WallPerSimMin, s.CPUPerSimMin = r.costPerSimMinute()
	s.ScoringRule, s.Scoring, s.FirstFromObserved = r.Config.Scoring, r.Scoring, r.FirstFromObserved
	var delivered int64
	for c, v := range r.Delivered {
		if c != gossip.Control {
			delivered += v
		}
	}
	if delivered > 0 {
		s.IWantSentPerMsg = float64(r.ControlOut["iwant"].IDs) / float64(delivered)
	}
	s.WithheldPerMsg = map[string]float64{}
	for c, v := range r.Withheld {
		if d := r.Delivered[c]; d > 0 {
			s.WithheldPerMsg[c.String()] = float64(v) / float64(d)
		}
	}
	s.EchoesPerMsg = map[string]float64{}
	for c, v := range r.Echoes {
		if d := r.Delivered[c]; d > 0 {
			s.EchoesPerMsg[c.String()] = float64(v) / float64(d)
		}
	}
	for _, c := range orderedCategories() {
		rec := Recording.MiBh[c]
		got := finite(r.MiBh(c))
		cs := CategorySummary{Category: c.String(), MiBh: got, RecordingMiBh: rec, Copies: ratioOrNil(r.Copies(c)), RecordingCopies: Recording.Copies[c]}
		if pct, ok := result.PercentOf(got, rec); ok {
			cs.VsRecording, cs.Within = pct, pct >= 75 && pct <= 125
		}
		s.Categories = append(s.Categories, cs)
	}
	return s
}

// ratioOrNil is v, or nil where a ratio had nothing to divide by: not measured, never 0.
func ratioOrNil(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// finite is v, or 0 where a ratio had nothing to divide by (JSON has no NaN).
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// orderedCategories are the calibration table's rows.
func orderedCategories() []gossip.Category {
	return []gossip.Category{gossip.Attestation, gossip.Aggregate, gossip.Block, gossip.DataColumn, gossip.SyncCommittee, gossip.Control}
}
