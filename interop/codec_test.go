package interop

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"slices"
	"testing"

	"github.com/streamsim/streamsim/internal/longtest"
	"github.com/streamsim/streamsim/sim/node"

	"github.com/golang/snappy"

	"github.com/streamsim/streamsim/bench"
	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/codec/snappystream"
)

// startCodec starts the JS codec process for one test.
func startCodec(t testing.TB) *Codec {
	t.Helper()
	requireNode(t)
	ctx, cancel := context.WithCancel(context.Background())
	c, err := StartCodec(ctx, "")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
		cancel()
	})
	return c
}

// traceFrames returns the RPC frames of one slot of the seeded workload an all-subnets node
// receives (payload mode ssz_snappy, or ssz), the first limit of them when limit > 0.
func traceFrames(t testing.TB, seed int64, ssz bool, limit int) [][]byte {
	t.Helper()
	p, err := bench.Trace(seed, 1, "", ssz)
	if err != nil {
		t.Fatal(err)
	}
	if limit > 0 && limit < len(p.Msgs) {
		return p.Msgs[:limit]
	}
	return p.Msgs
}

func goEncode(windowBytes int, frames [][]byte) [][]byte {
	enc := snappystream.NewEncoder(windowBytes, snappystream.Fast)
	out := make([][]byte, len(frames))
	for i, f := range frames {
		out[i] = enc.Encode(nil, f)
	}
	return out
}

// goDecodeStream is the Go Reader's verdict on a stream: what it returned before the
// first error, and the error.
func goDecodeStream(windowBytes, maxBlockBytes int, stream []byte) ([]byte, error) {
	r := snappystream.NewReader(bytes.NewReader(stream), windowBytes, maxBlockBytes)
	return io.ReadAll(r)
}

// goDecodeBlocks is the Go Decoder's verdict on blocks given one by one.
func goDecodeBlocks(windowBytes, maxBlockBytes int, blocks [][]byte) ([][]byte, error) {
	d := snappystream.NewDecoder(windowBytes, maxBlockBytes)
	var out [][]byte
	for _, b := range blocks {
		f, err := d.Decode(nil, b)
		if err != nil {
			return out, err
		}
		out = append(out, f)
	}
	return out, nil
}

func sum(frames [][]byte) (n int) {
	for _, f := range frames {
		n += len(f)
	}
	return n
}

// The JS parser of codec specs gives the windows and protocol IDs the Go nodes use, so a JS
// peer and a Go node configured with the same spec string meet on the same protocol.
func TestJSSpecs(t *testing.T) {
	c := startCodec(t)
	for _, s := range []string{"snappy-stream", "snappy-stream:64KiB", "snappy-stream:64KiB:fast", "snappy-stream:0",
		"snappy-stream:4KiB", "snappy-stream:4096", "snappy-stream:65537", "snappy-stream:1MiB", "snappy-stream:16MiB"} {
		want, err := codec.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.ParseSpec(s)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		if got.Spec != want.String() || got.WindowBytes != want.WindowBytes || got.Protocol != string(node.ProtocolFor(want)) {
			t.Errorf("%s: JS %+v; Go %s, window %d, protocol %s", s, got, want, want.WindowBytes, node.ProtocolFor(want))
		}
	}
	for _, s := range []string{"plain", "zstd", "snappy-stream:17MiB", "snappy-stream:4KB", "snappy-stream:64KiB:better",
		"snappy-stream:64KiB:fast:x", "snappy-stream:-1"} {
		if got, err := c.ParseSpec(s); err == nil {
			t.Errorf("%s: JS accepted it as %+v", s, got)
		}
	}
}

