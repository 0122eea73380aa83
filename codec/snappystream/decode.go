package snappystream

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Decoder decodes the blocks of one stream direction, in order.
type Decoder struct {
	hist          history
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
	return &Decoder{hist: history{windowBytes: windowBytes}, maxBlockBytes: maxBlockBytes}
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
	start := len(dst)
	if cap(dst)-start < n {
		nd := make([]byte, start, start+n)
		copy(nd, dst)
		dst = nd
	}
	out := dst[start : start+n]
	used, err := d.decodeElements(out, block[hdr:])
	if err != nil {
		return dst[:start], d.fail(err)
	}
	if hdr+used != len(block) {
		return dst[:start], d.fail(fmt.Errorf("%w: %d bytes after the end of the block", ErrCorrupt, len(block)-hdr-used))
	}
	d.hist.push(out)
	d.blocks++
	return dst[:start+n], nil
}

// Reset forgets the history and any error, as for a new stream.
func (d *Decoder) Reset() {
	d.hist.reset()
	d.blocks = 0
	d.err = nil
}

// Blocks returns the number of blocks decoded so far.
func (d *Decoder) Blocks() int64 { return d.blocks }

// StateBytes returns the memory the decoder holds across blocks (the history).
func (d *Decoder) StateBytes() int { return d.hist.stateBytes() }

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

// decodeElements fills out (the whole block) from the elements in src and returns how
// many bytes of src they took. It is golang/snappy's decode loop, plus copies that start
// in the history.
func (d *Decoder) decodeElements(out, src []byte) (int, error) {
	h := d.hist.len()
	var o, s, offset, length int
	for o < len(out) {
		if s >= len(src) {
			return s, fmt.Errorf("%w: block ends after %d of %d declared bytes", io.ErrUnexpectedEOF, o, len(out))
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
					return s, d.truncatedTag(o, len(out))
				}
				x = uint32(src[s-1])
			case x == 61:
				s += 3
				if s > len(src) {
					return s, d.truncatedTag(o, len(out))
				}
				x = uint32(src[s-2]) | uint32(src[s-1])<<8
			case x == 62:
				s += 4
				if s > len(src) {
					return s, d.truncatedTag(o, len(out))
				}
				x = uint32(src[s-3]) | uint32(src[s-2])<<8 | uint32(src[s-1])<<16
			default:
				s += 5
				if s > len(src) {
					return s, d.truncatedTag(o, len(out))
				}
				x = binary.LittleEndian.Uint32(src[s-4:])
			}
			n := int64(x) + 1
			if n > int64(len(out)-o) {
				return s, fmt.Errorf("%w: literal of %d bytes at output byte %d runs past the declared length %d", ErrCorrupt, n, o, len(out))
			}
			if n > int64(len(src)-s) {
				return s, fmt.Errorf("%w: literal of %d bytes at output byte %d, only %d bytes left in the input", io.ErrUnexpectedEOF, n, o, len(src)-s)
			}
			length = int(n)
			if length <= 16 && o+16 <= len(out) && s+16 <= len(src) {
				// Short literal with room to spare: two 8-byte moves instead of a memmove
				// call; the bytes written past the literal are overwritten later.
				binary.LittleEndian.PutUint64(out[o:], binary.LittleEndian.Uint64(src[s:]))
				binary.LittleEndian.PutUint64(out[o+8:], binary.LittleEndian.Uint64(src[s+8:]))
			} else {
				copy(out[o:o+length], src[s:s+length])
			}
			o += length
			s += length
			continue

		case tagCopy1:
			s += 2
			if s > len(src) {
				return s, d.truncatedTag(o, len(out))
			}
			length = 4 + int(tag>>2)&0x7
			offset = int(uint32(tag&0xe0)<<3 | uint32(src[s-1]))

		case tagCopy2:
			s += 3
			if s > len(src) {
				return s, d.truncatedTag(o, len(out))
			}
			length = 1 + int(tag>>2)
			offset = int(binary.LittleEndian.Uint16(src[s-2:]))

		case tagCopy4:
			s += 5
			if s > len(src) {
				return s, d.truncatedTag(o, len(out))
			}
			length = 1 + int(tag>>2)
			offset = int(binary.LittleEndian.Uint32(src[s-4:]))
		}

		if offset <= 0 || offset > o+h {
			return s, fmt.Errorf("%w: copy offset %d at output byte %d, valid offsets are 1..%d (%d history + %d decoded)", ErrCorrupt, offset, o, o+h, h, o)
		}
		if length > len(out)-o {
			return s, fmt.Errorf("%w: copy of %d bytes at output byte %d runs past the declared length %d", ErrCorrupt, length, o, len(out))
		}
		if offset > o {
			// The copy starts in the history; it may run on into this block's output.
			a, b := d.hist.tail(offset - o)
			k := copy(out[o:o+length], a)
			if k < length && len(b) > 0 {
				k += copy(out[o+k:o+length], b)
			}
			o += k
			length -= k
			if length == 0 {
				continue
			}
			// What remains starts at out[0] and is a normal in-block copy.
		}
		if length <= 16 && offset >= 8 && o+16 <= len(out) {
			// Short copy with room to spare: 8-byte moves are exact for offsets of at
			// least 8, overlapping or not, since each reads only bytes already written.
			binary.LittleEndian.PutUint64(out[o:], binary.LittleEndian.Uint64(out[o-offset:]))
			binary.LittleEndian.PutUint64(out[o+8:], binary.LittleEndian.Uint64(out[o-offset+8:]))
			o += length
			continue
		}
		if offset >= length {
			copy(out[o:o+length], out[o-offset:])
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
				out[o] = out[o-offset]
			}
			length -= pre
			offset = m
		}
		for ; length >= 8; length -= 8 {
			binary.LittleEndian.PutUint64(out[o:], binary.LittleEndian.Uint64(out[o-offset:]))
			o += 8
		}
		for ; length > 0; length-- {
			out[o] = out[o-offset]
			o++
		}
	}
	return s, nil
}

func (d *Decoder) truncatedTag(o, n int) error {
	return fmt.Errorf("%w: element at output byte %d cut off (%d of %d bytes produced)", io.ErrUnexpectedEOF, o, o, n)
}
