package snappystream

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"
)

// Decoder decodes the blocks of one stream direction, in order.
type Decoder struct {
	win           window
	maxBlockBytes int
	blocks        int64 // blocks decoded so far; the index of the next block
	err           error // sticky: a stream that failed once is out of sync for good
}

// NewDecoder returns a decoder for a stream with the given history window that rejects
// blocks declaring more than maxBlockBytes (DefaultMaxBlockBytes if maxBlockBytes <= 0).
// It panics if windowBytes is outside [0, MaxWindowBytes].
func NewDecoder(windowBytes, maxBlockBytes int) *Decoder {
	checkWindow(windowBytes)
	if maxBlockBytes <= 0 {
		maxBlockBytes = DefaultMaxBlockBytes
	}
	return &Decoder{win: window{windowBytes: windowBytes}, maxBlockBytes: maxBlockBytes}
}

// Decode decodes exactly one block, appends its bytes to dst and advances the history.
// A block with bytes after its end, or any malformed block, is an error; after an error
// the stream is out of sync and every later call fails too (see Reset).
func (d *Decoder) Decode(dst, block []byte) ([]byte, error) {
	if d.err != nil {
		return dst, d.err
	}
	n, hdr, err := d.header(block)
	if err != nil {
		return dst, d.fail(err)
	}
	// No element produces more than 64 bytes from 3 input bytes (a 2-byte-offset copy),
	// so a block too short for its declared length is rejected before allocating.
	if uint64(n)*3 > 64*uint64(len(block)-hdr) {
		return dst, d.fail(fmt.Errorf("%w: declares %d bytes, more than its %d bytes of elements can produce", io.ErrUnexpectedEOF, n, len(block)-hdr))
	}
	if d.win.windowBytes == 0 {
		// No history: decode straight into dst.
		start := len(dst)
		dst = slices.Grow(dst, n)
		out := dst[start : start+n]
		used, err := d.decodeElements(out, 0, 0, block[hdr:])
		if err == nil && hdr+used != len(block) {
			err = fmt.Errorf("%w: %d bytes after the end of the block", ErrCorrupt, len(block)-hdr-used)
		}
		if err != nil {
			return dst[:start], d.fail(err)
		}
		d.blocks++
		return dst[:start+n], nil
	}
	bs := d.win.reserve(n)
	win := d.win.buf[:bs+n]
	used, err := d.decodeElements(win, bs, d.win.histLen(bs), block[hdr:])
	if err != nil {
		return dst, d.fail(err)
	}
	if hdr+used != len(block) {
		return dst, d.fail(fmt.Errorf("%w: %d bytes after the end of the block", ErrCorrupt, len(block)-hdr-used))
	}
	d.win.buf = win
	d.blocks++
	return append(dst, win[bs:]...), nil
}

// decodePrefix decodes the block that starts buf, which may hold bytes of later blocks after
// it, appends its output to dst and returns how many bytes of buf the block took. When it
// cannot (buf ends inside the block, or the block is not valid) it returns ok false and
// changes nothing a later call depends on: the bytes it wrote lie past the history's end, and
// no error is recorded. The caller then decodes the block the careful way (Decode, once the
// whole block is there), which reports what is wrong exactly as it always has. So a Reader
// that holds a whole block decodes it in one pass, without scanning it first.
//
// With view set, a decoder with a history returns the block's bytes where they lie in its
// window instead of appending them to dst: they stay valid until the next decode or Reset.
func (d *Decoder) decodePrefix(dst, buf []byte, view bool) (out []byte, used int, ok bool) {
	if d.err != nil {
		return dst, 0, false
	}
	n, hdr, err := d.header(buf)
	if err != nil || uint64(n)*3 > 64*uint64(len(buf)-hdr) {
		return dst, 0, false // not yet enough bytes for the declared length: reserve nothing
	}
	src := buf[hdr:]
	if d.win.windowBytes == 0 {
		start := len(dst)
		dst = slices.Grow(dst, n)
		u, err := d.decodeElements(dst[start:start+n], 0, 0, src)
		if err != nil {
			return dst[:start], 0, false
		}
		d.blocks++
		return dst[:start+n], hdr + u, true
	}
	bs := d.win.reserve(n)
	win := d.win.buf[:bs+n]
	u, err := d.decodeElements(win, bs, d.win.histLen(bs), src)
	if err != nil {
		return dst, 0, false
	}
	d.win.buf = win
	d.blocks++
	if view {
		return win[bs:], hdr + u, true
	}
	return append(dst, win[bs:]...), hdr + u, true
}

// Reset forgets the history and any error, as for a new stream.
func (d *Decoder) Reset() {
	d.win.reset()
	d.blocks = 0
	d.err = nil
}

// Blocks returns the number of blocks decoded so far.
func (d *Decoder) Blocks() int64 { return d.blocks }

// StateBytes returns the memory the decoder holds across blocks: the history and room
// for the blocks after it.
func (d *Decoder) StateBytes() int { return d.win.stateBytes() }

func (d *Decoder) fail(err error) error {
	d.err = fmt.Errorf("snappystream: block %d: %w", d.blocks, err)
	return d.err
}

// header parses the declared length and checks it against the bound.
func (d *Decoder) header(block []byte) (n, hdr int, err error) {
	var v uint64
	for i := 0; ; i++ {
		if i == len(block) {
			return 0, 0, fmt.Errorf("%w: length header truncated after %d bytes", io.ErrUnexpectedEOF, i)
		}
		if i == 5 {
			return 0, 0, fmt.Errorf("%w: length header longer than 5 bytes", ErrCorrupt)
		}
		c := block[i]
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			hdr = i + 1
			break
		}
	}
	if v > uint64(d.maxBlockBytes) {
		return 0, 0, fmt.Errorf("%w: declares %d bytes, bound is %d", ErrBlockTooLarge, v, d.maxBlockBytes)
	}
	return int(v), hdr, nil
}

