package snappystream

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/streamsim/streamsim/workload"
)

// threadCPU is the calling thread's CPU time (bench.ThreadCPU; bench imports this package).
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// probeStream is a stream as fast sees it at an all-subnets node's peer: one slot of the
// workload's messages (ssz_snappy data, as on the wire today), concatenated.
func probeStream(b *testing.B) []byte {
	p := workload.DefaultParams()
	p.Seed = 1
	g, err := workload.NewGenerator(p)
	if err != nil {
		b.Fatal(err)
	}
	msgs, err := g.NextSlot()
	if err != nil {
		b.Fatal(err)
	}
	var s []byte
	for _, m := range msgs {
		s = append(s, m.Data...)
	}
	return s
}

// BenchmarkTableProbes times fast's probe alone, the part of its search that grows with the
// window: hash the 6 bytes at a position, read the table's entry, write the position (what
// encodeFastBlock does per probe before it checks a candidate), over a slot of the workload's
// messages, with the table of each window (2^14, 2^16, 2^18 entries of 4 bytes: 64 KiB,
// 256 KiB, 1 MiB) at the probe spacing fast keeps on attestation frames (a probe per 5.4 bytes
// up to 64 KiB, per 3.0 above, docs/measurements/codecs.md). Without hardware counters the
// misses are counted on a model of this VM's caches: a probe misses a cache of C lines when
// its table line was not probed in the last C probes (each probe touches one line, so that
// is at most C lines ago; the history and the input the encoder also reads, not modelled,
// only take room). Reported: thread CPU per probe (cpu-ns/probe; other processes do not
// inflate it except through the caches they share) and L1d (48 KiB) and L2 (1 MiB) misses per
// probe on that model.
func BenchmarkTableProbes(b *testing.B) {
	src := probeStream(b)
	const (
		l1Lines = 48 << 10 / 64
		l2Lines = 1 << 20 / 64
	)
	for _, c := range []struct {
		bits uint
		step int
	}{{14, 5}, {16, 5}, {16, 3}, {18, 3}, {18, 5}} {
		b.Run(fmt.Sprintf("table=2^%d/bytes-per-probe=%d", c.bits, c.step), func(b *testing.B) {
			table := make([]uint32, 1<<c.bits)
			shift := 64 - c.bits
			// The model: the probe index each table line was last probed at (0: never).
			last := make([]int, len(table)/16)
			var l1, l2, probes int
			for i, s := 1, 0; s+8 <= len(src); s += c.step {
				h, _ := hash6(load64(src, s), shift)
				line := h / 16
				if d := i - last[line]; last[line] == 0 || d > l1Lines {
					l1++
					if last[line] == 0 || d > l2Lines {
						l2++
					}
				}
				last[line] = i
				i++
				probes++
			}
			var acc uint32
			b.SetBytes(int64(len(src)))
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU()
			for b.Loop() {
				for s := 0; s+8 <= len(src); s += c.step {
					h, tag := hash6(load64(src, s), shift)
					acc += table[h]
					table[h] = tag<<posBits | uint32(s)&posMask
				}
			}
			b.ReportMetric(float64((threadCPU()-cpu0).Nanoseconds())/float64(b.N*probes), "cpu-ns/probe")
			b.ReportMetric(float64(l1)/float64(probes), "l1miss/probe")
			b.ReportMetric(float64(l2)/float64(probes), "l2miss/probe")
			if acc == 1 {
				b.Log(acc) // keeps the loads
			}
		})
	}
}
