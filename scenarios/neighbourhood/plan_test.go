package neighbourhood

import (
	"math"
	"reflect"
	"slices"
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
		if pr.Boundary != pr.Degree-OwnLinks || len(pr.Outside) != pr.Boundary {
			t.Errorf("%d outside peers (%d drawn) for degree %d", pr.Boundary, len(pr.Outside), pr.Degree)
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
		{map[string]string{ParamBoundary: "-1"}, `param boundary: "-1": want degree`},
		{map[string]string{ParamBoundary: "3"}, "param boundary: 3: a prysm peer with 3 outside peers cannot fill its mesh of 8 (max(6, its D 8)) on a topic the observed node is not on: want at least 8"},
		// A peer count at the neighbourhood's own links, and one that cannot give D mesh peers.
		{map[string]string{ParamDegrees: strings.Replace(DefaultDegrees, "prysm:70-70", "prysm:1-70", 1)}, "param degrees: prysm: 1-70: a peer count must exceed the neighbourhood's own links of a peer (1: the observed node), want at least 2"},
		{map[string]string{ParamDegrees: strings.Replace(DefaultDegrees, "lighthouse:200-200", "lighthouse:5-200", 1)}, "param degrees: lighthouse: 5-200: a lighthouse peer cannot find its 6 mesh peers on a topic (max(6, its D 5)) among 4 outside peers: want at least 7"},
		{map[string]string{ParamOutsideAllSubnets: "1.5"}, "param outside_all_subnets: 1.5: want a share in 0..1"},
		{map[string]string{ParamOutsideSupernodes: "-0.2"}, "param outside_supernodes: -0.2: want a share in 0..1"},
		{map[string]string{ParamOutsideAllSubnets: "0.6", ParamOutsideSupernodes: "0.5"}, "param outside_all_subnets 0.6 and param outside_supernodes 0.5: want shares summing to at most 1"},
		{map[string]string{ParamOutsideAllSubnets: "many"}, "param outside_all_subnets: \"many\" is not a share in 0..1"},
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
	p.Boundary = 16
	plan, err := Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	if plan.BoundaryTotal != 45*16 {
		t.Fatalf("outside total %d with a cap of 16", plan.BoundaryTotal)
	}
	if err := plan.PeripheryCapacity(100<<10, 1<<20, 1<<30); err != nil {
		t.Errorf("720 × 100 KiB + 46 MiB in 1 GiB: %v", err)
	}
	err = plan.PeripheryCapacity(2<<20, 1<<20, 1<<30)
	if err == nil || !strings.Contains(err.Error(), "param boundary: 720 outside peers (1440 MiB)") || !strings.Contains(err.Error(), "need 1486 MiB") {
		t.Errorf("too large a periphery: %v", err)
	}
	// By degree: every real peer's degree but its link to the observed node.
	p.Boundary = BoundaryOfDegree
	plan, err = Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	outside := int64(plan.BoundaryTotal)
	if err := plan.PeripheryCapacity(100<<10, 1<<20, outside*(100<<10)+46<<20); err != nil {
		t.Errorf("exactly enough memory: %v", err)
	}
	if err := plan.PeripheryCapacity(100<<10, 1<<20, outside*(100<<10)+45<<20); err == nil || !strings.Contains(err.Error(), "lower boundary (a cap), degrees or") {
		t.Errorf("1 MiB short: %v", err)
	}
}

// Each real peer's own peers as mainnet's: as many outside peers as its client's peer count
// leaves, kinds drawn in the outside population's shares, subscriptions by kind (global topics
// for all; 2 of 64 attestation subnets for default nodes and supernodes, every subnet for
// all-subnets nodes; sync subnets only for all-subnets nodes), at least max(6, D) subscribers
// on each of the peer's topics, the same draw for the same seed; and the class by kind.
func TestOutsidePopulation(t *testing.T) {
	p := DefaultNeighbourhoodParams()
	plan, err := Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int{"lighthouse": {199, 199}, "prysm": {69, 69}, "teku": {63, 99}, "lodestar": {99, 99}, "nimbus": {159, 159}}
	kinds := map[string]int{}
	total := 0
	for i, pr := range plan.Peers {
		if w := want[pr.Client.Name]; len(pr.Outside) < w[0] || len(pr.Outside) > w[1] {
			t.Errorf("peer %d (%s): %d outside peers, want %v", i, pr.Client.Name, len(pr.Outside), w)
		}
		mine := map[string]bool{}
		for _, tp := range pr.Topics {
			mine[tp] = true
		}
		for j, o := range pr.Outside {
			kinds[o.Kind]++
			att, sync := 0, 0
			for _, tp := range o.Topics {
				if !mine[tp] {
					t.Fatalf("peer %d outside %d subscribes to %s, not one of the real peer's topics", i, j, tp)
				}
				switch TopicKind(tp) {
				case TopicsAttestation:
					att++
				case TopicsSync:
					sync++
				}
			}
			// The form's 4 subnets: an all-subnets node is on all the peer's; a default node
			// or supernode on at most 2 of them, unless the peer's subnet search added it.
			peerAtt := 0
			for _, tp := range pr.Topics {
				if TopicKind(tp) == TopicsAttestation {
					peerAtt++
				}
			}
			if o.Kind == topology.KindAllSubnets && att != peerAtt {
				t.Errorf("peer %d: all-subnets outside peer on %d of its %d subnets", i, att, peerAtt)
			}
			if o.Kind != topology.KindAllSubnets && pr.ToppedUp == 0 && (att > 2 || sync > 0) {
				t.Errorf("peer %d: %s outside peer on %d attestation and %d sync subnets", i, o.Kind, att, sync)
			}
		}
		floor := max(SubnetSearchPeers, pr.Client.D)
		for _, tp := range pr.Topics {
			n := len(pr.Subs[tp])
			if slices.Contains(plan.ObservedTopics, tp) {
				n++
			}
			if n < floor {
				t.Errorf("peer %d (%s) has %d subscribed peers on %s, want at least %d", i, pr.Client.Name, n, tp, floor)
			}
			if TopicKind(tp) == TopicsGlobal && len(pr.Subs[tp]) != len(pr.Outside) {
				t.Errorf("peer %d: %d of %d outside peers on global topic %s", i, len(pr.Subs[tp]), len(pr.Outside), tp)
			}
		}
		if want := map[string]string{topology.KindDefault: BandwidthFullNode, topology.KindSupernode: BandwidthSupernode, topology.KindAllSubnets: BandwidthAllSubnets}[pr.Kind]; pr.Bandwidth != want {
			t.Errorf("peer %d of kind %s in bandwidth class %q, want %q", i, pr.Kind, pr.Bandwidth, want)
		}
		total += len(pr.Outside)
	}
	if total != plan.BoundaryTotal {
		t.Errorf("%d outside peers, plan says %d", total, plan.BoundaryTotal)
	}
	// The kinds in their shares (0.20 all-subnets, 0.248 supernodes) within sampling error
	// (thousands drawn: 3 sd is under 0.02).
	for k, share := range map[string]float64{topology.KindAllSubnets: p.OutsideAllSubnets, topology.KindSupernode: p.OutsideSupernodes} {
		if got := float64(kinds[k]) / float64(total); math.Abs(got-share) > 0.02 {
			t.Errorf("%s: %.3f of %d outside peers, want %.3f", k, got, total, share)
		}
	}
	// Subscribers per attestation subnet at the Lighthouse peers (199 outside peers): the
	// population's 199 × (0.20 + 0.80 × 2/64) ≈ 44.8 on average (the default nodes' subnets
	// drawn at random, so within a tenth of it over the pairs), hence ≈ 45 − D eligible.
	var sum, pairs float64
	for _, pr := range plan.Peers {
		if pr.Client.Name != "lighthouse" {
			continue
		}
		for _, tp := range pr.Topics {
			if TopicKind(tp) == TopicsAttestation {
				sum += float64(len(pr.Subs[tp]))
				pairs++
			}
		}
	}
	if want := 199 * (p.OutsideAllSubnets + (1-p.OutsideAllSubnets)*2/64); pairs < 10 || math.Abs(sum/pairs-want) > want/10 {
		t.Errorf("lighthouse peers: %.1f subscribers per attestation subnet over %.0f pairs, want %.1f", sum/pairs, pairs, want)
	}
	again, _ := Plan(p)
	if !reflect.DeepEqual(plan.Peers[0].Outside, again.Peers[0].Outside) {
		t.Error("the same seed drew other outside peers")
	}
	// Fixed seed, fixed draw: the first peer's subscribers per topic kind, as drawn today.
	// An all-subnets share of 0 leaves the attestation subnets to the 2-of-64 draw and the
	// subnet search: every peer on a subnet at exactly its floor or a little above.
	p0 := p
	p0.OutsideAllSubnets = 0
	zero, err := Plan(p0)
	if err != nil {
		t.Fatal(err)
	}
	more := p
	more.OutsideAllSubnets = 0.5
	half, err := Plan(more)
	if err != nil {
		t.Fatal(err)
	}
	for i, pr := range zero.Peers {
		for _, tp := range pr.Topics {
			if TopicKind(tp) != TopicsAttestation {
				continue
			}
			floor := max(SubnetSearchPeers, pr.Client.D) - 1
			lo, hi := len(pr.Subs[tp]), len(half.Peers[i].Subs[tp])
			// 2/64 of ~200 is ~6: at most twice the floor without all-subnets nodes; with
			// half the outside on every subnet, at least a third of the peer's outside.
			if lo > 2*floor+6 || hi < len(pr.Outside)/3 {
				t.Errorf("peer %d (%s, %d outside) on %s: %d subscribers at share 0, %d at 0.5", i, pr.Client.Name, len(pr.Outside), tp, lo, hi)
			}
		}
	}
}

// pubsub's rule, as ExpectedRepeat applies it: the fitted default gives the recording's
// ≈ 38 % (within 2 points), q at or below 1, and the share moves with the input.
func TestExpectedRepeat(t *testing.T) {
	p := DefaultNeighbourhoodParams()
	got, q := ExpectedRepeat(p, p.OutsideAllSubnets)
	if math.Abs(got-0.38) > 0.02 {
		t.Errorf("expected repeat share at the default %.3f, want 0.38 ± 0.02", got)
	}
	if q["lighthouse"] < 0.2 || q["lighthouse"] > 0.3 || q["prysm"] <= q["lighthouse"] {
		t.Errorf("q per client %v: lighthouse (Dlazy 3, 200 peers) near its factor 0.25, prysm (70 peers) above", q)
	}
	if hi, _ := ExpectedRepeat(p, 0.5); hi >= got {
		t.Errorf("more all-subnets nodes (more eligible targets) should lower the repeat share: %.3f at 0.5, %.3f at the default", hi, got)
	}
}
