package interop

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/codec/snappystream"
)

// loadAverage is the machine's 1-minute load average, -1 where /proc/loadavg is missing: the
// machine is shared, so every speed figure says under what load it was taken.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	if err != nil {
		return -1
	}
	return f
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkJSCodec times the Go codec (b.N passes, each coding one slot of the workload's
// frames as one stream direction with a fresh encoder or decoder) and then the JS codec on
// the same frames (passes for at least jsBenchTime, in its own Node.js process), and reports
// both speeds in decoded MB/s of wall time and of CPU time (the process's user + system time,
// every thread: Go's collector, V8's compiler and collector), their ratios, both compressed
// sizes relative to raw, and the load average. The CPU ratio is the figure to quote: the two
// run one after the other on a shared machine, where wall time also counts waiting for a
// core.
//
//	go test ./interop -run '^$' -bench BenchmarkJSCodec -benchtime 2s
func BenchmarkJSCodec(b *testing.B) {
	const jsBenchTime = 2 * time.Second
	c := startCodec(b)
	for _, ssz := range []bool{false, true} {
		frames := traceFrames(b, 1, ssz, 0)
		raw := int64(sum(frames))
		mode := map[bool]string{false: "ssz_snappy", true: "ssz"}[ssz]
		for _, spec := range []string{"snappy-stream", "snappy-stream:4KiB"} {
			s, err := codec.Parse(spec)
			if err != nil {
				b.Fatal(err)
			}
			w := s.WindowBytes
			goBlocks := goEncode(w, frames)
			goWire := int64(sum(goBlocks))
			for _, op := range []string{"encode", "decode"} {
				b.Run(mode+"/"+spec+"/"+op, func(b *testing.B) {
					load0 := loadAverage()
					b.SetBytes(raw)
					cpu0 := cpuTime()
					b.ResetTimer()
					for range b.N {
						switch op {
						case "encode":
							enc := snappystream.NewEncoder(w, snappystream.Fast)
							var dst []byte
							for _, f := range frames {
								dst = enc.Encode(dst[:0], f)
							}
						case "decode":
							dec := snappystream.NewDecoder(w, 0)
							var dst []byte
							for _, blk := range goBlocks {
								var err error
								if dst, err = dec.Decode(dst[:0], blk); err != nil {
									b.Fatal(err)
								}
							}
						}
					}
					b.StopTimer()
					goCPUMBps := float64(raw) * float64(b.N) / (cpuTime() - cpu0).Seconds() / 1e6
					goMBps := float64(raw) * float64(b.N) / b.Elapsed().Seconds() / 1e6
					js, err := c.Bench(w, frames, jsBenchTime)
					if err != nil {
						b.Fatal(err)
					}
					jsMBps, jsCPUMBps := js.EncodeMBps(), js.EncodeCPUMBps()
					if op == "decode" {
						jsMBps, jsCPUMBps = js.DecodeMBps(), js.DecodeCPUMBps()
					}
					if js.RawBytes != raw {
						b.Fatalf("JS coded %d raw bytes, Go %d", js.RawBytes, raw)
					}
					b.ReportMetric(goMBps, "go-MB/s")
					b.ReportMetric(jsMBps, "js-MB/s")
					b.ReportMetric(jsMBps/goMBps, "js/go")
					b.ReportMetric(goCPUMBps, "go-cpu-MB/s")
					b.ReportMetric(jsCPUMBps, "js-cpu-MB/s")
					b.ReportMetric(jsCPUMBps/goCPUMBps, "js/go-cpu")
					b.ReportMetric(float64(goWire)/float64(raw), "go-wire/raw")
					b.ReportMetric(float64(js.WireBytes)/float64(raw), "js-wire/raw")
					b.ReportMetric((load0+loadAverage())/2, "load1")
				})
			}
		}
	}
}