// Go encoder → JS decoder and JS encoder → Go decoder on a slot of the workload's frames, in
// both payload modes and over the windows the spec strings allow: every frame comes back
// byte for byte, through the block API and through the stream decoders fed whole or in
// small chunks.
func TestCrossDecodeWorkload(t *testing.T) {
	longtest.Skip(t, "Go and JS codecs across a workload slot")
	c := startCodec(t)
	for _, ssz := range []bool{false, true} {
		for _, spec := range []string{"snappy-stream", "snappy-stream:0", "snappy-stream:4KiB", "snappy-stream:1MiB"} {
			limit := 4000 // the default spec gets the whole slot; the others its start
			if spec == "snappy-stream" {
				limit = 0
			}
			frames := traceFrames(t, 1, ssz, limit)
			mode := map[bool]string{false: "ssz_snappy", true: "ssz"}[ssz]
			t.Run(mode+"/"+spec, func(t *testing.T) {
				s, err := codec.Parse(spec)
				if err != nil {
					t.Fatal(err)
				}
				w := s.WindowBytes
				want := bytes.Join(frames, nil)

				goBlocks := goEncode(w, frames)
				goStream := bytes.Join(goBlocks, nil)
				for _, chunk := range []int{0, 1500} {
					got, err := c.DecodeStream(w, 0, goStream, chunk)
					if err != nil {
						t.Fatal(err)
					}
					if got.Err != "" || got.Blocks != len(frames) || !bytes.Equal(got.Output, want) {
						t.Fatalf("Go → JS stream (chunks of %d): %d blocks, %d bytes, error %q; want %d blocks, %d bytes",
							chunk, got.Blocks, len(got.Output), got.Err, len(frames), len(want))
					}
				}
				got, err := c.DecodeBlocks(w, 0, goBlocks)
				if err != nil {
					t.Fatal(err)
				}
				if got.Err != "" || !slices.EqualFunc(got.Frames, frames, bytes.Equal) {
					t.Fatalf("Go → JS blocks: %d of %d frames equal, error %q", countEqual(got.Frames, frames), len(frames), got.Err)
				}

				jsBlocks, err := c.Encode(w, frames)
				if err != nil {
					t.Fatal(err)
				}
				dec, err := goDecodeBlocks(w, 0, jsBlocks)
				if err != nil || !slices.EqualFunc(dec, frames, bytes.Equal) {
					t.Fatalf("JS → Go blocks: %d of %d frames equal, error %v", countEqual(dec, frames), len(frames), err)
				}
				jsStream := bytes.Join(jsBlocks, nil)
				out, err := goDecodeStream(w, 0, jsStream)
				if err != nil || !bytes.Equal(out, want) {
					t.Fatalf("JS → Go stream: %d of %d bytes, error %v", len(out), len(want), err)
				}
				back, err := c.DecodeStream(w, 0, jsStream, 0)
				if err != nil {
					t.Fatal(err)
				}
				if back.Err != "" || !bytes.Equal(back.Output, want) {
					t.Fatalf("JS → JS: %d of %d bytes, error %q", len(back.Output), len(want), back.Err)
				}
				if w == 0 {
					// Without history every JS block is a plain Snappy block.
					for i, b := range jsBlocks {
						if f, err := snappy.Decode(nil, b); err != nil || !bytes.Equal(f, frames[i]) {
							t.Fatalf("JS block %d is not the Snappy block of its frame: %v", i, err)
						}
					}
				}
				t.Logf("%d frames, %d B: Go %d B (%.4f), JS %d B (%.4f); JS/Go %.4f", len(frames), len(want),
					len(goStream), float64(len(goStream))/float64(len(want)), len(jsStream),
					float64(len(jsStream))/float64(len(want)), float64(len(jsStream))/float64(len(goStream)))
			})
		}
	}
}

func countEqual(a, b [][]byte) (n int) {
	for i := range min(len(a), len(b)) {
		if bytes.Equal(a[i], b[i]) {
			n++
		}
	}
	return n
}

// Block builders for hand-made conformance cases.

func block(n int, elems ...[]byte) []byte {
	return append(binary.AppendUvarint(nil, uint64(n)), bytes.Join(elems, nil)...)
}

