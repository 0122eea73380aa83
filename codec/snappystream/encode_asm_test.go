package snappystream

import (
	"bytes"
	"math/rand"
	"slices"
	"strconv"
	"testing"
	"unsafe"
)

// The differential tests: encodeFastBlock (amd64 assembly where it is built) against the
// portable encodeFastBlockGo, which specifies it. Two encoders run the same stream, one
// with each; every block must be the same bytes and leave the same table and window.

// fastPair is two Fast encoders on one stream: asm uses encodeFastBlock, ref the portable one.
type fastPair struct {
	asm, ref *Encoder
	dec      *Decoder
	window   int
}

// newFastPair starts both encoders at stream coordinate base (tables hold coordinates
// modulo 2^24, the assembly computes them in 32 bits: bases near both wraps are tested).
func newFastPair(window, base int) *fastPair {
	p := &fastPair{asm: NewEncoder(window, Fast), ref: NewEncoder(window, Fast), dec: NewDecoder(window, 32<<20), window: window}
	p.ref.portable = true
	p.asm.win.base, p.ref.win.base = base, base
	return p
}

func (p *fastPair) encode(t testing.TB, i int, msg []byte) {
	t.Helper()
	got := p.asm.Encode(nil, msg)
	want := p.ref.Encode(nil, msg)
	if !bytes.Equal(got, want) {
		n := commonPrefix(got, want)
		t.Fatalf("window %d, message %d (%d bytes): assembly block of %d bytes differs from the portable one of %d at byte %d",
			p.window, i, len(msg), len(got), len(want), n)
	}
	// Tables up to 256 KiB are compared after every block, larger ones every 64th block
	// and by the caller at the end (checkTables).
	if len(p.asm.fast) <= 1<<16 || i%64 == 0 {
		p.checkTables(t, i)
	}
	if p.asm.win.base != p.ref.win.base || !bytes.Equal(p.asm.win.buf, p.ref.win.buf) {
		t.Fatalf("window %d, message %d: windows differ", p.window, i)
	}
	out, err := p.dec.Decode(nil, got)
	if err != nil || !bytes.Equal(out, msg) {
		t.Fatalf("window %d, message %d: decode: %v", p.window, i, err)
	}
}

func (p *fastPair) checkTables(t testing.TB, i int) {
	t.Helper()
	// Compared as bytes: slices.Equal, compiled with the fuzzer's comparison tracing,
	// takes seconds per 4 MiB table.
	if !bytes.Equal(uint32Bytes(p.asm.fast), uint32Bytes(p.ref.fast)) {
		for j := range p.asm.fast {
			if p.asm.fast[j] != p.ref.fast[j] {
				t.Fatalf("window %d, message %d: table entry %d is %#x, portable %#x", p.window, i, j, p.asm.fast[j], p.ref.fast[j])
			}
		}
	}
}

func uint32Bytes(s []uint32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s))
}

// diffWindows are the windows the differential tests run: every power of two from 4 KiB
// to 16 MiB, 0, and sizes beside the default (where the skip rule changes) and odd ones.
func diffWindows() []int {
	ws := []int{0, 16, 4<<10 + 1, 64<<10 - 1, 64<<10 + 1, 1<<20 + 3}
	for w := 4 << 10; w <= MaxWindowBytes; w <<= 1 {
		ws = append(ws, w)
	}
	return ws
}

// bases are the stream coordinates the tests start at: 0, and `before` bytes below the wraps
// at 2^24 (the tables' positions) and, where int has 64 bits, 2^32 (the assembly's
// 32-bit arithmetic).
func bases(before int) []int {
	bs := []int{0, 1<<24 - before}
	if strconv.IntSize == 64 {
		var wrap uint64 = 1 << 32
		bs = append(bs, int(wrap)-before)
	}
	return bs
}

