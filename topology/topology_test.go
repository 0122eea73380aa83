package topology

import (
	"slices"
	"testing"
)

func TestHubLeaves(t *testing.T) {
	members := []Member{{Role: Publisher}, {Role: Leaf}, {Role: Hub}, {Role: Publisher}, {Role: Leaf}}
	links, err := HubLeaves(members)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(links[2].Direct, []int{1, 4}) || links[2].Subscribe != "all" || len(links[2].Dial) != 0 {
		t.Fatalf("hub links %+v", links[2])
	}
	for _, i := range []int{1, 4} {
		if !slices.Equal(links[i].Dial, []int{2}) || !slices.Equal(links[i].Direct, []int{2}) || links[i].Subscribe != "profile" {
			t.Fatalf("leaf %d links %+v", i, links[i])
		}
	}
	for _, i := range []int{0, 3} {
		if !slices.Equal(links[i].Dial, []int{2}) || len(links[i].Direct) != 0 || links[i].Subscribe != "none" {
			t.Fatalf("publisher %d links %+v", i, links[i])
		}
	}
	for _, bad := range [][]Member{
		{{Role: Publisher}, {Role: Leaf}},
		{{Role: Hub}, {Role: Hub}, {Role: Leaf}, {Role: Publisher}},
		{{Role: Hub}, {Role: Publisher}},
		{{Role: Hub}, {Role: Leaf}, {Role: Publisher}, {Role: "relay"}},
	} {
		if _, err := HubLeaves(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
