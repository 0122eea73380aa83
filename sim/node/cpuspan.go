package node

import (
	"runtime"
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

// cpuSpan is a reading of the calling thread's CPU clock with the goroutine locked to that
// thread (runtime.LockOSThread) until elapsed, so the two readings are of one thread and of this
// goroutine's work alone. A span never covers a wait: the stream reader ends its span before
// each read of the transport and starts a new one after (countingReader), so no blocked
// goroutine holds a thread. Every startCPUSpan is paired with exactly one elapsed. (Spans
// used to leave the goroutine free and compare thread ids, two gettid system calls per span:
// a tenth of a virtual run's CPU.)
type cpuSpan struct {
	at time.Duration
}

func startCPUSpan() cpuSpan {
	runtime.LockOSThread()
	return cpuSpan{at: threadCPU()}
}

// elapsed is the thread CPU time since the span started; it unlocks the thread.
func (s cpuSpan) elapsed() time.Duration {
	d := threadCPU() - s.at
	runtime.UnlockOSThread()
	return max(d, 0)
}
