package codec

// Memory on hostile input. A peer controls every byte a Reader decodes, so each decoder
// must bound what one unit can make it allocate by what the spec and the Reader's
// options allow, never by what the input merely declares. The tests measure the bytes
// allocated (runtime.MemStats.TotalAlloc) around one decode and compare them with the
// bound each decoder states:
//
//   - snappy-stream Decoder: "memory is W plus one block" (package doc). A block's
//     declared length n is checked against the bound before anything is allocated, and
//     against the block's own size (3 bytes of elements produce at most 64). One Decode
//     into an empty dst allocates at most the decoded block it returns (n) plus the
//     decoder's state: W, room for one block (n), and up to W of slack for
//     implementations that keep history and block contiguous. Bound: 2n + 2W.
//   - snappy-stream Reader: the Decoder's bound plus its input buffer, which holds one
//     whole block on the wire, capped at C = 5 wire bytes per declared byte (a 1-byte
//     copy with a 4-byte offset) plus the header. It grows by doubling, so all its
//     allocations add up to less than 4x the block's wire size, and to less than 3C
//     when the cap is reached.
//   - zstd Reader: the window the spec allows (frame headers declaring more are refused
//     before the decoder sees them) plus a fixed number of 128 KiB blocks, however much
//     the frame declares or decodes to: both decoders keep room for two blocks beyond the
//     window, up to two more for compressed input and literals (libzstd one for input),
//     and the Reader one for its output. Bound: W + 6 blocks.
//
// Allocation by the test's own error values and the runtime stays within a small margin.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"runtime"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/streamsim/streamsim/codec/snappystream"
	"github.com/streamsim/streamsim/units"
)

const (
	// nothingBytes bounds what a decode that must fail before allocating for the block
	// may allocate: error values and their formatting.
	nothingBytes = 4 << 10
	// marginBytes is the allowance on top of a stated bound for small bookkeeping.
	marginBytes = 64 << 10
)

// allocatedBytes returns the bytes f allocated on the Go heap.
// allocNoiseBytes is what the rest of the process may allocate while one decode is measured:
// TotalAlloc is process-wide, and a goroutine left by another test (a pipe, a timer) or the
// runtime itself can allocate a few KiB meanwhile (6 KiB seen under load). The bounds checked
// are megabytes apart from what an unbounded decoder would take, so this slack hides nothing.
const allocNoiseBytes = 16 << 10

func allocatedBytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Snappy block elements, as in the golang/snappy block format.

func snappyHeader(dst []byte, n int) []byte { return binary.AppendUvarint(dst, uint64(n)) }

// snappyLiteral appends a literal element with a 4-byte length.
func snappyLiteral(dst, p []byte) []byte {
	dst = append(dst, 63<<2)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(p)-1))
	return append(dst, p...)
}

// snappyCopy2 appends a copy of 1..64 bytes with a 2-byte offset.
func snappyCopy2(dst []byte, length, offset int) []byte {
	dst = append(dst, byte(length-1)<<2|0x02)
	return binary.LittleEndian.AppendUint16(dst, uint16(offset))
}

// snappyCopy4 appends a copy of 1..64 bytes with a 4-byte offset.
func snappyCopy4(dst []byte, length int, offset uint32) []byte {
	dst = append(dst, byte(length-1)<<2|0x03)
	return binary.LittleEndian.AppendUint32(dst, offset)
}

// historyStream returns blocks of literals that fill a window of w bytes, and the bytes
// they decode to.
func historyStream(seed int64, w int) (stream, decoded []byte) {
	decoded = make([]byte, w)
	rand.New(rand.NewSource(seed)).Read(decoded)
	const blockBytes = 8 << 20 // under the default block bound
	for p := decoded; len(p) > 0; {
		n := min(len(p), blockBytes)
		stream = snappyLiteral(snappyHeader(stream, n), p[:n])
		p = p[n:]
	}
	return stream, decoded
}

// hostileBlock is a snappy-stream block a test feeds after a full window of history.
type hostileBlock struct {
	name     string
	block    []byte
	declared int   // the length the block declares
	wantErr  error // nil: the block is valid
	// check verifies a valid block's output against the history it copies from.
	check func(out, hist []byte) error
}

