package hubleaves_test

import (
	"strings"
	"testing"

	"github.com/streamsim/streamsim/scenarios/hubleaves"
	"github.com/streamsim/streamsim/sim/runner"
)

// --leaves: a spec once, or <spec>*<count> for count leaves of one codec in one group.
func TestParseLeaves(t *testing.T) {
	ls, err := hubleaves.ParseLeaves("plain, snappy-stream:1MiB*100,zstd*2 ,snappy-stream")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range ls {
		got = append(got, l.Codec.String()+"×"+string(rune('0'+min(l.Count, 9))))
	}
	if strings.Join(got, " ") != "plain×1 snappy-stream:1MiB×9 zstd×2 snappy-stream×1" || ls[1].Count != 100 {
		t.Fatalf("parsed %v (counts %+v)", got, ls)
	}
	gs := hubleaves.LeafGroups(3, ls)
	want := []runner.Group{{ID: "publishers", Instances: 3}, {ID: "hub", Instances: 1},
		{ID: "leaf-0-plain", Instances: 1}, {ID: "leaf-1-snappy-stream-1mib", Instances: 100}, {ID: "leaf-2-zstd", Instances: 2}, {ID: "leaf-3-snappy-stream", Instances: 1}}
	if len(gs) != len(want) {
		t.Fatalf("groups %+v", gs)
	}
	for i, g := range gs {
		if g.ID != want[i].ID || g.Instances != want[i].Instances {
			t.Errorf("group %d: %s × %d, want %s × %d", i, g.ID, g.Instances, want[i].ID, want[i].Instances)
		}
	}
	if c := gs[3].Params[runner.ParamCodec]; c != "snappy-stream:1MiB" {
		t.Errorf("group %s codec %q", gs[3].ID, c)
	}
	for _, bad := range []string{"snappy-stream*0", "zstd*-2", "plain*", "plain*two", "zstd*1.5"} {
		_, err := hubleaves.ParseLeaves(bad)
		if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "<spec>*<count>") {
			t.Errorf("%q: error %v does not name the entry and the allowed form", bad, err)
		}
	}
	if _, err := hubleaves.ParseLeaves("brotli*3"); err == nil || !strings.Contains(err.Error(), "brotli") {
		t.Errorf("unknown codec with a count: %v", err)
	}
	if _, err := hubleaves.ParseLeaves(" , "); err == nil {
		t.Error("an empty list parsed")
	}
}
