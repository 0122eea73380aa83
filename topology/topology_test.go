package topology

import (
	"slices"
	"testing"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/workload"
)

func TestHubLeaves(t *testing.T) {
	snappy, _ := codec.Parse("snappy-stream")
	zstd, _ := codec.Parse("zstd")
	members := []Member{{Role: RolePublisher}, {Role: RoleLeaf}, {Role: RoleHub}, {Role: RolePublisher}, {Role: RoleLeaf, Codec: snappy}, {Role: RoleLeaf, Codec: zstd}, {Role: RoleLeaf, Codec: snappy}}
	profile, _ := workload.ParseProfile("default")
	plan, err := HubLeaves(members, profile, "8c9f62fe")
	if err != nil {
		t.Fatal(err)
	}
	hub := plan.Nodes[2]
	if !slices.Equal(hub.Direct, []int{1, 4, 5, 6}) || len(hub.Dial) != 0 || len(hub.Topics) <= len(profile.Topics("8c9f62fe")) || hub.Publishes {
		t.Fatalf("hub %+v", hub)
	}
	if len(hub.Codecs) != 2 || hub.Codecs[0] != snappy || hub.Codecs[1] != zstd {
		t.Fatalf("hub offers %v, want every leaf codec once", hub.Codecs)
	}
	for _, i := range []int{1, 4, 5, 6} {
		n := plan.Nodes[i]
		if !slices.Equal(n.Dial, []int{2}) || !slices.Equal(n.Direct, []int{2}) || !slices.Equal(n.Topics, profile.Topics("8c9f62fe")) || n.Publishes {
			t.Fatalf("leaf %d %+v", i, n)
		}
		if i == 1 && len(n.Codecs) != 0 || i == 5 && (len(n.Codecs) != 1 || n.Codecs[0] != zstd) {
			t.Fatalf("leaf %d offers %v", i, n.Codecs)
		}
	}
	for _, i := range []int{0, 3} {
		n := plan.Nodes[i]
		if !slices.Equal(n.Dial, []int{2}) || len(n.Direct) != 0 || len(n.Topics) != 0 || !n.Publishes || len(n.WaitFor) != len(hub.Topics) {
			t.Fatalf("publisher %d %+v", i, n)
		}
	}
	if got := hub.WaitFor[profile.Topics("8c9f62fe")[0]]; !slices.Equal(got, []int{1, 4, 5, 6}) {
		t.Fatalf("hub waits for %v", got)
	}
	for _, bad := range [][]Member{
		{{Role: RolePublisher}, {Role: RoleLeaf}},
		{{Role: RoleHub}, {Role: RoleHub}, {Role: RoleLeaf}, {Role: RolePublisher}},
		{{Role: RoleHub}, {Role: RolePublisher}},
		{{Role: RoleHub}, {Role: RoleLeaf}, {Role: RolePublisher}, {Role: "relay"}},
	} {
		if _, err := HubLeaves(bad, profile, "8c9f62fe"); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestRolesAndClients(t *testing.T) {
	for g, want := range map[string]Role{"publishers": RolePublisher, "hub": RoleHub, "leaf-0-plain": RoleLeaf, "js": RoleLeaf} {
		if got := HubLeavesRole(g); got != want {
			t.Errorf("group %s: role %s, want %s", g, got, want)
		}
	}
	lh, err := ClientProfile("lighthouse")
	if err != nil || lh.D != 5 || lh.Dlo != 3 || lh.Dhi != 10 || lh.Dlazy != 3 || lh.HistoryLength != 12 || lh.Heartbeat.Seconds() != 1 {
		t.Fatalf("lighthouse %+v, %v", lh, err)
	}
	if _, err := ClientProfile("geth"); err == nil {
		t.Fatal("unknown client accepted")
	}
	for _, n := range ClientNames {
		if c, err := ClientProfile(n); err != nil || c.Name != n || c.Dlo > c.D || c.D > c.Dhi {
			t.Errorf("client %s: %+v %v", n, c, err)
		}
	}
}
