package workload

import (
	"testing"

	"github.com/golang/snappy"

	"github.com/streamsim/streamsim/gossip"
)

// FuzzContentStats: ContentStats decodes whatever a chain sample holds; a payload that is not
// the category's SSZ is an error, never a panic, and counts stay consistent.
func FuzzContentStats(f *testing.F) {
	blk, err := emptyBlock().MarshalSSZ()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint8(gossip.Block), blk)
	f.Add(uint8(gossip.Aggregate), make([]byte, 506))
	f.Add(uint8(gossip.SyncCommittee), make([]byte, 360))
	f.Fuzz(func(t *testing.T, cat uint8, ssz []byte) {
		c := gossip.Category(cat % uint8(gossip.NumCategories))
		var s ContentStats
		_ = s.Add([]Message{{Category: c, Topic: "t", Data: snappy.Encode(nil, ssz), SSZBytes: len(ssz)}})
		if s.ToSeen > s.To || s.ToEarlier > s.ToSeen || s.SelSeen > s.Calls || s.WordsWithin+s.WordsAcross > s.Words {
			t.Fatalf("inconsistent counts %+v", s)
		}
		_ = s.Figures()
	})
}
