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

// forwarding=client (the default) makes Lighthouse and Nimbus nodes withhold echoes and the
// go, jvm and js clients' nodes not; go and withhold force one rule; a run from before the
// parameter ("") forwarded as go; anything else is refused naming the allowed values.
func TestForwardingParam(t *testing.T) {
	sc, err := runner.Lookup("neighbourhood")
	if err != nil {
		t.Fatal(err)
	}
	var clients []topology.Client
	for _, name := range []string{"lighthouse", "nimbus", "prysm", "teku", "lodestar"} {
		cl, err := topology.ClientProfile(name)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, cl)
	}
	for v, want := range map[string][5]bool{
		"":         {true, true, false, false, false},
		"client":   {true, true, false, false, false},
		"go":       {false, false, false, false, false},
		"withhold": {true, true, true, true, true},
	} {
		vals := map[string]string{}
		if v != "" {
			vals[ParamForwarding] = v
		}
		p, err := sc.ParseParams(vals)
		if err != nil {
			t.Fatalf("forwarding=%s: %v", v, err)
		}
		rule := runner.Own[*Config](p).Forwarding
		var got [5]bool
		for i, cl := range clients {
			got[i] = nodeWithholds(rule, cl)
		}
		if got != want {
			t.Errorf("forwarding=%s: withholds %v, want %v", v, got, want)
		}
	}
	if nodeWithholds("", clients[0]) || !strings.Contains(forwardingLabel(""), "from before") {
		t.Error("a run from before the parameter forwarded as go")
	}
	for _, v := range []string{"rust", "Client", "none"} {
		_, err := sc.ParseParams(map[string]string{ParamForwarding: v})
		if err == nil || !strings.Contains(err.Error(), ParamForwarding) || !strings.Contains(err.Error(), "client, go, withhold") {
			t.Errorf("forwarding=%s: %v, want an error naming %s and the allowed values", v, err, ParamForwarding)
		}
	}
}
