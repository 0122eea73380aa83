package result

import (
	"testing"
	"time"

	"github.com/streamsim/streamsim/gossip"
)

// A per-slot series is the difference of consecutive samples' totals: its intervals add up
// to the last sample's totals minus the first's, and each ends at its sample's time in slots.
func TestBytesBySlot(t *testing.T) {
	att, blk := gossip.Attestation, gossip.Block
	cb := func(raw, wire int64) CategoryBytes {
		return CategoryBytes{RawBytes: raw, WireBytes: wire}
	}
	slot := 3 * time.Second
	samples := []Sample{
		{AtNs: 0, In: map[gossip.Category]CategoryBytes{att: cb(100, 50)}, Out: map[gossip.Category]CategoryBytes{}},
		{AtNs: int64(slot), In: map[gossip.Category]CategoryBytes{att: cb(300, 120), blk: cb(1000, 900)}},
		{AtNs: int64(slot) * 5 / 2, In: map[gossip.Category]CategoryBytes{att: cb(400, 150), blk: cb(1000, 900)}, Out: map[gossip.Category]CategoryBytes{att: cb(10, 5)}},
	}
	got := BytesBySlot(samples, slot)
	if len(got) != 2 || got[0].Slot != 1 || got[1].Slot != 2.5 {
		t.Fatalf("series %+v", got)
	}
	if got[0].In[att] != cb(200, 70) || got[0].In[blk] != cb(1000, 900) || got[1].In[att] != cb(100, 30) || got[1].In[blk] != cb(0, 0) || got[1].Out[att] != cb(10, 5) {
		t.Errorf("intervals %+v", got)
	}
	var sum int64
	for _, s := range got {
		sum += s.In[att].WireBytes
	}
	if sum != 150-50 {
		t.Errorf("attestation wire over the intervals %d, want the totals' difference 100", sum)
	}
	// Samples without byte totals (an older summary) give no series.
	if BytesBySlot([]Sample{{AtNs: 0}, {AtNs: int64(slot)}}, slot) != nil || BytesBySlot(samples[:1], slot) != nil {
		t.Error("a series from samples without two byte totals")
	}
}
