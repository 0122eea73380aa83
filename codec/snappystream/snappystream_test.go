package snappystream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"runtime"
	"testing"

	gsnappy "github.com/golang/snappy"
	ksnappy "github.com/klauspost/compress/snappy"
)

var levels = []Level{Fast, Better}

// structured returns n bytes of text-like data with repeats at varying distances.
func structured(rng *rand.Rand, n int) []byte {
	words := []string{"beacon_block", "attestation", "/eth2/4a26c58b/", "ssz_snappy", "\x00\x00\x00\x00", "sync_committee_", "0123456789"}
	var b []byte
	for len(b) < n {
		if rng.Intn(4) == 0 {
			b = append(b, byte(rng.Intn(256)))
			continue
		}
		b = append(b, words[rng.Intn(len(words))]...)
	}
	return b[:n]
}

func random(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	rng.Read(b)
	return b
}

// inputs are the property-test contents: empty, 1 byte, all-equal, random, structured,
// at several sizes up to the block bound used by the tests.
func inputs() map[string][]byte {
	rng := rand.New(rand.NewSource(1))
	m := map[string][]byte{
		"empty":        {},
		"one":          {'x'},
		"equal-11":     bytes.Repeat([]byte{7}, 11),
		"equal-12":     bytes.Repeat([]byte{7}, 12),
		"equal-100k":   bytes.Repeat([]byte{0}, 100000),
		"random-13":    random(rng, 13),
		"random-2048":  random(rng, 2048),
		"random-300k":  random(rng, 300000),
		"struct-20":    structured(rng, 20),
		"struct-1000":  structured(rng, 1000),
		"struct-70000": structured(rng, 70000),
		"struct-1M":    structured(rng, 1<<20),
	}
	return m
}

func TestConformanceWindowZero(t *testing.T) {
	for name, in := range inputs() {
		for _, l := range levels {
			enc := NewEncoder(0, l)
			// Several blocks from one encoder: with W = 0 none may refer to another.
			for i := 0; i < 3; i++ {
				block := enc.Encode(nil, in)
				if len(block) > MaxEncodedLen(len(in)) {
					t.Errorf("%s/%s: block of %d bytes above MaxEncodedLen %d", name, l, len(block), MaxEncodedLen(len(in)))
				}
				g, err := gsnappy.Decode(nil, block)
				if err != nil || !bytes.Equal(g, in) {
					t.Fatalf("%s/%s block %d: golang/snappy decode: %v (equal %v)", name, l, i, err, bytes.Equal(g, in))
				}
				k, err := ksnappy.Decode(nil, block)
				if err != nil || !bytes.Equal(k, in) {
					t.Fatalf("%s/%s block %d: klauspost snappy decode: %v", name, l, i, err)
				}
			}
		}
	}
}

func TestDecodesGolangSnappy(t *testing.T) {
	dec := NewDecoder(0, 0)
	for name, in := range inputs() {
		got, err := dec.Decode(nil, gsnappy.Encode(nil, in))
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("%s: decoding golang/snappy's block: %v", name, err)
		}
		got, err = dec.Decode(nil, ksnappy.Encode(nil, in))
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("%s: decoding klauspost's block: %v", name, err)
		}
	}
}

// roundTrip encodes msgs as a stream and decodes it back, returning the wire bytes.
func roundTrip(t *testing.T, window int, l Level, msgs [][]byte) int {
	t.Helper()
	enc := NewEncoder(window, l)
	dec := NewDecoder(window, 4<<20)
	var block, out []byte
	wire := 0
	for i, m := range msgs {
		block = enc.Encode(block[:0], m)
		wire += len(block)
		var err error
		out, err = dec.Decode(out[:0], block)
		if err != nil {
			t.Fatalf("window %d %s block %d (%d bytes): %v", window, l, i, len(m), err)
		}
		if !bytes.Equal(out, m) {
			t.Fatalf("window %d %s block %d: decoded bytes differ", window, l, i)
		}
	}
	return wire
}

