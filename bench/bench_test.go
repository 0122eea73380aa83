package bench

import (
	"bytes"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/streamsim/streamsim/codec"
)

// The benchmarks in go test -bench format, for benchstat. Payload types (the seed-000
// table):
//
//	go test -run='^$' -bench=Payloads -count=5 ./bench/ > new.txt
//
// Stream inputs, RPC frames of one slot: attestation frames and a whole all-subnets
// trace, with raw SSZ payloads (payload mode ssz: every implementation compresses the
// same frames) and with ssz_snappy payloads (as on the network today):
//
//	go test -run='^$' -bench=Frames -count=5 ./bench/
//
// Names carry key=value parts (payload=, impl=, op=) so that benchstat can put
// implementations side by side: benchstat -col /impl new.txt. A stream codec's op=encode and
// op=decode run on a Writer and Reader kept across ops, reset for each (as a node keeps a
// stream's codecs); op=encode-fresh and op=decode-fresh open new ones per op.

var (
	payloadsOnce sync.Once
	payloads     []Payload
	payloadsErr  error
	framesOnce   sync.Once
	frames       []Payload
	framesErr    error
)

func benchPayloads(b *testing.B) []Payload {
	payloadsOnce.Do(func() { payloads, payloadsErr = Payloads(1, 8) })
	if payloadsErr != nil {
		b.Fatal(payloadsErr)
	}
	return payloads
}

func benchFrames(b *testing.B) []Payload {
	framesOnce.Do(func() {
		for _, in := range []struct {
			name, only string
			ssz        bool
		}{
			{"attestation-frames", "attestation", true},
			{"all-subnets-trace", "", true},
			{"attestation-frames-ssz_snappy", "attestation", false},
			{"all-subnets-trace-ssz_snappy", "", false},
		} {
			p, err := Trace(1, 1, in.only, in.ssz)
			if err != nil {
				framesErr = err
				return
			}
			p.Name = in.name
			frames = append(frames, p)
		}
	})
	if framesErr != nil {
		b.Fatal(framesErr)
	}
	return frames
}

