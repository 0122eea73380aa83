package codec

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/klauspost/compress/zstd"

	"github.com/streamsim/streamsim/units"
)

// Zstd is standard zstd, one frame per stream direction and a flushed block per unit. Two
// families write it: zstd (klauspost/compress, this file) and zstd-c (libzstd, zstdc.go).
const Zstd Kind = 2

// ZstdImpl selects a zstd implementation.
type ZstdImpl uint8

const (
	// ZstdGo is github.com/klauspost/compress/zstd, pure Go: spec "zstd".
	ZstdGo ZstdImpl = iota
	// ZstdC is the reference C library, libzstd, through cgo (the sources that
	// github.com/DataDog/zstd carries): spec "zstd-c". Builds without cgo lack it.
	ZstdC
)

// Defaults and bounds of the zstd parameters (both implementations).
const (
	DefaultZstdLevel       = 3
	DefaultZstdWindowBytes = 2 << 20
	MinZstdWindowBytes     = 1 << 10
	MaxZstdWindowBytes     = 16 << 20
)

// zstdLevels are the levels klauspost/compress/zstd implements, by the zstd level each matches.
var zstdLevels = []int{1, 3, 7, 11}

var zstdFamily = Family{
	Name:    "zstd",
	Form:    "zstd[:<level>[:<window>]] (klauspost/compress; level 1, 3, 7 or 11, default 3; window a power of two 1KiB..16MiB, default 2MiB)",
	Default: Spec{Kind: Zstd, ZstdImpl: ZstdGo, ZstdLevel: DefaultZstdLevel, WindowBytes: DefaultZstdWindowBytes},
	Specs:   []string{"zstd", "zstd:1:64KiB", "zstd:7:1MiB"},
	Bench:   []BenchSpec{{"zstd", "zstd"}},
	is:      func(s Spec) bool { return s.Kind == Zstd && s.ZstdImpl == ZstdGo },
	parse: func(d Spec, params []string) (Spec, error) {
		return parseZstd(d, params, func(l int, err error) error {
			if err != nil || !slices.Contains(zstdLevels, l) {
				return fmt.Errorf("zstd level %q is not 1, 3, 7 or 11", params[0])
			}
			return nil
		})
	},
	canonical: func(s Spec) string { return zstdCanonical("zstd", s) },
	explicit:  func(s Spec) string { return zstdExplicit("zstd", s) },
	dict:      true,
	newWriter: func(w io.Writer, s Spec, o options) io.WriteCloser {
		return newZstdWriter(w, s, o, func(s Spec, o options) (zstdEncoder, error) { return newKlauspostEncoder(s, o) })
	},
	newReader: func(r io.Reader, s Spec, o options) io.ReadCloser {
		return newZstdReader(r, s, o, func(r io.Reader, s Spec, o options) (zstdDecoder, error) { return newKlauspostDecoder(r, s, o) })
	},
	implementation: func(Spec) string {
		return "klauspost/compress " + ModuleVersion("github.com/klauspost/compress")
	},
}

// parseZstd reads [<level>[:<window>]] for either implementation; checkLevel judges the
// level as strconv.Atoi read it.
func parseZstd(s Spec, params []string, checkLevel func(level int, err error) error) (Spec, error) {
	if len(params) > 2 {
		return Spec{}, errors.New("too many parameters")
	}
	if len(params) > 0 {
		l, err := strconv.Atoi(params[0])
		if err := checkLevel(l, err); err != nil {
			return Spec{}, err
		}
		s.ZstdLevel = l
	}
	if len(params) > 1 {
		w, err := units.ParseSize(params[1])
		if err != nil {
			return Spec{}, fmt.Errorf("window: %w", err)
		}
		if w < MinZstdWindowBytes || w > MaxZstdWindowBytes || w&(w-1) != 0 {
			return Spec{}, fmt.Errorf("zstd window %s is not a power of two in 1KiB..16MiB", params[1])
		}
		s.WindowBytes = w
	}
	return s, nil
}

// zstdCanonical omits the trailing defaults: the window, then the level.
func zstdCanonical(name string, s Spec) string {
	if s.WindowBytes != DefaultZstdWindowBytes {
		return fmt.Sprintf("%s:%d:%s", name, s.ZstdLevel, units.FormatSize(s.WindowBytes))
	}
	if s.ZstdLevel != DefaultZstdLevel {
		return fmt.Sprintf("%s:%d", name, s.ZstdLevel)
	}
	return name
}

