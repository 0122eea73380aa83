package node

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID): what a frame's codec
// work cost, measured outside the bubble's clock. The caller holds its OS thread
// (runtime.LockOSThread) between two readings.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// cpuSpan is a reading of the calling thread's CPU clock. A goroutine may move to another
// thread between two readings (it is not locked to one: a locked goroutine blocked in a
// read would hold a thread per stream); elapsed then reads 0, so a span that moved is not
// charged rather than charged wrongly.
type cpuSpan struct {
	tid int
	at  time.Duration
}

func startCPUSpan() cpuSpan { return cpuSpan{tid: unix.Gettid(), at: threadCPU()} }

// elapsed is the thread CPU time since the span started, 0 when the goroutine changed thread.
func (s cpuSpan) elapsed() time.Duration {
	if s.tid == 0 || unix.Gettid() != s.tid {
		return 0
	}
	return max(threadCPU()-s.at, 0)
}
