package snappystream

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Table sizes. Positions are stored as int32 in a coordinate that Encode rebases before
// it could overflow. fast: one 6-byte-hash table; better: an 8-byte-hash table that
// indexes every position and a 4-byte-hash table for short matches. At most 192 KiB.
const (
	fastTableBits  = 14
	longTableBits  = 15
	shortTableBits = 14

	// minFarMatch is the shortest match worth a 4-byte-offset copy (5 bytes).
	minFarMatch = 8
	// rebaseAt bounds table positions well below the int32 limit.
	rebaseAt = 1<<31 - 1 - MaxEncodeBytes
)

// Encoder encodes the blocks of one stream direction, in order.
type Encoder struct {
	hist   history
	level  Level
	cur    int // table coordinate of the first byte of the next block
	blocks int64
	fast   []uint64 // fast: position (low 32 bits) and the 4 bytes found there
	table  []int32  // better: the long table
	short  []int32  // better only
}

// NewEncoder returns an encoder with the given history window (0 gives plain Snappy
// blocks) and level. It panics if windowBytes is outside [0, MaxWindowBytes].
func NewEncoder(windowBytes int, level Level) *Encoder {
	checkWindow(windowBytes)
	e := &Encoder{hist: history{windowBytes: windowBytes}, level: level}
	switch level {
	case Fast:
		e.fast = make([]uint64, 1<<fastTableBits)
	case Better:
		e.table = make([]int32, 1<<longTableBits)
		e.short = make([]int32, 1<<shortTableBits)
	default:
		panic(fmt.Sprintf("snappystream: unknown level %d", level))
	}
	e.cur = windowBytes + 1 // table zeros then lie outside the window
	return e
}

// Encode appends one block holding src to dst and advances the history. It panics if
// len(src) > MaxEncodeBytes.
func (e *Encoder) Encode(dst, src []byte) []byte {
	if len(src) > MaxEncodeBytes {
		panic(fmt.Sprintf("snappystream: block of %d bytes above MaxEncodeBytes", len(src)))
	}
	if e.cur > rebaseAt {
		e.rebase()
	}
	start := len(dst)
	if need := MaxEncodedLen(len(src)); cap(dst)-start < need {
		nd := make([]byte, start, start+need)
		copy(nd, dst)
		dst = nd
	}
	dst = binary.AppendUvarint(dst, uint64(len(src)))
	out := dst[len(dst):cap(dst)]
	var n int
	if len(src) < 12 {
		n = emitLiteral(out, src)
	} else if e.level == Better {
		n = e.encodeBetter(out, src)
	} else {
		n = e.encodeFast(out, src)
	}
	e.hist.push(src)
	e.cur += len(src)
	e.blocks++
	return dst[:len(dst)+n]
}

// Reset forgets the history, as for a new stream.
func (e *Encoder) Reset() {
	e.hist.reset()
	clear(e.fast)
	clear(e.table)
	clear(e.short)
	e.cur = e.hist.windowBytes + 1
	e.blocks = 0
}

// Blocks returns the number of blocks encoded so far.
func (e *Encoder) Blocks() int64 { return e.blocks }

// StateBytes returns the memory the encoder holds across blocks: history and tables.
func (e *Encoder) StateBytes() int {
	return e.hist.stateBytes() + 8*len(e.fast) + 4*(len(e.table)+len(e.short))
}

// rebase shifts table coordinates down; entries that fall out of the window become 0,
// which is out of the window too.
func (e *Encoder) rebase() {
	delta := e.cur - e.hist.windowBytes - 1
	for i, v := range e.fast {
		if p := int(uint32(v)) - delta; p > 0 {
			e.fast[i] = v&^0xffffffff | uint64(p)
		} else {
			e.fast[i] = v &^ 0xffffffff
		}
	}
	for _, t := range [][]int32{e.table, e.short} {
		for i, v := range t {
			if v2 := int(v) - delta; v2 > 0 {
				t[i] = int32(v2)
			} else {
				t[i] = 0
			}
		}
	}
	e.cur -= delta
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

// matchLen returns how many bytes starting at table coordinate c equal src[s:]. c must
// be before s and within the window.
func (e *Encoder) matchLen(c int, src []byte, s int) int {
	if c >= e.cur {
		return commonPrefix(src[c-e.cur:], src[s:])
	}
	a, b := e.hist.tail(e.cur - c)
	n := commonPrefix(a, src[s:])
	if n < len(a) {
		return n
	}
	if len(b) > 0 {
		m := commonPrefix(b, src[s+n:])
		n += m
		if m < len(b) {
			return n
		}
	}
	// The match runs out of the history into this block.
	return n + commonPrefix(src, src[s+n:])
}

// byteAt returns the byte at table coordinate c (before the current position).
func (e *Encoder) byteAt(c int, src []byte) byte {
	if c >= e.cur {
		return src[c-e.cur]
	}
	return e.hist.byteAt(e.cur - c)
}

// valid reports whether table coordinate c may be copied from: inside the window (or
// this block) and before the block position s.
func (e *Encoder) valid(c, s int) bool {
	return c >= e.cur-e.hist.len() && c < e.cur+s
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

// encodeFast is golang/snappy's encodeBlock with a 6-byte hash, candidates in the
// history, and matches extended backwards.
func (e *Encoder) encodeFast(dst, src []byte) (d int) {
	const tableBits = fastTableBits
	table := e.fast[:1<<tableBits]
	cur := e.cur
	minC := cur - e.hist.len() // oldest usable coordinate
	sLimit := len(src) - 8
	nextEmit := 0
	s := 0
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
			x := load64(src, s)
			h := hash6(x, tableBits)
			entry := table[h]
			table[h] = uint64(uint32(x))<<32 | uint64(cur+s)
			if uint32(entry>>32) != uint32(x) {
				continue // the 4 bytes differ: no need to look at the history
			}
			c = int(uint32(entry))
			if c < minC {
				continue // out of the window (or an empty entry)
			}
			length = e.matchLen(c, src, s)
			if length < 4 || (cur+s-c > 65535 && length < minFarMatch) {
				continue
			}
			break
		}
		// Extend backwards over bytes the previous literal would otherwise carry.
		for s > nextEmit && e.valid(c-1, s-1) && e.byteAt(c-1, src) == src[s-1] {
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
			c2 := int(uint32(table[hash6(load64(src, p), tableBits)])) - (p - s) // aligned to s
			if c2 == c || c2 < minC || c2 >= cur+s {
				continue
			}
			if n := e.matchLen(c2, src, s); n > length && (cur+s-c2 <= 65535 || cur+s-c > 65535) {
				c, length = c2, n
				break
			}
		}
		d += emitLiteral(dst[d:], src[nextEmit:s])
		d += emitCopy(dst[d:], cur+s-c, length)
		s += length
		nextEmit = s
		if s > sLimit {
			goto emitRemainder
		}
		// Index the two positions before the new one, as golang/snappy does.
		x2 := load64(src, s-2)
		table[hash6(x2, tableBits)] = uint64(uint32(x2))<<32 | uint64(cur+s-2)
		x1 := x2 >> 8
		table[hash6(load64(src, s-1), tableBits)] = uint64(uint32(x1))<<32 | uint64(cur+s-1)
	}
emitRemainder:
	d += emitLiteral(dst[d:], src[nextEmit:])
	return d
}
