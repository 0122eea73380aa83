package neighbourhood

import (
	"reflect"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/topology"

	"github.com/streamsim/streamsim/gossip"
)

// The default population: 45 peers in the mix's proportions, degrees in their clients'
// ranges, half the links dialled by the observed node, every observed topic with
// subscribers, and the same seed drawing the same neighbourhood.
func TestNeighbourhoodDefaults(t *testing.T) {
	p, err := ParseNeighbourhoodParams(nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Peers) != 45 || plan.ObservedClient.Name != "teku" {
		t.Fatalf("%d peers, observed %s", len(plan.Peers), plan.ObservedClient.Name)
	}
	kinds := map[string]int{}
	dialled := 0
	for _, pr := range plan.Peers {
		kinds[pr.Kind]++
		rg := p.Degrees[pr.Client.Name]
		if pr.Degree < rg[0] || pr.Degree > rg[1] {
			t.Errorf("%s peer degree %d outside %v", pr.Client.Name, pr.Degree, rg)
		}
		if pr.Boundary != min(p.Boundary, pr.Degree-1) {
			t.Errorf("boundary %d for degree %d", pr.Boundary, pr.Degree)
		}
		if pr.Dialled {
			dialled++
		}
		for _, tp := range pr.Topics {
			_, name, _ := gossip.ParseTopic(tp)
			if strings.HasPrefix(name, "beacon_attestation_") && gossip.Subnet(name) >= p.Subnets {
				t.Errorf("topic %s outside the form's %d subnets", name, p.Subnets)
			}
		}
	}
	if kinds[topology.KindDefault] != 27 || kinds[topology.KindAllSubnets] != 14 || kinds[topology.KindSupernode] != 4 || dialled != 23 {
		t.Errorf("kinds %v, dialled %d", kinds, dialled)
	}
	att := 0
	for _, tp := range plan.ObservedTopics {
		_, name, _ := gossip.ParseTopic(tp)
		if strings.HasPrefix(name, "beacon_attestation_") {
			att++
			// All-subnets peers alone give 14 subscribers on every subnet (13.5 rounded up).
			if n := len(plan.Subscribers[tp]); n < 14 {
				t.Errorf("%s: %d subscribers", name, n)
			}
		}
	}
	if att != 4 {
		t.Errorf("observed node on %d attestation subnets, want 4", att)
	}
	again, _ := Plan(p)
	if !reflect.DeepEqual(plan, again) {
		t.Error("same seed, different neighbourhood")
	}
	p.Seed = 2
	other, _ := Plan(p)
	if reflect.DeepEqual(plan.Peers, other.Peers) {
		t.Error("another seed drew the same neighbourhood")
	}
}

// Bad input is refused before anything starts, naming the parameter.
func TestNeighbourhoodRejects(t *testing.T) {
	for _, c := range []struct {
		params map[string]string
		want   string
	}{
		{map[string]string{topology.ParamMix: "default:0.5,all-subnets:0.3"}, "param mix: shares sum to 0.8"},
		{map[string]string{topology.ParamClients: "teku:0.5,prysm:0.6"}, "param clients: shares sum to 1.1"},
		{map[string]string{ParamDegrees: "lighthouse:-5-10"}, "param degrees"},
		{map[string]string{ParamDegrees: DefaultDegrees + ",teku:100-64"}, "param degrees: teku: 100-64: want min ≤ max"},
		{map[string]string{ParamDegrees: "lighthouse:100-200"}, "param degrees: no degree for client prysm"},
		{map[string]string{ParamBoundary: "-1"}, "param boundary: -1: must not be negative"},
		{map[string]string{ParamSubnets: "65"}, "param subnets: 65: want 1..64"},
		{map[string]string{ParamDialledShare: "1.5"}, "param dialled_share"},
		{map[string]string{topology.ParamObservedClient: "geth"}, "param observed_client"},
		// Three default nodes cannot cover 64 subnets.
		{map[string]string{topology.ParamObservedPeers: "3", ParamSubnets: "64", topology.ParamMix: "default:1"}, "param mix: with 3 peers and this mix no peer subscribes to beacon_attestation_"},
	} {
		p, err := ParseNeighbourhoodParams(c.params)
		if err == nil {
			_, err = Plan(p)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.params, err, c.want)
		}
	}
}

