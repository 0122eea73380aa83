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

// The one-minute figure is /proc/loadavg's first field; anything else is no figure.
func TestParseLoadAvg(t *testing.T) {
	for _, c := range []struct {
		line string
		want float64
		ok   bool
	}{
		{"0.52 0.58 0.59 1/467 12345\n", 0.52, true},
		{"12.75 9.10 4.00 5/900 1", 12.75, true},
		{"0.00 0.00 0.00 1/1 1", 0, true},
		{"", 0, false},
		{"   \n", 0, false},
		{"abc 0.1 0.2", 0, false},
		{"-1.0 0 0", 0, false},
	} {
		got, ok := parseLoadAvg(c.line)
		if got != c.want || ok != c.ok {
			t.Errorf("parseLoadAvg(%q) = %v, %v; want %v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

// Busy means a load above the core count, not at it.
func TestBusyAt(t *testing.T) {
	for _, c := range []struct {
		load  float64
		cores int
		want  bool
	}{{1.99, 2, false}, {2, 2, false}, {2.01, 2, true}, {9.4, 8, true}, {0, 1, false}} {
		if got := busyAt(c.load, c.cores); got != c.want {
			t.Errorf("busyAt(%v, %d) = %v, want %v", c.load, c.cores, got, c.want)
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