func TestWindowedRoundTrip(t *testing.T) {
	in := inputs()
	var seq [][]byte
	for _, k := range []string{"struct-1000", "empty", "one", "struct-70000", "random-2048", "struct-1000", "equal-100k", "struct-20", "random-13", "struct-1M", "struct-1000", "random-300k", "struct-70000"} {
		seq = append(seq, in[k])
	}
	for _, w := range []int{0, 1, 100, 4 << 10, 64 << 10, 1 << 20, MaxWindowBytes} {
		for _, l := range levels {
			roundTrip(t, w, l, seq)
		}
	}
}

// TestHistoryMatches checks that a block repeating the previous one is encoded as copies
// into the history, with 2-byte offsets within 64 KiB and 4-byte offsets beyond.
func TestHistoryMatches(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, size := range []int{16, 1000, 65535, 65536, 200000} {
		msg := random(rng, size)
		for _, l := range levels {
			window := max(size, 64<<10)
			enc := NewEncoder(window, l)
			dec := NewDecoder(window, 0)
			first := enc.Encode(nil, msg)
			second := enc.Encode(nil, msg)
			if _, err := dec.Decode(nil, first); err != nil {
				t.Fatal(err)
			}
			got, err := dec.Decode(nil, second)
			if err != nil || !bytes.Equal(got, msg) {
				t.Fatalf("size %d %s: %v", size, l, err)
			}
			// All bytes come from the history: only copies, each covering up to 64 bytes.
			copies := (size + 63) / 64
			perCopy := 3
			if size > 65535 {
				perCopy = 5
			}
			maxLen := uvarintLen(size) + copies*perCopy
			if len(second) > maxLen {
				t.Errorf("size %d %s: repeated block is %d bytes, want at most %d (all copies)", size, l, len(second), maxLen)
			}
			if size > 65535 && second[len(second)-5]&3 != tagCopy4 {
				t.Errorf("size %d %s: last element is not a 4-byte-offset copy", size, l)
			}
		}
	}
}

func uvarintLen(n int) int { return len(binary.AppendUvarint(nil, uint64(n))) }

// TestLargestOffset copies from exactly the oldest byte the window allows.
func TestLargestOffset(t *testing.T) {
	for _, w := range []int{100, 4096, 65535, 65536, 70000} {
		rng := rand.New(rand.NewSource(int64(w)))
		first := random(rng, w)
		// The second block starts with the first 16 bytes of the window: offset w.
		second := append(append([]byte{}, first[:16]...), random(rng, 40)...)
		// Fast: better indexes every position of the random first block, so its tables
		// keep few entries from the window's oldest end.
		enc := NewEncoder(w, Fast)
		dec := NewDecoder(w, 0)
		b1 := enc.Encode(nil, first)
		b2 := enc.Encode(nil, second)
		if _, err := dec.Decode(nil, b1); err != nil {
			t.Fatal(err)
		}
		got, err := dec.Decode(nil, b2)
		if err != nil || !bytes.Equal(got, second) {
			t.Fatalf("window %d: %v", w, err)
		}
		if len(b2) >= len(second) {
			t.Errorf("window %d: no copy at the largest offset (%d bytes for %d)", w, len(b2), len(second))
		}
		// Hand-made: one copy at offset w+p is valid after p bytes, w+p+1 is not.
		hand := []byte{20, 4 << 2, 'a', 'b', 'c', 'd', 'e'}
		hand = append(hand, 14<<2|tagCopy4, 0, 0, 0, 0)
		binary.LittleEndian.PutUint32(hand[len(hand)-4:], uint32(w+5))
		d2 := NewDecoder(w, 0)
		d2.Decode(nil, b1)
		got, err = d2.Decode(nil, hand)
		if err != nil || !bytes.Equal(got[5:], first[:15]) {
			t.Errorf("window %d: copy at offset w+p: %v", w, err)
		}
		binary.LittleEndian.PutUint32(hand[len(hand)-4:], uint32(w+6))
		d3 := NewDecoder(w, 0)
		d3.Decode(nil, b1)
		if _, err := d3.Decode(nil, hand); !errors.Is(err, ErrCorrupt) {
			t.Errorf("window %d: copy at offset w+p+1 gave %v, want ErrCorrupt", w, err)
		}
	}
}

// TestWindowSmallerThanStream checks that history beyond the window is never used.
func TestWindowSmallerThanStream(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	var msgs [][]byte
	for i := 0; i < 300; i++ {
		msgs = append(msgs, structured(rng, 10+rng.Intn(3000)))
	}
	for _, w := range []int{1, 17, 1000, 4096} {
		for _, l := range levels {
			roundTrip(t, w, l, msgs)
		}
	}
}

