// Package longtest marks the tests that run whole simulations or sweeps for tens of seconds.
// The README's `go test ./...` skips them, so the suite stays within a few minutes on two
// cores; with STREAMSIM_LONG=1 they run (`.ci/run` has a step for them, after `go test ./...`,
// where only the packages that read the variable run again).
package longtest

import (
	"os"
	"testing"
)

// Env is the environment variable that runs the long tests.
const Env = "STREAMSIM_LONG"

// Enabled reports whether the long tests run.
func Enabled() bool { return os.Getenv(Env) != "" && os.Getenv(Env) != "0" }

// Skip skips t unless the long tests run; what says what it would run.
func Skip(t testing.TB, what string) {
	t.Helper()
	if !Enabled() {
		t.Skipf("long test (%s): %s=1 runs it", what, Env)
	}
}