// hostileBlocks builds the blocks for a decoder with window w and block bound maxBlock:
// the largest declared length (with and without the elements to back it), the deepest
// offsets (p + h, the oldest history byte, at every output position) and offsets just
// beyond.
func hostileBlocks(w, maxBlock int) []hostileBlock {
	var bs []hostileBlock
	add := func(name string, declared int, wantErr error, check func(out, hist []byte) error, body func([]byte) []byte) {
		bs = append(bs, hostileBlock{name: name, block: body(snappyHeader(nil, declared)), declared: declared, wantErr: wantErr, check: check})
	}
	add("declared length above the bound", maxBlock+1, snappystream.ErrBlockTooLarge, nil,
		func(b []byte) []byte { return snappyCopy2(b, 64, 1) })
	add("largest declared length, 64 bytes of elements", maxBlock, io.ErrUnexpectedEOF, nil, func(b []byte) []byte {
		for range 64 / 3 {
			b = snappyCopy2(b, 64, 1)
		}
		return b
	})
	const near = 1000 // a copy offset inside any window used here
	add("largest declared length, all elements present", maxBlock, nil, func(out, hist []byte) error {
		for p := range out {
			want := byte(0)
			if p < near {
				want = hist[len(hist)-near+p]
			} else {
				want = out[p-near]
			}
			if out[p] != want {
				return fmt.Errorf("byte %d is %#x, want %#x", p, out[p], want)
			}
		}
		return nil
	}, func(b []byte) []byte {
		for p := 0; p < maxBlock; p += 64 {
			b = snappyCopy2(b, min(64, maxBlock-p), near)
		}
		return b
	})
	const deepBlock = 1 << 20
	add("deepest offsets", deepBlock, nil, func(out, hist []byte) error {
		for p := 0; p < len(out); p += 64 {
			if !bytes.Equal(out[p:p+64], hist[len(hist)-w:][:64]) {
				return fmt.Errorf("bytes %d..%d are not the oldest 64 bytes of history", p, p+64)
			}
		}
		return nil
	}, func(b []byte) []byte {
		for p := 0; p < deepBlock; p += 64 {
			b = snappyCopy4(b, 64, uint32(p+w))
		}
		return b
	})
	add("offset one beyond the history", deepBlock, snappystream.ErrCorrupt, nil, func(b []byte) []byte {
		for p := 0; p < deepBlock; p += 64 {
			b = snappyCopy4(b, 64, uint32(p+w+1))
		}
		return b
	})
	add("largest 4-byte offset", deepBlock, snappystream.ErrCorrupt, nil, func(b []byte) []byte {
		for p := 0; p < deepBlock; p += 64 {
			b = snappyCopy4(b, 64, 1<<32-1)
		}
		return b
	})
	return bs
}

// decoderBoundBytes is the Decoder's stated bound for one Decode of a block declaring n
// bytes into an empty dst, with window w (see the file comment).
func decoderBoundBytes(n, w int) uint64 { return uint64(2*n + 2*w + marginBytes) }

// TestSnappyStreamDecoderBounds feeds hostile blocks to a Decoder whose window is full,
// at the default and the largest window, with the default block bound.
func TestSnappyStreamDecoderBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates tens of MiB; skipped with -short")
	}
	for _, w := range []int{snappystream.DefaultWindowBytes, snappystream.MaxWindowBytes} {
		fill, hist := historyStream(1, w)
		for _, hb := range hostileBlocks(w, snappystream.DefaultMaxBlockBytes) {
			t.Run(fmt.Sprintf("window %s/%s", units.FormatSize(w), hb.name), func(t *testing.T) {
				d := snappystream.NewDecoder(w, 0)
				for rest := fill; len(rest) > 0; {
					n, hdr := binary.Uvarint(rest)
					end := hdr + 5 + int(n)
					if _, err := d.Decode(nil, rest[:end]); err != nil {
						t.Fatalf("history: %v", err)
					}
					rest = rest[end:]
				}
				var out []byte
				var err error
				got := allocatedBytes(func() { out, err = d.Decode(nil, hb.block) })
				checkBlock(t, hb, out, err, hist)
				bound := decoderBoundBytes(hb.declared, w)
				if hb.wantErr == snappystream.ErrBlockTooLarge || hb.wantErr == io.ErrUnexpectedEOF {
					bound = nothingBytes // refused before allocating
				}
				if got > bound+allocNoiseBytes {
					t.Errorf("allocated %d bytes for a %d-byte block declaring %d, bound %d", got, len(hb.block), hb.declared, bound)
				}
				t.Logf("%d bytes allocated (bound %d)", got, bound)
				if st := d.StateBytes(); st > 2*w+hb.declared {
					t.Errorf("decoder holds %d bytes after the block, more than 2W + n = %d", st, 2*w+hb.declared)
				}
			})
		}
	}
}

