package node

import (
	"slices"
	"sync"
	"time"
	_ "unsafe" // go:linkname
)

// Codec CPU on the live path (docs/results-schema.md, "codec CPU"): each frame's codec work is
// bracketed by spans of the monotonic clock, on the real and the virtual clock alike, and a
// frame's codec CPU is its spans less their own cost (spanCost, measured once per process:
// the meter's cost, reported apart as codec_stats.meter_ns).
//
// Not the thread's CPU clock (CLOCK_THREAD_CPUTIME_ID), which streamsim bench and the sweep
// use over loops of many frames: it is not in the vDSO, and a system call per frame changes
// the work it measures. On a VM with page-table isolation and no PCID (the shared one this was
// measured on) every kernel entry flushes the TLB, so each frame's encode starts with its
// table and history out of the TLB: spans of that clock read an attestation frame's encode at
// 2.2 ns/B where bench and the sweep read 0.8–0.9 ns/B, beside the clock's own 1.4 µs per span
// (docs/codecs.md, "Codec CPU"). The monotonic clock is read in the vDSO (no kernel entry,
// about 30 ns a pair) and is the runtime's own, not a synctest bubble's (which stands still).
//
// A monotonic span also holds whatever time the thread spent descheduled in it (other
// processes, the runtime's preemption). A frame whose spans add up to more than
// preemptedAbove(bytes) (far above what any codec takes per byte) was descheduled: its codec
// CPU is then the stream direction's own rate, measured on its frames that were not, times
// its bytes, and it is counted (codec_stats.preempted_frames).

//go:linkname nanotime runtime.nanotime
func nanotime() int64

// cpuSpan is a reading of the monotonic clock.
type cpuSpan struct{ at int64 }

func startCPUSpan() cpuSpan { return cpuSpan{at: nanotime()} }

// end is the time since the span started, the span's own cost included.
func (s cpuSpan) end() time.Duration { return time.Duration(nanotime() - s.at) }

// spanCost is what an empty span reads (the median of 1001 back to back, measured once per
// process): the meter's cost per span, taken out of every codec figure.
var spanCost = sync.OnceValue(func() time.Duration {
	d := make([]time.Duration, 1001)
	for i := range d {
		d[i] = startCPUSpan().end()
	}
	slices.Sort(d)
	return d[len(d)/2]
})

// preemptedAbove is the span time above which a frame of n bytes was descheduled in its
// spans: 50 µs plus 100 ns per byte (zstd level 3 encodes 40–50 ns per byte of small frames,
// snappy-stream `better` 6).
func preemptedAbove(n int) time.Duration {
	return 50*time.Microsecond + time.Duration(n)*100*time.Nanosecond
}

// cpuMeter meters one stream direction: the spans of the frame in progress, and the codec
// CPU and bytes of the frames measured whole so far (not descheduled: the direction's rate).
type cpuMeter struct {
	raw       time.Duration
	spans     int64
	rateNs    int64
	rateBytes int64
}

func (m *cpuMeter) add(d time.Duration) { m.raw += d; m.spans++ }

// take ends the frame in progress, of n bytes, and returns its codec CPU and the meter's
// cost, which says whether the frame was descheduled in its spans (its codec CPU is then the
// direction's rate times n). A frame's codec CPU may read below 0 by a few ns (the meter's cost is a
// median); sums over frames are what is reported.
func (m *cpuMeter) take(n int) (codecCPU time.Duration, meter meterCost) {
	meter.cpu = time.Duration(m.spans) * spanCost()
	codecCPU = m.raw - meter.cpu
	if m.raw > preemptedAbove(n) {
		meter.preempted = true
		codecCPU = preemptedAbove(n)
		if m.rateBytes > 0 {
			codecCPU = time.Duration(float64(m.rateNs) * float64(n) / float64(m.rateBytes))
		}
	} else if m.spans > 0 {
		m.rateNs += int64(codecCPU)
		m.rateBytes += int64(n)
	}
	m.raw, m.spans = 0, 0
	return codecCPU, meter
}

// meterCost is what metering a frame's codec CPU cost (the spans' own time) and whether the
// frame was descheduled in its spans.
type meterCost struct {
	cpu       time.Duration
	preempted bool
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