func zstdExplicit(name string, s Spec) string {
	return fmt.Sprintf("%s:%d:%s", name, s.ZstdLevel, units.FormatSize(s.WindowBytes))
}

// zstdEncoder is one zstd implementation's streaming encoder.
type zstdEncoder interface {
	// flush appends p compressed and flushed (decodable on its own arrival) to dst.
	flush(dst, p []byte) ([]byte, error)
	// end appends the frame end to dst.
	end(dst []byte) ([]byte, error)
	// stateBytes is the memory the encoder holds.
	stateBytes() int64
	// release frees the encoder; it is not used afterwards.
	release()
	// reset starts a new frame on the encoder's state (its parameters and dictionary kept),
	// dropping what the current frame has not flushed; its next flush writes a frame header.
	reset() error
}

// zstdWriter writes one zstd frame per stream direction and flushes a block per Write.
// The encoder appends to buf so that its time excludes the Write on w and each unit
// goes out with one Write.
type zstdWriter struct {
	w      io.Writer
	buf    []byte
	enc    zstdEncoder
	stats  Stats
	err    error
	closed bool
	clock  meterClock
	// reopen opens a new encoder of the writer's spec and options (Reset after Close).
	reopen func() (zstdEncoder, error)
}

func newZstdWriter(w io.Writer, s Spec, o options, newEncoder func(Spec, options) (zstdEncoder, error)) io.WriteCloser {
	enc, err := newEncoder(s, o)
	if err != nil {
		return &failedWriter{err: fmt.Errorf("%s: new encoder: %w", s, err)}
	}
	reopen := func() (zstdEncoder, error) {
		e, err := newEncoder(s, o)
		if err != nil {
			err = fmt.Errorf("%s: new encoder: %w", s, err)
		}
		return e, err
	}
	return &zstdWriter{w: w, enc: enc, clock: o.clock, reopen: reopen}
}

// Reset starts a new stream direction on w with the encoder the writer holds
// (WriterResetter): a new frame, its history empty, as a fresh Writer of the spec starts;
// the current frame is abandoned without its end. After Close it opens a new encoder.
func (z *zstdWriter) Reset(w io.Writer) {
	z.w, z.stats, z.err = w, Stats{}, nil
	if z.closed {
		z.closed = false
		if z.enc, z.err = z.reopen(); z.err != nil {
			z.closed = true
		}
		return
	}
	if err := z.enc.reset(); err != nil {
		z.err = fmt.Errorf("zstd: reset: %w", err)
	}
}

func (z *zstdWriter) Write(p []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	start := z.clock.now()
	out, err := z.enc.flush(z.buf[:0], p)
	z.stats.Time += z.clock.since(start)
	if err != nil {
		z.err = fmt.Errorf("zstd: encode unit %d: %w", z.stats.Units, err)
		return 0, z.err
	}
	z.buf = out
	if err := z.writeOut(); err != nil {
		return 0, err
	}
	z.stats.Units++
	z.stats.RawBytes += int64(len(p))
	return len(p), nil
}

func (z *zstdWriter) writeOut() error {
	_, err := z.w.Write(z.buf)
	if err != nil {
		z.err = fmt.Errorf("zstd: write unit %d: %w", z.stats.Units, err)
		return z.err
	}
	z.stats.WireBytes += int64(len(z.buf))
	return nil
}

// Close ends the frame (writing its end with one Write) without closing w.
func (z *zstdWriter) Close() error {
	if z.closed {
		return nil
	}
	z.closed = true
	z.stats.StateBytes = z.enc.stateBytes() + int64(cap(z.buf))
	if z.err != nil {
		z.enc.release()
		return z.err
	}
	start := z.clock.now()
	out, err := z.enc.end(z.buf[:0])
	z.stats.Time += z.clock.since(start)
	z.enc.release()
	if err != nil {
		z.err = fmt.Errorf("zstd: close: %w", err)
		return z.err
	}
	z.buf = out
	if len(z.buf) > 0 {
		if err := z.writeOut(); err != nil {
			return err
		}
	}
	z.err = fmt.Errorf("zstd: write after Close")
	return nil
}

// Stats reports the encoder's state as it was last open.
func (z *zstdWriter) Stats() Stats {
	st := z.stats
	if !z.closed {
		st.StateBytes = z.enc.stateBytes() + int64(cap(z.buf))
	}
	return st
}

// appendWriter appends what is written to b.
type appendWriter struct{ b []byte }