func checkBlock(t *testing.T, hb hostileBlock, out []byte, err error, hist []byte) {
	t.Helper()
	if hb.wantErr != nil {
		if !errors.Is(err, hb.wantErr) {
			t.Fatalf("error %v, want %v", err, hb.wantErr)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != hb.declared {
		t.Fatalf("decoded %d bytes, declared %d", len(out), hb.declared)
	}
	if err := hb.check(out, hist); err != nil {
		t.Fatal(err)
	}
}

// TestSnappyStreamReaderBounds feeds the same blocks through the network-facing Reader
// (Spec.NewReader with the default unit bound), after a block that fills its window, and
// a block at the worst wire-to-output ratio the Reader admits.
func TestSnappyStreamReaderBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates tens of MiB; skipped with -short")
	}
	spec, err := Parse("snappy-stream")
	if err != nil {
		t.Fatal(err)
	}
	w := spec.WindowBytes
	fill, hist := historyStream(2, w)
	blocks := hostileBlocks(w, snappystream.DefaultMaxBlockBytes)
	blocks = append(blocks, hostileBlock{
		name: "largest declared length, then the stream ends", block: snappyHeader(nil, snappystream.DefaultMaxBlockBytes),
		declared: snappystream.DefaultMaxBlockBytes, wantErr: io.ErrUnexpectedEOF,
	})
	// Five wire bytes per output byte: 1-byte copies from the oldest history byte.
	const worstDeclared = 1 << 20
	worst := snappyHeader(nil, worstDeclared)
	for p := 0; p < worstDeclared; p++ {
		worst = snappyCopy4(worst, 1, uint32(p+w))
	}
	blocks = append(blocks, hostileBlock{name: "five wire bytes per output byte", block: worst, declared: worstDeclared,
		check: func(out, hist []byte) error {
			if bytes.Count(out, hist[:1]) != len(out) {
				return errors.New("not all bytes are the oldest history byte")
			}
			return nil
		}})
	for _, hb := range blocks {
		t.Run(hb.name, func(t *testing.T) {
			stream := append(append([]byte(nil), fill...), hb.block...)
			r := spec.NewReader(bytes.NewReader(stream))
			defer r.Close()
			if _, err := io.ReadFull(r, make([]byte, w)); err != nil {
				t.Fatalf("history: %v", err)
			}
			out := make([]byte, 0, hb.declared)
			buf := make([]byte, 32<<10)
			got := allocatedBytes(func() {
				for len(out) < hb.declared {
					var n int
					n, err = r.Read(buf)
					out = append(out, buf[:n]...)
					if err != nil {
						break
					}
				}
			})
			checkBlock(t, hb, out, err, hist)
			var bound uint64
			switch {
			case errors.Is(hb.wantErr, snappystream.ErrBlockTooLarge):
				bound = nothingBytes // refused at the header
			case errors.Is(hb.wantErr, io.ErrUnexpectedEOF):
				bound = nothingBytes + 4*uint64(len(hb.block)) // refused once the elements are buffered
			default:
				capped := 3 * uint64(binary.MaxVarintLen32+5*hb.declared+5)
				bound = decoderBoundBytes(hb.declared, w) + min(4*uint64(len(hb.block)), capped)
			}
			if got > bound+allocNoiseBytes {
				t.Errorf("allocated %d bytes for a %d-byte block declaring %d, bound %d", got, len(hb.block), hb.declared, bound)
			}
			t.Logf("%d bytes allocated (bound %d) for %d wire bytes declaring %d", got, bound, len(hb.block), hb.declared)
		})
	}
}

