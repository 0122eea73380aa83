package codec

import (
	"bytes"
	"io"
	"testing"

	gsnappy "github.com/golang/snappy"
	ksnappy "github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"

	"github.com/streamsim/streamsim/codec/snappystream"
)

// The benchmarks run every codec over the same three inputs in one run:
//
//	go test -run='^$' -bench=. -count=5 ./codec/
//
// Each op encodes (or decodes) a whole input as one fresh stream direction, one unit
// per message; MB/s are of uncompressed bytes and "ratio" is compressed/uncompressed.
// Per-message codecs (today's baseline) compress each message on its own.

type benchInput struct {
	name string
	msgs [][]byte
	raw  int
}

func benchInputs() []benchInput {
	ins := []benchInput{
		{name: "attestations", msgs: attestationFrames(1, 3000, 1000)},
		{name: "blocks", msgs: blockPayloads(2, 8)},
		{name: "cells", msgs: cells(3, 256)},
	}
	for i := range ins {
		for _, m := range ins[i].msgs {
			ins[i].raw += len(m)
		}
	}
	return ins
}

// benchCodec encodes and decodes a whole input. encode passes each unit to keep if
// keep is not nil (the unit is only valid during the call); decode returns the decoded
// byte count.
type benchCodec struct {
	name   string
	encode func(msgs [][]byte, keep func([]byte))
	decode func(units [][]byte, out []byte) int
}

func perMessage(name string, enc func(dst, src []byte) []byte, dec func(dst, src []byte) ([]byte, error)) benchCodec {
	var scratch []byte
	return benchCodec{
		name: name,
		encode: func(msgs [][]byte, keep func([]byte)) {
			for _, m := range msgs {
				scratch = enc(scratch[:cap(scratch)], m)
				if keep != nil {
					keep(scratch)
				}
			}
		},
		decode: func(units [][]byte, out []byte) int {
			n := 0
			for _, u := range units {
				d, err := dec(out[:cap(out)], u)
				if err != nil {
					panic(err)
				}
				n += len(d)
			}
			return n
		},
	}
}

func snappyStreamCodec(window int, level snappystream.Level) benchCodec {
	enc := snappystream.NewEncoder(window, level)
	dec := snappystream.NewDecoder(window, 0)
	var buf []byte
	return benchCodec{
		name: Spec{Kind: SnappyStream, WindowBytes: window, SnappyLevel: level}.String(),
		encode: func(msgs [][]byte, keep func([]byte)) {
			enc.Reset()
			for _, m := range msgs {
				buf = enc.Encode(buf[:0], m)
				if keep != nil {
					keep(buf)
				}
			}
		},
		decode: func(units [][]byte, out []byte) int {
			dec.Reset()
			n := 0
			for _, u := range units {
				d, err := dec.Decode(out[:0], u)
				if err != nil {
					panic(err)
				}
				n += len(d)
			}
			return n
		},
	}
}

func zstdCodec(level, window int) benchCodec {
	var buf bytes.Buffer
	spec := Spec{Kind: Zstd, ZstdLevel: level, WindowBytes: window}
	enc, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
		zstd.WithWindowSize(window), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
	if err != nil {
		panic(err)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(uint64(window)), zstd.WithDecoderMaxMemory(uint64(window)))
	if err != nil {
		panic(err)
	}
	var stream []byte
	var sizes []int // decoded size of each unit
	return benchCodec{
		name: spec.String(),
		encode: func(msgs [][]byte, keep func([]byte)) {
			buf.Reset()
			enc.Reset(&buf)
			for _, m := range msgs {
				start := buf.Len()
				enc.Write(m)
				enc.Flush()
				if keep != nil {
					keep(buf.Bytes()[start:])
				}
			}
			if keep != nil {
				stream = append(stream[:0], buf.Bytes()...)
				sizes = sizes[:0]
				for _, m := range msgs {
					sizes = append(sizes, len(m))
				}
			}
		},
		decode: func(units [][]byte, out []byte) int {
			// The units are consecutive in stream; the decoder reads them as a stream.
			if err := dec.Reset(bytes.NewReader(stream)); err != nil {
				panic(err)
			}
			n := 0
			for _, s := range sizes {
				k, err := io.ReadFull(dec, out[:s])
				if err != nil {
					panic(err)
				}
				n += k
			}
			return n
		},
	}
}

func benchCodecs() []benchCodec {
	cs := []benchCodec{
		perMessage("snappy-msg-golang", gsnappy.Encode, gsnappy.Decode),
		perMessage("snappy-msg-klauspost", ksnappy.Encode, ksnappy.Decode),
	}
	for _, w := range []int{4 << 10, 64 << 10, 1 << 20} {
		for _, l := range []snappystream.Level{snappystream.Fast, snappystream.Better} {
			cs = append(cs, snappyStreamCodec(w, l))
		}
	}
	for _, l := range []int{1, 3} {
		for _, w := range []int{64 << 10, 2 << 20} {
			cs = append(cs, zstdCodec(l, w))
		}
	}
	return cs
}

func BenchmarkCodecs(b *testing.B) {
	for _, in := range benchInputs() {
		maxMsg := 0
		for _, m := range in.msgs {
			maxMsg = max(maxMsg, len(m))
		}
		out := make([]byte, 0, maxMsg)
		for _, c := range benchCodecs() {
			wire := 0
			var stored [][]byte
			c.encode(in.msgs, func(u []byte) {
				wire += len(u)
				stored = append(stored, append([]byte(nil), u...))
			})
			ratio := float64(wire) / float64(in.raw)
			b.Run(in.name+"/"+c.name+"/encode", func(b *testing.B) {
				b.SetBytes(int64(in.raw))
				b.ReportAllocs()
				for b.Loop() {
					c.encode(in.msgs, nil)
				}
				b.ReportMetric(ratio, "ratio")
			})
			b.Run(in.name+"/"+c.name+"/decode", func(b *testing.B) {
				b.SetBytes(int64(in.raw))
				b.ReportAllocs()
				for b.Loop() {
					if n := c.decode(stored, out); n != in.raw {
						b.Fatalf("decoded %d bytes, want %d", n, in.raw)
					}
				}
				b.ReportMetric(ratio, "ratio")
			})
		}
		// klauspost's decoder on golang/snappy's per-message blocks: the decode baseline
		// (klauspost's own output for small messages is mostly stored literals).
		var gblocks [][]byte
		for _, m := range in.msgs {
			gblocks = append(gblocks, gsnappy.Encode(nil, m))
		}
		b.Run(in.name+"/snappy-msg-klauspost-on-golang-blocks/decode", func(b *testing.B) {
			b.SetBytes(int64(in.raw))
			for b.Loop() {
				n := 0
				for _, u := range gblocks {
					d, err := ksnappy.Decode(out[:cap(out)], u)
					if err != nil {
						b.Fatal(err)
					}
					n += len(d)
				}
				if n != in.raw {
					b.Fatalf("decoded %d bytes, want %d", n, in.raw)
				}
			}
		})
	}
}
