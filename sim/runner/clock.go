package runner

import (
	"strings"

	"github.com/streamsim/streamsim/sim/network"
)

// The clock of a run (network.Clock) as parameters choose it.

// parseClock parses param clock; empty is real (an embedded run fills in its scenario's
// EmbeddedClock first: EmbeddedParams).
func parseClock(v string) (network.Clock, error) {
	c, err := network.ParseClock(v)
	if err != nil {
		return "", paramError(ParamClock, "%w", err)
	}
	return c, nil
}

// parseVirtualTransport parses param vnet; empty is the default.
func parseVirtualTransport(v string) (network.VirtualTransport, error) {
	t, err := network.ParseVirtualTransport(v)
	if err != nil {
		return "", paramError(ParamVNet, "%w", err)
	}
	return t, nil
}

// EmbeddedParams is params (a copy) with the clock an embedded run (streamsim run,
// Embedded.Run) takes where none is given: real when a time scale is given (a time scale
// means the real clock; with clock virtual it is refused), else the scenario's EmbeddedClock.
func (s *Scenario) EmbeddedParams(params map[string]string) map[string]string {
	out := MergeParams(params, nil)
	if strings.TrimSpace(out[ParamClock]) == "" {
		out[ParamClock] = string(s.embeddedClock())
		if strings.TrimSpace(out[ParamTimeScale]) != "" {
			out[ParamClock] = string(network.ClockReal)
		}
	}
	return out
}

func (s *Scenario) embeddedClock() network.Clock {
	if s.EmbeddedClock == "" {
		return network.ClockReal
	}
	return s.EmbeddedClock
}

// virtualScenarios names the registered scenarios that can run on the virtual clock, for
// refusals.
func virtualScenarios() string {
	var names []string
	for _, s := range Scenarios() {
		if s.VirtualClock {
			names = append(names, s.Name)
		}
	}
	return strings.Join(names, ", ")
}

// checkClock refuses the virtual clock for a scenario that cannot take it, naming those that
// can.
func (s *Scenario) checkClock(p *Params) error {
	if p.Clock == network.ClockVirtual && !s.VirtualClock {
		return paramError(ParamClock, "scenario %s runs on the real clock only (virtual: %s)", s.Name, virtualScenarios())
	}
	return nil
}

// CheckProcessClock refuses the virtual clock for instances that are processes of their own
// (Testground, Kubernetes): a synctest bubble holds one process's goroutines.
func CheckProcessClock(p *Params) error {
	if p.Clock == network.ClockVirtual {
		return paramError(ParamClock, "virtual runs embedded only (streamsim run); Testground and Kubernetes instances are processes on the real clock")
	}
	return nil
}
