package bubble

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamsim/streamsim/sim/network"
)

// Parallelism is how much of the machine a bubble could use over a phase, as the Go runtime
// sees it (its P time, which does not depend on how busy the machine is) and as the work
// waiting at each instant shows it.
type Parallelism struct {
	// CPU class seconds of the Ps (runtime/metrics /cpu/classes/...): all, idle (no goroutine
	// to run), garbage collection, user code.
	Total, Idle, GC, User float64
	Wall                  time.Duration
	// Samples taken every 100 µs; Demand counts those with 0, 1 and ≥ 2 goroutines running or
	// runnable (the sampler not counted).
	Samples int
	Demand  [3]int
}

// Add sums o into p.
func (p *Parallelism) Add(o Parallelism) {
	p.Total += o.Total
	p.Idle += o.Idle
	p.GC += o.GC
	p.User += o.User
	p.Wall += o.Wall
	p.Samples += o.Samples
	for i := range p.Demand {
		p.Demand[i] += o.Demand[i]
	}
}

// Share is v as a share of the Ps' time.
func (p *Parallelism) Share(v float64) float64 { return v / p.Total }

// BusyCores is the Ps' non-idle time per second of wall.
func (p *Parallelism) BusyCores() float64 { return (p.Total - p.Idle) / p.Wall.Seconds() }

// DemandShare is the share of samples with n (0, 1, 2 meaning ≥ 2) goroutines running or
// runnable.
func (p *Parallelism) DemandShare(n int) float64 { return float64(p.Demand[n]) / float64(p.Samples) }

var cpuClasses = []string{"/cpu/classes/total:cpu-seconds", "/cpu/classes/idle:cpu-seconds", "/cpu/classes/gc/total:cpu-seconds", "/cpu/classes/user:cpu-seconds"}

func readCPUClasses() [4]float64 {
	s := make([]metrics.Sample, len(cpuClasses))
	for i, n := range cpuClasses {
		s[i].Name = n
	}
	runtime.GC() // the CPU classes are brought up to date at a collection
	metrics.Read(s)
	var v [4]float64
	for i := range s {
		v[i] = s[i].Value.Float64()
	}
	return v
}

// Sampler measures Parallelism between Begin and End from a goroutine of its own, started by
// NewSampler outside any bubble (so it moves no simulated time). Begin and End may be called
// from inside the bubble, many times: the first Begin starts the phase, the first End after it
// ends it (the runner's MeasuredPhase hook calls them once per instance).
type Sampler struct {
	mu           sync.Mutex
	began, ended bool
	start        time.Duration // network.WallNow: in a bubble time.Now is simulated time
	at           [4]float64
	on           atomic.Bool
	quit         chan struct{}
	done         chan Parallelism
	res          Parallelism
}

// NewSampler starts a sampler; call it outside the bubble, and Stop when done.
func NewSampler() *Sampler {
	s := &Sampler{quit: make(chan struct{}), done: make(chan Parallelism, 1)}
	go s.run()
	return s
}

func (s *Sampler) run() {
	samples := []metrics.Sample{{Name: "/sched/goroutines/running:goroutines"}, {Name: "/sched/goroutines/runnable:goroutines"}}
	var p Parallelism
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
		p.Samples++
		p.Demand[min(max(n, 0), 2)]++
	}
}

// Begin starts the measured phase (the first call does).
func (s *Sampler) Begin() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.began {
		return
	}
	s.began = true
	s.at, s.start = readCPUClasses(), network.WallNow()
	s.on.Store(true)
}

// End ends it (the first call after Begin does).
func (s *Sampler) End() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.began || s.ended {
		return
	}
	s.ended = true
	s.on.Store(false)
	end, wall := readCPUClasses(), network.WallNow()-s.start
	s.res = Parallelism{Total: end[0] - s.at[0], Idle: end[1] - s.at[1], GC: end[2] - s.at[2], User: end[3] - s.at[3], Wall: wall}
}

// Stop ends the sampler's goroutine and returns what it measured.
func (s *Sampler) Stop() Parallelism {
	close(s.quit)
	p := <-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.res
	r.Samples, r.Demand = p.Samples, p.Demand
	return r
}

// Hook is the runner's MeasuredPhase hook: Begin or End.
func (s *Sampler) Hook(begin bool) {
	if begin {
		s.Begin()
	} else {
		s.End()
	}
}

// ReportTo reports the shares as a benchmark's metrics (a *testing.B's ReportMetric).
func (p *Parallelism) ReportTo(b interface{ ReportMetric(float64, string) }) {
	b.ReportMetric(p.Share(p.Idle), "idle-share")
	b.ReportMetric(p.Share(p.GC), "gc-share")
	b.ReportMetric(p.Share(p.User), "user-share")
	b.ReportMetric(p.BusyCores(), "busy-cores")
	b.ReportMetric(p.DemandShare(0), "none-runnable")
	b.ReportMetric(p.DemandShare(1), "one-runnable")
	b.ReportMetric(p.DemandShare(2), "two+-runnable")
}