func TestHistoryImprovesRatio(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	var msgs [][]byte
	for i := 0; i < 200; i++ {
		msgs = append(msgs, structured(rng, 300))
	}
	for _, l := range levels {
		w0 := roundTrip(t, 0, l, msgs)
		w64 := roundTrip(t, 64<<10, l, msgs)
		if w64 >= w0*3/4 {
			t.Errorf("%s: 64 KiB window gives %d bytes, no window %d", l, w64, w0)
		}
	}
}

func TestNoAllocationPerBlock(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	msgs := make([][]byte, 64)
	for i := range msgs {
		msgs[i] = structured(rng, 200+rng.Intn(400))
	}
	for _, l := range levels {
		enc := NewEncoder(64<<10, l)
		dec := NewDecoder(64<<10, 0)
		block := make([]byte, 0, MaxEncodedLen(1000))
		out := make([]byte, 0, 1000)
		i := 0
		step := func() {
			block = enc.Encode(block[:0], msgs[i%len(msgs)])
			var err error
			out, err = dec.Decode(out[:0], block)
			if err != nil {
				t.Fatal(err)
			}
			i++
		}
		for j := 0; j < 1000; j++ { // fill the window
			step()
		}
		if a := testing.AllocsPerRun(200, step); a != 0 {
			t.Errorf("%s: %.1f allocations per block in steady state", l, a)
		}
		// Window, room for the next blocks (one more window), one block; tables.
		if s := enc.StateBytes(); s > 2*64<<10+1000+384<<10 {
			t.Errorf("%s: encoder holds %d bytes", l, s)
		}
		if s := dec.StateBytes(); s > 2*64<<10+1000 {
			t.Errorf("decoder holds %d bytes", s)
		}
	}
}

func TestHostileBlocks(t *testing.T) {
	lit := func(s string) []byte { return append([]byte{byte(len(s)-1) << 2}, s...) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	cases := []struct {
		name  string
		block []byte
		want  error
	}{
		{"empty input", nil, io.ErrUnexpectedEOF},
		{"length above bound", binary.AppendUvarint(nil, 1<<20+1), ErrBlockTooLarge},
		{"huge length", binary.AppendUvarint(nil, 1<<40), ErrCorrupt},
		{"length varint cut", []byte{0x80, 0x80}, io.ErrUnexpectedEOF},
		{"oversized varint", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, ErrCorrupt},
		{"offset zero", cat([]byte{8}, lit("abcd"), []byte{0<<2 | tagCopy1, 0}), ErrCorrupt},
		{"offset zero copy2", cat([]byte{8}, lit("abcd"), []byte{3<<2 | tagCopy2, 0, 0}), ErrCorrupt},
		{"offset beyond output", cat([]byte{8}, lit("abcd"), []byte{0<<2 | tagCopy1, 6}), ErrCorrupt},
		{"offset beyond, copy4", cat([]byte{8}, lit("abcd"), []byte{3<<2 | tagCopy4, 0xff, 0xff, 0xff, 0xff}), ErrCorrupt},
		{"copy first", []byte{4, 0<<2 | tagCopy1, 2}, ErrCorrupt},
		{"truncated literal", cat([]byte{10}, []byte{9 << 2}, []byte("abc")), io.ErrUnexpectedEOF},
		{"truncated literal header", []byte{100, 61 << 2, 5}, io.ErrUnexpectedEOF},
		{"truncated copy", cat([]byte{8}, lit("abcd"), []byte{3<<2 | tagCopy2, 4}), io.ErrUnexpectedEOF},
		{"missing elements", cat([]byte{8}, lit("abcd")), io.ErrUnexpectedEOF},
		{"literal past length", cat([]byte{3}, lit("abcd")), ErrCorrupt},
		{"huge literal", []byte{3, 63 << 2, 0xff, 0xff, 0xff, 0xff}, ErrCorrupt},
		{"copy past length", cat([]byte{6}, lit("abcd"), []byte{0<<2 | tagCopy1, 4}), ErrCorrupt},
		{"trailing bytes", cat([]byte{4}, lit("abcd"), []byte{0}), ErrCorrupt},
	}
	for _, c := range cases {
		d := NewDecoder(64<<10, 1<<20)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := d.Decode(nil, c.block)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
		// Nothing but the first window allocation (room for a window of blocks).
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10+12<<10 {
			t.Errorf("%s: %d bytes allocated", c.name, n)
		}
		// The error names the block.
		d.Reset()
		d.Decode(nil, []byte{1, 0, 'x'})
		if _, err := d.Decode(nil, c.block); err == nil || !bytes.Contains([]byte(err.Error()), []byte("block 1")) {
			t.Errorf("%s: error %v does not name block 1", c.name, err)
		}
		// Errors are sticky: the stream is out of sync.
		if _, err := d.Decode(nil, []byte{1, 0, 'x'}); err == nil {
			t.Errorf("%s: decoder accepted a block after an error", c.name)
		}
	}
}

// TestHostileNoLargeAllocation: a declared length just under the bound with no elements
// must not make the Reader buffer more than the input it got.
func TestHostileNoLargeAllocation(t *testing.T) {
	block := binary.AppendUvarint(nil, 8<<20)
	r := NewReader(bytes.NewReader(block), 64<<10, 10<<20)
	_, err := r.Read(make([]byte, 100))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v", err)
	}
	if s := r.StateBytes(); s > 64<<10 {
		t.Errorf("reader holds %d bytes after a truncated 8 MiB block header", s)
	}
}