// decodeElements fills win[bs:] (the whole block) from the elements in src and returns
// how many bytes of src they took; win[bs-h:bs] is the history copies may reach into. It
// is golang/snappy's decode loop on one slice that holds history and block alike.
func (d *Decoder) decodeElements(win []byte, bs, h int, src []byte) (int, error) {
	n := len(win) - bs
	lo := bs - h // oldest byte a copy may start at
	o, s := bs, 0
	var offset, length int
	for o < len(win) {
		if s >= len(src) {
			return s, fmt.Errorf("%w: block ends after %d of %d declared bytes", io.ErrUnexpectedEOF, o-bs, n)
		}
		tag := src[s]
		switch tag & 0x03 {
		case tagLiteral:
			x := uint32(tag >> 2)
			switch {
			case x < 60:
				s++
			case x == 60:
				s += 2
				if s > len(src) {
					return s, d.truncatedTag(o-bs, n)
				}
				x = uint32(src[s-1])
			case x == 61:
				s += 3
				if s > len(src) {
					return s, d.truncatedTag(o-bs, n)
				}
				x = uint32(src[s-2]) | uint32(src[s-1])<<8
			case x == 62:
				s += 4
				if s > len(src) {
					return s, d.truncatedTag(o-bs, n)
				}
				x = uint32(src[s-3]) | uint32(src[s-2])<<8 | uint32(src[s-1])<<16
			default:
				s += 5
				if s > len(src) {
					return s, d.truncatedTag(o-bs, n)
				}
				x = binary.LittleEndian.Uint32(src[s-4:])
			}
			ln := int64(x) + 1
			if ln > int64(len(win)-o) {
				return s, fmt.Errorf("%w: literal of %d bytes at output byte %d runs past the declared length %d", ErrCorrupt, ln, o-bs, n)
			}
			if ln > int64(len(src)-s) {
				return s, fmt.Errorf("%w: literal of %d bytes at output byte %d, only %d bytes left in the input", io.ErrUnexpectedEOF, ln, o-bs, len(src)-s)
			}
			length = int(ln)
			if length <= 16 && o+16 <= len(win) && s+16 <= len(src) {
				// Short literal with room to spare: two 8-byte moves instead of a memmove
				// call; the bytes written past the literal are overwritten later.
				binary.LittleEndian.PutUint64(win[o:], binary.LittleEndian.Uint64(src[s:]))
				binary.LittleEndian.PutUint64(win[o+8:], binary.LittleEndian.Uint64(src[s+8:]))
			} else {
				copy(win[o:o+length], src[s:s+length])
			}
			o += length
			s += length
			continue

		case tagCopy1:
			s += 2
			if s > len(src) {
				return s, d.truncatedTag(o-bs, n)
			}
			length = 4 + int(tag>>2)&0x7
			offset = int(uint32(tag&0xe0)<<3 | uint32(src[s-1]))

		case tagCopy2:
			s += 3
			if s > len(src) {
				return s, d.truncatedTag(o-bs, n)
			}
			length = 1 + int(tag>>2)
			offset = int(binary.LittleEndian.Uint16(src[s-2:]))

		case tagCopy4:
			s += 5
			if s > len(src) {
				return s, d.truncatedTag(o-bs, n)
			}
			length = 1 + int(tag>>2)
			offset = int(binary.LittleEndian.Uint32(src[s-4:]))
		}

		if offset <= 0 || offset > o-lo {
			return s, fmt.Errorf("%w: copy offset %d at output byte %d, valid offsets are 1..%d (%d history + %d decoded)", ErrCorrupt, offset, o-bs, o-lo, h, o-bs)
		}
		if length > len(win)-o {
			return s, fmt.Errorf("%w: copy of %d bytes at output byte %d runs past the declared length %d", ErrCorrupt, length, o-bs, n)
		}
		if length <= 16 && offset >= 8 && o+16 <= len(win) {
			// Short copy with room to spare: 8-byte moves are exact for offsets of at
			// least 8, overlapping or not, since each reads only bytes already written.
			binary.LittleEndian.PutUint64(win[o:], binary.LittleEndian.Uint64(win[o-offset:]))
			binary.LittleEndian.PutUint64(win[o+8:], binary.LittleEndian.Uint64(win[o-offset+8:]))
			o += length
			continue
		}
		if offset >= length {
			copy(win[o:o+length], win[o-offset:])
			o += length
			continue
		}
		// Overlapping copy: the result repeats the last offset bytes, as a forward byte
		// copy would. Below 8, copy bytes singly until a whole multiple of the pattern
		// of at least 8 bytes is there, then move 8 bytes at a time from that distance.
		if offset < 8 {
			m := offset * ((8 + offset - 1) / offset)
			pre := min(length, m-offset)
			for end := o + pre; o < end; o++ {
				win[o] = win[o-offset]
			}
			length -= pre
			offset = m
		}
		for ; length >= 8; length -= 8 {
			binary.LittleEndian.PutUint64(win[o:], binary.LittleEndian.Uint64(win[o-offset:]))
			o += 8
		}
		for ; length > 0; length-- {
			win[o] = win[o-offset]
			o++
		}
	}
	return s, nil
}

func (d *Decoder) truncatedTag(o, n int) error {
	return fmt.Errorf("%w: element at output byte %d cut off (%d of %d bytes produced)", io.ErrUnexpectedEOF, o, o, n)
}
