package neighbourhood

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/streamsim/streamsim/topology"
)

// ParamObservedIDontWant overrides the observed node's IDONTWANT threshold: IDontWantClient
// (its client profile's, e.g. Teku's 16 KiB), IDontWantOff (it never sends IDONTWANT, as a
// node before gossipsub v1.2), or a size in bytes. Its peers honour what it sends either way.
const (
	ParamObservedIDontWant = "observed_idontwant"
	IDontWantClient        = "client"
	IDontWantOff           = "off"
)

// idontwantNever is the threshold that no message reaches (pubsub sends IDONTWANT for a
// message of at least the threshold's bytes).
const idontwantNever = math.MaxInt32

// ParseObservedIDontWant reads ParamObservedIDontWant: 0 for the client's own threshold,
// otherwise the threshold in bytes (idontwantNever for off).
func ParseObservedIDontWant(v string) (int, error) {
	switch t := strings.TrimSpace(v); t {
	case "", IDontWantClient:
		return 0, nil
	case IDontWantOff:
		return idontwantNever, nil
	default:
		n, err := strconv.Atoi(t)
		if err != nil || n < 1 || n >= idontwantNever {
			return 0, fmt.Errorf("param %s: %q is not %s, %s or a message size in bytes (1 to %d)", ParamObservedIDontWant, v, IDontWantClient, IDontWantOff, idontwantNever-1)
		}
		return n, nil
	}
}

// observedClient is the observed node's client profile with cfg's overrides applied.
func observedClient(cfg Config, cl topology.Client) topology.Client {
	if cfg.ObservedIDontWant > 0 {
		cl.IDontWantThresholdBytes = cfg.ObservedIDontWant
	}
	return cl
}

// idontwantLabel is the report's words for a threshold.
func idontwantLabel(threshold int) string {
	if threshold >= idontwantNever {
		return "IDONTWANT never sent"
	}
	return fmt.Sprintf("IDONTWANT from %d B", threshold)
}