// Zstd frame pieces (RFC 8878).

// zstdFrameHeader returns a frame header: with a window descriptor for windowLog (when
// windowLog > 0) or single-segment, and an 8-byte frame content size when fcs > 0.
func zstdFrameHeader(windowLog int, fcs uint64) []byte {
	h := binary.LittleEndian.AppendUint32(nil, zstdMagic)
	var fhd byte
	if fcs > 0 {
		fhd |= 3 << 6
	}
	if windowLog == 0 {
		fhd |= 1 << 5
	}
	h = append(h, fhd)
	if windowLog > 0 {
		h = append(h, byte(windowLog-10)<<3)
	}
	if fcs > 0 {
		h = binary.LittleEndian.AppendUint64(h, fcs)
	}
	return h
}

// zstdRLEBlocks appends n RLE blocks of the largest size: 4 wire bytes for 128 KiB.
func zstdRLEBlocks(dst []byte, n int, last bool) []byte {
	for i := range n {
		bh := uint32(zstdMaxBlockBytes)<<3 | 1<<1
		if last && i == n-1 {
			bh |= 1
		}
		dst = append(dst, byte(bh), byte(bh>>8), byte(bh>>16), 'x')
	}
	return dst
}

// TestZstdReaderBounds feeds frame headers that declare windows and content sizes far
// above the spec's, and a frame that decodes to 128 KiB per 4 wire bytes, to the zstd
// Reader at the default spec (2 MiB window).
func TestZstdReaderBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes 25 MiB; skipped with -short")
	}
	const rleBlocks = 200
	specLog := 21 // the default window, 2 MiB
	cases := []struct {
		name     string
		stream   []byte
		wantErr  error // nil: valid
		minOut   int   // bytes the Reader returns before its error or EOF, at least
		maxOut   int   // and at most
		rejected bool  // refused at the frame header, before the decoder sees it
	}{
		{"window descriptor of 2 TiB", zstdRLEBlocks(zstdFrameHeader(41, 0), 1, true), errZstdFrame, 0, 0, true},
		{"single segment declaring 4 EiB", zstdRLEBlocks(zstdFrameHeader(0, 1<<62), 1, true), errZstdFrame, 0, 0, true},
		{"spec window, content size of 4 EiB", zstdRLEBlocks(zstdFrameHeader(specLog, 1<<62), rleBlocks, true), zstd.ErrFrameSizeMismatch,
			// The content size is checked at the last block, whose bytes may be withheld.
			(rleBlocks - 1) * zstdMaxBlockBytes, rleBlocks * zstdMaxBlockBytes, false},
		{"spec window, 25 MiB of RLE blocks", zstdRLEBlocks(zstdFrameHeader(specLog, 0), rleBlocks, true), nil, rleBlocks * zstdMaxBlockBytes, rleBlocks * zstdMaxBlockBytes, false},
	}
	for _, name := range familyNames() {
		if familyNamed(name).Default.Kind != Zstd {
			continue
		}
		spec, err := Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				r := spec.NewReader(bytes.NewReader(c.stream))
				defer r.Close()
				buf := make([]byte, 32<<10)
				total := 0
				var err error
				got := allocatedBytes(func() {
					for {
						var n int
						n, err = r.Read(buf)
						total += n
						if err != nil {
							break
						}
					}
				})
				if c.wantErr == nil && err != io.EOF || c.wantErr != nil && spec.ZstdImpl == ZstdGo && !errors.Is(err, c.wantErr) ||
					c.wantErr != nil && err == io.EOF {
					t.Fatalf("error %v, want %v", err, c.wantErr)
				}
				if c.rejected && !errors.Is(err, errZstdFrame) {
					t.Fatalf("error %v, want the frame refused by its header", err)
				}
				if total < c.minOut || total > c.maxOut {
					t.Errorf("returned %d bytes, want %d..%d", total, c.minOut, c.maxOut)
				}
				// The Go heap holds klauspost's whole decoder; libzstd's lives in the C heap
				// and is counted by its StateBytes.
				stated := uint64(spec.WindowBytes + 6*zstdMaxBlockBytes + marginBytes)
				bound := stated
				if c.rejected {
					bound = uint64(zstdMaxBlockBytes + marginBytes) // the Reader's buffer, no window
				}
				if got > bound+allocNoiseBytes {
					t.Errorf("allocated %d bytes, bound %d", got, bound)
				}
				if st := r.(Meter).Stats().StateBytes; uint64(st) > stated {
					t.Errorf("reader state %d bytes, bound %d", st, stated)
				}
				t.Logf("%d bytes allocated (bound %d), state %d bytes, %d bytes out", got, bound, r.(Meter).Stats().StateBytes, total)
			})
		}
	}
}

