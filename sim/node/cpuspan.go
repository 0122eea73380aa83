package node

import (
	"runtime"
	"slices"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Codec CPU on the live path (docs/results-schema.md, "codec CPU"): each frame's codec work is
// bracketed by spans, on the real and the virtual clock alike, and a frame's codec CPU is its
// spans less their own cost (measured once per process per clock: the meter's cost, reported
// apart as codec_stats.meter_ns).
//
// Most frames are timed by the monotonic clock, not the thread's CPU clock
// (CLOCK_THREAD_CPUTIME_ID) that streamsim bench and the sweep read around loops of many
// frames: that clock is not in the vDSO, and a system call per frame changes the work it
// measures. On a VM with page-table isolation and no PCID (the shared one this was measured
// on) every kernel entry flushes the TLB, so each frame's encode starts with its table and
// history out of the TLB: spans of that clock read an attestation frame's encode at 2.2 ns/B
// where bench and the sweep read 0.8–0.9 ns/B, beside the clock's own 1.4 µs per span
// (docs/codecs.md, "Codec CPU"). The monotonic clock is read in the vDSO (no kernel entry,
// about 30 ns a pair) and is the runtime's own, not a synctest bubble's (which stands still).
//
// A monotonic span also holds whatever time the thread spent descheduled in it (other
// processes, the runtime's preemption). A frame whose spans add up to more than
// preemptedAbove(bytes) (far above what any codec takes per byte) was descheduled: its codec
// CPU is then the stream direction's own rate, measured on its frames that were not, times
// its bytes, and it is counted (codec_stats.preempted_frames). Where a frame's work is long
// enough that the thread clock's cost is small beside it, or includes the codec's setup (a
// direction's first frame: zstd allocates its tables then), the frame is timed by the thread
// clock instead, which a deschedule does not inflate: an encoded frame of threadSpanBytes or
// more and the first frame each way. (A decoded frame's size is known only once decoded: a
// large one is timed by the monotonic clock and the cut, which lets a short deschedule through.)

//go:linkname nanotime runtime.nanotime
func nanotime() int64

// threadCPU is the calling thread's CPU time. RawSyscall: the clock never blocks.
func threadCPU() int64 {
	var ts unix.Timespec
	if _, _, errno := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_THREAD_CPUTIME_ID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return ts.Nano()
}

// threadSpanBytes is the encoded frame size from which the thread clock times a frame: its
// encode takes 16 µs or more at 1 ns/B, the clock's cost and its TLB flush a few per cent.
const threadSpanBytes = 16 << 10

// cpuSpan is a reading of the monotonic clock or, thread, of the thread's CPU clock with the
// goroutine locked to its thread until end. A span holds only codec work, never a wait on
// the network (the reader ends its span before each transport read and starts another
// after), so the lock holds no thread idle.
type cpuSpan struct {
	at     int64
	thread bool
}

func startCPUSpan(thread bool) cpuSpan {
	if thread {
		runtime.LockOSThread()
		return cpuSpan{at: threadCPU(), thread: true}
	}
	return cpuSpan{at: nanotime()}
}

// end is the time since the span started, the span's own cost included.
func (s cpuSpan) end() time.Duration {
	if s.thread {
		d := threadCPU() - s.at
		runtime.UnlockOSThread()
		return time.Duration(d)
	}
	return time.Duration(nanotime() - s.at)
}

// spanCost is what an empty span of each clock reads (the median of 1001 back to back,
// measured once per process): the meter's cost per span, taken out of every codec figure.
var spanCost = sync.OnceValue(func() [2]time.Duration {
	var c [2]time.Duration
	for i, thread := range []bool{false, true} {
		d := make([]time.Duration, 1001)
		for j := range d {
			d[j] = startCPUSpan(thread).end()
		}
		slices.Sort(d)
		c[i] = d[len(d)/2]
	}
	return c
})

func costOf(thread bool) time.Duration {
	if thread {
		return spanCost()[1]
	}
	return spanCost()[0]
}

// preemptedAbove is the span time above which a frame of n bytes was descheduled in its
// monotonic spans: 50 µs plus 100 ns per byte (zstd level 3 encodes 40–50 ns per byte of small
// frames, snappy-stream `better` 6).
func preemptedAbove(n int) time.Duration {
	return 50*time.Microsecond + time.Duration(n)*100*time.Nanosecond
}

// cpuMeter meters one stream direction: the spans of the frame in progress (begin starts a
// frame, span starts each of its spans), and the codec CPU and bytes of its frames measured
// whole by the monotonic clock (not descheduled: the direction's rate).
type cpuMeter struct {
	raw       time.Duration
	spans     int64
	thread    bool // the frame in progress is timed by the thread clock
	frames    int64
	rateNs    int64
	rateBytes int64
	// pending: bytes of descheduled frames taken before there was a rate; the first frame
	// measured whole adds them at its rate.
	pending int64
}

// begin starts a frame of n bytes (n < 0: not known yet) and chooses its clock.
func (m *cpuMeter) begin(n int) {
	m.raw, m.spans = 0, 0
	m.thread = m.frames == 0 || n >= threadSpanBytes
}

// span starts a span of the frame in progress.
func (m *cpuMeter) span() cpuSpan { return startCPUSpan(m.thread) }

func (m *cpuMeter) add(d time.Duration) { m.raw += d; m.spans++ }

// take ends the frame in progress, of n bytes, and returns its codec CPU and the meter's
// cost, which says whether the frame was descheduled in its spans (its codec CPU is then the
// direction's rate times n). A frame's codec CPU may read below 0 by a few ns (the meter's
// cost is a median); sums over frames are what is reported.
func (m *cpuMeter) take(n int) (codecCPU time.Duration, meter meterCost) {
	meter.cpu = time.Duration(m.spans) * costOf(m.thread)
	codecCPU = m.raw - meter.cpu
	switch {
	case m.spans == 0 || m.thread:
	case m.raw > preemptedAbove(n):
		meter.preempted = true
		codecCPU = 0
		if m.rateBytes > 0 {
			codecCPU = time.Duration(float64(m.rateNs) * float64(n) / float64(m.rateBytes))
		} else {
			m.pending += int64(n)
		}
	default:
		m.rateNs += int64(codecCPU)
		m.rateBytes += int64(n)
		if m.pending > 0 {
			codecCPU += time.Duration(float64(m.rateNs) * float64(m.pending) / float64(m.rateBytes))
			m.pending = 0
		}
	}
	if m.spans > 0 {
		meter.first = m.frames == 0
		m.frames++
	}
	m.raw, m.spans, m.thread = 0, 0, false
	return codecCPU, meter
}

// meterCost is what metering a frame's codec CPU cost (the spans' own time), whether the
// frame was descheduled in its spans, and whether it was its direction's first timed frame
// (whose codec CPU holds the codec's setup).
type meterCost struct {
	cpu       time.Duration
	preempted bool
	first     bool
}

// chargeDebt is the codec CPU a stream direction owes the virtual clock: per-frame figures
// below 0 carry into the next frame's, so what is slept over a stream is its summed codec CPU.
type chargeDebt time.Duration

// due adds a frame's codec CPU and returns what to sleep now (0 while the sum is not above 0).
func (c *chargeDebt) due(d time.Duration) time.Duration {
	*c += chargeDebt(d)
	if *c <= 0 {
		return 0
	}
	owed := time.Duration(*c)
	*c = 0
	return owed
}
