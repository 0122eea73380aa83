package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/workload"
)

func TestParseFaults(t *testing.T) {
	fs, err := ParseFaults("2.5:disconnect:leaf-1-snappy-stream:0.25, 1:reset:leaf-2-zstd@hub, 0:garbage:nodes/3:4KiB,"+
		"3:rogue:leaf-0-plain,4:slow:leaf-1-snappy-stream:2:256KiB, 4:crash:publishers/1, 5:hang:hub, 1:slow:x", 6)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 8 {
		t.Fatalf("%d faults", len(fs))
	}
	// Sorted by time, stable.
	want := []struct {
		at     float64
		kind   FaultKind
		target InstanceRef
	}{
		{0, FaultGarbage, InstanceRef{"nodes", 3}}, {1, FaultReset, InstanceRef{"leaf-2-zstd", 0}}, {1, FaultSlow, InstanceRef{"x", 0}},
		{2.5, FaultDisconnect, InstanceRef{"leaf-1-snappy-stream", 0}}, {3, FaultRogue, InstanceRef{"leaf-0-plain", 0}},
		{4, FaultSlow, InstanceRef{"leaf-1-snappy-stream", 0}}, {4, FaultCrash, InstanceRef{"publishers", 1}}, {5, FaultHang, InstanceRef{"hub", 0}},
	}
	for i, w := range want {
		if f := fs[i]; f.AtSlots != w.at || f.Kind != w.kind || f.Target != w.target {
			t.Errorf("fault %d: %+v, want %+v", i, f, w)
		}
	}
	if fs[0].Bytes != 4096 || fs[1].Peer == nil || *fs[1].Peer != (InstanceRef{"hub", 0}) || fs[2].ForSlots != 1 || fs[2].RateBytes != 64<<10 ||
		fs[3].ForSlots != 0.25 || fs[4].Bytes != 64 || fs[5].ForSlots != 2 || fs[5].RateBytes != 256<<10 {
		t.Errorf("arguments: %+v", fs)
	}
	if fs, err := ParseFaults(" ", 2); err != nil || len(fs) != 0 {
		t.Errorf("empty schedule: %v, %v", fs, err)
	}

	for _, bad := range []struct{ spec, want string }{
		{"1:explode:hub", "unknown fault kind"},
		{"6:reset:hub", "not a number in [0, 6)"},
		{"-1:reset:hub", "not a number in [0, 6)"},
		{"x:reset:hub", "slot"},
		{"1:reset", "want <slot>:<kind>:<target>"},
		{"1:reset::", "no group"},
		{"1:reset:hub/x", "instance"},
		{"1:reset:hub:3", "at most 0 argument"},
		{"1:disconnect:hub:0", "slots in (0, 6]"},
		{"1:disconnect:hub:7", "slots in (0, 6]"},
		{"1:garbage:hub:2MiB", "1..1MiB"},
		{"1:slow:hub:1:fast", "byte count"},
		{"1:crash:hub@leaf", "@<peer> applies to reset and garbage only"},
	} {
		_, err := ParseFaults(bad.spec, 6)
		var pe *ParamError
		if err == nil || !errors.As(err, &pe) || pe.Name != ParamFaults || !strings.Contains(err.Error(), bad.want) ||
			!strings.Contains(err.Error(), "kinds: "+FaultKinds) {
			t.Errorf("%q: error %v; want one naming param %s, the problem (%q) and the kinds", bad.spec, err, ParamFaults, bad.want)
		}
	}
	// Through the scenario's parameters.
	if _, err := paramsOnly.ParseParams(map[string]string{ParamFaults: "3:reset:hub", ParamSlots: "2"}); err == nil ||
		!strings.Contains(err.Error(), "param faults") {
		t.Errorf("a fault after the last slot: %v", err)
	}
	// Targets are checked against the run's groups.
	fs, _ = ParseFaults("1:reset:leaf-9-zstd", 2)
	if err := CheckFaultTargets(fs, map[string]int{"hub": 1, "publishers": 2}); err == nil ||
		!strings.Contains(err.Error(), "no instance leaf-9-zstd/0") || !strings.Contains(err.Error(), "hub (1), publishers (2)") {
		t.Errorf("unknown target: %v", err)
	}
	fs, _ = ParseFaults("1:crash:publishers/2", 2)
	if err := CheckFaultTargets(fs, map[string]int{"publishers": 2}); err == nil {
		t.Error("instance beyond the group accepted")
	}
}

func TestParseReliabilityParams(t *testing.T) {
	p, err := paramsOnly.ParseParams(map[string]string{ParamTimeout: "90s", ParamSampleSlots: "0.5", ParamSlots: "3", ParamTimeScale: "2"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Budget() != 90*time.Second || p.SampleSlots != 0.5 {
		t.Errorf("timeout %v, sample slots %g", p.Budget(), p.SampleSlots)
	}
	p, _ = paramsOnly.ParseParams(map[string]string{ParamSlots: "3", ParamTimeScale: "2"})
	if want := 5*6*time.Second + 4*time.Minute; p.Budget() != want || p.SampleSlots != 1 {
		t.Errorf("default budget %v, want %v; sample slots %g", p.Budget(), want, p.SampleSlots)
	}
	for k, v := range map[string]string{ParamTimeout: "soon", ParamSampleSlots: "-1"} {
		if _, err := paramsOnly.ParseParams(map[string]string{k: v}); err == nil || !strings.Contains(err.Error(), "param "+k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
	if _, err := paramsOnly.ParseParams(map[string]string{ParamTimeout: "-5s"}); err == nil {
		t.Error("negative timeout accepted")
	}
}

// paramsOnly is a scenario of the common parameters only, for the tests of their parsing.
var paramsOnly = &Scenario{Name: "params-only", Role: func(string) topology.Role { return topology.RoleNode }}

// The era selects the workload's era; an unknown one is refused naming the parameter and the
// known eras.
func TestEraParam(t *testing.T) {
	p, err := paramsOnly.ParseParams(map[string]string{ParamEra: "2023-09"})
	if err != nil || p.Era != "2023-09" || p.Workload().Era != "2023-09" {
		t.Fatalf("era 2023-09: %+v, %v", p, err)
	}
	if p, err := paramsOnly.ParseParams(nil); err != nil || p.Workload().Era != workload.DefaultEra {
		t.Fatalf("default era: %v", err)
	}
	_, err = paramsOnly.ParseParams(map[string]string{ParamEra: "1999-01"})
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Name != ParamEra || !strings.Contains(err.Error(), workload.DefaultEra) {
		t.Errorf("unknown era: %v", err)
	}
}