// lit is a literal element in its shortest form.
func lit(b []byte) []byte {
	n := len(b) - 1
	switch {
	case n < 60:
		return append([]byte{byte(n) << 2}, b...)
	case n < 1<<8:
		return litForm(b, 1)
	case n < 1<<16:
		return litForm(b, 2)
	case n < 1<<24:
		return litForm(b, 3)
	}
	return litForm(b, 4)
}

// litForm is a literal whose length - 1 is in lenBytes bytes after the tag (1..4: tags 60..63),
// also where a shorter form would do.
func litForm(b []byte, lenBytes int) []byte {
	n := uint32(len(b) - 1)
	out := []byte{byte(59+lenBytes) << 2}
	for i := range lenBytes {
		out = append(out, byte(n>>(8*i)))
	}
	return append(out, b...)
}

func copy1(offset, length int) []byte {
	return []byte{byte(offset>>8)<<5 | byte(length-4)<<2 | 1, byte(offset)}
}

func copy2(offset, length int) []byte {
	return []byte{byte(length-1)<<2 | 2, byte(offset), byte(offset >> 8)}
}

func copy4(offset uint32, length int) []byte {
	return binary.LittleEndian.AppendUint32([]byte{byte(length-1)<<2 | 3}, offset)
}

func seeded(seed int64, n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

// conformanceCase is a sequence of blocks on one stream direction and the Go decoder's
// verdict on it, given block by block: the JS decoder must agree, as it must with the Go
// Reader on the blocks concatenated into a stream.
type conformanceCase struct {
	name        string
	windowBytes int
	maxBlock    int // 0: the default bound
	blocks      [][]byte
	want        string // CodeBlockTooLarge, CodeCorrupt, CodeTruncated, or "" for accepted
}

func conformanceCases() []conformanceCase {
	const w = 4096
	r100, r2000, r300k := seeded(1, 100), seeded(2, 2000), seeded(3, 300_000)
	full := [][]byte{block(2000, lit(r2000)), block(2000, lit(seeded(4, 2000))), block(2000, lit(seeded(5, 2000)))} // 6000 B > w
	with := func(base [][]byte, more ...[]byte) [][]byte { return append(slices.Clone(base), more...) }
	hdr := func(n uint64) []byte { return binary.AppendUvarint(nil, n) }
	return []conformanceCase{
		{"empty blocks between and after others", w, 0, [][]byte{block(0), block(5, lit([]byte("hello"))), block(0), block(5, copy2(5, 5)), block(0)}, ""},
		{"only empty blocks", w, 0, [][]byte{block(0), block(0)}, ""},
		{"offset = history of a short stream", w, 0, [][]byte{block(100, lit(r100)), block(4, copy2(100, 4))}, ""},
		{"offset one beyond history of a short stream", w, 0, [][]byte{block(100, lit(r100)), block(4, copy2(101, 4))}, CodeCorrupt},
		{"offset = full window", w, 0, with(full, block(10, copy2(w, 10))), ""},
		{"offset one beyond the full window", w, 0, with(full, block(10, copy2(w+1, 10))), CodeCorrupt},
		{"offset = window + bytes of this block", w, 0, with(full, block(14, lit([]byte("0123456789")), copy2(w+10, 4))), ""},
		{"offset one beyond window + bytes of this block", w, 0, with(full, block(14, lit([]byte("0123456789")), copy2(w+11, 4))), CodeCorrupt},
		{"no history with window 0", 0, 0, [][]byte{block(100, lit(r100)), block(4, copy2(1, 4))}, CodeCorrupt},
		{"window 0, copies within the block", 0, 0, [][]byte{block(100, lit(r100)), block(14, lit([]byte("abcdefghij")), copy1(10, 4))}, ""},
		{"4-byte offsets deep in a 1 MiB window", 1 << 20, 0, [][]byte{block(len(r300k), lit(r300k)), block(84, copy4(300_000, 64), copy4(70_000, 20))}, ""},
		{"overlapping copies in a block", w, 0, [][]byte{block(2+11+11+64+64+64+64+64, lit([]byte("ab")), copy1(1, 11), copy1(2, 11),
			copy2(3, 64), copy2(7, 64), copy2(8, 64), copy2(9, 64), copy4(1, 64))}, ""},
		{"overlapping copy from history into the block", w, 0, [][]byte{block(3, lit([]byte("xyz"))), block(64, copy2(3, 64)), block(60, copy1(1, 4), copy2(64, 56))}, ""},
		{"literal length forms, shortest and not", w, 0, [][]byte{block(61+300+70_000, litForm(r2000[:61], 1), litForm(r2000[:300], 2), lit(seeded(6, 70_000))),
			block(4*5, litForm(r100[:5], 1), litForm(r100[:5], 2), litForm(r100[:5], 3), litForm(r100[:5], 4))}, ""},
		{"declared length at the bound", w, 1000, [][]byte{block(1000, lit(seeded(7, 1000)))}, ""},
		{"declared length above the bound", w, 1000, [][]byte{block(1001, lit(seeded(7, 1001)))}, CodeBlockTooLarge},
		{"declared length above the default bound, nothing after it", w, 0, [][]byte{hdr(snappystream.DefaultMaxBlockBytes + 1)}, CodeBlockTooLarge},
		{"declared 2^32-1", w, 0, [][]byte{hdr(1<<32 - 1)}, CodeBlockTooLarge},
		{"length header longer than 5 bytes", w, 0, [][]byte{{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}}, CodeCorrupt},
		{"truncated length header", w, 0, [][]byte{{0x80}}, CodeTruncated},
		{"offset 0", w, 0, [][]byte{block(8, lit([]byte("abcd")), copy1(0, 4))}, CodeCorrupt},
		{"copy past the declared length", w, 0, [][]byte{block(5, lit([]byte("ab")), copy1(2, 4))}, CodeCorrupt},
		{"literal past the declared length", w, 0, [][]byte{block(3, lit([]byte("abcd")))}, CodeCorrupt},
		{"4-byte literal length of 2^32", w, 0, [][]byte{block(10, []byte{63 << 2, 0xff, 0xff, 0xff, 0xff}, r100[:10])}, CodeCorrupt},
		{"4-byte offset of 2^32-1", w, 0, [][]byte{block(8, lit([]byte("abcd")), copy4(1<<32-1, 4))}, CodeCorrupt},
		{"truncated literal", w, 0, [][]byte{block(10, lit(r100[:10]))[:8]}, CodeTruncated},
		{"truncated literal length", w, 0, [][]byte{block(300, []byte{61 << 2, 0x2b})}, CodeTruncated},
		{"truncated copy element", w, 0, [][]byte{block(8, lit([]byte("abcd")), copy2(4, 4))[:7]}, CodeTruncated},
		{"truncated after a valid block", w, 0, [][]byte{block(4, lit([]byte("abcd"))), block(8, lit([]byte("abcd")))}, CodeTruncated},
		{"declares more than its elements can produce", w, 0, [][]byte{block(10_000, lit([]byte("a")))}, CodeTruncated},
		// As blocks, the trailing byte is an error; in a stream it is the next block, empty.
		{"a byte after the end of the block", w, 0, [][]byte{append(block(4, lit([]byte("abcd"))), 0)}, CodeCorrupt},
	}
}

// The codec's conformance cases: offsets at the edge of history, overlapping copies, empty
// blocks, and hostile blocks. The Go decoder's verdict is the expected one and the JS
// decoder's equals it (same blocks decoded to the same bytes, same error kind), block by block
// and as a stream fed at once or byte by byte.
func TestConformanceCases(t *testing.T) {
	c := startCodec(t)
	for _, tc := range conformanceCases() {
		t.Run(tc.name, func(t *testing.T) {
			goFrames, goErr := goDecodeBlocks(tc.windowBytes, tc.maxBlock, tc.blocks)
			if got := ErrorKind(goErr); got != tc.want {
				t.Fatalf("Go decoder: %q (%v), the case expects %q", got, goErr, tc.want)
			}
			js, err := c.DecodeBlocks(tc.windowBytes, tc.maxBlock, tc.blocks)
			if err != nil {
				t.Fatal(err)
			}
			if js.Code != tc.want || !slices.EqualFunc(js.Frames, goFrames, bytes.Equal) {
				t.Errorf("blocks: JS %d blocks, %s %q; Go %d blocks, %v", len(js.Frames), js.Code, js.Err, len(goFrames), goErr)
			}
			stream := bytes.Join(tc.blocks, nil)
			goOut, goErr := goDecodeStream(tc.windowBytes, tc.maxBlock, stream)
			for _, chunk := range []int{0, 1} {
				js, err := c.DecodeStream(tc.windowBytes, tc.maxBlock, stream, chunk)
				if err != nil {
					t.Fatal(err)
				}
				if js.Code != ErrorKind(goErr) || !bytes.Equal(js.Output, goOut) {
					t.Errorf("stream in chunks of %d: JS %d bytes, %s %q; Go %d bytes, %v", chunk, len(js.Output), js.Code, js.Err, len(goOut), goErr)
				}
			}
			t.Logf("Go: %v; JS: %s", goErr, js.Err)
		})
	}
}

// mutate returns a copy of stream with one seeded mutation; blockStarts are the offsets of its
// blocks (for mutations aimed at length headers).
func mutate(rng *rand.Rand, stream []byte, blockStarts []int) ([]byte, string) {
	s := slices.Clone(stream)
	i := rng.Intn(len(s))
	switch k := rng.Intn(8); k {
	case 0:
		bit := rng.Intn(8)
		s[i] ^= 1 << bit
		return s, fmt.Sprintf("flip bit %d of byte %d", bit, i)
	case 1:
		v := byte(rng.Intn(256))
		s[i] = v
		return s, fmt.Sprintf("byte %d := %#x", i, v)
	case 2:
		v := byte(rng.Intn(256))
		return slices.Insert(s, i, v), fmt.Sprintf("insert %#x at %d", v, i)
	case 3:
		return slices.Delete(s, i, i+1), fmt.Sprintf("delete byte %d", i)
	case 4:
		return s[:i], fmt.Sprintf("truncate to %d bytes", i)
	case 5:
		b := blockStarts[rng.Intn(len(blockStarts))]
		v := byte(rng.Intn(256))
		s[b] = v
		return s, fmt.Sprintf("length header byte at %d := %#x", b, v)
	case 6:
		// An element tag: copies change kind, length or offset, literals their length.
		b := blockStarts[rng.Intn(len(blockStarts))]
		j := min(b+1+rng.Intn(4), len(s)-1)
		v := byte(rng.Intn(256))
		s[j] = v
		return s, fmt.Sprintf("byte %d after a block start := %#x", j, v)
	default:
		n := 1 + rng.Intn(16)
		j := rng.Intn(len(s))
		return slices.Insert(s, i, s[j:min(j+n, len(s))]...), fmt.Sprintf("copy %d bytes from %d to %d", n, j, i)
	}
}

// The JS decoder's verdict equals the Go decoder's on a seeded set of mutations of Go-encoded
// streams of workload frames: both accept (with the same output) or both reject (with the
// same error kind, after the same output).
func TestMutatedStreams(t *testing.T) {
	longtest.Skip(t, "450 mutated streams through both decoders")
	c := startCodec(t)
	rng := rand.New(rand.NewSource(20))
	const perStream = 150
	for _, tc := range []struct {
		ssz         bool
		windowBytes int
	}{{true, 64 << 10}, {false, 64 << 10}, {true, 4 << 10}} {
		frames := traceFrames(t, 2, tc.ssz, 40)
		blocks := goEncode(tc.windowBytes, frames)
		var starts []int
		off := 0
		for _, b := range blocks {
			starts = append(starts, off)
			off += len(b)
		}
		stream := bytes.Join(blocks, nil)
		verdicts := map[string]int{}
		for range perStream {
			m, what := mutate(rng, stream, starts)
			goOut, goErr := goDecodeStream(tc.windowBytes, 0, m)
			js, err := c.DecodeStream(tc.windowBytes, 0, m, 0)
			if err != nil {
				t.Fatal(err)
			}
			if js.Code != ErrorKind(goErr) || !bytes.Equal(js.Output, goOut) {
				t.Errorf("ssz %v, window %d, %s: JS %d bytes, %s %q; Go %d bytes, %v",
					tc.ssz, tc.windowBytes, what, len(js.Output), js.Code, js.Err, len(goOut), goErr)
			}
			kind := ErrorKind(goErr)
			if kind == "" {
				kind = "accepted"
				if !bytes.Equal(goOut, bytes.Join(frames, nil)) {
					kind = "accepted, altered"
				}
			}
			verdicts[kind]++
		}
		// The set must exercise both verdicts and every rejection kind the format has, or the
		// agreement says little.
		for _, k := range []string{"accepted, altered", CodeCorrupt, CodeTruncated} {
			if verdicts[k] == 0 {
				t.Errorf("ssz %v, window %d: no mutation gave %q (%v)", tc.ssz, tc.windowBytes, k, verdicts)
			}
		}
		t.Logf("ssz %v, window %d, %d B stream: %v", tc.ssz, tc.windowBytes, len(stream), verdicts)
	}
}

// Go encoder (both levels) → JS decoder on a stream whose repeats lie far back: IHAVE-like
// frames (20-byte ids, shuffled, each id sent again ~200 KiB and ~1.5 MiB later) over 1 MiB
// and 4 MiB windows, 4 MiB of stream, so that 4-byte-offset copies deep in the window and
// the encoder's window-sized tables are exercised. Every frame must come back byte for byte.
func TestCrossDecodeFarRepeats(t *testing.T) {
	if testing.Short() {
		t.Skip("4 MiB streams")
	}
	c := startCodec(t)
	rng := rand.New(rand.NewSource(25))
	const frameCount, ids, lag1, lag2 = 3000, 15, 150, 1100
	batches := make([][]byte, frameCount)
	frames := make([][]byte, frameCount)
	for k := range frames {
		batches[k] = make([]byte, 20*ids)
		rng.Read(batches[k])
		var list [][]byte
		for _, b := range []int{k, k - lag1, k - lag2} {
			for i := 0; b >= 0 && i < ids; i++ {
				list = append(list, batches[b][20*i:20*i+20])
			}
		}
		rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
		f := []byte{0x12, 0}
		for _, id := range list {
			f = append(append(f, 0x12, 20), id...)
		}
		frames[k] = f
	}
	for _, w := range []int{1 << 20, 4 << 20} {
		for _, l := range []snappystream.Level{snappystream.Fast, snappystream.Better} {
			enc := snappystream.NewEncoder(w, l)
			var blocks [][]byte
			wire, raw := 0, 0
			for _, f := range frames {
				b := enc.Encode(nil, f)
				blocks = append(blocks, b)
				wire, raw = wire+len(b), raw+len(f)
			}
			got, err := c.DecodeBlocks(w, 0, blocks)
			if err != nil {
				t.Fatal(err)
			}
			if got.Err != "" || !slices.EqualFunc(got.Frames, frames, bytes.Equal) {
				t.Fatalf("window %d %s: Go → JS blocks: %d of %d frames equal, error %q", w, l, countEqual(got.Frames, frames), len(frames), got.Err)
			}
			t.Logf("window %d %s: %.1f %% of raw, decoded by JS byte for byte", w, l, 100*float64(wire)/float64(raw))
		}
	}
}