// chunkReader returns its data in reads of random sizes.
type chunkReader struct {
	data []byte
	rng  *rand.Rand
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.data), 1+c.rng.Intn(50))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func TestPipeRandomWrites(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	var msgs [][]byte
	var want []byte
	for i := 0; i < 400; i++ {
		var m []byte
		switch rng.Intn(4) {
		case 0:
			m = random(rng, rng.Intn(3000))
		case 1:
			m = structured(rng, rng.Intn(100))
		default:
			m = structured(rng, rng.Intn(20000))
		}
		msgs = append(msgs, m)
		want = append(want, m...)
	}
	for _, l := range levels {
		pr, pw := io.Pipe()
		w := NewWriter(pw, 4<<10, l)
		go func() {
			for _, m := range msgs {
				if _, err := w.Write(m); err != nil {
					pw.CloseWithError(err)
					return
				}
			}
			pw.Close()
		}()
		r := NewReader(pr, 4<<10, 0)
		var got []byte
		buf := make([]byte, 5000)
		for {
			buf = buf[:1+rng.Intn(5000)]
			n, err := r.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: pipe round trip differs (%d vs %d bytes)", l, len(got), len(want))
		}
	}
}

// TestReaderBlockDelivery: the Reader returns a block as soon as its last byte arrives,
// without asking for more input.
func TestReaderBlockDelivery(t *testing.T) {
	pr, pw := io.Pipe()
	w := NewWriter(pw, 64<<10, Fast)
	r := NewReader(pr, 64<<10, 0)
	for i := 0; i < 20; i++ {
		msg := []byte(fmt.Sprintf("message %d: /eth2/4a26c58b/beacon_attestation_%d/ssz_snappy", i, i%3))
		go w.Write(msg) // blocks until the Reader has consumed the block
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("block %d: %q, %v", i, got, err)
		}
	}
	pw.Close()
	if _, err := r.Read(make([]byte, 10)); err != io.EOF {
		t.Fatalf("end at a block boundary: got %v, want io.EOF", err)
	}
}

func TestReaderEndInsideBlock(t *testing.T) {
	enc := NewEncoder(64<<10, Fast)
	var stream []byte
	rng := rand.New(rand.NewSource(9))
	var ends []int
	for i := 0; i < 5; i++ {
		stream = enc.Encode(stream, structured(rng, 500))
		ends = append(ends, len(stream))
	}
	for cut := 0; cut <= len(stream); cut++ {
		r := NewReader(&chunkReader{data: stream[:cut], rng: rng}, 64<<10, 0)
		_, err := io.ReadAll(r)
		atBoundary := cut == 0
		for _, e := range ends {
			atBoundary = atBoundary || cut == e
		}
		if atBoundary && err != nil {
			t.Fatalf("cut at boundary %d: %v", cut, err)
		}
		if !atBoundary && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut at %d inside a block: %v, want io.ErrUnexpectedEOF", cut, err)
		}
	}
	// io.EOF itself, not wrapped, at a boundary.
	r := NewReader(bytes.NewReader(stream[:ends[0]]), 64<<10, 0)
	if _, err := r.Read(make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(make([]byte, 1000)); err != io.EOF {
		t.Fatalf("got %v, want io.EOF", err)
	}
}

