package network

import (
	"fmt"
	"strings"
	gosync "sync"
	"time"

	"golang.org/x/sys/unix"
)

// Clock is what time an embedded run's nodes live in.
//
// Real: the machine's clock; every figure shaped by timing (copies, IHAVE, latency, lateness)
// depends on how fast this machine keeps up.
//
// Virtual: the whole run (hosts, pubsub, schedule, meters, recorder) runs in one
// testing/synctest bubble on a simulated network (virtual.go: in-process streams or QUIC over
// marcopolo/simnet),
// where time advances only when every goroutine waits: the schedule is never late, CPU costs
// no simulated time unless charged (codec_cpu), and the figures are the model's, whatever else
// the machine runs. Testground and Kubernetes instances are processes and stay real.
type Clock string

const (
	ClockReal    Clock = "real"
	ClockVirtual Clock = "virtual"
)

// ParseClock parses a clock's name; empty is real (an embedded run fills in its scenario's
// EmbeddedClock first).
func ParseClock(v string) (Clock, error) {
	switch c := Clock(strings.ToLower(strings.TrimSpace(v))); c {
	case "":
		return ClockReal, nil
	case ClockReal, ClockVirtual:
		return c, nil
	}
	return "", fmt.Errorf("%q is not real or virtual", v)
}

// WallNow is the machine's monotonic clock, which a synctest bubble does not fake: what a run
// cost in wall time, under either clock (in a bubble time.Now is simulated time).
func WallNow() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(fmt.Sprintf("clock_gettime: %v", err))
	}
	return time.Duration(ts.Nano())
}

// MaxHold bounds every hold or backoff of the layers below a run that a goroutine may still
// be in when the run returns (a node's first-write hold, package node).
const MaxHold = 5 * time.Second

// StdoutMu guards os.Stdout while package bubble sends testing's own output nowhere; whoever
// else swaps or writes os.Stdout around a bubble takes it.
var StdoutMu gosync.Mutex