// fuzzMaxOutBytes bounds what one fuzz input may decode to before the target stops
// reading it (an RLE block turns 4 bytes into 128 KiB).
const fuzzMaxOutBytes = 4 << 20

// chunkSource returns its data in pieces of random size, as a transport might.
type chunkSource struct {
	data []byte
	rng  *rand.Rand
}

func (c *chunkSource) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+c.rng.Intn(300))], c.data)
	c.data = c.data[n:]
	return n, nil
}

// zstdRead is what a Reader made of one stream.
type zstdRead struct {
	out   []byte
	err   error // io.EOF: the stream was accepted
	stats Stats
	long  bool // stopped after fuzzMaxOutBytes
}

// readZstdStream reads stream through spec's Reader in random pieces, with reads both
// smaller and larger than a block (the Reader decodes in place into large ones), and
// checks the io.Reader contract.
func readZstdStream(t *testing.T, spec Spec, stream []byte) zstdRead {
	rng := rand.New(rand.NewSource(int64(len(stream))))
	r := spec.NewReader(&chunkSource{data: stream, rng: rng})
	defer r.Close()
	small, large := make([]byte, 700), make([]byte, zstdMaxBlockBytes+1000)
	var res zstdRead
	for len(res.out) <= fuzzMaxOutBytes {
		p := small[:1+rng.Intn(len(small))]
		if rng.Intn(4) == 0 {
			p = large
		}
		n, err := r.Read(p)
		if n < 0 || n > len(p) {
			t.Fatalf("Read returned %d for a %d-byte buffer", n, len(p))
		}
		res.out = append(res.out, p[:n]...)
		if err != nil {
			res.err, res.stats = err, r.(Meter).Stats()
			if err != io.EOF {
				// A failed stream must never look like a clean end. (It should also stay
				// failed: klauspost v1.20.4 returns a truncated frame's last block after
				// reporting the truncation, and the Reader passes it on.)
				for range 64 {
					if _, err2 := r.Read(large); err2 == io.EOF {
						t.Fatalf("Read after %v returned io.EOF", err)
					} else if err2 != nil {
						break
					}
				}
			}
			return res
		}
	}
	res.stats, res.long = r.(Meter).Stats(), true
	return res
}

