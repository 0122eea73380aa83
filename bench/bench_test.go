package bench

import (
	"bytes"
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
// implementations side by side: benchstat -col /impl new.txt.

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
	c := im.new()
	if err := c.decode(enc, func(i int, m []byte) {
		if !bytes.Equal(m, p.Msgs[i]) {
			b.Fatalf("%s: message %d decodes to different bytes", im.Name, i)
		}
	}); err != nil {
		b.Fatal(err)
	}
	ratio := float64(enc.WireBytes()) / float64(p.Raw)
	b.Run("op=encode", func(b *testing.B) {
		b.SetBytes(int64(p.Raw))
		for b.Loop() {
			c.encode(p.Msgs, nil)
		}
		b.ReportMetric(ratio, "ratio")
	})
	b.Run("op=decode", func(b *testing.B) {
		b.SetBytes(int64(p.Raw))
		for b.Loop() {
			if err := c.decode(enc, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(ratio, "ratio")
	})
}

func BenchmarkPayloads(b *testing.B) {
	for _, p := range benchPayloads(b) {
		for _, im := range Impls() {
			b.Run("payload="+p.Name+"/impl="+im.Name, func(b *testing.B) { runImpl(b, im, p) })
		}
	}
}

// frameImpls are the implementations the snappy-stream speed goal compares.
var frameImpls = []string{"golang-snappy", "snappy-stream-w0", "snappy-stream", "snappy-stream-better", "zstd", "zstd-c"}

func BenchmarkFrames(b *testing.B) {
	for _, p := range benchFrames(b) {
		for _, im := range Impls() {
			if !slices.Contains(frameImpls, im.Name) {
				continue
			}
			b.Run("input="+p.Name+"/impl="+im.Name, func(b *testing.B) { runImpl(b, im, p) })
		}
	}
}

// BenchmarkFramesWindows times snappy-stream `fast` at the 4 KiB and 1 MiB windows beside
// golang/snappy on the same frames (the default window is in BenchmarkFrames):
//
//	go test -run='^$' -bench='FramesWindows/input=(attestation-frames|all-subnets-trace)$' -count=5 ./bench/
func BenchmarkFramesWindows(b *testing.B) {
	impls := []Impl{}
	for _, im := range Impls() {
		if im.Name == "golang-snappy" {
			impls = append(impls, im)
		}
	}
	for _, s := range []string{"snappy-stream:4KiB", "snappy-stream:1MiB"} {
		spec, err := codec.Parse(s)
		if err != nil {
			b.Fatal(err)
		}
		impls = append(impls, specImpl(strings.ReplaceAll(s, ":", "-"), spec))
	}
	for _, p := range benchFrames(b) {
		for _, im := range impls {
			b.Run("input="+p.Name+"/impl="+im.Name, func(b *testing.B) { runImpl(b, im, p) })
		}
	}
}
