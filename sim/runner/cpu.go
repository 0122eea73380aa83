package runner

import (
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	gosync "sync"
	"syscall"
	"time"

	"github.com/streamsim/streamsim/sim/network"

	"github.com/streamsim/streamsim/link"
	"github.com/streamsim/streamsim/result"
)

// machineReading is the last reading of the machine's CPU counters (/proc/stat), shared by
// the samplers of one process: the embedded runner's nodes start their measured phases at one
// barrier and so sample within milliseconds of each other, and each reading costs tens of µs
// of the process's own CPU, which the figures then carry.
var machineReading struct {
	gosync.Mutex
	at          time.Time
	busy, total uint64
	ok          bool
}

// machineReadingReuse is how old a shared reading may be (2 % of a sample window).
const machineReadingReuse = 20 * time.Millisecond

// machineBusy is link.MachineBusy, read at most once per machineReadingReuse per process.
func machineBusy() (busy, total uint64, ok bool) {
	r := &machineReading
	r.Lock()
	defer r.Unlock()
	if now := time.Now(); r.at.IsZero() || now.Sub(r.at) > machineReadingReuse {
		r.busy, r.total, r.ok = link.MachineBusy()
		r.at = now
	}
	return r.busy, r.total, r.ok
}

// ProcessCPU is the process's user+system CPU time so far.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuSampler samples the process's CPU use in fixed windows during the measured phase, and
// how long its goroutines waited for a CPU.
type cpuSampler struct {
	start    time.Time
	cpuStart time.Duration
	sched    *metrics.Float64Histogram // /sched/latencies at the start
	stop     chan struct{}
	done     chan struct{}
	peak     float64
	busy     time.Duration
	// machinePeak is the busiest window's share of the whole machine's CPU (/proc/stat),
	// other processes included; -1 where /proc/stat is unreadable.
	machinePeak float64
	// The open window, for finish to close.
	last   time.Duration
	lastAt time.Time
}

// sampleWindow is the sampler's window. A second is long enough that getrusage's lag (the
// CPU time of threads running on other cores is accounted at their next tick) stays within
// a few percent, and short enough to see a block's columns arriving at once. Whether such a
// burst delayed anything is the scheduling delay's to say.
const sampleWindow = time.Second

// schedLatencies is Go's histogram of the time goroutines spent runnable before running.
const schedLatencies = "/sched/latencies:seconds"

func readSchedLatencies() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	return s[0].Value.Float64Histogram()
}

// schedDelay returns the 99th percentile and the largest wait (bucket upper bounds, in ms)
// of the waits counted between two readings of the histogram, and how many there were.
func schedDelay(from, to *metrics.Float64Histogram) (p99Ms, maxMs float64, n uint64) {
	if from == nil || to == nil || len(from.Counts) != len(to.Counts) {
		return 0, 0, 0
	}
	counts := make([]uint64, len(to.Counts))
	for i := range counts {
		counts[i] = to.Counts[i] - from.Counts[i]
		n += counts[i]
	}
	if n == 0 {
		return 0, 0, 0
	}
	upper := func(i int) float64 { // a bucket's upper bound, or its lower one for the open last bucket
		if b := to.Buckets[i+1]; !math.IsInf(b, 1) {
			return b * 1e3
		}
		return to.Buckets[i] * 1e3
	}
	target := uint64(math.Ceil(0.99 * float64(n)))
	var cum uint64
	for i, c := range counts {
		if c == 0 {
			continue
		}
		cum += c
		if p99Ms == 0 && cum >= target {
			p99Ms = upper(i)
		}
		maxMs = upper(i)
	}
	return p99Ms, maxMs, n
}

