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
	if p.CPUSeconds < 0.4 || p.PeakUtilization < 0.2 || p.WallSeconds < 0.8 || p.SampleSeconds != sampleWindow.Seconds() {
		t.Fatalf("process %+v", p)
	}
	if _, _, ok := link.MachineBusy(); ok && p.MachinePeak < 0.2 {
		t.Fatalf("machine peak %.2f while this process peaked at %.2f", p.MachinePeak, p.PeakUtilization)
	}
}
