package bench

import (
	"runtime"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// ThreadCPU returns the CPU time the calling OS thread has used. Callers lock the goroutine
// to its thread; unlike wall-clock codec meters, it does not grow when other processes take
// the cores.
func ThreadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// ClockCost is what one bracket of ThreadCPU reads adds to the CPU it measures: the median
// of back-to-back pairs, measured once per process.
var ClockCost = sync.OnceValue(func() time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d := make([]time.Duration, 101)
	for i := range d {
		a, _ := ThreadCPU()
		b, _ := ThreadCPU()
		d[i] = b - a
	}
	slices.Sort(d)
	return d[len(d)/2]
})
