package runner

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/streamsim/streamsim/sim/network"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/workload"
)

// Param declares one Testground test parameter of a scenario: the manifest, the CLI's help and
// the embedded runner read these declarations, and ParseParams applies the defaults.
type Param struct {
	Name    string
	Type    string // "string", "int", "float" or "bool", as in manifest.toml
	Unit    string
	Default string
	Desc    string
}

// Parameters every scenario reads (Testground strings; each has a default).
const (
	ParamCodec      = "codec"      // stream codec spec (hub-leaves: a leaf group's; mesh: the compressed nodes')
	ParamProfile    = "profile"    // subscription profile of the receivers (hub-leaves: leaves)
	ParamSlots      = "slots"      // slots of workload to publish
	ParamTimeScale  = "time_scale" // speed-up over real time
	ParamPayload    = "payload"    // ssz_snappy or ssz
	ParamSeed       = "seed"       // workload (and topology) seed
	ParamRecord     = "record"     // "true": nodes record their frames
	ParamValidators = "validators" // active validators of the workload
	ParamEra        = "era"        // the workload's era: gas limit, builder mix, blob schedule
	// Reliability parameters (faults.go, liveness.go, samples.go).
	ParamTimeout     = "timeout"      // an instance's time budget
	ParamSampleSlots = "sample_slots" // resource sampling period
	// The clock (clock.go) and, under the virtual clock, whether codec CPU is charged.
	ParamClock    = "clock"
	ParamCodecCPU = "codec_cpu"
	ParamVNet     = "vnet"
)

// Defaults of slots and time_scale: about a minute of run that keeps up with the all-subnets
// workload on a loaded two-core machine (docs/running.md).
const (
	DefaultSlots     = 2
	DefaultTimeScale = 0.5
)

// commonParams are the parameters every scenario declares first.
var commonParams = []Param{
	{ParamCodec, "string", "", "plain", codec.ParamDescription()},
	{ParamProfile, "string", "", "all-subnets", "subscription profile: " + strings.Join(workload.ProfileNames, ", ")},
	{ParamSlots, "int", "slots", strconv.Itoa(DefaultSlots), "slots of workload published (12 s each at time_scale 1)"},
	{ParamTimeScale, "float", "x", strconv.FormatFloat(DefaultTimeScale, 'g', -1, 64), "speed-up over real time: a slot lasts 12 s / time_scale; heartbeat, fanout and seen TTLs scale too; up to 1000"},
	{ParamPayload, "string", "", gossip.PayloadSSZSnappy, "what a compressed stream carries: ssz_snappy (as on the network) or ssz (raw SSZ, re-Snappied before pubsub sees it)"},
	{ParamSeed, "int", "", "1", "seed of the workload (and of the topology): the same seed gives the same messages, byte for byte"},
	{ParamRecord, "bool", "", "false", "true: nodes record their gossipsub frames to a trace asset, for offline replay"},
	{ParamValidators, "int", "validators", strconv.Itoa(workload.DefaultParams().Validators), "active validators the workload models (mainnet is about a million; at least 32)"},
	{ParamEra, "string", "", workload.DefaultEra, "the workload's era, which sets the gas limit, the MEV-Boost and local block mix and the blob schedule together (" + strings.Join(workload.EraNames(), ", ") + "; sources in streamsim workload --help)"},
	{ParamFaults, "string", "", "", "fault schedule: " + FaultForms},
	{ParamTimeout, "string", "", "", "an instance's time budget (a Go duration like 90s or 5m; empty: the slots' duration plus two slots and 4 minutes); an instance that exceeds it fails with a timeout naming it"},
	{ParamSampleSlots, "float", "slots", "1", "period of the resource samples (heap, goroutines, streams) in slots; 0: none"},
	{ParamClock, "string", "", "", "real: the machine's clock (timing-shaped figures depend on how busy it is); virtual: the whole embedded run in one synctest bubble on a simulated network (in-process streams or QUIC over simnet: param vnet; links' rates and latencies in simulated time): never late, time_scale ignored; empty: the scenario's choice for streamsim run (streamsim scenarios: \"embedded clock\"), real for Testground and Kubernetes instances, which are processes (docs/running.md)"},
	{ParamCodecCPU, "bool", "", "true", "clock virtual: charge each frame's measured encode and decode CPU (the codec's own, docs/results-schema.md) as simulated time on the sending and receiving node; false: codecs cost no simulated time. Ignored on the real clock, where CPU takes real time"},
	{ParamVNet, "string", "", string(network.DefaultVirtualTransport), "clock virtual: what carries connections: quic (go-libp2p's QUIC over marcopolo/simnet) or mem (package memnet's native in-process streams, no noise or yamux, each shaped by package link in simulated time); docs/overhead.md measures both. Ignored on the real clock"},
}