func startCPUSampler() *cpuSampler {
	s := &cpuSampler{start: time.Now(), cpuStart: ProcessCPU(), sched: readSchedLatencies(), stop: make(chan struct{}), done: make(chan struct{})}
	s.last, s.lastAt = s.cpuStart, s.start
	go func() {
		defer close(s.done)
		tick := time.NewTicker(sampleWindow)
		defer tick.Stop()
		mBusy, mTotal, mOK := machineBusy()
		if !mOK {
			s.machinePeak = -1
		}
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
				// The tick's own time is when it was sent; under load this goroutine runs
				// later, so measure the interval up to the CPU reading itself.
				cpu, now := ProcessCPU(), time.Now()
				if now.Sub(s.lastAt) < sampleWindow/2 {
					// A tick that waited in the channel while this goroutine could not run
					// arrives right after the previous one: over so short an interval
					// getrusage's per-tick accounting reads as many cores. Let the window
					// run on to the next tick.
					continue
				}
				share := s.closeWindow(cpu, now)
				if b, t, ok := machineBusy(); ok && mOK && t > mTotal {
					m := float64(b-mBusy) / float64(t-mTotal)
					s.machinePeak = max(s.machinePeak, m)
					if m >= result.SaturationShare && share < result.SaturationShare {
						s.busy += sampleWindow
					}
					mBusy, mTotal = b, t
				}
			}
		}
	}()
	return s
}

// closeWindow ends the open window at (cpu, now), counts it and returns its CPU share.
func (s *cpuSampler) closeWindow(cpu time.Duration, now time.Time) float64 {
	share := (cpu - s.last).Seconds() / now.Sub(s.lastAt).Seconds() / float64(runtime.GOMAXPROCS(0))
	s.peak = max(s.peak, share)
	if share >= result.SaturationShare {
		s.busy += now.Sub(s.lastAt)
	}
	s.last, s.lastAt = cpu, now
	return share
}

// finish stops sampling and returns the process's CPU use over the phase.
func (s *cpuSampler) finish() *result.Process {
	close(s.stop)
	<-s.done
	cpuNow, now := ProcessCPU(), time.Now()
	// The last, partial window counts when it is long enough for getrusage to be accurate.
	if now.Sub(s.lastAt) >= sampleWindow/2 {
		s.closeWindow(cpuNow, now)
	}
	p := processReading(cpuNow-s.cpuStart, now.Sub(s.start))
	p.PeakUtilization, p.SaturatedSeconds, p.SampleSeconds, p.MachinePeak = s.peak, s.busy.Seconds(), sampleWindow.Seconds(), s.machinePeak
	p.SchedP99Ms, p.SchedMaxMs, p.SchedEvents = schedDelay(s.sched, readSchedLatencies())
	return p
}

// processReading is what both clocks' meters report: the process's CPU and wall time over
// the phase, its cores, host, PID and peak resident memory.
func processReading(cpu, wall time.Duration) *result.Process {
	cores := runtime.GOMAXPROCS(0)
	host, _ := os.Hostname()
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	p := &result.Process{Host: host, PID: os.Getpid(), CPUSeconds: cpu.Seconds(), WallSeconds: wall.Seconds(), Cores: cores, MaxRSSBytes: ru.Maxrss << 10}
	if wall > 0 {
		p.Utilization = p.CPUSeconds / p.WallSeconds / float64(cores)
	}
	return p
}

// processMeter measures the process over the measured phase: on the real clock the sampler
// above; on the virtual clock only CPU and wall time (the machine's) against simulated time,
// since windows of simulated time say nothing about this machine's CPU and /proc timers do
// not belong in a bubble.
type processMeter interface{ finish() *result.Process }

func startProcessMeter(c network.Clock) processMeter {
	if c == network.ClockVirtual {
		return &virtualProcessMeter{sim: time.Now(), wall: network.WallNow(), cpu: ProcessCPU()}
	}
	return startCPUSampler()
}

// virtualProcessMeter is the virtual clock's processMeter: readings at the start.
type virtualProcessMeter struct {
	sim  time.Time // simulated
	wall time.Duration
	cpu  time.Duration
}

func (m *virtualProcessMeter) finish() *result.Process {
	p := processReading(ProcessCPU()-m.cpu, network.WallNow()-m.wall)
	p.MachinePeak, p.SimulatedSeconds = -1, time.Since(m.sim).Seconds()
	return p
}
