package snappystream

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Table sizes. Entries hold a stream coordinate (low 32 bits; Encode rebases them before
// they could overflow) and the 4 bytes found there (high 32 bits), so that most
// candidates are rejected without touching the window. fast: one 6-byte-hash table;
// better: an 8-byte-hash table and a 4-byte-hash table for short matches. At most 384 KiB.
const (
	fastTableBits  = 14
	longTableBits  = 15
	shortTableBits = 14

	// minFarMatch is the shortest match worth a 4-byte-offset copy (5 bytes).
	minFarMatch = 8
	// rebaseAt bounds table coordinates well below the uint32 limit.
	rebaseAt = 1<<31 - 1 - MaxEncodeBytes
)

// Encoder encodes the blocks of one stream direction, in order.
type Encoder struct {
	win    window
	level  Level
	blocks int64
	fast   []uint64 // fast
	long   []uint64 // better
	short  []uint64 // better
}

// NewEncoder returns an encoder with the given history window (0 gives plain Snappy
// blocks) and level. It panics if windowBytes is outside [0, MaxWindowBytes].
func NewEncoder(windowBytes int, level Level) *Encoder {
	checkWindow(windowBytes)
	e := &Encoder{win: window{windowBytes: windowBytes, base: 1}, level: level}
	switch level {
	case Fast:
		e.fast = make([]uint64, 1<<fastTableBits)
	case Better:
		e.long = make([]uint64, 1<<longTableBits)
		e.short = make([]uint64, 1<<shortTableBits)
	default:
		panic(fmt.Sprintf("snappystream: unknown level %d", level))
	}
	return e
}

// Encode appends one block holding src to dst and advances the history. It panics if
// len(src) > MaxEncodeBytes.
func (e *Encoder) Encode(dst, src []byte) []byte {
	if len(src) > MaxEncodeBytes {
		panic(fmt.Sprintf("snappystream: block of %d bytes above MaxEncodeBytes", len(src)))
	}
	start := len(dst)
	if need := MaxEncodedLen(len(src)); cap(dst)-start < need {
		nd := make([]byte, start, start+need)
		copy(nd, dst)
		dst = nd
	}
	dst = binary.AppendUvarint(dst, uint64(len(src)))
	out := dst[len(dst):cap(dst)]
	// The block is win[bs:]: with a history, appended to the window; without one,
	// src itself, at coordinates after every earlier block's.
	win, bs := src, 0
	if e.win.windowBytes > 0 {
		bs = e.win.reserve(len(src))
		e.win.buf = append(e.win.buf, src...)
		win = e.win.buf
	}
	if e.win.base+bs+len(src) > rebaseAt {
		e.rebase()
	}
	var n int
	if len(src) < 12 {
		n = emitLiteral(out, src)
	} else if e.level == Better {
		n = e.encodeBetter(out, win, bs)
	} else {
		n = e.encodeFast(out, win, bs)
	}
	if e.win.windowBytes == 0 {
		e.win.base += len(src)
	}
	e.blocks++
	return dst[:len(dst)+n]
}

// Reset forgets the history, as for a new stream.
func (e *Encoder) Reset() {
	e.win.reset()
	e.win.base = 1
	clear(e.fast)
	clear(e.long)
	clear(e.short)
	e.blocks = 0
}

// Blocks returns the number of blocks encoded so far.
func (e *Encoder) Blocks() int64 { return e.blocks }

// StateBytes returns the memory the encoder holds across blocks: window and tables.
func (e *Encoder) StateBytes() int {
	return e.win.stateBytes() + 8*(len(e.fast)+len(e.long)+len(e.short))
}

// rebase shifts coordinates down so that the window starts at 1; entries that fall
// before it become 0, which is never a usable coordinate.
func (e *Encoder) rebase() {
	delta := e.win.base - 1
	for _, t := range [][]uint64{e.fast, e.long, e.short} {
		for i, v := range t {
			if p := int(uint32(v)) - delta; p > 0 {
				t[i] = v&^0xffffffff | uint64(p)
			} else {
				t[i] = v &^ 0xffffffff
			}
		}
	}
	e.win.base = 1
}

// entry is a table entry for window index i holding the 4 bytes x.
func (e *Encoder) entry(i int, x uint64) uint64 {
	return uint64(uint32(x))<<32 | uint64(uint32(e.win.base+i))
}

// candidate returns the window index of a table entry if its 4 bytes equal x's and it
// lies in [lo, s), else -1.
func (e *Encoder) candidate(v, x uint64, lo, s int) int {
	if uint32(v>>32) != uint32(x) {
		return -1
	}
	c := int(uint32(v)) - e.win.base
	if c < lo || c >= s {
		return -1
	}
	return c
}

func load32(b []byte, i int) uint32 { return binary.LittleEndian.Uint32(b[i:]) }
func load64(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) }

func hash4(u uint64, tableBits uint) uint32 {
	return (uint32(u) * 0x1e35a7bd) >> (32 - tableBits)
}

func hash6(u uint64, tableBits uint) uint32 {
	return uint32(((u << 16) * 227718039650203) >> (64 - tableBits))
}

func hash8(u uint64, tableBits uint) uint32 {
	return uint32((u * 0xcf1bbcdcb7a56463) >> (64 - tableBits))
}

// commonPrefix returns the length of the common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := load64(a, i) ^ load64(b, i); x != 0 {
			return i + bits.TrailingZeros64(x)>>3
		}
	}
	for ; i < n && a[i] == b[i]; i++ {
	}
	return i
}