func TestPeripheryCapacity(t *testing.T) {
	p := DefaultNeighbourhoodParams()
	p.Grafters = 0
	plan, err := Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	if plan.BoundaryTotal != 45*16 {
		t.Fatalf("boundary total %d", plan.BoundaryTotal)
	}
	if err := plan.PeripheryCapacity(100<<10, 1<<20, 1<<30); err != nil {
		t.Errorf("720 × 100 KiB + 46 MiB in 1 GiB: %v", err)
	}
	err = plan.PeripheryCapacity(2<<20, 1<<20, 1<<30)
	if err == nil || !strings.Contains(err.Error(), "param boundary: 720 boundary peers and 0 outside grafters (1440 MiB)") || !strings.Contains(err.Error(), "need 1486 MiB") {
		t.Errorf("too large a periphery: %v", err)
	}
	// The grafters count: by degree they outnumber the boundary peers several times over.
	p.Grafters = GraftersOfDegree
	plan, err = Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	outside := int64(plan.BoundaryTotal + plan.GraftersTotal)
	if err := plan.PeripheryCapacity(100<<10, 1<<20, outside*(100<<10)+46<<20); err != nil {
		t.Errorf("exactly enough memory: %v", err)
	}
	if err := plan.PeripheryCapacity(100<<10, 1<<20, outside*(100<<10)+45<<20); err == nil || !strings.Contains(err.Error(), "lower boundary, grafters (a cap)") {
		t.Errorf("1 MiB short: %v", err)
	}
}

// Outside grafters in proportion to each peer's degree: a peer with a topic under pressure
// gets its degree minus the observed node minus its boundary peers, subscribed to those topics
// only; a peer without one gets none; a cap caps; the class follows the kind; bad values are
// refused naming the parameter.
func TestOutsideGrafters(t *testing.T) {
	p := DefaultNeighbourhoodParams()
	plan, err := Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	total, withPressure := 0, 0
	for i, pr := range plan.Peers {
		var pressed []string
		for _, tp := range pr.Topics {
			if p.Presses(tp) {
				pressed = append(pressed, tp)
			}
		}
		want := 0
		if len(pressed) > 0 {
			want = pr.Degree - 1 - pr.Boundary
			withPressure++
		}
		if pr.Grafters != want || !reflect.DeepEqual(pr.GrafterTopics, pressed) {
			t.Errorf("peer %d (%s, degree %d, boundary %d): %d grafters on %v, want %d on %v", i, pr.Kind, pr.Degree, pr.Boundary, pr.Grafters, pr.GrafterTopics, want, pressed)
		}
		if want := map[string]string{topology.KindDefault: BandwidthFullNode, topology.KindSupernode: BandwidthSupernode, topology.KindAllSubnets: BandwidthAllSubnets}[pr.Kind]; pr.Bandwidth != want {
			t.Errorf("peer %d of kind %s in bandwidth class %q, want %q", i, pr.Kind, pr.Bandwidth, want)
		}
		total += pr.Grafters
	}
	// Every all-subnets peer (14) is on the pressed subnets; degrees 64–200 make thousands.
	if total != plan.GraftersTotal || withPressure < 14 || total < 14*40 {
		t.Errorf("%d grafters over %d peers with pressure (plan says %d)", total, withPressure, plan.GraftersTotal)
	}
	capped, err := ParseNeighbourhoodParams(map[string]string{ParamGrafters: "5"})
	if err != nil {
		t.Fatal(err)
	}
	cp, _ := Plan(capped)
	for i, pr := range cp.Peers {
		if pr.Grafters > 5 || (pr.Grafters == 0) != (plan.Peers[i].Grafters == 0) {
			t.Errorf("cap 5: peer %d has %d grafters (uncapped %d)", i, pr.Grafters, plan.Peers[i].Grafters)
		}
	}
	none, _ := ParseNeighbourhoodParams(map[string]string{ParamGrafters: "0"})
	if np, _ := Plan(none); np.GraftersTotal != 0 {
		t.Errorf("grafters=0: %d", np.GraftersTotal)
	}
	off, _ := ParseNeighbourhoodParams(map[string]string{ParamPressure: "none"})
	if np, _ := Plan(off); np.GraftersTotal != 0 {
		t.Errorf("pressure none: %d grafters", np.GraftersTotal)
	}
	for _, v := range []string{"-2", "lots", "1.5"} {
		if _, err := ParseNeighbourhoodParams(map[string]string{ParamGrafters: v}); err == nil || !strings.Contains(err.Error(), "param grafters") {
			t.Errorf("grafters=%s: %v", v, err)
		}
	}
}
