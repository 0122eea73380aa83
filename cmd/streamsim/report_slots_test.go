package main

import (
	"path/filepath"
	"testing"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
)

// The byte totals a node's samples hold end at its streams' totals: the last sample is taken
// after the meters froze, so a per-slot series (their differences) adds up, from the first
// sample, to what the summary's streams hold. Checked on the committed live check and mesh
// runs.
func TestSampledBytesEndAtStreamTotals(t *testing.T) {
	checked := 0
	for _, run := range []string{"live", "mesh-ab"} {
		paths, err := result.FindSummaries(filepath.Join("testdata", "html", run))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			s, err := result.ReadSummary(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Samples) == 0 {
				continue
			}
			last := s.Samples[len(s.Samples)-1]
			want := map[string]map[gossip.Category]result.CategoryBytes{"in": {}, "out": {}}
			for _, st := range s.Streams {
				for c, b := range st.Categories {
					x := want[st.Direction][c]
					want[st.Direction][c] = result.CategoryBytes{RawBytes: x.RawBytes + b.RawBytes, WireBytes: x.WireBytes + b.WireBytes}
				}
			}
			for dir, got := range map[string]map[gossip.Category]result.CategoryBytes{"in": last.In, "out": last.Out} {
				if len(got) != len(want[dir]) {
					t.Errorf("%s: last sample %s %v, streams %v", p, dir, got, want[dir])
				}
				for c, b := range want[dir] {
					if got[c] != b {
						t.Errorf("%s: last sample %s %s %+v, streams %+v", p, dir, c, got[c], b)
					}
				}
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("%d summaries with samples checked", checked)
	}
}
