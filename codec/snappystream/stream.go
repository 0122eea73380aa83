package snappystream

import (
	"errors"
	"fmt"
	"io"
)

// Writer compresses each Write into one block and writes it with a single Write on
// the underlying writer.
type Writer struct {
	w   io.Writer
	enc *Encoder
	buf []byte
	err error
}

// NewWriter returns a Writer with the given window and level. It panics if
// windowBytes is outside [0, MaxWindowBytes].
func NewWriter(w io.Writer, windowBytes int, level Level) *Writer {
	return &Writer{w: w, enc: NewEncoder(windowBytes, level)}
}

// Write encodes p as one block and writes it. An empty p writes nothing.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	w.buf = w.enc.Encode(w.buf[:0], p)
	if _, err := w.w.Write(w.buf); err != nil {
		w.err = fmt.Errorf("snappystream: write block %d: %w", w.enc.Blocks()-1, err)
		return 0, w.err
	}
	return len(p), nil
}

// Encoder returns the Writer's encoder (for its counters).
func (w *Writer) Encoder() *Encoder { return w.enc }

// Close releases nothing and does not close the underlying writer: a snappy-stream
// has no trailer.
func (w *Writer) Close() error { return nil }

// Reader decodes a snappy-stream. It reads from the underlying reader only while the
// block it is in is incomplete, so a block is delivered as soon as its last byte arrives;
// a read may bring bytes of later blocks too (whatever the transport has), which stay
// buffered. WireBytes counts a block only once all its decoded bytes have been returned,
// so it does not depend on how the transport splits reads.
type Reader struct {
	r   io.Reader
	dec *Decoder

	in         []byte // compressed bytes; in[start:end] not yet consumed
	start, end int

	// Scan state of the block at in[start:]: declared length, header size, and the
	// element boundary (relative to start) and output count reached so far.
	declared, hdr, scanned, produced int
	inBlock                          bool
	// pieces: the current block was not whole in the buffer when its decoding was first
	// tried, so it is scanned as its bytes arrive and decoded once complete.
	pieces bool

	out    []byte // decoded bytes of the current block: in the decoder's window, or in own
	own    []byte // the decoded block of a stream without history (window 0)
	outPos int
	err    error

	blockWire  int   // wire size of the block in out, until it has all been returned
	wireDone   int64 // wire bytes of the blocks returned completely
	blocksDone int64 // blocks returned completely
}

// NewReader returns a Reader for a stream with the given window and block bound
// (DefaultMaxBlockBytes if maxBlockBytes <= 0). It panics if windowBytes is outside
// [0, MaxWindowBytes].
func NewReader(r io.Reader, windowBytes, maxBlockBytes int) *Reader {
	return &Reader{r: r, dec: NewDecoder(windowBytes, maxBlockBytes)}
}

// Decoder returns the Reader's decoder (for its counters).
func (r *Reader) Decoder() *Decoder { return r.dec }

// WireBytes returns the compressed size of the blocks whose decoded bytes have all been
// returned by Read.
func (r *Reader) WireBytes() int64 { return r.wireDone }

// Blocks returns the number of blocks whose decoded bytes have all been returned by Read.
func (r *Reader) Blocks() int64 { return r.blocksDone }

// StateBytes returns the memory the Reader holds: history plus its block buffers.
func (r *Reader) StateBytes() int { return r.dec.StateBytes() + cap(r.in) + cap(r.own) }

// Reset makes the Reader read a new stream from r on the state it holds: the history
// emptied, its buffers kept, as NewReader with the same window and bound would start.
func (r *Reader) Reset(src io.Reader) {
	in, own := r.in, r.own
	*r = Reader{r: src, dec: r.dec, in: in[:cap(in)], own: own[:0]}
	r.dec.Reset()
}