func (a *appendWriter) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// klauspostEncoder is github.com/klauspost/compress/zstd's encoder, flushed per unit.
type klauspostEncoder struct {
	enc       *zstd.Encoder
	out       appendWriter
	spec      Spec
	dictBytes int
}

func newKlauspostEncoder(s Spec, o options) (*klauspostEncoder, error) {
	k := &klauspostEncoder{spec: s, dictBytes: len(o.dict)}
	opts := []zstd.EOption{
		zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(s.ZstdLevel)),
		zstd.WithWindowSize(s.WindowBytes),
		zstd.WithEncoderConcurrency(1),
		zstd.WithLowerEncoderMem(true),
	}
	if len(o.dict) > 0 {
		opts = append(opts, zstd.WithEncoderDict(o.dict))
	}
	enc, err := zstd.NewWriter(&k.out, opts...)
	if err != nil {
		// Parse only admits levels and windows the library accepts.
		return nil, err
	}
	k.enc = enc
	return k, nil
}

func (k *klauspostEncoder) flush(dst, p []byte) ([]byte, error) {
	k.out.b = dst
	_, err := k.enc.Write(p)
	if err == nil {
		err = k.enc.Flush()
	}
	dst, k.out.b = k.out.b, nil
	return dst, err
}

func (k *klauspostEncoder) end(dst []byte) ([]byte, error) {
	k.out.b = dst
	err := k.enc.Close()
	dst, k.out.b = k.out.b, nil
	return dst, err
}

func (k *klauspostEncoder) stateBytes() int64 {
	return zstdEncoderStateBytes(k.spec) + int64(k.dictBytes)
}

func (k *klauspostEncoder) release() {}

func (k *klauspostEncoder) reset() error {
	k.enc.Reset(&k.out)
	return nil
}

// zstdEncoderStateBytes estimates klauspost/compress/zstd's encoder memory with
// WithLowerEncoderMem: history (window plus one 128 KiB block), two block buffers and
// the level's hash tables (8-byte entries).
func zstdEncoderStateBytes(s Spec) int64 {
	const block = 128 << 10
	var tables int64
	switch zstd.EncoderLevelFromZstd(s.ZstdLevel) {
	case zstd.SpeedFastest:
		tables = 8 << 15
	case zstd.SpeedDefault:
		tables = 8<<17 + 8<<15
	case zstd.SpeedBetterCompression:
		tables = 8<<19 + 8<<13
	default:
		tables = 8<<22 + 8<<18
	}
	return int64(s.WindowBytes) + block + 2*block + tables
}

// zstdDecoder is a streaming zstd decoder as both implementations provide it: a Read
// returns decoded bytes of at most one block and reads input only when it has returned
// all of the previous block (the blockGate makes sure of the latter).
type zstdDecoder interface {
	io.Reader
	Close()
	stateBytes() int64
	// reset makes the decoder read a new stream from r on its state (window bound and
	// dictionary kept), as a new decoder of the spec would start.
	reset(r io.Reader) error
}

// zstdReader returns a decoder's output through its own buffer of more than one block,
// so that it knows when a block's decoded bytes have all been returned and can count
// the block's wire bytes then (see Stats).
type zstdReader struct {
	spec Spec
	opts options
	dec  zstdDecoder
	// newDecoder opens a decoder of the spec (Reset after Close).
	newDecoder func(io.Reader, Spec, options) (zstdDecoder, error)
	gate       *blockGate
	src        *timedSource

	buf            []byte // decoded bytes of the current block: buf[pos:] not yet returned
	pos            int
	pendWire       int64 // gate counters once the current block has been returned
	pendBlocks     int64
	err            error // to return once buf is drained
	stats          Stats
	closed         bool
	decodeInPlaceN int // len(p) above which Read lets the decoder write into p
}

func newZstdReader(r io.Reader, s Spec, o options, newDecoder func(io.Reader, Spec, options) (zstdDecoder, error)) io.ReadCloser {
	src := &timedSource{r: r, clock: o.clock}
	gate := newBlockGate(src, s.WindowBytes)
	z := &zstdReader{spec: s, opts: o, newDecoder: newDecoder, gate: gate, src: src, decodeInPlaceN: zstdMaxBlockBytes}
	var err error
	z.dec, err = newDecoder(gate, s, o)
	if err != nil {
		return &failedReader{err: fmt.Errorf("%s: new decoder: %w", s, err)}
	}
	return z
}

// klauspostDecoder is github.com/klauspost/compress/zstd's decoder in synchronous mode.
type klauspostDecoder struct {
	*zstd.Decoder
	spec      Spec
	dictBytes int
}