// Params are a scenario instance's parameters: the common ones parsed, and every value as
// given (defaults applied) for the scenario's own.
type Params struct {
	Codec      codec.Spec
	Profile    workload.Profile
	Slots      int
	TimeScale  float64
	Payload    string
	Seed       int64
	Record     bool
	Validators int
	// Era is the workload's era (workload.ApplyEra).
	Era string
	// Faults is the fault schedule (empty: none).
	Faults []Fault
	// Timeout is an instance's time budget; 0: the default (Budget).
	Timeout time.Duration
	// SampleSlots is the period of resource samples in slots; 0: none.
	SampleSlots float64
	// Clock is the run's clock; under ClockVirtual TimeScale is 1 whatever was asked.
	Clock network.Clock
	// CodecCPU: under the virtual clock, frames' codec CPU is charged as simulated time.
	CodecCPU bool
	// VNet: under the virtual clock, what carries the connections (network.go).
	VNet network.VirtualTransport
	// Values holds every declared parameter as a string, defaults applied.
	Values map[string]string
	// own is the scenario's own parameters, parsed once by its Parse (read with Own).
	own any
}

// ParseParams reads the parameters declared in decl from Testground-style strings; missing ones
// take their defaults, unknown ones and bad values are errors naming the parameter and what it
// accepts.
func ParseParams(decl []Param, m map[string]string) (*Params, error) {
	known := map[string]bool{}
	p := &Params{Values: map[string]string{}}
	for _, d := range decl {
		known[d.Name] = true
		v := strings.TrimSpace(m[d.Name])
		if v == "" {
			v = d.Default
		}
		p.Values[d.Name] = v
	}
	for k := range m {
		if !known[k] {
			names := make([]string, 0, len(decl))
			for _, d := range decl {
				names = append(names, d.Name)
			}
			return nil, paramError(k, "unknown (parameters: %s)", strings.Join(names, ", "))
		}
	}
	get := func(k string) string { return p.Values[k] }
	var err error
	if p.Codec, err = codec.Parse(get(ParamCodec)); err != nil {
		return nil, paramError(ParamCodec, "%w", err)
	}
	if p.Profile, err = workload.ParseProfile(get(ParamProfile)); err != nil {
		return nil, paramError(ParamProfile, "%w", err)
	}
	if p.Slots, err = strconv.Atoi(get(ParamSlots)); err != nil || p.Slots < 1 {
		return nil, paramError(ParamSlots, "%q is not a positive integer", get(ParamSlots))
	}
	if p.TimeScale, err = strconv.ParseFloat(get(ParamTimeScale), 64); err != nil || !(p.TimeScale > 0) || p.TimeScale > 1000 {
		return nil, paramError(ParamTimeScale, "%q is not a number in (0, 1000]", get(ParamTimeScale))
	}
	if p.Payload, err = gossip.ParsePayload(get(ParamPayload)); err != nil {
		return nil, paramError(ParamPayload, "%w", err)
	}
	if p.Seed, err = strconv.ParseInt(get(ParamSeed), 10, 64); err != nil {
		return nil, paramError(ParamSeed, "%q is not an integer", get(ParamSeed))
	}
	if p.Record, err = ParseBool(ParamRecord, get(ParamRecord)); err != nil {
		return nil, err
	}
	if p.Validators, err = strconv.Atoi(get(ParamValidators)); err != nil {
		return nil, paramError(ParamValidators, "%q is not an integer", get(ParamValidators))
	}
	p.Era = get(ParamEra)
	if _, err := workload.LookupEra(p.Era); err != nil {
		return nil, paramError(ParamEra, "%w", err)
	}
	if p.Faults, err = ParseFaults(get(ParamFaults), p.Slots); err != nil {
		return nil, err
	}
	if v := get(ParamTimeout); v != "" {
		if p.Timeout, err = time.ParseDuration(v); err != nil || p.Timeout <= 0 {
			return nil, paramError(ParamTimeout, "%q is not a positive Go duration like 90s or 5m", v)
		}
	}
	if p.SampleSlots, err = strconv.ParseFloat(get(ParamSampleSlots), 64); err != nil || p.SampleSlots < 0 || math.IsInf(p.SampleSlots, 0) {
		return nil, paramError(ParamSampleSlots, "%q is not a non-negative number of slots", get(ParamSampleSlots))
	}
	if p.Clock, err = parseClock(get(ParamClock)); err != nil {
		return nil, err
	}
	if p.CodecCPU, err = ParseBool(ParamCodecCPU, get(ParamCodecCPU)); err != nil {
		return nil, err
	}
	if p.VNet, err = parseVirtualTransport(get(ParamVNet)); err != nil {
		return nil, err
	}
	if p.Clock == network.ClockVirtual {
		// Simulated time runs at mainnet's pace by construction: nothing to speed up or slow
		// down (streamsim run refuses an explicit --time-scale with --clock virtual).
		p.TimeScale = 1
	}
	// The workload owns the rule (and its message); every entry point asks it.
	if err := p.Workload().Validate(); err != nil {
		return nil, paramError(ParamValidators, "%w", err)
	}
	return p, nil
}

