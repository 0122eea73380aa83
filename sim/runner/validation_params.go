package runner

import (
	"strings"
	"time"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/sim/node"
)

// ParamValidationDelay is the parameter of per-category validation delays.
const ParamValidationDelay = "validation_delay"

// DefaultValidationDelay is ParamValidationDelay's default (see above for the figures).
const DefaultValidationDelay = "attestation:5-50ms,aggregate:5-20ms,block:20-100ms,data_column:10-40ms,sync_committee:5-50ms"

// ParseValidationDelays parses "category:min-max,..." (durations in Go syntax, e.g. 5ms; a
// single value "category:20ms" is a fixed delay), or "off"/"" for none. Errors name the
// parameter.
func ParseValidationDelays(v string) (node.ValidationDelays, error) {
	v = strings.TrimSpace(v)
	out := node.ValidationDelays{}
	if v == "" || v == "off" || v == "0" {
		return out, nil
	}
	allowed := []string{}
	for _, c := range gossip.Categories() {
		if c != gossip.Control && c != gossip.Other {
			allowed = append(allowed, c.String())
		}
	}
	for part := range strings.SplitSeq(v, ",") {
		name, rng, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return nil, paramError(ParamValidationDelay, "%q is not category:min-max (e.g. attestation:5ms-50ms), or off", part)
		}
		c, err := gossip.ParseCategory(strings.TrimSpace(name))
		if err != nil || c == gossip.Control || c == gossip.Other {
			return nil, paramError(ParamValidationDelay, "%q: unknown category (allowed: %s)", name, strings.Join(allowed, ", "))
		}
		if _, dup := out[c]; dup {
			return nil, paramError(ParamValidationDelay, "category %s given twice", c)
		}
		lo, hi, isRange := strings.Cut(strings.TrimSpace(rng), "-")
		if !isRange {
			hi = lo
		}
		if isRange && !strings.ContainsAny(lo, "nuµms") {
			// "5-50ms": the unit of the upper bound applies to both.
			unit := strings.TrimLeft(hi, "0123456789.")
			lo += unit
		}
		dlo, err1 := time.ParseDuration(strings.TrimSpace(lo))
		dhi, err2 := time.ParseDuration(strings.TrimSpace(hi))
		if err1 != nil || err2 != nil {
			return nil, paramError(ParamValidationDelay, "%s: %q is not a duration or min-max range (e.g. 5ms-50ms)", c, rng)
		}
		if dlo < 0 || dhi < dlo {
			return nil, paramError(ParamValidationDelay, "%s: range %v-%v must be non-negative and ordered", c, dlo, dhi)
		}
		out[c] = node.DelayRange{Min: dlo, Max: dhi}
	}
	return out, nil
}
