package sim

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/streamsim/streamsim/link"
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
			for end := time.Now().Add(800 * time.Millisecond); time.Now().Before(end); {
			}
		}()
	}
	wg.Wait()
	p := s.finish()
	// However loaded the machine, the spinning goroutines got some CPU, the busiest window
	// is at least the average, and the machine (which includes this process) was at least
	// as busy as this process in its busiest window (within /proc/stat's 10 ms ticks).
	if p.CPUSeconds <= 0.05 || p.WallSeconds < 0.8 || p.SampleSeconds != sampleWindow.Seconds() {
		t.Fatalf("process %+v", p)
	}
	if p.PeakUtilization < 0.9*p.Utilization || p.PeakUtilization > 1.05 {
		t.Fatalf("peak share %.2f against an average of %.2f", p.PeakUtilization, p.Utilization)
	}
	if _, _, ok := link.MachineBusy(); ok && p.MachinePeak < p.PeakUtilization-0.1 {
		t.Fatalf("machine peak %.2f while this process peaked at %.2f", p.MachinePeak, p.PeakUtilization)
	}
}
