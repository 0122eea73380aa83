package mesh

import (
	"flag"
	"testing"

	"github.com/streamsim/streamsim/sim/network/bubble"
	"github.com/streamsim/streamsim/sim/runner"

	"github.com/streamsim/streamsim/sim/network"
)

// BenchmarkClockOverhead measures what the virtual clock costs against the real one on the
// overhead benchmark's graph (48 nodes, plain streams, 4 slots of 65 536 validators' traffic):
// the embedded mesh on the real clock (TCP, noise, yamux, unshaped, at time scale 2) and on the
// virtual clock on each of its transports (vnet quic: QUIC over simnet; vnet mem: package
// memnet's native in-process connections, no noise or yamux; unshaped, in a synctest bubble), one after
// the other in one process, in an order that rotates each iteration. Each side's figure is the
// process CPU over the measured phase per received copy; virtual-quic/real and virtual-mem/real
// are ratios of those, and wall-s/sim-min what a simulated minute took on each virtual
// transport. Run it with -benchtime 1x and -count 3 or more (docs/overhead.md).
//
// -clockoverhead.quic=false leaves the QUIC side out (and its figures): half the
// benchmark's time, when only memnet against the real clock is wanted.
func BenchmarkClockOverhead(b *testing.B) {
	if testing.Short() {
		b.Skip("runs three 48-node meshes per iteration")
	}
	quicParams := runner.MergeParams(overheadParams, map[string]string{runner.ParamClock: string(network.ClockVirtual), runner.ParamVNet: string(network.VirtualQUIC)})
	memParams := runner.MergeParams(overheadParams, map[string]string{runner.ParamClock: string(network.ClockVirtual), runner.ParamVNet: string(network.VirtualMem)})
	var real, quic, mem overheadRun
	for b.Loop() {
		sides := []func(){
			func() { r := runOverheadEmbedded(b, overheadParams, nil, "real"); real.add(r) },
			func() { r := runOverheadEmbedded(b, memParams, bubble.RunFromTest, "virtual-mem"); mem.add(r) },
		}
		if *clockOverheadQUIC {
			sides = append(sides, func() {
				r := runOverheadEmbedded(b, quicParams, bubble.RunFromTest, "virtual-quic")
				quic.add(r)
			})
		}
		k := int(overheadTurn.Add(1)) % len(sides)
		sides = append(sides[k:], sides[:k]...)
		for _, run := range sides {
			run()
		}
	}
	b.ReportMetric(real.usPerCopy(), "real-µs/copy")
	b.ReportMetric(mem.usPerCopy(), "virtual-mem-µs/copy")
	b.ReportMetric(mem.usPerCopy()/real.usPerCopy(), "virtual-mem/real")
	b.ReportMetric(mem.wall.Seconds()/(mem.simulated.Minutes()), "mem-wall-s/sim-min")
	b.ReportMetric(float64(real.copies)/float64(b.N), "real-copies/op")
	b.ReportMetric(float64(mem.copies)/float64(b.N), "virtual-mem-copies/op")
	if *clockOverheadQUIC {
		b.ReportMetric(quic.usPerCopy(), "virtual-quic-µs/copy")
		b.ReportMetric(quic.usPerCopy()/real.usPerCopy(), "virtual-quic/real")
		b.ReportMetric(quic.wall.Seconds()/(quic.simulated.Minutes()), "quic-wall-s/sim-min")
		b.ReportMetric(float64(quic.copies)/float64(b.N), "virtual-quic-copies/op")
	}
}

var clockOverheadQUIC = flag.Bool("clockoverhead.quic", true, "BenchmarkClockOverhead: run the QUIC-over-simnet side too")

func (r *overheadRun) add(o overheadRun) {
	r.cpu += o.cpu
	r.copies += o.copies
	r.wall += o.wall
	r.simulated += o.simulated
}
