package analysis

import (
	"time"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/workload"
)

// NodeBytesBySlot is BytesBySlot of a node's summary, at its run's slot (the mainnet slot
// divided by the time scale).
func NodeBytesBySlot(n *result.NodeSummary) []SlotBytes {
	if n == nil || n.TimeScale <= 0 {
		return nil
	}
	return BytesBySlot(n.Samples, time.Duration(float64(workload.SlotDuration)/n.TimeScale))
}

// SlotBytes is a node's gossip stream bytes in one interval between two of its resource
// samples (one slot at the default sample period), per category, inbound and outbound.
type SlotBytes struct {
	// Slot is the interval's end in slots since the measured phase started; the last
	// interval ends when the node stopped, so it may be shorter than a slot.
	Slot float64                                  `json:"slot"`
	In   map[gossip.Category]result.CategoryBytes `json:"in"`
	Out  map[gossip.Category]result.CategoryBytes `json:"out"`
}

// BytesBySlot is the bytes a node's streams carried between consecutive samples that hold
// byte totals (result.Sample.In, Out), slot being one slot of the run; nil with fewer than two
// such samples (a summary from before they were sampled, or a run without samples).
func BytesBySlot(samples []result.Sample, slot time.Duration) []SlotBytes {
	var with []result.Sample
	for _, s := range samples {
		if s.In != nil || s.Out != nil {
			with = append(with, s)
		}
	}
	if len(with) < 2 || slot <= 0 {
		return nil
	}
	diff := func(a, b map[gossip.Category]result.CategoryBytes) map[gossip.Category]result.CategoryBytes {
		out := map[gossip.Category]result.CategoryBytes{}
		for c, x := range b {
			out[c] = result.CategoryBytes{RawBytes: x.RawBytes - a[c].RawBytes, WireBytes: x.WireBytes - a[c].WireBytes}
		}
		return out
	}
	out := make([]SlotBytes, 0, len(with)-1)
	for i := 1; i < len(with); i++ {
		out = append(out, SlotBytes{Slot: float64(with[i].AtNs) / float64(slot), In: diff(with[i-1].In, with[i].In), Out: diff(with[i-1].Out, with[i].Out)})
	}
	return out
}
