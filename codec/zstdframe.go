package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// zstd frame format constants (RFC 8878).
const (
	zstdMagic          = 0xFD2FB528
	zstdSkippableMagic = 0x184D2A50 // low 4 bits are free
	// zstdMaxBlockBytes is Block_Maximum_Size: no block decodes to more.
	zstdMaxBlockBytes = 128 << 10
)

// errZstdFrame is wrapped by errors about a malformed or out-of-bounds zstd stream.
var errZstdFrame = errors.New("zstd stream")

// blockGate sits between the transport and a zstd decoder. It parses the frame and
// block headers as the bytes pass and hands the decoder at most the rest of the current
// block per Read, so that no decoder, however much it would read ahead, sees a block
// before it has returned the previous one's output; and it records where each block
// ends on the wire. A block's piece includes what precedes it (a frame header) and
// follows it within the frame (the checksum after the last block). It also enforces the
// spec's window on every frame header before the decoder sees it: the memory bound of
// decoders that take no such limit themselves.
type blockGate struct {
	r         io.Reader
	maxWindow uint64

	buf        []byte // buf[start:end] read from r, not yet handed out
	start, end int

	need    int64 // bytes of the current piece not yet handed out
	inFrame bool  // between a frame header and its last block
	sum     bool  // the current frame ends with a 4-byte checksum
	err     error // sticky parse or transport error

	handed int64 // bytes handed to the decoder
	done   int64 // wire offset of the end of the last complete piece
	blocks int64 // complete pieces (blocks, skippable frames)
}

func newBlockGate(r io.Reader, maxWindowBytes int) *blockGate {
	return &blockGate{r: r, maxWindow: uint64(maxWindowBytes), buf: make([]byte, 4096)}
}

// Read hands out bytes of the current piece only.
func (g *blockGate) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if g.need == 0 {
		if g.err != nil {
			return 0, g.err
		}
		if err := g.next(); err != nil {
			g.err = err
			return 0, err
		}
	}
	var n int
	if g.start < g.end {
		n = copy(p[:min(int64(len(p)), g.need)], g.buf[g.start:g.end])
		g.start += n
	} else {
		// Nothing buffered: read straight into p, within the piece.
		var err error
		n, err = g.r.Read(p[:min(int64(len(p)), g.need)])
		if n == 0 && err != nil {
			g.err = g.transportErr(err)
			return 0, g.err
		}
	}
	g.need -= int64(n)
	g.handed += int64(n)
	if g.need == 0 {
		g.done = g.handed
		g.blocks++
	}
	return n, nil
}

// transportErr turns an end of input inside a piece into io.ErrUnexpectedEOF.
func (g *blockGate) transportErr(err error) error {
	if err == io.EOF {
		return fmt.Errorf("%w: stream ends inside block %d: %w", errZstdFrame, g.blocks, io.ErrUnexpectedEOF)
	}
	return err
}

// peek makes sure n bytes are buffered. atStart reports that the input may end cleanly
// before the first of them.
func (g *blockGate) peek(n int, atStart bool) ([]byte, error) {
	for g.end-g.start < n {
		if g.start > 0 {
			g.end = copy(g.buf, g.buf[g.start:g.end])
			g.start = 0
		}
		m, err := g.r.Read(g.buf[g.end:])
		g.end += m
		if m == 0 && err != nil {
			if err == io.EOF && atStart && g.end == g.start {
				return nil, io.EOF
			}
			return nil, g.transportErr(err)
		}
	}
	return g.buf[g.start : g.start+n], nil
}

// next parses the headers that start the next piece and sets its length. Only headers
// are peeked; the block content streams through Read.
func (g *blockGate) next() error {
	pos := 0
	if !g.inFrame {
		h, err := g.peek(4, true)
		if err != nil {
			return err
		}
		magic := binary.LittleEndian.Uint32(h)
		if magic&^0xF == zstdSkippableMagic {
			if h, err = g.peek(8, false); err != nil {
				return err
			}
			g.need = 8 + int64(binary.LittleEndian.Uint32(h[4:]))
			return nil
		}
		if magic != zstdMagic {
			return fmt.Errorf("%w: frame %#08x does not start with the zstd magic number", errZstdFrame, magic)
		}
		if h, err = g.peek(5, false); err != nil {
			return err
		}
		fhd := h[4]
		fcsFlag, single, dictFlag := fhd>>6, fhd>>5&1 == 1, fhd&3
		if fhd&0x08 != 0 {
			return fmt.Errorf("%w: frame header reserved bit set", errZstdFrame)
		}
		fcsBytes := [4]int{0, 2, 4, 8}[fcsFlag]
		if fcsFlag == 0 && single {
			fcsBytes = 1
		}
		wdBytes := 1
		if single {
			wdBytes = 0
		}
		hdr := 5 + wdBytes + [4]int{0, 1, 2, 4}[dictFlag] + fcsBytes
		if h, err = g.peek(hdr, false); err != nil {
			return err
		}
		var window uint64
		if single {
			var fcs [8]byte
			copy(fcs[:], h[hdr-fcsBytes:hdr])
			window = binary.LittleEndian.Uint64(fcs[:])
			if fcsBytes == 2 {
				window += 256
			}
		} else {
			exp, mant := uint64(h[5]>>3), uint64(h[5]&7)
			base := uint64(1) << (10 + exp)
			window = base + base/8*mant
		}
		if window > g.maxWindow {
			return fmt.Errorf("%w: frame declares a %d-byte window, the spec allows %d", errZstdFrame, window, g.maxWindow)
		}
		g.sum = fhd&0x04 != 0
		g.inFrame = true
		pos = hdr
	}
	h, err := g.peek(pos+3, false)
	if err != nil {
		return err
	}
	bh := uint32(h[pos]) | uint32(h[pos+1])<<8 | uint32(h[pos+2])<<16
	last, typ, size := bh&1 == 1, bh>>1&3, int64(bh>>3)
	content := size
	switch typ {
	case 1: // RLE: one byte repeated size times
		content = 1
	case 3:
		return fmt.Errorf("%w: block %d has the reserved block type", errZstdFrame, g.blocks)
	}
	if size > zstdMaxBlockBytes || (typ != 1 && uint64(size) > g.maxWindow) {
		return fmt.Errorf("%w: block %d of %d bytes is above the block maximum", errZstdFrame, g.blocks, size)
	}
	g.need = int64(pos) + 3 + content
	if last {
		if g.sum {
			g.need += 4
		}
		g.inFrame = false
	}
	return nil
}