// FuzzZstdReader reads arbitrary bytes as a zstd stream through the Reader (klauspost,
// 64 KiB window). What it returns must be what klauspost's own DecodeAll (no block gate,
// no Reader buffer) makes of the same bytes under the same window, and a stream DecodeAll
// accepts may be refused only for its window; libzstd, where built, must return the
// same bytes for streams both accept. At EOF every wire byte has been counted. A Reader reset
// after whatever the bytes left it in (an error, a frame begun, output cut short) reads a good
// stream as a new Reader does (both implementations).
func FuzzZstdReader(f *testing.F) {
	spec, err := Parse("zstd:3:64KiB")
	if err != nil {
		f.Fatal(err)
	}
	cspec := spec
	cspec.ZstdImpl = ZstdC
	haveC := zstdCAvailable() == nil
	rng := rand.New(rand.NewSource(5))
	var wire bytes.Buffer
	w := spec.NewWriter(&wire)
	var plain []byte
	for _, u := range sampleUnits(rng, 6) {
		if _, err := w.Write(u); err != nil {
			f.Fatal(err)
		}
		plain = append(plain, u...)
	}
	open := append([]byte(nil), wire.Bytes()...) // no frame end yet
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	closed := wire.Bytes()
	skippable := binary.LittleEndian.AppendUint32(nil, zstdSkippableMagic|3)
	skippable = binary.LittleEndian.AppendUint32(skippable, 4)
	skippable = append(skippable, "skip"...)
	for _, s := range [][]byte{
		closed, open, closed[:len(closed)-3], append(append([]byte(nil), closed...), closed...),
		append(append([]byte(nil), skippable...), closed...),
		{}, zstdRLEBlocks(zstdFrameHeader(16, 0), 3, true), zstdRLEBlocks(zstdFrameHeader(41, 0), 1, true),
		zstdRLEBlocks(zstdFrameHeader(0, 100), 1, true), zstdRLEBlocks(zstdFrameHeader(16, 1<<62), 2, true),
	} {
		f.Add(s)
	}
	ref, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(uint64(spec.WindowBytes)),
		zstd.WithDecoderMaxMemory(fuzzMaxOutBytes))
	if err != nil {
		f.Fatal(err)
	}
	defer ref.Close()
	f.Fuzz(func(t *testing.T, stream []byte) {
		res := readZstdStream(t, spec, stream)
		got, err, st := res.out, res.err, res.stats
		if st.RawBytes != int64(len(got)) {
			t.Fatalf("RawBytes %d, returned %d", st.RawBytes, len(got))
		}
		if st.WireBytes > int64(len(stream)) || st.Units < 0 {
			t.Fatalf("stats %+v for %d wire bytes", st, len(stream))
		}
		if res.long {
			return
		}
		want, refErr := ref.DecodeAll(stream, nil)
		switch {
		case err == io.EOF && refErr != nil:
			t.Fatalf("Reader accepts (%d bytes) what DecodeAll refuses: %v", len(got), refErr)
		case err == io.EOF && !bytes.Equal(got, want):
			t.Fatalf("Reader returns %d bytes, DecodeAll %d, different", len(got), len(want))
		case err == io.EOF && st.WireBytes != int64(len(stream)):
			t.Fatalf("at EOF %d of %d wire bytes counted", st.WireBytes, len(stream))
		case err != io.EOF && refErr == nil && !errors.Is(err, zstd.ErrWindowSizeExceeded) &&
			!errors.Is(err, zstd.ErrDecoderSizeExceeded) && !bytes.Contains([]byte(err.Error()), []byte("-byte window")):
			t.Fatalf("Reader refuses what DecodeAll accepts (%d bytes): %v", len(want), err)
		}
		if haveC && err == io.EOF {
			c := readZstdStream(t, cspec, stream)
			if !c.long && c.err == io.EOF && !bytes.Equal(c.out, got) {
				t.Fatalf("libzstd returns %d bytes, klauspost %d, different", len(c.out), len(got))
			}
		}
		resetAfter(t, spec, stream, closed, plain)
		if haveC {
			resetAfter(t, cspec, stream, closed, plain)
		}
	})
}

// resetAfter reads stream through a Reader of spec (up to 1 MiB of output, whatever the
// outcome), resets it onto good and checks that it returns want and ends cleanly, with the
// new stream's counts alone.
func resetAfter(t *testing.T, spec Spec, stream, good, want []byte) {
	t.Helper()
	r := spec.NewReader(&chunkSource{data: stream, rng: rand.New(rand.NewSource(int64(len(stream))))})
	defer r.Close()
	buf := make([]byte, 4096)
	for n := 0; n < 1<<20; {
		k, err := r.Read(buf)
		n += k
		if err != nil {
			break
		}
	}
	r.(ReaderResetter).Reset(bytes.NewReader(good))
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s: reset after the stream: %d bytes (want %d), %v", spec, len(got), len(want), err)
	}
	if st := r.(Meter).Stats(); st.RawBytes != int64(len(want)) || st.WireBytes != int64(len(good)) {
		t.Fatalf("%s: reset after the stream: stats %+v, want %d raw, %d wire", spec, st, len(want), len(good))
	}
}