// adversarialStream returns messages of about total bytes mixing what the encoder treats
// differently: random bytes (the skip loop to its end), runs of one byte and two-symbol
// noise (long and overlapping matches, copies above 64 bytes, extension to the block's
// last byte), text-like bytes, and repeats of the stream taken just inside and just
// beyond the window and the 2- and 4-byte offset limits (with their first or last bytes
// changed), at sizes around the encoder's edges (12 bytes, 16, literal headers at 60 and
// 256 bytes, attestation-sized, KiB, beyond the window).
func adversarialStream(rng *rand.Rand, window, total int) [][]byte {
	var msgs [][]byte
	var stream []byte
	sizes := []int{0, 1, 11, 12, 13, 15, 16, 17, 19, 20, 24, 60, 61, 62, 240, 256, 257, 258, 300, 1000, 4096, 5000}
	for len(stream) < total {
		n := sizes[rng.Intn(len(sizes))]
		switch rng.Intn(10) {
		case 0:
			n = rng.Intn(70 << 10)
		case 1:
			n = 12 + rng.Intn(600)
		}
		var m []byte
		switch kind := rng.Intn(8); {
		case kind == 7:
			// Random bytes with short snippets (4–9 bytes) from d back: matches at the
			// minimum lengths, at offsets on both sides of 2-byte, 4-byte and window limits.
			ds := []int{65535, 65536, 2047, 2048, window, window + 1, window - 1, 1 << 24}
			d := ds[rng.Intn(len(ds))]
			m = make([]byte, 0, n)
			for len(m) < n {
				m = append(m, random(rng, rng.Intn(12))...)
				from := len(stream) + len(m) - d
				if k := min(4+rng.Intn(6), n-len(m)); from >= 0 && k > 0 && from+k <= len(stream) {
					m = append(m, stream[from:from+k]...)
				}
			}
			m = m[:n]
		case kind == 0:
			m = random(rng, n)
		case kind == 1:
			m = bytes.Repeat([]byte{byte(rng.Intn(3))}, n)
		case kind == 2:
			m = make([]byte, n)
			for i := range m {
				m[i] = byte(rng.Intn(2))
			}
		case kind == 3:
			m = structured(rng, n)
		default:
			// A repeat from d bytes back in the stream.
			ds := []int{window - 8 + rng.Intn(17), window, window + 1, 65535, 65536, 65537, 2048, 2049, 1 + rng.Intn(64), rng.Intn(max(window, 1) + 1)}
			d := ds[rng.Intn(len(ds))]
			if d <= 0 || d > len(stream) || n == 0 {
				m = structured(rng, n)
				break
			}
			m = make([]byte, 0, n)
			for len(m) < n {
				from := len(stream) - d + len(m)
				if from >= len(stream) {
					from = len(stream) - d
				}
				m = append(m, stream[from:min(len(stream), from+n-len(m))]...)
			}
			switch rng.Intn(4) {
			case 0:
				m[0] ^= 0x55
			case 1:
				m[n-1] ^= 0x55
			case 2:
				m[rng.Intn(n)] ^= 1
			}
		}
		msgs = append(msgs, m)
		stream = append(stream, m...)
	}
	return msgs
}

// TestEncodeFastBlockAsm runs the assembly and the portable encoder on adversarial streams
// at every window, from stream coordinates 0, just below 2^24 and just below 2^32.
func TestEncodeFastBlockAsm(t *testing.T) {
	if !fastBlockAsm {
		t.Skip("encodeFastBlock is the portable function on this build")
	}
	for _, window := range diffWindows() {
		// Streams long enough to slide the window once (up to 1 MiB windows; beyond, the
		// 16 MiB stream below).
		total := min(2*window+(128<<10), 2<<20)
		if testing.Short() {
			total = min(total, 512<<10)
		}
		for bi, base := range bases(3000) {
			rng := rand.New(rand.NewSource(int64(window)*3 + int64(bi)))
			p := newFastPair(window, base)
			msgs := adversarialStream(rng, window, total)
			for i, m := range msgs {
				p.encode(t, i, m)
			}
			p.checkTables(t, len(msgs))
		}
	}
}

// TestEncodeFastBlockAsmFullWindow runs a 16 MiB window past its edge: a stream of 20 MiB
// whose messages repeat content exactly 16 MiB (and just under and over) back.
func TestEncodeFastBlockAsmFullWindow(t *testing.T) {
	if !fastBlockAsm {
		t.Skip("encodeFastBlock is the portable function on this build")
	}
	if testing.Short() {
		t.Skip("a 20 MiB stream")
	}
	rng := rand.New(rand.NewSource(16))
	const msgBytes = 256 << 10
	content := structured(rng, MaxWindowBytes)
	p := newFastPair(MaxWindowBytes, 0)
	var stream []byte
	for i := 0; len(stream) < 20<<20; i++ {
		var m []byte
		if len(stream) < MaxWindowBytes {
			m = content[len(stream):min(len(stream)+msgBytes, len(content))]
		} else {
			from := len(stream) - MaxWindowBytes + rng.Intn(9) - 4
			m = slices.Clone(stream[from : from+msgBytes])
			m[rng.Intn(len(m))] ^= 1
		}
		p.encode(t, i, m)
		stream = append(stream, m...)
	}
	p.checkTables(t, -1)
}

