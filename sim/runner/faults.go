package runner

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/streamsim/streamsim/units"
)

// Faults: a schedule of failures injected into the measured phase (param faults), the link
// log every node keeps (when each gossip link was down and why), and the record of what
// pubsub lost. Reports account for every published message against these records.
//
// Schedule syntax: comma-separated entries
//
//	<slot>:<kind>:<target>[@<peer>][:<arg>[:<arg>]]
//
// <slot> counts slots of the measured phase from 0 and may have a fraction (2.5 is half-way
// through slot 2). <target> and <peer> are a group with an optional instance,
// <group>[/<instance>] (instance 0 when left out). Kinds:
//
//	disconnect[:<slots>]            the target closes every connection, refuses new ones for
//	                                <slots> (default 0.5), then dials its planned peers again
//	reset                           the writer of each gossip stream into the target (or only
//	                                @peer's) sends part of its next unit, then resets the stream
//	garbage[:<bytes>]               the writer of each gossip stream into the target (or @peer's)
//	                                writes <bytes> (default 64) seeded random bytes between units
//	rogue[:<bytes>]                 a stranger (a fresh host outside the run) opens a gossip
//	                                stream to the target with its compressed protocol, sends
//	                                <bytes> (default 64) random bytes and closes its side
//	slow[:<slots>[:<bytes/s>]]      the target reads its gossip streams at <bytes/s> (default
//	                                64KiB) for <slots> (default 1)
//	crash                           the target stops at once: closes its host, announces
//	                                nothing, writes no summary (what a crashed process shows)
//	hang                            the target stops making progress until its time budget
//	                                (param timeout) runs out
const ParamFaults = "faults"

// FaultKind names a kind of fault.
type FaultKind string

// Fault kinds.
const (
	FaultDisconnect FaultKind = "disconnect"
	FaultReset      FaultKind = "reset"
	FaultGarbage    FaultKind = "garbage"
	FaultRogue      FaultKind = "rogue"
	FaultSlow       FaultKind = "slow"
	FaultCrash      FaultKind = "crash"
	FaultHang       FaultKind = "hang"
)

// FaultKinds lists every fault kind with its arguments, for errors and help texts.
const FaultKinds = "disconnect[:<slots down>], reset, garbage[:<bytes>], rogue[:<bytes>], slow[:<slots>[:<bytes per second>]], crash, hang"

// FaultForms is the schedule's syntax, for the parameter's description.
const FaultForms = "comma-separated <slot>:<kind>:<group>[/<instance>][@<peer group>[/<instance>]][:<args>] (slot from 0, fractions allowed; @peer for reset and garbage); kinds: " + FaultKinds + "; empty: no faults"

// Fault defaults.
const (
	defaultDownSlots    = 0.5
	defaultGarbageBytes = 64
	defaultSlowSlots    = 1.0
	defaultSlowRate     = 64 << 10
	maxGarbageBytes     = 1 << 20
)

// InstanceRef names one instance: a group and a sequence number in it.
type InstanceRef struct {
	Group    string
	Instance int
}

func (r InstanceRef) String() string { return r.Group + "/" + strconv.Itoa(r.Instance) }

// Fault is one entry of a fault schedule.
type Fault struct {
	Spec    string // the entry as written
	AtSlots float64
	Kind    FaultKind
	Target  InstanceRef
	// Peer restricts reset and garbage to the stream from one peer of the target.
	Peer *InstanceRef
	// ForSlots: how long a disconnect or a slow reader lasts.
	ForSlots float64
	// Bytes: garbage and rogue payload size.
	Bytes int
	// RateBytes: a slow reader's bytes per second.
	RateBytes int
}

// ParseFaults parses a fault schedule for a run of slots slots; errors name the parameter,
// the entry and the allowed forms.
func ParseFaults(s string, slots int) ([]Fault, error) {
	var out []Fault
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		f, err := parseFault(e, slots)
		if err != nil {
			return nil, paramError(ParamFaults, "entry %q: %w (form: %s)", e, err, FaultForms)
		}
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b Fault) int {
		switch {
		case a.AtSlots < b.AtSlots:
			return -1
		case a.AtSlots > b.AtSlots:
			return 1
		}
		return 0
	})
	return out, nil
}

