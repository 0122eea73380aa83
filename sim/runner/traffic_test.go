package runner

import (
	"math"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/streamsim/streamsim/link"
	"github.com/streamsim/streamsim/result"
)

// The sampler sees the process's CPU in short windows: two goroutines spinning for most of a
// second show up as CPU time and as a busy peak window, and /proc/stat's machine share is at
// least as busy as this process in its peak.
func TestCPUSamplerSeesABurst(t *testing.T) {
	s := startCPUSampler()
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); {
			}
		}()
	}
	wg.Wait()
	p := s.finish()
	// However loaded the machine, the spinning goroutines got some CPU, the busiest window
	// is at least the average, and the machine (which includes this process) was at least
	// as busy as this process in its busiest window (within /proc/stat's 10 ms ticks).
	if p.CPUSeconds <= 0.05 || p.WallSeconds < 1.5 || p.SampleSeconds != sampleWindow.Seconds() {
		t.Fatalf("process %+v", p)
	}
	if p.PeakUtilization < 0.9*p.Utilization || p.PeakUtilization > 1.05 {
		t.Fatalf("peak share %.2f against an average of %.2f", p.PeakUtilization, p.Utilization)
	}
	if _, _, ok := link.MachineBusy(); ok && p.MachinePeak < p.PeakUtilization-0.1 {
		t.Fatalf("machine peak %.2f while this process peaked at %.2f", p.MachinePeak, p.PeakUtilization)
	}
}

// Goroutines queueing for a CPU show as scheduling delay: four times as many spinning
// goroutines as cores are preempted every 10 ms and wait for the others, so the 99th
// percentile wait is at least the limit and the run counts as saturated, whatever the CPU
// share windows say.
func TestCPUSamplerSeesSchedulingDelay(t *testing.T) {
	s := startCPUSampler()
	var wg sync.WaitGroup
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for end := time.Now().Add(time.Second); time.Now().Before(end); {
			}
		}()
	}
	wg.Wait()
	p := s.finish()
	if p.SchedEvents == 0 || p.SchedP99Ms < result.SchedDelayLimitMs || p.SchedMaxMs < p.SchedP99Ms {
		t.Fatalf("scheduling delay p99 %.2f ms, max %.2f ms over %d waits", p.SchedP99Ms, p.SchedMaxMs, p.SchedEvents)
	}
	if !p.Saturated() {
		t.Fatalf("not saturated: %+v", p)
	}
}

// schedDelay reads percentiles off the difference of two histogram readings, by bucket
// upper bound, and the open last bucket by its lower bound.
func TestSchedDelayPercentiles(t *testing.T) {
	buckets := []float64{0, 1e-3, 5e-3, 20e-3, math.Inf(1)}
	from := &metrics.Float64Histogram{Counts: []uint64{5, 5, 5, 5}, Buckets: buckets}
	to := &metrics.Float64Histogram{Counts: []uint64{5 + 980, 5 + 10, 5 + 9, 5 + 1}, Buckets: buckets}
	p99, maxMs, n := schedDelay(from, to)
	if n != 1000 || p99 != 5 || maxMs != 20 {
		t.Fatalf("p99 %v max %v n %d; want 5 ms, 20 ms (open bucket's lower bound), 1000", p99, maxMs, n)
	}
	to.Counts[2], to.Counts[3] = 5, 5 // nothing past 5 ms
	if p99, maxMs, _ = schedDelay(from, to); p99 != 5 || maxMs != 5 {
		t.Fatalf("without the open bucket: p99 %v max %v", p99, maxMs)
	}
}
