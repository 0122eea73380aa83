package snappystream

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// The match finder. Every table holds compact entries: 8 tag bits of the position's hash
// (the bits just below the index) over its stream coordinate modulo 2^24. A candidate is
// the latest window index with that coordinate; it is used only if it lies in the window
// and its 4 bytes equal the probe's, so an entry can never yield a wrong copy, however old:
// the table stays valid across blocks with no rebasing and no re-hashing of the history.
// The tag rejects all but 1/256 of the entries left by other contents without touching the
// window. 2^24 covers MaxWindowBytes (an entry exactly 2^24 back is not used).
//
// Table sizes follow the window: about one entry per 4 bytes of it (a repeat is findable
// while its entry survives, and IHAVE ids recur 64 KiB–1 MiB apart on a gossip stream),
// between a floor (the 2^14 entries fast had for every window) and a cap (memory per
// stream: a 4 MiB table at most).
const (
	minFastTableBits = 14
	maxFastTableBits = 20
	minLongTableBits = 15
	maxLongTableBits = 20
	shortTableBits   = 14

	posBits = 24
	posMask = 1<<posBits - 1

	// gentleSkipShift: above the default window, fast's skip step grows by one per
	// 2^gentleSkipShift bytes without a match.
	gentleSkipShift = 6
	// maxSkipStep and maxGentleStep cap fast's skip step up to and above the default
	// window: a step that keeps growing through kilobytes without a match probes a list of
	// new ids so sparsely that they are never indexed, so their repeats a heartbeat later
	// are missed as well (docs/codecs.md, "fast after incompressible bytes"). 5 rather than
	// 8 up to the default: where new and re-advertised 20-byte ids alternate (an IHAVE in a
	// frame of its own), a re-advertised id is found only where a probe lands at an offset
	// into it that was probed, and entered, when it came before: about 20/step² chances
	// per id, 0.3 at a step of 8 and 0.8 at 5 (the effect, measured: docs/codecs.md).
	maxSkipStep   = 5
	maxGentleStep = 16

	// minFarMatch is the shortest match worth a 4-byte-offset copy (5 bytes).
	minFarMatch = 8
)

// tableBits returns log2 of a table's entries for a window: log2(window) - 2, clamped.
func tableBits(windowBytes, lo, hi int) uint {
	b := bits.Len(uint(max(windowBytes, 1)-1)) - 2
	return uint(min(max(b, lo), hi))
}

// Encoder encodes the blocks of one stream direction, in order.
type Encoder struct {
	win    window
	level  Level
	blocks int64
	// fast: one 6-byte-hash table; better: an 8-byte-hash table (long) and a 6-byte-hash
	// table for short matches.
	fastBits, longBits uint
	fast               []uint32
	long               []uint32
	short              []uint32
	// portable makes fast use encodeFastBlockGo where encodeFastBlock is assembly: the
	// differential tests run both on the same stream.
	portable bool
}

// NewEncoder returns an encoder with the given history window (0 gives plain Snappy
// blocks) and level. It panics if windowBytes is outside [0, MaxWindowBytes].
func NewEncoder(windowBytes int, level Level) *Encoder {
	checkWindow(windowBytes)
	e := &Encoder{win: window{windowBytes: windowBytes}, level: level}
	switch level {
	case Fast:
		e.fastBits = tableBits(windowBytes, minFastTableBits, maxFastTableBits)
		e.fast = make([]uint32, 1<<e.fastBits)
	case Better:
		e.longBits = tableBits(windowBytes, minLongTableBits, maxLongTableBits)
		e.long = make([]uint32, 1<<e.longBits)
		e.short = make([]uint32, 1<<shortTableBits)
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
	clear(e.fast)
	clear(e.long)
	clear(e.short)
	e.blocks = 0
}

// Blocks returns the number of blocks encoded so far.
func (e *Encoder) Blocks() int64 { return e.blocks }

// StateBytes returns the memory the encoder holds across blocks: window and tables.
func (e *Encoder) StateBytes() int {
	return e.win.stateBytes() + 4*(len(e.fast)+len(e.long)+len(e.short))
}

// entry is a table entry for window index i with hash tag tag.
func (e *Encoder) entry(i int, tag uint32) uint32 {
	return tag<<posBits | uint32(e.win.base+i)&posMask
}

// candidate returns the window index an entry points to if its tag is tag and it lies in
// [lo, s), else -1. The caller verifies the bytes there.
func (e *Encoder) candidate(v, tag uint32, lo, s int) int {
	d := (uint32(e.win.base+s) - v) & posMask
	c := s - int(d)
	if v>>posBits != tag || d == 0 || c < lo {
		return -1
	}
	return c
}

// at returns the window index an entry points to, as seen from index s (whatever its tag).
func (e *Encoder) at(v uint32, s int) int {
	d := (uint32(e.win.base+s) - v) & posMask
	if d == 0 {
		return -1
	}
	return s - int(d)
}

func load32(b []byte, i int) uint32 { return binary.LittleEndian.Uint32(b[i:]) }
func load64(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) }

// hash6 and hash8 hash the low 6 or 8 bytes of u for a table of 2^(64-shift) entries: the
// top bits of the product index the table, the 8 below them are the entry's tag. (shift
// rather than the table's bits, masked, so that the shifts compile to single instructions.)
func hash6(u uint64, shift uint) (uint32, uint32) {
	p := (u << 16) * 227718039650203
	return uint32(p >> (shift & 63)), uint32(uint8(p >> ((shift - 8) & 63)))
}

