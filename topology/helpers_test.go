package topology

import (
	"testing"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/workload"
)

// meshMembers returns n mesh members of one group, as the runner sorts them.
func meshMembers(n int) []Member {
	out := make([]Member, n)
	for i := range out {
		out[i] = Member{Group: "nodes", Instance: i, Role: RoleNode}
	}
	return out
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

func TestHubLeavesRole(t *testing.T) {
	for group, want := range map[string]Role{
		"publishers": RolePublisher, "hub": RoleHub, "leaf-0-plain": RoleLeaf, "zstd-leaves": RoleLeaf, "": RoleLeaf,
	} {
		if got := HubLeavesRole(group); got != want {
			t.Errorf("HubLeavesRole(%q) = %q, want %q", group, got, want)
		}
	}
}
