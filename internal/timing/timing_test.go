package timing

import (
	"runtime"
	"testing"
)

func TestStrict(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "1": true, "yes": true} {
		t.Setenv(StrictEnv, v)
		if got := Strict(); got != want {
			t.Errorf("%s=%q: Strict() = %v, want %v", StrictEnv, v, got, want)
		}
	}
}

func TestLoadAverage(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/loadavg")
	}
	load, ok := LoadAverage()
	if !ok || load < 0 {
		t.Fatalf("LoadAverage() = %v, %v; want a non-negative figure on Linux", load, ok)
	}
	if _, busy := Busy(); busy != (load > float64(runtime.NumCPU())) && load != 0 {
		// Busy reads the file again; the figure may have moved by a hundredth, never across
		// the core count twice in a row in practice, so only a contradiction at equal loads fails.
		if l2, _ := LoadAverage(); l2 == load {
			t.Errorf("Busy() = %v at load %.2f on %d cores", busy, load, runtime.NumCPU())
		}
	}
}

func TestJudgeNoMissesPasses(t *testing.T) {
	t.Setenv(StrictEnv, "1")
	Judge(t, nil) // must neither fail nor skip
	if t.Failed() || t.Skipped() {
		t.Fatal("Judge with no misses changed the test's outcome")
	}
}