// FuzzEncodeFastBlockAsm splits arbitrary bytes into messages, sends them twice (the second
// time they repeat the history) at any window, and requires the assembly and portable
// encoders to agree block for block and entry for entry.
func FuzzEncodeFastBlockAsm(f *testing.F) {
	if !fastBlockAsm {
		f.Skip("encodeFastBlock is the portable function on this build")
	}
	f.Add([]byte("/eth2/4a26c58b/beacon_attestation_12/ssz_snappy attestation data attestation data"), uint8(3), uint8(1), uint8(0))
	f.Add(bytes.Repeat([]byte{0x12, 20, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 40), uint8(7), uint8(5), uint8(1))
	f.Add(bytes.Repeat([]byte{0}, 300), uint8(90), uint8(2), uint8(2))
	windows := diffWindows()
	f.Fuzz(func(t *testing.T, data []byte, split, windowSel, baseSel uint8) {
		window := windows[int(windowSel)%len(windows)]
		bs := append(bases(100), 12345)
		base := bs[int(baseSel)%len(bs)]
		var msgs [][]byte
		for n := int(split)%97 + 1; len(data) > 0; n = n*7%97 + 1 {
			n = min(n, len(data))
			msgs = append(msgs, data[:n])
			data = data[n:]
		}
		p := newFastPair(window, base)
		for round := range 2 {
			for i, m := range msgs {
				p.encode(t, round*len(msgs)+i, m)
			}
		}
		p.checkTables(t, 2*len(msgs))
	})
}

// TestEncodeFastBlockAsmFarEdges lays out the two far-offset rules that random streams
// rarely reach: a match of minFarMatch−1, minFarMatch and minFarMatch+1 bytes just beyond
// a 2-byte offset (used from minFarMatch), and a re-probe that finds a longer match beyond
// 65535 bytes while the match it would replace lies exactly 65535 back (kept: a 2-byte
// offset copy is cheaper).
func TestEncodeFastBlockAsmFarEdges(t *testing.T) {
	if !fastBlockAsm {
		t.Skip("encodeFastBlock is the portable function on this build")
	}
	rng := rand.New(rand.NewSource(65535))
	zeros := func(n int) []byte { return make([]byte, n) }
	for _, window := range []int{128 << 10, 1 << 20} {
		for _, d := range []int{65535, 65536, 65537} {
			for _, l := range []int{minFarMatch - 1, minFarMatch, minFarMatch + 1} {
				// [P x] zeros [P y]: the second P starts d bytes after the first, both
				// probed first in their blocks; x ≠ y ends the match at l bytes.
				p := random(rng, l)
				first := append(slices.Clone(p), 'x', 'x', 'x', 'x')
				second := append(slices.Clone(p), 'y', 'y', 'y', 'y')
				pair := newFastPair(window, 0)
				for i, m := range [][]byte{first, zeros(d - len(first)), second} {
					pair.encode(t, i, m)
				}
				pair.checkTables(t, -1)
			}
		}
		// [R[:L-2]] [R[L-2:] z] zeros [R[:L] y] zeros [R]: the last block matches the
		// fourth's R[:L] exactly 65535 back and, through the entry of the second
		// block's start, the whole of R further back.
		const L = 12
		r := random(rng, 40)
		msgs := [][]byte{slices.Clone(r[:L-2]), append(slices.Clone(r[L-2:]), 'z'), zeros(70000)}
		c := append(slices.Clone(r[:L]), r[L]^0xff, 'y', 'y', 'y')
		msgs = append(msgs, c, zeros(65535-len(c)), slices.Clone(r))
		pair := newFastPair(window, 0)
		for i, m := range msgs {
			pair.encode(t, i, m)
		}
		pair.checkTables(t, -1)
	}
}

// TestEncodeFastBlockAsmLongLiteral covers the 5-byte literal header: a random block of
// more than 2^24 bytes is one literal.
func TestEncodeFastBlockAsmLongLiteral(t *testing.T) {
	if !fastBlockAsm {
		t.Skip("encodeFastBlock is the portable function on this build")
	}
	if testing.Short() {
		t.Skip("a 16 MiB block")
	}
	p := newFastPair(0, 0)
	p.encode(t, 0, random(rand.New(rand.NewSource(1<<24)), 1<<24+5))
	if got := p.asm.Encode(nil, random(rand.New(rand.NewSource(1<<24)), 1<<24+5)); got[uvarintLen(1<<24+5)] != 63<<2|tagLiteral {
		t.Fatalf("block starts with tag %#x, want a literal with a 4-byte length", got[uvarintLen(1<<24+5)])
	}
}
