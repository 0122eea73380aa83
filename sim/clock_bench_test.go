package sim

import (
	"flag"
	"testing"
)

// BenchmarkClockOverhead measures what the virtual clock costs against the real one on the
// overhead benchmark's graph (48 nodes, plain streams, 4 slots of 65 536 validators' traffic):
// the embedded mesh on the real clock (TCP, noise, yamux, unshaped, at time scale 2) and on the
// virtual clock (QUIC over simnet, unshaped, in a synctest bubble), one after the other in one
// process. Each side's figure is the process CPU over the measured phase per received copy;
// virtual/real is their ratio, and wall-s/sim-min what a simulated minute took on the virtual
// clock. Run it with -benchtime 1x and -count 3 or more (docs/overhead.md).
func BenchmarkClockOverhead(b *testing.B) {
	if testing.Short() {
		b.Skip("runs two 48-node meshes per iteration")
	}
	virtualParams := mergeParams(overheadParams, map[string]string{ParamClock: string(ClockVirtual)})
	var real, virtual overheadRun
	for b.Loop() {
		sides := []func(){
			func() { r := runOverheadEmbedded(b, overheadParams, nil, "real"); real.add(r) },
			func() { r := runOverheadEmbedded(b, virtualParams, benchBubble, "virtual"); virtual.add(r) },
		}
		if overheadTurn.Add(1)%2 == 0 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		for _, run := range sides {
			run()
		}
	}
	b.ReportMetric(real.usPerCopy(), "real-µs/copy")
	b.ReportMetric(virtual.usPerCopy(), "virtual-µs/copy")
	b.ReportMetric(virtual.usPerCopy()/real.usPerCopy(), "virtual/real")
	b.ReportMetric(virtual.wall.Seconds()/(virtual.simulated.Minutes()), "wall-s/sim-min")
	b.ReportMetric(float64(real.copies)/float64(b.N), "real-copies/op")
	b.ReportMetric(float64(virtual.copies)/float64(b.N), "virtual-copies/op")
}

func (r *overheadRun) add(o overheadRun) {
	r.cpu += o.cpu
	r.copies += o.copies
	r.wall += o.wall
	r.simulated += o.simulated
}

// benchBubble is RunInBubble from inside a test binary: synctest.Test wants a *testing.T,
// which a benchmark does not have, so the bubble is entered through testing.MainStart as
// streamsim run does, with the go test flags that would make that inner run repeat, filter or
// profile it set to neutral values for its duration.
func benchBubble(f func()) error {
	neutral := map[string]string{"test.run": "", "test.skip": "", "test.count": "1", "test.bench": "", "test.list": "",
		"test.cpuprofile": "", "test.memprofile": "", "test.blockprofile": "", "test.mutexprofile": "", "test.trace": "",
		"test.shuffle": "off", "test.cpu": "", "test.v": "false"}
	saved := map[string]string{}
	for name, v := range neutral {
		if fl := flag.Lookup(name); fl != nil {
			saved[name] = fl.Value.String()
			flag.Set(name, v)
		}
	}
	defer func() {
		for name, v := range saved {
			flag.Set(name, v)
		}
	}()
	return RunInBubble(f)
}