// emitLiteral writes a literal element and returns its size.
func emitLiteral(dst, lit []byte) int {
	if len(lit) == 0 {
		return 0
	}
	i, n := 0, uint(len(lit)-1)
	switch {
	case n < 60:
		dst[0] = uint8(n)<<2 | tagLiteral
		i = 1
	case n < 1<<8:
		dst[0] = 60<<2 | tagLiteral
		dst[1] = uint8(n)
		i = 2
	case n < 1<<16:
		dst[0] = 61<<2 | tagLiteral
		dst[1] = uint8(n)
		dst[2] = uint8(n >> 8)
		i = 3
	case n < 1<<24:
		dst[0] = 62<<2 | tagLiteral
		dst[1] = uint8(n)
		dst[2] = uint8(n >> 8)
		dst[3] = uint8(n >> 16)
		i = 4
	default:
		dst[0] = 63<<2 | tagLiteral
		binary.LittleEndian.PutUint32(dst[1:], uint32(n))
		i = 5
	}
	return i + copy(dst[i:], lit)
}

// emitCopy writes copy elements for length bytes at offset and returns their size.
// Offsets up to 65535 use 1- and 2-byte-offset copies as golang/snappy does; larger
// ones use 4-byte-offset copies of up to 64 bytes each.
func emitCopy(dst []byte, offset, length int) int {
	i := 0
	if offset > 65535 {
		for length > 0 {
			l := min(length, 64)
			dst[i] = uint8(l-1)<<2 | tagCopy4
			binary.LittleEndian.PutUint32(dst[i+1:], uint32(offset))
			i += 5
			length -= l
		}
		return i
	}
	for length >= 68 {
		dst[i+0] = 63<<2 | tagCopy2
		dst[i+1] = uint8(offset)
		dst[i+2] = uint8(offset >> 8)
		i += 3
		length -= 64
	}
	if length > 64 {
		dst[i+0] = 59<<2 | tagCopy2
		dst[i+1] = uint8(offset)
		dst[i+2] = uint8(offset >> 8)
		i += 3
		length -= 60
	}
	if length >= 12 || offset >= 2048 || length < 4 {
		dst[i+0] = uint8(length-1)<<2 | tagCopy2
		dst[i+1] = uint8(offset)
		dst[i+2] = uint8(offset >> 8)
		return i + 3
	}
	dst[i+0] = uint8(offset>>8)<<5 | uint8(length-4)<<2 | tagCopy1
	dst[i+1] = uint8(offset)
	return i + 2
}

// copyCost returns the size of emitCopy's output.
func copyCost(offset, length int) int {
	if offset > 65535 {
		return 5 * ((length + 63) / 64)
	}
	n := 0
	for length >= 68 {
		n += 3
		length -= 64
	}
	if length > 64 {
		n += 3
		length -= 60
	}
	if length >= 12 || offset >= 2048 || length < 4 {
		return n + 3
	}
	return n + 2
}

// encodeFast is golang/snappy's encodeBlock over the window: a 6-byte hash, candidates
// in the history, matches extended backwards. The block is win[bs:].
func (e *Encoder) encodeFast(dst, win []byte, bs int) (d int) {
	const tableBits = fastTableBits
	table := e.fast[:1<<tableBits]
	lo := bs - e.win.histLen(bs) // oldest usable index
	sLimit := len(win) - 8
	nextEmit := bs
	s := bs
	for {
		// Heuristic match skipping as in Snappy, but faster: after 16 misses look at
		// every second byte, after 8 more every third... Signatures and cells are random;
		// backward extension recovers the start of a match found late.
		skip := 16
		nextS := s
		var c, length int
		for {
			s = nextS
			step := skip >> 4
			nextS = s + step
			skip += step
			if s > sLimit {
				goto emitRemainder
			}
			x := load64(win, s)
			h := hash6(x, tableBits)
			v := table[h]
			table[h] = e.entry(s, x)
			if c = e.candidate(v, x, lo, s); c < 0 {
				continue
			}
			length = 4 + commonPrefix(win[c+4:], win[s+4:])
			if s-c > 65535 && length < minFarMatch {
				continue
			}
			break
		}
		// Extend backwards over bytes the previous literal would otherwise carry.
		for s > nextEmit && c > lo && win[c-1] == win[s-1] {
			s--
			c--
			length++
		}
		// The positions just before the end of a match are indexed below; in earlier
		// blocks they often start the longer match this one only shares a prefix of.
		for k := 2; k >= 1; k-- {
			p := s + length - k
			if p <= s || p > sLimit {
				continue
			}
			c2 := int(uint32(table[hash6(load64(win, p), tableBits)])) - e.win.base - (p - s) // aligned to s
			if c2 == c || c2 < lo || c2 >= s {
				continue
			}
			if n := commonPrefix(win[c2:], win[s:]); n > length && (s-c2 <= 65535 || s-c > 65535) {
				c, length = c2, n
				break
			}
		}
		d += emitLiteral(dst[d:], win[nextEmit:s])
		d += emitCopy(dst[d:], s-c, length)
		s += length
		nextEmit = s
		if s > sLimit {
			goto emitRemainder
		}
		// Index the two positions before the new one, as golang/snappy does.
		x2 := load64(win, s-2)
		table[hash6(x2, tableBits)] = e.entry(s-2, x2)
		x1 := load64(win, s-1)
		table[hash6(x1, tableBits)] = e.entry(s-1, x1)
	}
emitRemainder:
	d += emitLiteral(dst[d:], win[nextEmit:])
	return d
}