// TestReaderMatchesDecoder feeds hostile and valid streams to both the Reader and
// Decode: they must agree on the bytes and on failing.
func TestReaderMatchesDecoder(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	enc := NewEncoder(1000, Better)
	var stream []byte
	for i := 0; i < 30; i++ {
		stream = enc.Encode(stream, structured(rng, rng.Intn(2000)))
	}
	for i := 0; i < 300; i++ {
		s := append([]byte{}, stream...)
		for j := rng.Intn(4); j > 0; j-- {
			s[rng.Intn(len(s))] ^= byte(1 + rng.Intn(255))
		}
		checkReaderAgainstDecoder(t, s, 1000, 1<<20)
	}
}

// TestDeclaredLengthNoAllocation: a short block declaring a large length (within the
// bound) is rejected before the output is allocated.
func TestDeclaredLengthNoAllocation(t *testing.T) {
	block := append(binary.AppendUvarint(nil, 8<<20), 0<<2|tagLiteral, 'x')
	d := NewDecoder(0, 10<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := d.Decode(nil, block)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v, want io.ErrUnexpectedEOF", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4096 {
		t.Errorf("%d bytes allocated for a 8 MiB claim in a 6-byte block", n)
	}
}

// A block decoded in place from a buffer cut anywhere inside it reports itself incomplete and
// leaves the decoder as it was: the same block decoded afterwards from the whole buffer gives
// the bytes a decoder that never saw the cut gives, and so do the blocks after it.
func TestDecodePrefixCutAnywhere(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, window := range []int{0, 1 << 10, 64 << 10} {
		enc := NewEncoder(window, Fast)
		var blocks [][]byte
		var msgs [][]byte
		for i := 0; i < 12; i++ {
			m := structured(rng, 1+rng.Intn(900))
			msgs = append(msgs, m)
			blocks = append(blocks, enc.Encode(nil, m))
		}
		d := NewDecoder(window, 0)
		for i, b := range blocks {
			next := append(append([]byte(nil), b...), 0xff, 0xff) // bytes of a later block after it
			for cut := 0; cut < len(b); cut++ {
				out, used, ok := d.decodePrefix(nil, b[:cut], false)
				if ok || used != 0 || len(out) != 0 || d.err != nil {
					t.Fatalf("window %d block %d cut at %d of %d: out %d, used %d, ok %v, %v", window, i, cut, len(b), len(out), used, ok, d.err)
				}
			}
			out, used, ok := d.decodePrefix([]byte("x"), next, false)
			if !ok || used != len(b) || !bytes.Equal(out[1:], msgs[i]) || out[0] != 'x' {
				t.Fatalf("window %d block %d whole: used %d of %d, ok %v, equal %v", window, i, used, len(b), ok, bytes.Equal(out[1:], msgs[i]))
			}
		}
		if d.Blocks() != int64(len(blocks)) {
			t.Errorf("window %d: %d blocks counted, want %d", window, d.Blocks(), len(blocks))
		}
		// A bad block (a copy reaching before the stream's start) is left to Decode, which
		// names what is wrong; decodePrefix records nothing.
		bad := []byte{10, 0x01<<2 | tagCopy2, 0xff, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0}
		if _, _, ok := NewDecoder(window, 0).decodePrefix(nil, bad, true); ok {
			t.Errorf("window %d: a copy 32767 bytes back at the stream's start decoded", window)
		}
		fresh := NewDecoder(window, 0)
		if _, _, ok := fresh.decodePrefix(nil, bad, true); ok || fresh.err != nil {
			t.Errorf("window %d: decodePrefix on a bad block: ok %v, error recorded %v", window, ok, fresh.err)
		}
		if _, err := fresh.Decode(nil, bad[:4]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("window %d: Decode of the bad block: %v, want ErrCorrupt", window, err)
		}
	}
}
