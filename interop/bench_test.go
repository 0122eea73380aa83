package interop

import (
	"syscall"
	"testing"
	"time"

	"github.com/streamsim/streamsim/bench"
	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/codec/snappystream"
	"github.com/streamsim/streamsim/internal/timing"
)

// loadAverage is the machine's 1-minute load average, -1 where it cannot be read: the machine
// is shared, so every speed figure says under what load it was taken.
func loadAverage() float64 {
	if l, ok := timing.LoadAverage(); ok {
		return l
	}
	return -1
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkJSCodec times the Go codec (b.N passes, each coding an input's messages as one
// stream direction with a fresh encoder or decoder) and then the JS codec on the same
// messages (passes for at least a second, in its own Node.js process), and reports
// both speeds in decoded MB/s of wall time and of CPU time (the process's user + system time,
// every thread: Go's collector, V8's compiler and collector), their ratios, both compressed
// sizes relative to raw, and the load average. The CPU ratio is the figure to quote: the two
// run one after the other on a shared machine, where wall time also counts waiting for a
// core.
//
// Inputs: one slot of the workload's RPC frames (all-subnets view) in both payload modes, at
// 64 KiB and 4 KiB; and `streamsim bench`'s payload types (SSZ messages) at 64 KiB and 0.
//
//	go test ./interop -run '^$' -bench BenchmarkJSCodec
func BenchmarkJSCodec(b *testing.B) {
	c := startCodec(b)
	type input struct {
		name   string
		frames [][]byte
		specs  []string
	}
	var inputs []input
	for _, ssz := range []bool{false, true} {
		mode := map[bool]string{false: "ssz_snappy", true: "ssz"}[ssz]
		inputs = append(inputs, input{"frames-" + mode, traceFrames(b, 1, ssz, 0), []string{"snappy-stream", "snappy-stream:4KiB"}})
	}
	// The payload types of `streamsim bench` (seed 1, 8 slots, SSZ), as its tables have them.
	payloads, err := bench.Payloads(1, 8)
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range payloads {
		inputs = append(inputs, input{p.Name, p.Msgs, []string{"snappy-stream", "snappy-stream:0"}})
	}
	for _, in := range inputs {
		for _, spec := range in.specs {
			s, err := codec.Parse(spec)
			if err != nil {
				b.Fatal(err)
			}
			for _, op := range []string{"encode", "decode"} {
				b.Run(in.name+"/"+spec+"/"+op, func(b *testing.B) { benchOne(b, c, in.frames, s.WindowBytes, op) })
			}
		}
	}
}

// benchOne times one op of the Go codec and then of the JS codec on frames coded as one
// stream direction with window w.
func benchOne(b *testing.B, c *Codec, frames [][]byte, w int, op string) {
	const jsBenchTime = time.Second
	raw := int64(sum(frames))
	goBlocks := goEncode(w, frames)
	goWire := int64(sum(goBlocks))
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
	if js.RawBytes != raw {
		b.Fatalf("JS coded %d raw bytes, Go %d", js.RawBytes, raw)
	}
	jsMBps, jsCPUMBps := js.EncodeMBps(), js.EncodeCPUMBps()
	if op == "decode" {
		jsMBps, jsCPUMBps = js.DecodeMBps(), js.DecodeCPUMBps()
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
}
