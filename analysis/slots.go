package analysis

import (
	"time"

	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/workload"
)

// NodeBytesBySlot is result.BytesBySlot of a node's summary, at its run's slot (the mainnet
// slot divided by the time scale).
func NodeBytesBySlot(n *result.NodeSummary) []SlotBytes {
	if n == nil || n.TimeScale <= 0 {
		return nil
	}
	return result.BytesBySlot(n.Samples, time.Duration(float64(workload.SlotDuration)/n.TimeScale))
}

// SlotBytes is one interval of a per-slot byte series (result.SlotBytes, which the
// neighbourhood scenario fills itself).
type SlotBytes = result.SlotBytes
