package neighbourhood

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/streamsim/streamsim/sim/runner"
	"github.com/streamsim/streamsim/topology"
)

// The scenario is registered with the calibration form's defaults, parses its parameters once
// into the run's Config, and refuses before any node starts what it cannot run, naming it.
func TestScenarioRegistered(t *testing.T) {
	sc, err := runner.Lookup("neighbourhood")
	if err != nil {
		t.Fatal(err)
	}
	p, err := sc.ParseParams(map[string]string{ParamSubnets: "2", ParamWarmup: "3"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := runner.Own[*Config](p)
	if cfg.Population.Subnets != 2 || cfg.Warmup != 3 || cfg.Slots != DefaultConfig().Slots || cfg.TimeScale != 1 || cfg.Validators != p.Validators {
		t.Errorf("config %+v from params %+v", cfg, p.Values)
	}
	if _, err := sc.ParseGroups(map[string]string{runner.ParamCodec: "snappy-stream"}, []runner.Group{{ID: GroupName, Instances: 1}}); err != nil {
		t.Errorf("snappy-stream on the observed node's links: %v", err)
	}
	if p, err := sc.ParseParams(map[string]string{runner.ParamCodec: "zstd:3:1MiB"}); err != nil || runner.Own[*Config](p).Codec.String() != "zstd:3:1MiB" {
		t.Errorf("zstd:3:1MiB: %v", err)
	}
	if _, err := sc.ParseGroups(map[string]string{runner.ParamCodec: "lz5"}, []runner.Group{{ID: GroupName, Instances: 1}}); err == nil ||
		!strings.Contains(err.Error(), "codec") {
		t.Errorf("an unknown codec: %v", err)
	}
	if _, err := sc.ParseGroups(nil, []runner.Group{{ID: GroupName, Instances: 2}}); err == nil {
		t.Error("two instances were accepted")
	}
	if p, err := sc.ParseParams(map[string]string{ParamChurn: "off", ParamRegraft: "20s", ParamBoundary: "12", ParamOutsideAllSubnets: "0.1"}); err != nil {
		t.Errorf("churn off, regraft 20s, boundary 12, outside_all_subnets 0.1: %v", err)
	} else if c := runner.Own[*Config](p); c.Churn != 0 || c.Regraft != 20*time.Second || c.Population.Boundary != 12 || c.Population.OutsideAllSubnets != 0.1 {
		t.Errorf("churn off, regraft 20s, boundary 12, outside_all_subnets 0.1: %v %v %d %v", c.Churn, c.Regraft, c.Population.Boundary, c.Population.OutsideAllSubnets)
	}
	if p, err := sc.ParseParams(map[string]string{ParamBandwidth: BandwidthClasses, runner.ParamOrdinaryBandwidth: "20Mbit"}); err != nil {
		t.Errorf("ordinary_bandwidth 20Mbit: %v", err)
	} else if b := runner.Own[*Config](p).Bandwidth; !b.On() || b.FullNode != 20e6 || b.Supernode != 1024e6 {
		t.Errorf("ordinary_bandwidth 20Mbit: %+v", b)
	}
	if p, err := sc.ParseParams(map[string]string{ParamBandwidth: BandwidthOff}); err != nil || runner.Own[*Config](p).Bandwidth.On() {
		t.Errorf("bandwidth off: %v", err)
	}
	if p, err := sc.ParseParams(map[string]string{ParamAllSubnetsBandwidth: "200Mbit"}); err != nil {
		t.Errorf("allsubnets_bandwidth 200Mbit: %v", err)
	} else if b := runner.Own[*Config](p).Bandwidth; b.AllSubnets != 200e6 || b.FullNode != 50e6 {
		t.Errorf("allsubnets_bandwidth 200Mbit: %+v", b)
	}
	for v, want := range map[string]int{"client": 0, "off": idontwantNever, "1000": 1000} {
		p, err := sc.ParseParams(map[string]string{ParamObservedIDontWant: v})
		if err != nil || runner.Own[*Config](p).ObservedIDontWant != want {
			t.Errorf("observed_idontwant %s: %v, %v; want %d", v, p, err, want)
			continue
		}
		teku, _ := topology.ClientProfile("teku")
		got := observedClient(*runner.Own[*Config](p), teku).IDontWantThresholdBytes
		if want == 0 {
			want = 16 << 10 // Teku's own
		}
		if got != want {
			t.Errorf("observed_idontwant %s: the observed node's threshold %d, want %d", v, got, want)
		}
	}
	if l := idontwantLabel(idontwantNever); !strings.Contains(l, "never") {
		t.Errorf("off reads %q", l)
	}
	if b := cfg.Bandwidth; !b.On() || b.FullNode != 50e6 || b.Supernode != 1024e6 || b.AllSubnets != 1024e6 {
		t.Errorf("default bandwidth %+v, want gossipsub-interop's classes", b)
	}
	if c := cfg; c.Churn != DefaultChurn || c.Regraft != 0 || c.Population.Boundary != BoundaryOfDegree {
		t.Errorf("defaults: churn %v, regraft %v, boundary %d", c.Churn, c.Regraft, c.Population.Boundary)
	}
	for _, c := range []struct{ name, v string }{{ParamCopies, "0"}, {ParamSubnets, "65"}, {topology.ParamMix, "default:0.5"},
		{ParamValidationDelay, "block:9-1ms"}, {ParamChurn, "10s"}, {ParamChurn, "soon"}, {ParamChurn, "-5m"}, {ParamRegraft, "-1s"},
		{ParamRegraft, "later"}, {ParamBoundary, "-3"}, {ParamOutsideAllSubnets, "1.2"}, {ParamOutsideSupernodes, "-0.1"}, {ParamBandwidth, "on"}, {runner.ParamOrdinaryBandwidth, "-1Mbit"},
		{runner.ParamSupernodeBandwidth, "fast"}, {ParamAllSubnetsBandwidth, "-2Gbit"}, {ParamObservedIDontWant, "0"},
		{ParamObservedIDontWant, "-1"}, {ParamObservedIDontWant, "16KiB"}, {ParamObservedIDontWant, "2147483647"}} {
		name, v := c.name, c.v
		_, err := sc.ParseParams(map[string]string{name: v})
		var pe *runner.ParamError
		if err == nil || (!errors.As(err, &pe) && !strings.Contains(err.Error(), name)) {
			t.Errorf("%s=%s: %v, want an error naming %s", name, v, err, name)
		}
	}
}
