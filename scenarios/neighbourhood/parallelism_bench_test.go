package neighbourhood

import (
	"context"
	"testing"
	"time"

	"github.com/streamsim/streamsim/sim/network"
	"github.com/streamsim/streamsim/sim/network/bubble"
)

// BenchmarkNeighbourhoodParallelism is the mesh's BenchmarkBubbleParallelism for the
// neighbourhood: TestSmallNeighbourhood's population (9 real nodes, their boundary peers and
// grafters) on memnet, 2 warm-up and 2 measured slots, shaped links and validation delays as
// by default, codec_cpu off; the whole run inside the bubble is sampled (setup included).
func BenchmarkNeighbourhoodParallelism(b *testing.B) {
	if testing.Short() {
		b.Skip("runs a small neighbourhood")
	}
	var total bubble.Parallelism
	for b.Loop() {
		b.StopTimer()
		cfg := DefaultConfig()
		cfg.Population, cfg.Slots, cfg.Warmup, cfg.Validators = smallPopulation(b), 2, 2, 200_000
		cfg.Clock, cfg.CodecCPU = network.ClockVirtual, false
		b.StartTimer()
		s := bubble.NewSampler()
		var runErr error
		err := bubble.RunFromTest(func() {
			vn := network.NewVirtualNetworkOn(network.VirtualMem)
			defer vn.Close()
			cfg.Network = vn
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			s.Begin()
			_, runErr = Run(ctx, cfg)
			s.End()
		})
		total.Add(s.Stop())
		if err != nil || runErr != nil {
			b.Fatalf("bubble %v, run %v", err, runErr)
		}
	}
	total.ReportTo(b)
}
