package neighbourhood

import (
	"strings"
	"testing"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/sim/runner"
	"github.com/streamsim/streamsim/topology"
)

// framing=client (the default) gives each node its client's framing; a framing's name forces
// it on every node; anything else is refused naming the parameter and the allowed values.
func TestFramingParam(t *testing.T) {
	sc, err := runner.Lookup("neighbourhood")
	if err != nil {
		t.Fatal(err)
	}
	lh, _ := topology.ClientProfile("lighthouse")
	prysm, _ := topology.ClientProfile("prysm")
	for v, want := range map[string][2]gossip.Framing{
		"":       {gossip.FramingRust, gossip.FramingGo},
		"client": {gossip.FramingRust, gossip.FramingGo},
		"go":     {gossip.FramingGo, gossip.FramingGo},
		"rust":   {gossip.FramingRust, gossip.FramingRust},
		"nim":    {gossip.FramingNim, gossip.FramingNim},
	} {
		vals := map[string]string{}
		if v != "" {
			vals[ParamFraming] = v
		}
		p, err := sc.ParseParams(vals)
		if err != nil {
			t.Fatalf("framing=%s: %v", v, err)
		}
		f := runner.Own[*Config](p).Framing
		if got := [2]gossip.Framing{nodeFraming(f, lh), nodeFraming(f, prysm)}; got != want {
			t.Errorf("framing=%s: lighthouse, prysm frame as %v, want %v", v, got, want)
		}
	}
	for _, v := range []string{"lighthouse", "quic", "RUST"} {
		_, err := sc.ParseParams(map[string]string{ParamFraming: v})
		if err == nil || !strings.Contains(err.Error(), ParamFraming) || !strings.Contains(err.Error(), "client, go, rust, nim, jvm, js") {
			t.Errorf("framing=%s: %v, want an error naming %s and the allowed values", v, err, ParamFraming)
		}
	}
}

func TestFramingLabel(t *testing.T) {
	if l := framingLabel(""); !strings.Contains(l, "lighthouse rust") || !strings.Contains(l, "teku jvm") || !strings.Contains(l, "prysm go") {
		t.Errorf("client framing reads %q", l)
	}
	if l := framingLabel(gossip.FramingRust); !strings.Contains(l, "every node as rust") {
		t.Errorf("rust framing reads %q", l)
	}
}