func runImpl(b *testing.B, im Impl, p Payload) {
	enc := im.Encode(p.Msgs)
	enc.framed = p.Framed
	c := im.new()
	if err := c.decode(enc, func(i int, m []byte) {
		if !bytes.Equal(m, p.Msgs[i]) {
			b.Fatalf("%s: message %d decodes to different bytes", im.Name, i)
		}
	}); err != nil {
		b.Fatal(err)
	}
	ratio := float64(enc.WireBytes()) / float64(p.Raw)
	ops := func(c coder, suffix string) {
		b.Run("op=encode"+suffix, func(b *testing.B) {
			b.SetBytes(int64(p.Raw))
			defer reportCPU(b)()
			for b.Loop() {
				c.encode(p.Msgs, nil)
			}
			b.ReportMetric(ratio, "ratio")
		})
		b.Run("op=decode"+suffix, func(b *testing.B) {
			b.SetBytes(int64(p.Raw))
			defer reportCPU(b)()
			for b.Loop() {
				if err := c.decode(enc, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(ratio, "ratio")
		})
	}
	// op=encode, op=decode: a stream codec's Writer and Reader are kept across ops, each op a
	// new stream direction on their state, as a node keeps a stream's codecs (specCoder).
	ops(c, "")
	// op=encode-fresh, op=decode-fresh: a new Writer and Reader per op, their setup (state
	// allocated and first touched) in every op, as on a stream opened for one payload.
	if _, ok := c.(*specCoder); ok {
		ops(&specCoder{spec: c.(*specCoder).spec, fresh: true}, "-fresh")
	}
}

// reportCPU locks the benchmark to its thread and returns a func that reports the thread's
// CPU per op (cpu-ns/op): on a shared machine, what one op costs a core, which the wall
// clock's sec/op is not when other processes take the cores.
//
//	benchstat -col /impl -filter '.unit:cpu-ns/op' new.txt
func reportCPU(b *testing.B) func() {
	runtime.LockOSThread()
	cpu0, ok := ThreadCPU()
	return func() {
		cpu1, _ := ThreadCPU()
		runtime.UnlockOSThread()
		if ok && b.N > 0 {
			b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}

func BenchmarkPayloads(b *testing.B) {
	for _, p := range benchPayloads(b) {
		for _, im := range Impls() {
			b.Run("payload="+p.Name+"/impl="+im.Name, func(b *testing.B) { runImpl(b, im, p) })
		}
	}
}

// frameImpls are the implementations the snappy-stream speed goal compares. golang-snappy
// decodes each unit from a slice (bare Decode); golang-snappy-framed reads the frames of a
// plain stream as a node does and Snappy-decodes their messages' data (FramedSnappy), the
// read path around the codec that the snappy-stream rows pay too.
var frameImpls = []string{"golang-snappy", "golang-snappy-framed", "snappy-stream-w0", "snappy-stream", "snappy-stream-better", "zstd", "zstd-c"}

// framedFits reports whether golang-snappy-framed runs on p: frames of raw SSZ payloads.
func framedFits(im Impl, p Payload) bool {
	return im.Name != "golang-snappy-framed" || (p.Framed && !strings.HasSuffix(p.Name, "-ssz_snappy"))
}

func BenchmarkFrames(b *testing.B) {
	for _, p := range benchFrames(b) {
		for _, im := range append(Impls(), FramedSnappy()) {
			if !slices.Contains(frameImpls, im.Name) || !framedFits(im, p) {
				continue
			}
			b.Run("input="+p.Name+"/impl="+im.Name, func(b *testing.B) { runImpl(b, im, p) })
		}
	}
}

// BenchmarkFramesWindows times snappy-stream `fast` at the 4 KiB and 1 MiB windows beside
// golang/snappy (bare and framed) on the same frames (the default window is in BenchmarkFrames):
//
//	go test -run='^$' -bench='FramesWindows/input=(attestation-frames|all-subnets-trace)$' -count=5 ./bench/
func BenchmarkFramesWindows(b *testing.B) {
	impls := []Impl{}
	for _, im := range Impls() {
		if im.Name == "golang-snappy" {
			impls = append(impls, im)
		}
	}
	impls = append(impls, FramedSnappy())
	for _, s := range []string{"snappy-stream:4KiB", "snappy-stream:1MiB"} {
		spec, err := codec.Parse(s)
		if err != nil {
			b.Fatal(err)
		}
		impls = append(impls, SpecImpl(strings.ReplaceAll(s, ":", "-"), spec))
	}
	for _, p := range benchFrames(b) {
		for _, im := range impls {
			if framedFits(im, p) {
				b.Run("input="+p.Name+"/impl="+im.Name, func(b *testing.B) { runImpl(b, im, p) })
			}
		}
	}
}

// BenchmarkGossipStreams times golang/snappy and snappy-stream fast at 64 KiB and 1 MiB on
// the control-heavy gossip streams (NewGossipStream, seed 1), whose ratio metric is each
// codec's bytes over the frames':
//
//	go test -run='^$' -bench=GossipStreams -count=5 ./bench/
func BenchmarkGossipStreams(b *testing.B) {
	impls := []Impl{}
	for _, im := range Impls() {
		if im.Name == "golang-snappy" || im.Name == "snappy-stream" {
			impls = append(impls, im)
		}
	}
	spec, err := codec.Parse("snappy-stream:1MiB")
	if err != nil {
		b.Fatal(err)
	}
	impls = append(impls, SpecImpl("snappy-stream-1MiB", spec))
	for _, s := range gossipStreams(b) {
		p := Payload{Name: s.Name, Msgs: s.Frames, Framed: true}
		for _, f := range s.Frames {
			p.Raw += len(f)
		}
		for _, im := range impls {
			b.Run("input="+p.Name+"/impl="+im.Name, func(b *testing.B) { runImpl(b, im, p) })
		}
	}
}
