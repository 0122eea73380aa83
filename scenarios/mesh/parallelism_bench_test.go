package mesh

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamsim/streamsim/sim/network"
	"github.com/streamsim/streamsim/sim/network/bubble"
	"github.com/streamsim/streamsim/sim/runner"
)

// BenchmarkBubbleParallelism measures how much of the machine a virtual-clock run can use:
// the overhead benchmark's 48-node mesh (4 slots, plain streams) in a synctest bubble on
// memnet, and over its measured phase, from a goroutine outside the bubble (it moves no
// simulated time):
//
//   - the Go runtime's own CPU classes (runtime/metrics /cpu/classes/...): the share of the
//     Ps' time spent idle (no goroutine to run), in the garbage collector, and in user code;
//     these count P time, so they do not depend on how busy the machine is;
//   - the work available at each instant: every 100 µs, how many goroutines are running or
//     runnable (the sampler itself not counted); the share of samples with none, one, and
//     two or more says how often a second core had anything to do.
//
// Run it with -benchtime 1x (docs/overhead.md, "Both cores").
func BenchmarkBubbleParallelism(b *testing.B) {
	if testing.Short() {
		b.Skip("runs a 48-node mesh")
	}
	params := runner.MergeParams(overheadParams, map[string]string{runner.ParamClock: string(network.ClockVirtual), runner.ParamVNet: string(network.VirtualMem)})
	var total parallelism
	for b.Loop() {
		s := newParallelismSampler()
		runner.MeasuredPhase = s.hook
		runOverheadEmbedded(b, params, bubble.RunFromTest, "virtual-mem")
		runner.MeasuredPhase = nil
		total.add(s.stop())
	}
	b.ReportMetric(total.share(total.idle), "idle-share")
	b.ReportMetric(total.share(total.gc), "gc-share")
	b.ReportMetric(total.share(total.user), "user-share")
	b.ReportMetric(total.busyCores(), "busy-cores")
	n := float64(total.samples)
	b.ReportMetric(float64(total.demand[0])/n, "none-runnable")
	b.ReportMetric(float64(total.demand[1])/n, "one-runnable")
	b.ReportMetric(float64(total.demand[2])/n, "two+-runnable")
}

// parallelism is what a sampler saw over measured phases.
type parallelism struct {
	total, idle, gc, user float64 // CPU class seconds (P time)
	wall                  time.Duration
	samples               int
	demand                [3]int // samples with 0, 1, ≥ 2 goroutines running or runnable
}

func (p *parallelism) add(o parallelism) {
	p.total += o.total
	p.idle += o.idle
	p.gc += o.gc
	p.user += o.user
	p.wall += o.wall
	p.samples += o.samples
	for i := range p.demand {
		p.demand[i] += o.demand[i]
	}
}

func (p *parallelism) share(v float64) float64 { return v / p.total }

// busyCores is the Ps' non-idle time per second of wall.
func (p *parallelism) busyCores() float64 { return (p.total - p.idle) / p.wall.Seconds() }

var cpuClasses = []string{"/cpu/classes/total:cpu-seconds", "/cpu/classes/idle:cpu-seconds", "/cpu/classes/gc/total:cpu-seconds", "/cpu/classes/user:cpu-seconds"}

func readCPUClasses() [4]float64 {
	s := make([]metrics.Sample, len(cpuClasses))
	for i, n := range cpuClasses {
		s[i].Name = n
	}
	runtime.GC() // the CPU classes are updated at GC; one before each reading makes them current
	metrics.Read(s)
	var v [4]float64
	for i := range s {
		v[i] = s[i].Value.Float64()
	}
	return v
}

// parallelismSampler samples from a goroutine started outside any bubble; hook (the runner's
// MeasuredPhase) starts it at the first instance's start and stops it at the first's end.
type parallelismSampler struct {
	mu           sync.Mutex
	began, ended bool
	start        time.Duration // network.WallNow: the hook runs in the bubble, where time.Now is simulated
	at           [4]float64
	on           atomic.Bool
	quit         chan struct{}
	done         chan parallelism
	res          parallelism
}

func newParallelismSampler() *parallelismSampler {
	s := &parallelismSampler{quit: make(chan struct{}), done: make(chan parallelism, 1)}
	go s.run()
	return s
}

func (s *parallelismSampler) run() {
	samples := []metrics.Sample{{Name: "/sched/goroutines/running:goroutines"}, {Name: "/sched/goroutines/runnable:goroutines"}}
	var p parallelism
	tick := time.NewTicker(100 * time.Microsecond)
	defer tick.Stop()
	for {
		select {
		case <-s.quit:
			s.done <- p
			return
		case <-tick.C:
		}
		if !s.on.Load() {
			continue
		}
		metrics.Read(samples)
		n := int(samples[0].Value.Uint64()+samples[1].Value.Uint64()) - 1 // not the sampler
		p.samples++
		p.demand[min(max(n, 0), 2)]++
	}
}

func (s *parallelismSampler) hook(begin bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case begin && !s.began:
		s.began = true
		s.at, s.start = readCPUClasses(), network.WallNow()
		s.on.Store(true)
	case !begin && s.began && !s.ended:
		s.ended = true
		s.on.Store(false)
		end, wall := readCPUClasses(), network.WallNow()-s.start
		s.res = parallelism{total: end[0] - s.at[0], idle: end[1] - s.at[1], gc: end[2] - s.at[2], user: end[3] - s.at[3], wall: wall}
	}
}

func (s *parallelismSampler) stop() parallelism {
	close(s.quit)
	p := <-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.res
	r.samples, r.demand = p.samples, p.demand
	return r
}
