package hubleaves

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamsim/streamsim/topology"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/workload"
)

// hubLeavesMembers are the embedded runner's groups sorted by (Group, Instance): hub,
// leaf-0-plain, leaf-1-snappy-stream, leaf-2-zstd, publishers 0..3.
func hubLeavesMembers(t *testing.T) []topology.Member {
	var ms []topology.Member
	add := func(group string, instance int, spec string) {
		ms = append(ms, topology.Member{Group: group, Instance: instance, Role: topology.HubLeavesRole(group), Codec: mustSpec(t, spec)})
	}
	add("hub", 0, "plain")
	add("leaf-0-plain", 0, "plain")
	add("leaf-1-snappy-stream", 0, "snappy-stream")
	add("leaf-2-zstd", 0, "zstd")
	add("leaf-3-snappy-stream", 0, "snappy-stream") // a second leaf of the same codec
	for i := range 4 {
		add("publishers", i, "plain")
	}
	return ms
}

// TestHubLeavesPlan checks that the plan is what the hub-leaves scenario did before topology owned
// it: who dials whom, direct peers, subscriptions, waits, codecs, parameters, publishers.
func TestHubLeavesPlan(t *testing.T) {
	ms := hubLeavesMembers(t)
	profile := mustProfile(t, "all-subnets")
	plan, err := Plan(ms, profile, testDigest)
	if err != nil {
		t.Fatal(err)
	}
	const hub = 0
	leaves := []int{1, 2, 3, 4}
	pubs := []int{5, 6, 7, 8}
	all := mustProfile(t, "supernode").Topics(testDigest)
	leafTopics := profile.Topics(testDigest)
	if plan.Observed != -1 || len(plan.Nodes) != len(ms) {
		t.Fatalf("observed %d, %d nodes", plan.Observed, len(plan.Nodes))
	}

	h := plan.Nodes[hub]
	if h.Role != topology.RoleHub || h.Kind != "hub" || len(h.Dial) != 0 || !slices.Equal(h.Direct, leaves) ||
		!slices.Equal(h.Topics, all) || h.Publishes || !slices.Equal(h.Peers, []int{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("hub %+v", h)
	}
	if got := specStrings(h.Codecs); !slices.Equal(got, []string{"snappy-stream", "zstd"}) {
		t.Errorf("hub codecs %v, want every compressed leaf codec once in member order", got)
	}
	wantHubWait := map[string][]int{}
	for _, tp := range leafTopics {
		wantHubWait[tp] = leaves
	}
	if !reflect.DeepEqual(h.WaitFor, wantHubWait) {
		t.Errorf("hub waits for %d topics, want the leaf profile's %d, each on every leaf", len(h.WaitFor), len(leafTopics))
	}

	for i, l := range leaves {
		n := plan.Nodes[l]
		if n.Role != topology.RoleLeaf || !slices.Equal(n.Dial, []int{hub}) || !slices.Equal(n.Direct, []int{hub}) ||
			!slices.Equal(n.Topics, leafTopics) || n.Publishes {
			t.Errorf("leaf %d: %+v", l, n)
		}
		want := [][]string{nil, {"snappy-stream"}, {"zstd"}, {"snappy-stream"}}[i]
		if got := specStrings(n.Codecs); !slices.Equal(got, want) {
			t.Errorf("leaf %d codecs %v, want %v", l, got, want)
		}
		if len(n.WaitFor) != len(leafTopics) || !slices.Equal(n.WaitFor[leafTopics[0]], []int{hub}) {
			t.Errorf("leaf %d waits %v", l, n.WaitFor)
		}
	}
	for _, p := range pubs {
		n := plan.Nodes[p]
		if n.Role != topology.RolePublisher || !slices.Equal(n.Dial, []int{hub}) || len(n.Direct) != 0 || len(n.Topics) != 0 ||
			!n.Publishes || len(n.Codecs) != 0 {
			t.Errorf("publisher %d: %+v", p, n)
		}
		if len(n.WaitFor) != len(all) || !slices.Equal(n.WaitFor[all[len(all)-1]], []int{hub}) {
			t.Errorf("publisher %d waits for %d topics, want all %d on the hub", p, len(n.WaitFor), len(all))
		}
	}

	// The GossipSub settings package node set before client profiles.
	spec := plan.Nodes[hub].Client
	want := topology.Client{Name: "spec", D: 8, Dlo: 6, Dhi: 12, Dlazy: 6, Dscore: 4, Dout: 2, Heartbeat: 700 * time.Millisecond,
		HistoryLength: 6, HistoryGossip: 3, GossipFactor: 0.25, FanoutTTL: 60 * time.Second, SeenTTL: 768 * time.Second,
		IDontWantThresholdBytes: 1024}
	for i, n := range plan.Nodes {
		if n.Client != want {
			t.Fatalf("node %d client %+v, want %+v", i, n.Client, spec)
		}
	}

	// Message i of the run belongs to publisher i mod publishers, whatever its topic.
	for seq := range 20 {
		for _, tp := range []string{all[0], all[len(all)-1]} {
			if got := plan.Origin(9, seq/7, seq, tp); got != pubs[seq%len(pubs)] {
				t.Fatalf("origin of message %d = %d, want %d", seq, got, pubs[seq%len(pubs)])
			}
		}
	}
}

func specStrings(specs []codec.Spec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.String())
	}
	return out
}

func TestHubLeavesErrors(t *testing.T) {
	p := mustProfile(t, "default")
	m := func(r topology.Role) topology.Member { return topology.Member{Group: string(r), Role: r} }
	for _, c := range []struct {
		name    string
		members []topology.Member
		digest  string
		want    string
	}{
		{"no hub", []topology.Member{m(topology.RolePublisher), m(topology.RoleLeaf)}, testDigest, "have 0 hub, 1 publishers, 1 leaves"},
		{"two hubs", []topology.Member{m(topology.RoleHub), m(topology.RoleHub), m(topology.RoleLeaf), m(topology.RolePublisher)}, testDigest, "two hubs"},
		{"no leaves", []topology.Member{m(topology.RoleHub), m(topology.RolePublisher)}, testDigest, "0 leaves"},
		{"no publishers", []topology.Member{m(topology.RoleHub), m(topology.RoleLeaf)}, testDigest, "0 publishers"},
		{"mesh node", []topology.Member{m(topology.RoleHub), m(topology.RoleLeaf), m(topology.RolePublisher), m(topology.RoleNode)}, testDigest, `role "node"`},
		{"no digest", []topology.Member{m(topology.RoleHub), m(topology.RoleLeaf), m(topology.RolePublisher)}, "", "fork digest"},
	} {
		_, err := Plan(c.members, p, c.digest)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

const testDigest = "8c9f62fe"

func mustSpec(t *testing.T, s string) codec.Spec {
	t.Helper()
	c, err := codec.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustProfile(t *testing.T, name string) workload.Profile {
	t.Helper()
	p, err := workload.ParseProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
