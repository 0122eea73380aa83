package result

import (
	"time"

	"github.com/streamsim/streamsim/gossip"
)

// SlotBytes is a node's gossip stream bytes in one interval between two of its samples of
// byte totals (one slot at the default sample period), per category, inbound and outbound.
type SlotBytes struct {
	// Slot is the interval's end in slots since the measured phase started; the last
	// interval ends when the node stopped, so it may be shorter than a slot.
	Slot float64                           `json:"slot"`
	In   map[gossip.Category]CategoryBytes `json:"in"`
	Out  map[gossip.Category]CategoryBytes `json:"out"`
}

// BytesBySlot is the bytes a node's streams carried between consecutive samples that hold
// byte totals (Sample.In, Out), slot being one slot of the run in the samples' clock; nil
// with fewer than two such samples (a summary from before they were sampled, or a run
// without samples). The intervals add up to the last such sample's totals minus the first's.
func BytesBySlot(samples []Sample, slot time.Duration) []SlotBytes {
	var with []Sample
	for _, s := range samples {
		if s.In != nil || s.Out != nil {
			with = append(with, s)
		}
	}
	if len(with) < 2 || slot <= 0 {
		return nil
	}
	diff := func(a, b map[gossip.Category]CategoryBytes) map[gossip.Category]CategoryBytes {
		out := map[gossip.Category]CategoryBytes{}
		for c, x := range b {
			out[c] = CategoryBytes{RawBytes: x.RawBytes - a[c].RawBytes, WireBytes: x.WireBytes - a[c].WireBytes}
		}
		return out
	}
	out := make([]SlotBytes, 0, len(with)-1)
	for i := 1; i < len(with); i++ {
		out = append(out, SlotBytes{Slot: float64(with[i].AtNs) / float64(slot), In: diff(with[i-1].In, with[i].In), Out: diff(with[i-1].Out, with[i].Out)})
	}
	return out
}