func hash8(u uint64, shift uint) (uint32, uint32) {
	p := u * 0xcf1bbcdcb7a56463
	return uint32(p >> (shift & 63)), uint32(uint8(p >> ((shift - 8) & 63)))
}

// matchLen returns the length of the match at c for position s > c, whose 8 bytes are x
// (s ≤ len(win) − 8): the first 8 bytes from one load each.
func matchLen(win []byte, c, s int, x uint64) int {
	if y := load64(win, c) ^ x; y != 0 {
		return bits.TrailingZeros64(y) >> 3
	}
	return 8 + commonPrefix(win[c+8:], win[s+8:])
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
// in the history, matches extended backwards. The block is win[bs:]. The loop itself is
// encodeFastBlock: amd64 assembly (encode_amd64.s) or the portable encodeFastBlockGo,
// which specifies it.
func (e *Encoder) encodeFast(dst, win []byte, bs int) (d int) {
	if e.portable {
		return encodeFastBlockGo(dst, win, e.fast, bs, bs-e.win.histLen(bs), uint32(e.win.base),
			64-e.fastBits, e.win.windowBytes > DefaultWindowBytes)
	}
	return encodeFastBlock(dst, win, e.fast, bs, bs-e.win.histLen(bs), uint32(e.win.base),
		64-e.fastBits, e.win.windowBytes > DefaultWindowBytes)
}

// encodeFastBlock's parameters: the block is win[bs:], win[lo:bs] the history a copy may
// use; table has 2^(64-shift) entries of coordinates relative to base (the stream
// coordinate of win[0], modulo 2^24); gentle selects the skip step of windows above the
// default. It returns the bytes written to dst, which has room for MaxEncodedLen(len(win)-bs)
// (less the header), and leaves table indexed as the portable function does, entry for
// entry: the assembly must match it byte for byte (TestEncodeFastBlockAsm, FuzzEncodeFastBlockAsm).
func encodeFastBlockGo(dst, win []byte, table []uint32, bs, lo int, base uint32, shift uint, gentle bool) (d int) {
	sLimit := len(win) - 8
	nextEmit := bs
	s := bs
	for {
		// Skip ahead over bytes that do not match: after 16 misses look at every second
		// byte, after 8 more every third... as Snappy does but twice as fast (signatures
		// and blob cells are random; backward extension recovers the start of a match
		// found late), up to every 8th byte. With a window above the default, where most
		// of what a stream repeats lies far back, the step grows more gently, by one per
		// 64 bytes without a match (zstd grows it by one per 256), up to 16: IHAVE ids are
		// 20 bytes, and a step that grows geometrically over a run of new ids jumps over
		// the repeated ones after it. The caps keep the search from going blind: an id
		// list probed every few hundred bytes is barely indexed, so its repeats in the next
		// heartbeats are not found either, and the step never comes down.
		skip := 16
		nextS := s
		var c, length int
		if s > sLimit {
			goto emitRemainder
		}
		// The next probe's hash is computed before the current candidate is
		// checked, so that their loads overlap the check (as golang/snappy and zstd do).
		x := load64(win, s)
		h, tag := hash6(x, shift)
		for {
			s = nextS
			step := min(skip>>4, maxSkipStep)
			if gentle {
				step = min(1+(s-nextEmit)>>gentleSkipShift, maxGentleStep)
			}
			nextS = s + step
			skip += step
			v := table[h]
			table[h] = tag<<posBits | (base+uint32(s))&posMask
			cx, ctag := x, tag
			if nextS <= sLimit {
				x = load64(win, nextS)
				h, tag = hash6(x, shift)
			}
			dist := (base + uint32(s) - v) & posMask
			c = s - int(dist)
			if v>>posBits != ctag || dist == 0 || c < lo {
				if nextS > sLimit {
					goto emitRemainder
				}
				continue
			}
			if length = matchLen(win, c, s, cx); length < 4 {
				if nextS > sLimit {
					goto emitRemainder
				}
				continue
			}
			if s-c > 65535 && length < minFarMatch {
				if nextS > sLimit {
					goto emitRemainder
				}
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
		// Their hashes are kept: when no longer match is found they are the two positions
		// indexed after the copy (s-2 and s-1 there), so two loads and hashes per match
		// are saved (the profile put them at ~3 % of encodeFast; docs/measurements/codecs.md).
		var hk, tk [3]uint32
		improved := false
		for k := 2; k >= 1; k-- {
			p := s + length - k
			if p <= s || p > sLimit {
				continue
			}
			h, tag := hash6(load64(win, p), shift)
			hk[k], tk[k] = h, tag
			v := table[h]
			// The entry's position seen from p, aligned to s (a distance of 0 is no
			// candidate: c2 = s, rejected below).
			c2 := s - int((base+uint32(p)-v)&posMask)
			// A longer match must also hold the byte that ended this one.
			if v>>posBits != tag || c2 == c || c2 < lo || c2 >= s || s+length >= len(win) || win[c2+length] != win[s+length] {
				continue
			}
			if n := commonPrefix(win[c2:], win[s:]); n > length && (s-c2 <= 65535 || s-c > 65535) {
				c, length = c2, n
				improved = true
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
		// (s ≤ sLimit here, so the loop above hashed both when it found nothing longer.)
		if improved {
			hk[2], tk[2] = hash6(load64(win, s-2), shift)
			hk[1], tk[1] = hash6(load64(win, s-1), shift)
		}
		table[hk[2]] = tk[2]<<posBits | (base+uint32(s-2))&posMask
		table[hk[1]] = tk[1]<<posBits | (base+uint32(s-1))&posMask
	}
emitRemainder:
	d += emitLiteral(dst[d:], win[nextEmit:])
	return d
}