func newKlauspostDecoder(r io.Reader, s Spec, o options) (*klauspostDecoder, error) {
	opts := []zstd.DOption{
		zstd.WithDecoderConcurrency(1), // synchronous: reads only the block it decodes
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(uint64(s.WindowBytes)),
		zstd.WithDecoderMaxMemory(uint64(s.WindowBytes)),
	}
	if len(o.dict) > 0 {
		opts = append(opts, zstd.WithDecoderDicts(o.dict))
	}
	dec, err := zstd.NewReader(r, opts...)
	if err != nil {
		return nil, err
	}
	return &klauspostDecoder{Decoder: dec, spec: s, dictBytes: len(o.dict)}, nil
}

func (k *klauspostDecoder) reset(r io.Reader) error { return k.Decoder.Reset(r) }

// stateBytes estimates the decoder's memory: history (window) plus one block being
// decoded, and the dictionary.
func (k *klauspostDecoder) stateBytes() int64 {
	return int64(k.spec.WindowBytes) + zstdMaxBlockBytes + int64(k.dictBytes)
}

func (z *zstdReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for z.pos == len(z.buf) {
		if z.err != nil {
			return 0, z.err
		}
		if len(p) > z.decodeInPlaceN {
			// p holds a whole block: the decoder writes its output there directly.
			n, err := z.decode(p)
			if n > 0 || err != nil {
				z.blockReturned()
				z.stats.RawBytes += int64(n)
			}
			if n > 0 {
				z.err = err
				return n, nil
			}
			if err != nil {
				return 0, err
			}
			continue
		}
		if z.buf == nil {
			z.buf = make([]byte, 0, z.decodeInPlaceN+1)
		}
		n, err := z.decode(z.buf[:cap(z.buf)])
		z.buf, z.pos = z.buf[:n], 0
		if n == 0 && err != nil {
			z.blockReturned()
			return 0, err
		}
		z.err = err
	}
	n := copy(p, z.buf[z.pos:])
	z.pos += n
	z.stats.RawBytes += int64(n)
	if z.pos == len(z.buf) {
		z.blockReturned()
	}
	return n, nil
}

// decode reads one block's output into p and notes the gate's counters after it.
func (z *zstdReader) decode(p []byte) (int, error) {
	if z.closed {
		return 0, errors.New("zstd: read from closed Reader")
	}
	start := z.src.clock.now()
	n, err := z.dec.Read(p)
	z.stats.Time += z.src.clock.since(start)
	if n == len(p) && err == nil {
		// Impossible for a conforming decoder (p exceeds a block), but it would break
		// the accounting: the decoder could still hold part of this block.
		err = fmt.Errorf("zstd: decoder returned %d bytes, more than one block", n)
	}
	z.pendWire, z.pendBlocks = z.gate.done, z.gate.blocks
	if err != nil && err != io.EOF {
		err = fmt.Errorf("zstd: read unit: %w", err)
	}
	return n, err
}

// blockReturned counts the blocks decoded so far as returned.
func (z *zstdReader) blockReturned() {
	z.stats.WireBytes, z.stats.Units = z.pendWire, z.pendBlocks
}

// Reset makes the reader read a new stream direction from r on the decoder it holds
// (ReaderResetter), as a new Reader of its spec would start; after Close it opens a new
// decoder.
func (z *zstdReader) Reset(r io.Reader) {
	z.src.r, z.src.n, z.src.blocked = r, 0, 0
	buf := z.gate.buf
	*z.gate = blockGate{r: z.src, maxWindow: z.gate.maxWindow, buf: buf}
	z.buf, z.pos, z.pendWire, z.pendBlocks, z.err, z.stats = z.buf[:0], 0, 0, 0, nil, Stats{}
	var err error
	if z.closed {
		z.dec, err = z.newDecoder(z.gate, z.spec, z.opts)
		z.closed = err != nil
	} else {
		err = z.dec.reset(z.gate)
	}
	if err != nil {
		z.err = fmt.Errorf("%s: reset decoder: %w", z.spec, err)
	}
}

func (z *zstdReader) Close() error {
	if !z.closed && z.dec != nil {
		z.dec.Close()
	}
	z.closed = true
	return nil
}

func (z *zstdReader) Stats() Stats {
	st := z.stats
	st.Time -= z.src.blocked
	st.StateBytes = z.dec.stateBytes() + int64(cap(z.buf))
	return st
}
