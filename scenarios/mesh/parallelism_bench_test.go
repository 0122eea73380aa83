package mesh

import (
	"testing"

	"github.com/streamsim/streamsim/sim/network"
	"github.com/streamsim/streamsim/sim/network/bubble"
	"github.com/streamsim/streamsim/sim/runner"
)

// BenchmarkBubbleParallelism measures how much of the machine a virtual-clock run can use:
// the overhead benchmark's 48-node mesh (4 slots, plain streams) in a synctest bubble on
// memnet, over its measured phase, from a goroutine outside the bubble (bubble.Sampler):
// the share of the Ps' time idle (no goroutine to run), in the garbage collector and in user
// code, the Ps kept busy per second of wall (these count P time, so they do not depend on how
// busy the machine is), and how often none, one, or two or more goroutines were running or
// runnable. Run it with -benchtime 1x (docs/overhead.md, "Both cores").
func BenchmarkBubbleParallelism(b *testing.B) {
	if testing.Short() {
		b.Skip("runs a 48-node mesh")
	}
	params := runner.MergeParams(overheadParams, map[string]string{runner.ParamClock: string(network.ClockVirtual), runner.ParamVNet: string(network.VirtualMem)})
	var total bubble.Parallelism
	for b.Loop() {
		s := bubble.NewSampler()
		runner.MeasuredPhase = s.Hook
		runOverheadEmbedded(b, params, bubble.RunFromTest, "virtual-mem")
		runner.MeasuredPhase = nil
		total.Add(s.Stop())
	}
	total.ReportTo(b)
}
