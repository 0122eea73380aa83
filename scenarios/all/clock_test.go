package all_test

import (
	"errors"
	"strings"

	"github.com/streamsim/streamsim/scenarios/hubleaves"
	"github.com/streamsim/streamsim/scenarios/mesh"

	"github.com/streamsim/streamsim/sim/runner"

	"github.com/streamsim/streamsim/sim/network"

	"testing"
)

// The clock parameter: hub-leaves refuses virtual naming the scenarios that take it; a
// process of its own (Testground, Kubernetes) refuses it; under virtual the time scale is 1
// whatever was asked; a bad value names the parameter and the allowed values.
func TestClockParam(t *testing.T) {
	var pe *runner.ParamError
	_, err := hubleaves.HubLeaves.ParseParams(map[string]string{runner.ParamClock: "virtual"})
	if !errors.As(err, &pe) || pe.Name != runner.ParamClock || !strings.Contains(err.Error(), "mesh") || !strings.Contains(err.Error(), "real clock only") {
		t.Errorf("hub-leaves with clock virtual: %v", err)
	}
	p, err := mesh.Mesh.ParseParams(map[string]string{runner.ParamClock: "virtual", runner.ParamTimeScale: "4"})
	if err != nil || p.Clock != network.ClockVirtual || p.TimeScale != 1 || !p.CodecCPU {
		t.Fatalf("mesh with clock virtual: %+v, %v", p, err)
	}
	if err := runner.CheckProcessClock(p); !errors.As(err, &pe) || pe.Name != runner.ParamClock {
		t.Errorf("a process instance on the virtual clock: %v", err)
	}
	if p, err := mesh.Mesh.ParseParams(map[string]string{runner.ParamTimeScale: "4"}); err != nil || p.Clock != network.ClockReal || p.TimeScale != 4 || runner.CheckProcessClock(p) != nil {
		t.Errorf("mesh by default: %+v, %v", p, err)
	}
	if _, err := mesh.Mesh.ParseParams(map[string]string{runner.ParamClock: "simulated"}); !errors.As(err, &pe) || pe.Name != runner.ParamClock || !strings.Contains(err.Error(), "real or virtual") {
		t.Errorf("bad clock: %v", err)
	}
	if _, err := mesh.Mesh.ParseParams(map[string]string{runner.ParamVNet: "tcp"}); !errors.As(err, &pe) || pe.Name != runner.ParamVNet || !strings.Contains(err.Error(), "quic or mem") {
		t.Errorf("bad vnet: %v", err)
	}
	if p, err := mesh.Mesh.ParseParams(map[string]string{runner.ParamVNet: " MEM "}); err != nil || p.VNet != network.VirtualMem {
		t.Errorf("vnet MEM: %+v, %v", p, err)
	}
	if p, err := mesh.Mesh.ParseParams(nil); err != nil || p.VNet != network.DefaultVirtualTransport {
		t.Errorf("vnet default: %+v, %v", p, err)
	}
	// An embedded run without a clock takes the scenario's, or real when a time scale is
	// given; a clock given stays.
	sc := *mesh.Mesh
	sc.EmbeddedClock = network.ClockVirtual
	for _, c := range []struct {
		in   map[string]string
		want network.Clock
	}{
		{map[string]string{}, network.ClockVirtual},
		{map[string]string{runner.ParamTimeScale: "2"}, network.ClockReal},
		{map[string]string{runner.ParamClock: "real"}, network.ClockReal},
		{map[string]string{runner.ParamClock: "virtual", runner.ParamTimeScale: "2"}, network.ClockVirtual},
	} {
		if got := network.Clock(sc.EmbeddedParams(c.in)[runner.ParamClock]); got != c.want {
			t.Errorf("EmbeddedParams(%v): clock %q, want %q", c.in, got, c.want)
		}
	}
	if got := hubleaves.HubLeaves.EmbeddedParams(nil)[runner.ParamClock]; got != string(network.ClockReal) {
		t.Errorf("hub-leaves' embedded clock %q", got)
	}
}