// Close releases the Reader's buffers; it does not close the underlying reader. A Read
// after Close returns an error, also when Close came in the middle of a block's output.
func (r *Reader) Close() error {
	r.in, r.out, r.own = nil, nil, nil
	r.start, r.end, r.outPos, r.inBlock = 0, 0, 0, false
	if r.err == nil {
		r.err = errors.New("snappystream: read from closed Reader")
	}
	return nil
}

// Read returns decoded bytes of at most one block. At the end of input it returns io.EOF
// if the input ended at a block boundary and an error wrapping io.ErrUnexpectedEOF if it
// ended inside a block.
func (r *Reader) Read(p []byte) (int, error) {
	if r.outPos == len(r.out) {
		if err := r.current(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.out[r.outPos:])
	r.outPos += n
	if r.outPos == len(r.out) {
		r.blockDone()
	}
	return n, nil
}

// ReadByte returns the next decoded byte, as a Read of one byte would (io.ByteReader):
// a frame's length prefix is read a byte at a time (gossip.ReadPooledFrame), and this
// takes each from the decoded block without a Read's copy.
func (r *Reader) ReadByte() (byte, error) {
	if r.outPos == len(r.out) {
		if err := r.current(); err != nil {
			return 0, err
		}
	}
	c := r.out[r.outPos]
	r.outPos++
	if r.outPos == len(r.out) {
		r.blockDone()
	}
	return c, nil
}

// current decodes blocks until one has bytes not yet returned; its error is sticky (the
// one every later call returns). Callers check first that the block in hand is used up, so
// the call is made only between blocks.
func (r *Reader) current() error {
	for r.outPos == len(r.out) {
		if r.err != nil {
			return r.err
		}
		if err := r.nextBlock(); err != nil {
			r.err = err
			return err
		}
	}
	return nil
}

// Peek returns the decoded bytes of the current block not yet returned, decoding the next
// block first when none are left, without returning them: they stay valid until the next
// Read, ReadByte, Discard or Reset. Its error is the one a Read would return there (and
// then returns). A frame reader (gossip.ReadPooledFrame) takes a frame whole in the block
// from it and Discards it, in one call instead of one per byte of its length prefix.
func (r *Reader) Peek() ([]byte, error) {
	if r.outPos == len(r.out) {
		if err := r.current(); err != nil {
			return nil, err
		}
	}
	return r.out[r.outPos:], nil
}

// Discard marks the first n bytes of what Peek returned as returned, as a Read of them
// would. It panics if fewer than n are left.
func (r *Reader) Discard(n int) {
	if n > len(r.out)-r.outPos {
		panic("snappystream: Discard past the decoded block")
	}
	if n == 0 {
		return
	}
	r.outPos += n
	if r.outPos == len(r.out) {
		r.blockDone()
	}
}

// setOut makes out the block to return; a block decoded into own keeps own's capacity.
func (r *Reader) setOut(out []byte) {
	if r.dec.win.windowBytes == 0 {
		r.own = out
	}
	r.out, r.outPos = out, 0
}

// blockDone counts the current block as returned.
func (r *Reader) blockDone() {
	r.wireDone += int64(r.blockWire)
	r.blocksDone++
	r.blockWire = 0
}

// nextBlock reads until one whole block is buffered and decodes it into r.out.
func (r *Reader) nextBlock() error {
	for {
		if !r.inBlock && !r.pieces && r.end > r.start {
			// The block may be whole in the buffer (a frame usually arrives whole):
			// decode it in place, one pass over its elements.
			if out, used, ok := r.dec.decodePrefix(r.own[:0], r.in[r.start:r.end], true); ok {
				r.setOut(out)
				r.blockWire = used
				r.start += used
				if len(out) == 0 {
					r.blockDone()
				}
				return nil
			}
			// Not whole yet, or not valid: scan it as its bytes come (below) and decode it
			// once whole, which reports a bad block as it always has.
			r.pieces = true
		}
		done, err := r.scan()
		if err != nil {
			return r.dec.fail(err)
		}
		if done {
			blockEnd := r.start + r.hdr + r.scanned
			out, used, ok := r.dec.decodePrefix(r.own[:0], r.in[r.start:blockEnd], true)
			if !ok || used != blockEnd-r.start {
				// A bad block: Decode says what is wrong (and a whole valid block always
				// decodes above, ending where the scan found its end).
				_, err := r.dec.Decode(nil, r.in[r.start:blockEnd])
				if err == nil {
					err = r.dec.fail(fmt.Errorf("%w: block ends at byte %d of its %d scanned bytes", ErrCorrupt, used, blockEnd-r.start))
				}
				return err
			}
			r.setOut(out)
			r.blockWire = blockEnd - r.start
			r.start = blockEnd
			r.inBlock, r.pieces = false, false
			if len(out) == 0 {
				r.blockDone() // nothing to return: an empty block is done once decoded
			}
			return nil
		}
		if err := r.fill(); err != nil {
			return err
		}
	}
}

// fill reads more input, making room first.
func (r *Reader) fill() error {
	if r.start > 0 {
		r.end = copy(r.in, r.in[r.start:r.end])
		r.start = 0
	}
	if r.end == len(r.in) {
		want := max(2*len(r.in), 4096)
		if r.inBlock {
			// A block can never need more than 5 input bytes per output byte.
			want = min(want, r.hdr+5*r.declared+5)
			want = max(want, r.end+1)
		}
		nb := make([]byte, want)
		copy(nb, r.in[:r.end])
		r.in = nb
	}
	n, err := r.r.Read(r.in[r.end:])
	r.end += n
	if n > 0 {
		return nil
	}
	if err == nil {
		return nil // a zero read without error; try again
	}
	if err == io.EOF {
		if r.end == r.start {
			return io.EOF
		}
		return fmt.Errorf("snappystream: block %d: stream ends inside the block (%d bytes of it received): %w",
			r.dec.Blocks(), r.end-r.start, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("snappystream: read block %d: %w", r.dec.Blocks(), err)
}

// scan advances over the buffered elements of the current block without decoding them
// and reports whether the whole block is buffered. It checks lengths so that hostile
// input cannot make the Reader buffer more than the block can take.
func (r *Reader) scan() (bool, error) {
	buf := r.in[r.start:r.end]
	if !r.inBlock {
		if len(buf) == 0 {
			return false, nil
		}
		n, hdr, err := r.dec.header(buf)
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return false, nil
			}
			return false, err
		}
		r.declared, r.hdr, r.scanned, r.produced, r.inBlock = n, hdr, 0, 0, true
	}
	src := buf[r.hdr:]
	s, o := r.scanned, r.produced
	for o < r.declared {
		if s >= len(src) {
			break
		}
		tag := src[s]
		var elem, n int
		switch tag & 0x03 {
		case tagLiteral:
			x := int(tag >> 2)
			if x < 60 {
				elem, n = 1, x+1
			} else {
				elem = 1 + x - 59
				if s+elem > len(src) {
					break
				}
				v := 0
				for i := elem - 1; i >= 1; i-- {
					v = v<<8 | int(src[s+i])
				}
				n = v + 1
			}
			if n > r.declared-o {
				return false, fmt.Errorf("%w: literal of %d bytes at output byte %d runs past the declared length %d", ErrCorrupt, n, o, r.declared)
			}
			elem += n
		case tagCopy1:
			elem, n = 2, 4+int(tag>>2)&0x7
		case tagCopy2:
			elem, n = 3, 1+int(tag>>2)
		case tagCopy4:
			elem, n = 5, 1+int(tag>>2)
		}
		if s+elem > len(src) {
			break
		}
		s += elem
		o += n
	}
	r.scanned, r.produced = s, o
	// A copy that overruns the declared length is reported by Decode.
	return o >= r.declared, nil
}
