package sim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/workload"
)

// Test parameters of hub-leaves (Testground params; the embedded runner sets the same).
// Every one has a default, so a composition may leave any of them out.
const (
	ParamCodec      = "codec"      // a leaf group's stream codec spec (default plain)
	ParamProfile    = "profile"    // leaves' subscription profile (default all-subnets)
	ParamSlots      = "slots"      // slots of workload to publish (default DefaultSlots)
	ParamTimeScale  = "time_scale" // speed-up over real time (default DefaultTimeScale)
	ParamPayload    = "payload"    // ssz_snappy or ssz (default ssz_snappy)
	ParamSeed       = "seed"       // workload seed (default 1)
	ParamRecord     = "record"     // "true": every node records its frames (default false)
	ParamPublishers = "publishers" // size of the publishers group (default 4)
	ParamValidators = "validators" // active validators of the workload (default 1000000; fewer for short tests)
)

// Defaults of slots and time_scale: about a minute of run that keeps up with the all-subnets
// workload on a loaded two-core machine (README, "Running the live check").
const (
	DefaultSlots     = 2
	DefaultTimeScale = 0.5
)

// Group IDs: publishers, the hub; every other group is a leaf group.
const (
	GroupPublishers = "publishers"
	GroupHub        = "hub"
)

// Params are hub-leaves' parameters as one instance reads them.
type Params struct {
	Codec      codec.Spec
	Profile    workload.Profile
	Slots      int
	TimeScale  float64
	Payload    string
	Seed       int64
	Record     bool
	Publishers int
	Validators int
}

// ParseParams reads hub-leaves parameters from Testground-style string parameters; missing
// ones take their defaults, bad ones are errors naming the parameter.
func ParseParams(m map[string]string) (Params, error) {
	get := func(k, def string) string {
		if v, ok := m[k]; ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
		return def
	}
	var p Params
	var err error
	if p.Codec, err = codec.Parse(get(ParamCodec, "plain")); err != nil {
		return p, fmt.Errorf("param %s: %w", ParamCodec, err)
	}
	if p.Profile, err = workload.ParseProfile(get(ParamProfile, "all-subnets")); err != nil {
		return p, fmt.Errorf("param %s: %w", ParamProfile, err)
	}
	if p.Slots, err = strconv.Atoi(get(ParamSlots, strconv.Itoa(DefaultSlots))); err != nil || p.Slots < 1 {
		return p, fmt.Errorf("param %s: %q is not a positive integer", ParamSlots, get(ParamSlots, ""))
	}
	if p.TimeScale, err = strconv.ParseFloat(get(ParamTimeScale, strconv.FormatFloat(DefaultTimeScale, 'g', -1, 64)), 64); err != nil || !(p.TimeScale > 0) || p.TimeScale > 1000 {
		return p, fmt.Errorf("param %s: %q is not a number in (0, 1000]", ParamTimeScale, get(ParamTimeScale, ""))
	}
	if p.Payload, err = gossip.ParsePayload(get(ParamPayload, gossip.PayloadSSZSnappy)); err != nil {
		return p, fmt.Errorf("param %s: %w", ParamPayload, err)
	}
	if p.Seed, err = strconv.ParseInt(get(ParamSeed, "1"), 10, 64); err != nil {
		return p, fmt.Errorf("param %s: %q is not an integer", ParamSeed, get(ParamSeed, ""))
	}
	switch strings.ToLower(get(ParamRecord, "false")) {
	case "true", "1", "yes":
		p.Record = true
	case "false", "0", "no":
	default:
		return p, fmt.Errorf("param %s: %q is not true or false", ParamRecord, get(ParamRecord, ""))
	}
	if p.Publishers, err = strconv.Atoi(get(ParamPublishers, "4")); err != nil || p.Publishers < 1 {
		return p, fmt.Errorf("param %s: %q is not a positive integer", ParamPublishers, get(ParamPublishers, ""))
	}
	if p.Validators, err = strconv.Atoi(get(ParamValidators, strconv.Itoa(workload.DefaultParams().Validators))); err != nil || p.Validators < 1 {
		return p, fmt.Errorf("param %s: %q is not a positive integer", ParamValidators, get(ParamValidators, ""))
	}
	return p, nil
}

// Workload returns the workload parameters of the run.
func (p Params) Workload() workload.Params {
	wp := workload.DefaultParams()
	wp.Seed = p.Seed
	wp.Validators = p.Validators
	return wp
}
