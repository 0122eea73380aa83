package replay

import (
	"runtime"
	"sync"
	"testing"

	"github.com/streamsim/streamsim/bench"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/workload"
)

var (
	benchOnce   sync.Once
	benchFrames []frameIn
	benchPlain  TrafficSummary
	benchBytes  int64
	benchErr    error
)

// benchmarkCorpus is two slots of the workload's all-subnets traffic as one inbound stream
// (what a workload trace holds), payloads ssz_snappy.
func benchmarkCorpus(b *testing.B) ([]frameIn, TrafficSummary, int64) {
	benchOnce.Do(func() {
		g, err := workload.NewGenerator(workload.DefaultParams())
		if err != nil {
			benchErr = err
			return
		}
		prof, _ := workload.ParseProfile("all-subnets")
		benchPlain.View = "all-subnets"
		var frame []byte
		for range 2 {
			msgs, err := g.NextSlot()
			if err != nil {
				benchErr = err
				return
			}
			for _, m := range msgs {
				if !prof.Wants(m.Topic) {
					continue
				}
				if frame, err = gossip.AppendPublishFrame(frame[:0], m.Topic, m.Data); err != nil {
					benchErr = err
					return
				}
				parts, err := gossip.SplitFrame(frame)
				if err != nil {
					benchErr = err
					return
				}
				benchFrames = append(benchFrames, frameIn{stream: "bench", data: append([]byte(nil), frame...), parts: parts.Bytes})
				benchBytes += int64(len(frame))
				for c, n := range parts.Bytes {
					benchPlain.Bytes[c] += int64(n)
					benchPlain.Total += int64(n)
				}
			}
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchFrames, benchPlain, benchBytes
}

// BenchmarkReplay replays two slots of all-subnets traffic through one configuration per
// sub-benchmark: encode, attribute, decode and compare, on one goroutine. MB/s is trace bytes
// replayed per second of wall clock, cpu-MB/s per second of this thread's CPU time (what one
// core does when other processes share the machine); encode-ns/B and decode-ns/B are the
// codec meters (wall clock).
func BenchmarkReplay(b *testing.B) {
	frames, plain, size := benchmarkCorpus(b)
	for _, name := range []string{"plain", "snappy-stream:4KiB:fast", "snappy-stream:64KiB:fast", "snappy-stream:1MiB:fast", "snappy-stream:64KiB:better", "zstd:3:2MiB"} {
		cfg, err := ParseConfig(name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var r Result
			cpu0, _ := bench.ThreadCPU()
			for b.Loop() {
				if r, err = replayFrames(cfg, gossip.PayloadSSZSnappy, frames, plain, nil); err != nil {
					b.Fatal(err)
				}
			}
			// Replay speed on one core when the machine is shared: trace bytes per thread-CPU second.
			if cpu1, ok := bench.ThreadCPU(); ok && cpu1 > cpu0 {
				b.ReportMetric(float64(b.N)*float64(size)/1e6/(cpu1-cpu0).Seconds(), "cpu-MB/s")
			}
			b.ReportMetric(r.EncodeNsPerB, "encode-ns/B")
			b.ReportMetric(r.DecodeNsPerB, "decode-ns/B")
			b.ReportMetric(r.RelativeTotal, "%-of-plain")
		})
	}
}
