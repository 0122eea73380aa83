package sim

import (
	"context"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Clock is what time an embedded run's nodes live in.
//
// Real: the machine's clock; every figure shaped by timing (copies, IHAVE, latency, lateness)
// depends on how fast this machine keeps up.
//
// Virtual: the whole run (hosts, pubsub, schedule, meters, recorder) runs in one
// testing/synctest bubble on a simulated network (network.go: in-process streams or QUIC over
// marcopolo/simnet),
// where time advances only when every goroutine waits: the schedule is never late, CPU costs
// no simulated time unless charged (codec_cpu), and the figures are the model's, whatever else
// the machine runs. Testground and Kubernetes instances are processes and stay real.
type Clock string

const (
	ClockReal    Clock = "real"
	ClockVirtual Clock = "virtual"
)

// ParseClock parses param clock; empty is real (an embedded run fills in its scenario's
// EmbeddedClock first: EmbeddedParams).
func ParseClock(v string) (Clock, error) {
	switch c := Clock(strings.ToLower(strings.TrimSpace(v))); c {
	case "":
		return ClockReal, nil
	case ClockReal, ClockVirtual:
		return c, nil
	}
	return "", paramError(ParamClock, "%q is not real or virtual", v)
}

// EmbeddedParams is params (a copy) with the clock an embedded run (streamsim run,
// Embedded.Run) takes where none is given: real when a time scale is given (a time scale
// means the real clock; with clock virtual it is refused), else the scenario's EmbeddedClock.
func (s *Scenario) EmbeddedParams(params map[string]string) map[string]string {
	out := mergeParams(params, nil)
	if strings.TrimSpace(out[ParamClock]) == "" {
		out[ParamClock] = string(s.embeddedClock())
		if strings.TrimSpace(out[ParamTimeScale]) != "" {
			out[ParamClock] = string(ClockReal)
		}
	}
	return out
}

func (s *Scenario) embeddedClock() Clock {
	if s.EmbeddedClock == "" {
		return ClockReal
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
	if p.Clock == ClockVirtual && !s.VirtualClock {
		return paramError(ParamClock, "scenario %s runs on the real clock only (virtual: %s)", s.Name, virtualScenarios())
	}
	return nil
}

// CheckProcessClock refuses the virtual clock for instances that are processes of their own
// (Testground, Kubernetes): a synctest bubble holds one process's goroutines.
func CheckProcessClock(p *Params) error {
	if p.Clock == ClockVirtual {
		return paramError(ParamClock, "virtual runs embedded only (streamsim run); Testground and Kubernetes instances are processes on the real clock")
	}
	return nil
}

// wallNow is the machine's monotonic clock, which a synctest bubble does not fake: what a run
// cost in wall time, under either clock.
func wallNow() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(fmt.Sprintf("clock_gettime: %v", err))
	}
	return time.Duration(ts.Nano())
}

// WallNow is the machine's monotonic clock (wall time), under either clock: in a synctest
// bubble time.Now is simulated time.
func WallNow() time.Duration { return wallNow() }

// vnetKey carries a virtual-clock run's network to a scenario's Body.
type vnetKey struct{}

// VirtualNetworkFrom is the simulated network a scenario's Body makes its hosts on when the run
// is on the virtual clock (nil on the real clock).
func VirtualNetworkFrom(ctx context.Context) *VirtualNetwork {
	v, _ := ctx.Value(vnetKey{}).(*VirtualNetwork)
	return v
}

// threadCPU is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID): what a frame's codec
// work cost, measured outside the bubble's clock. The caller holds its OS thread
// (runtime.LockOSThread) between two readings.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// cpuSpan is a reading of the calling thread's CPU clock. A goroutine may move to another
// thread between two readings (it is not locked to one: a locked goroutine blocked in a
// read would hold a thread per stream); elapsed then reads 0, so a span that moved is not
// charged rather than charged wrongly.
type cpuSpan struct {
	tid int
	at  time.Duration
}

func startCPUSpan() cpuSpan { return cpuSpan{tid: unix.Gettid(), at: threadCPU()} }

// elapsed is the thread CPU time since the span started, 0 when the goroutine changed thread.
func (s cpuSpan) elapsed() time.Duration {
	if s.tid == 0 || unix.Gettid() != s.tid {
		return 0
	}
	return max(threadCPU()-s.at, 0)
}