func parseFault(e string, slots int) (Fault, error) {
	parts := strings.Split(e, ":")
	if len(parts) < 3 {
		return Fault{}, errors.New("want <slot>:<kind>:<target>")
	}
	f := Fault{Spec: e, Kind: FaultKind(parts[1])}
	at, err := strconv.ParseFloat(parts[0], 64)
	if err != nil || at < 0 || at >= float64(slots) {
		return f, fmt.Errorf("slot %q is not a number in [0, %d) (param %s is %d)", parts[0], slots, ParamSlots, slots)
	}
	f.AtSlots = at
	target, peerSpec, hasPeer := strings.Cut(parts[2], "@")
	if f.Target, err = parseInstanceRef(target); err != nil {
		return f, fmt.Errorf("target: %w", err)
	}
	if hasPeer {
		if f.Kind != FaultReset && f.Kind != FaultGarbage {
			return f, fmt.Errorf("@<peer> applies to reset and garbage only, not %s", f.Kind)
		}
		r, err := parseInstanceRef(peerSpec)
		if err != nil {
			return f, fmt.Errorf("peer: %w", err)
		}
		f.Peer = &r
	}
	args := parts[3:]
	maxArgs := map[FaultKind]int{FaultDisconnect: 1, FaultReset: 0, FaultGarbage: 1, FaultRogue: 1, FaultSlow: 2, FaultCrash: 0, FaultHang: 0}
	n, ok := maxArgs[f.Kind]
	if !ok {
		return f, fmt.Errorf("unknown fault kind %q (kinds: %s)", f.Kind, FaultKinds)
	}
	if len(args) > n {
		return f, fmt.Errorf("%s takes at most %d argument(s), got %d", f.Kind, n, len(args))
	}
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	slotsArg := func(v string, def float64) (float64, error) {
		if v == "" {
			return def, nil
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || !(x > 0) || x > float64(slots) {
			return 0, fmt.Errorf("duration %q is not a number of slots in (0, %d]", v, slots)
		}
		return x, nil
	}
	sizeArg := func(v string, def int) (int, error) {
		if v == "" {
			return def, nil
		}
		x, err := units.ParseSize(v)
		if err != nil || x < 1 || x > maxGarbageBytes {
			return 0, fmt.Errorf("size %q is not a byte count in 1..1MiB (like 64 or 4KiB)", v)
		}
		return x, nil
	}
	switch f.Kind {
	case FaultDisconnect:
		f.ForSlots, err = slotsArg(arg(0), defaultDownSlots)
	case FaultGarbage, FaultRogue:
		f.Bytes, err = sizeArg(arg(0), defaultGarbageBytes)
	case FaultSlow:
		if f.ForSlots, err = slotsArg(arg(0), defaultSlowSlots); err == nil {
			f.RateBytes, err = sizeArg(arg(1), defaultSlowRate)
		}
	}
	return f, err
}

func parseInstanceRef(s string) (InstanceRef, error) {
	g, inst, hasInst := strings.Cut(s, "/")
	if g == "" {
		return InstanceRef{}, fmt.Errorf("%q has no group", s)
	}
	r := InstanceRef{Group: g}
	if hasInst {
		n, err := strconv.Atoi(inst)
		if err != nil || n < 0 {
			return r, fmt.Errorf("instance %q of %q is not a non-negative integer", inst, s)
		}
		r.Instance = n
	}
	return r, nil
}

// CheckFaultTargets checks that every instance a schedule names is in the run's groups
// (group ID → instance count).
func CheckFaultTargets(faults []Fault, groups map[string]int) error {
	for _, f := range faults {
		refs := []InstanceRef{f.Target}
		if f.Peer != nil {
			refs = append(refs, *f.Peer)
		}
		for _, r := range refs {
			if n, ok := groups[r.Group]; !ok || r.Instance >= n {
				names := make([]string, 0, len(groups))
				for g, n := range groups {
					names = append(names, fmt.Sprintf("%s (%d)", g, n))
				}
				slices.Sort(names)
				return paramError(ParamFaults, "entry %q: no instance %s in this run (groups: %s)", f.Spec, r, strings.Join(names, ", "))
			}
		}
	}
	return nil
}