// ParamError is a bad parameter: its name and what is wrong with it.
type ParamError struct {
	Name string
	Err  error
}

func (e *ParamError) Error() string { return "param " + e.Name + ": " + e.Err.Error() }
func (e *ParamError) Unwrap() error { return e.Err }

func paramError(name, format string, args ...any) error {
	return &ParamError{Name: name, Err: fmt.Errorf(format, args...)}
}

// ParseBool parses a boolean parameter: true/false, 1/0, yes/no.
func ParseBool(name, v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes":
		return true, nil
	case "false", "0", "no":
		return false, nil
	}
	return false, paramError(name, "%q is not true or false", v)
}

// Int reads a scenario parameter as an integer of at least lo.
func (p *Params) Int(name string, lo int) (int, error) {
	v, err := strconv.Atoi(p.Values[name])
	if err != nil || v < lo {
		return 0, paramError(name, "%q is not an integer of at least %d", p.Values[name], lo)
	}
	return v, nil
}

// Budget is an instance's time budget: param timeout, or by default the run's slots plus two
// slots and 4 minutes for setup, draining and the barriers.
func (p *Params) Budget() time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return p.SlotsTime(float64(p.Slots+2)) + 4*time.Minute
}

// Scaled is a mainnet (real-time) duration at the run's speed: d / time_scale. Every duration
// of a run that mainnet defines (slots, heartbeats, TTLs, backoffs, message times) goes
// through it.
func (p *Params) Scaled(d time.Duration) time.Duration { return scaled(d, p.TimeScale) }

// Slot is one slot of the run: 12 s / time_scale.
func (p *Params) Slot() time.Duration { return p.Scaled(workload.SlotDuration) }

// SlotsTime is n slots of the run.
func (p *Params) SlotsTime(n float64) time.Duration { return time.Duration(n * float64(p.Slot())) }

// scaled divides d by a time scale (a speed-up over real time).
func scaled(d time.Duration, timeScale float64) time.Duration {
	return time.Duration(float64(d) / timeScale)
}

// Workload returns the workload parameters of the run.
func (p *Params) Workload() workload.Params {
	wp := workload.DefaultParams()
	if err := wp.ApplyEra(p.Era); err != nil {
		panic(err) // ParseParams checked the era
	}
	wp.Seed = p.Seed
	wp.Validators = p.Validators
	return wp
}

// ParamErrorf is a ParamError naming parameter name, its message formatted as fmt.Errorf's.
func ParamErrorf(name, format string, args ...any) error { return paramError(name, format, args...) }

// Own is p's scenario parameters as the scenario's Parse returned them, typed: a scenario
// reads its own struct through it. Another type is a programming error and panics naming
// both.
func Own[C any](p *Params) C {
	c, ok := p.own.(C)
	if !ok {
		panic(fmt.Sprintf("runner: the scenario's parameters are %T, not %T", p.own, c))
	}
	return c
}
