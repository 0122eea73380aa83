// Package timing decides what a test that times code does on a shared machine. Such a test
// compares figures measured in the same run (ratios, never absolute times); where the machine
// is busier than its cores, shared caches and preemption move even those ratios apart, so a
// miss there is a skip that says so, unless STREAMSIM_TIMING_STRICT is set (.ci/run runs
// these tests alone, strict, where a miss fails).
package timing

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// StrictEnv is the environment variable that makes a timing miss a failure on any machine.
const StrictEnv = "STREAMSIM_TIMING_STRICT"

// Strict reports whether timing misses fail whatever the machine's load.
func Strict() bool { return os.Getenv(StrictEnv) != "" && os.Getenv(StrictEnv) != "0" }

// LoadAverage is the machine's one-minute load average (Linux's /proc/loadavg); ok is false
// where it cannot be read.
func LoadAverage() (load float64, ok bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	return parseLoadAvg(string(b))
}

// parseLoadAvg reads the one-minute load average, the first field of /proc/loadavg's line
// ("0.52 0.58 0.59 1/467 12345").
func parseLoadAvg(line string) (float64, bool) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || v < 0 {
		return 0, false
	}
	return v, true
}

// Busy reports whether the machine's load average is above its number of cores.
func Busy() (load float64, busy bool) {
	load, ok := LoadAverage()
	return load, ok && busyAt(load, runtime.NumCPU())
}

// busyAt: a load above the core count is a machine busier than its cores.
func busyAt(load float64, cores int) bool { return load > float64(cores) }

// Judge reports a timing test's misses: none passes; on a busy machine, unless Strict, the test
// is skipped with the misses and the load; otherwise each miss is an error.
func Judge(t testing.TB, misses []string) {
	t.Helper()
	if len(misses) == 0 {
		return
	}
	if load, busy := Busy(); busy && !Strict() {
		t.Skipf("load average %.1f on %d cores; not held here (%s=1 makes this a failure):\n%s",
			load, runtime.NumCPU(), StrictEnv, strings.Join(misses, "\n"))
	}
	for _, m := range misses {
		t.Error(m)
	}
}

// Describe is the load to state beside a timing figure: "load 1.3 on 2 cores", or "load
// unknown".
func Describe() string {
	if load, ok := LoadAverage(); ok {
		return fmt.Sprintf("load %.1f on %d cores", load, runtime.NumCPU())
	}
	return "load unknown"
}
