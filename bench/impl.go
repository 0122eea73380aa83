package bench

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	gsnappy "github.com/golang/snappy"
	"github.com/klauspost/compress/s2"
	ksnappy "github.com/klauspost/compress/snappy"
	pool "github.com/libp2p/go-buffer-pool"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/codec/snappystream"
	"github.com/streamsim/streamsim/gossip"
)

// Impl is one implementation under test.
type Impl struct {
	// Name is the key in benchmark names and JSON, e.g. "golang-snappy".
	Name string
	// Label names the library and its version in this build.
	Label string
	// Snappy reports that it writes and reads plain Snappy blocks (the cross matrix).
	Snappy bool
	// Stream reports that it keeps history across the messages of one stream direction.
	Stream bool
	new    func() coder
}

// Encoded is a payload's messages as one implementation encoded them.
type Encoded struct {
	Units  [][]byte // one per message
	Stream []byte   // the units, concatenated
	Sizes  []int    // decoded size of each message
	framed bool     // the messages are RPC frames (Payload.Framed)
}

// WireBytes is the encoded size.
func (e *Encoded) WireBytes() int { return len(e.Stream) }

// coder encodes and decodes the messages of one payload as one stream direction per call,
// each call a new one. Buffers are reused between calls, and so is a stream codec's state
// where it can start a new stream on it (specCoder).
type coder interface {
	encode(msgs [][]byte, emit func(unit []byte))
	decode(e *Encoded, visit func(i int, msg []byte)) error
}

// stater is a coder that holds memory across messages.
type stater interface {
	stateBytes() (enc, dec int64)
}

// Encode encodes msgs with a fresh coder and keeps the units.
func (im Impl) Encode(msgs [][]byte) *Encoded {
	e := &Encoded{}
	im.new().encode(msgs, func(u []byte) {
		e.Units = append(e.Units, bytes.Clone(u))
		e.Stream = append(e.Stream, u...)
	})
	for _, m := range msgs {
		e.Sizes = append(e.Sizes, len(m))
	}
	return e
}

// perMessage is a Snappy implementation's block API, one block per message.
type perMessage struct {
	enc func(dst, src []byte) []byte
	dec func(dst, src []byte) ([]byte, error)
	buf []byte
	out []byte
}

func (p *perMessage) encode(msgs [][]byte, emit func([]byte)) {
	for _, m := range msgs {
		p.buf = p.enc(p.buf[:cap(p.buf)], m)
		if emit != nil {
			emit(p.buf)
		}
	}
}

func (p *perMessage) decode(e *Encoded, visit func(int, []byte)) error {
	for i, u := range e.Units {
		d, err := p.dec(p.out[:cap(p.out)], u)
		if err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		p.out = d
		if visit != nil {
			visit(i, d)
		}
	}
	return nil
}

// framedSnappy is per-message Snappy as a node reads it from a plain stream today: the
// frames' message data is ssz_snappy (gossip.AppendSnappyFrame of each frame, whose data is
// raw SSZ: the payload-mode-ssz inputs of BenchmarkFrames), each frame is read through
// plain's Reader with gossip.ReadPooledFrame, as sim/node's codecStream reads every stream,
// and each message's data is Snappy-decoded (golang/snappy DecodedLen and Decode into a
// reused buffer, as gossip.MessageSnappy does). Beside perMessage's bare Decode of each unit
// from a slice, this is the read path a node pays around it.
//
// Where each message's data lies in its frame is found once per payload, before timing:
// finding it is pubsub's unmarshal of the RPC, which a node runs whatever its stream codec
// and the stream codecs' rows do not time either (gossip.MessageSnappy.Load, the node's
// walk over the frame for it, took 28 % of this op in a profile, 2026-12-06).
type framedSnappy struct {
	src   bytes.Reader
	buf   []byte
	out   []byte
	ssz   []byte   // the frame un-Snappied, only to hand it to visit
	spans []span   // each message's data in its unit, units in order
	first []int    // spans[first[i]:first[i+1]] are unit i's
	of    *Encoded // the payload spans were found for
}

// span is a message's data in its frame: frame[off:end].
type span struct{ off, end int }

func (f *framedSnappy) encode(msgs [][]byte, emit func([]byte)) {
	for _, m := range msgs {
		var err error
		if f.buf, err = gossip.AppendSnappyFrame(f.buf[:0], m); err != nil {
			panic(fmt.Sprintf("golang-snappy-framed: %v", err)) // the inputs are frames of SSZ payloads
		}
		if emit != nil {
			emit(f.buf)
		}
	}
}

// messageData yields the data of every published message of frame.
func messageData(frame []byte) func(yield func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for msg := range gossip.PublishedMessages(frame) {
			for mf, err := range gossip.Fields(msg) {
				if err != nil {
					break
				}
				if mf.Is(2) && !yield(mf.Value) { // Message.data
					return
				}
			}
		}
	}
}

// findSpans finds where each message's data lies in each unit of e.
func (f *framedSnappy) findSpans(e *Encoded) {
	f.spans, f.first = f.spans[:0], append(f.first[:0], 0)
	for _, u := range e.Units {
		for d := range messageData(u) {
			off := cap(u) - cap(d) // d is u[off:off+len(d)]
			f.spans = append(f.spans, span{off, off + len(d)})
		}
		f.first = append(f.first, len(f.spans))
	}
	f.of = e
}

func (f *framedSnappy) decode(e *Encoded, visit func(int, []byte)) error {
	if f.of != e {
		f.findSpans(e)
	}
	f.src.Reset(e.Stream)
	r := codec.Spec{Kind: codec.Plain}.NewReader(&f.src, codec.WithoutTiming())
	var hdr [binary.MaxVarintLen64]byte
	for i := range e.Units {
		fr, err := gossip.ReadPooledFrame(r, hdr[:], gossip.MaxPayloadBytes+binary.MaxVarintLen64)
		if err != nil {
			return fmt.Errorf("frame %d: %w", i, err)
		}
		if err := f.decodeData(i, fr, visit); err != nil {
			pool.Put(fr)
			return fmt.Errorf("frame %d: %w", i, err)
		}
		pool.Put(fr)
	}
	return nil
}

// decodeData Snappy-decodes the data of frame i's messages; with visit, it checks them
// against the frame un-Snappied (AppendSSZFrame, not the node's work) and hands that on.
func (f *framedSnappy) decodeData(i int, fr []byte, visit func(int, []byte)) error {
	spans := f.spans[f.first[i]:f.first[i+1]]
	var want [][]byte
	if visit != nil {
		var err error
		if f.ssz, err = gossip.AppendSSZFrame(f.ssz[:0], fr); err != nil {
			return err
		}
		for d := range messageData(f.ssz) {
			want = append(want, d)
		}
		if len(want) != len(spans) {
			return fmt.Errorf("%d messages, %d when encoded", len(want), len(spans))
		}
	}
	for j, sp := range spans {
		if sp.end > len(fr) {
			return fmt.Errorf("message %d: the frame is %d bytes, its data ended at byte %d when encoded", j, len(fr), sp.end)
		}
		d := fr[sp.off:sp.end]
		n, err := gsnappy.DecodedLen(d)
		if err != nil {
			return fmt.Errorf("message %d: %w", j, err)
		}
		if n > gossip.MaxPayloadBytes {
			return fmt.Errorf("message %d: data decodes to %d bytes, above the %d-byte limit", j, n, gossip.MaxPayloadBytes)
		}
		if cap(f.out) < n {
			f.out = make([]byte, n)
		}
		if _, err := gsnappy.Decode(f.out[:n], d); err != nil {
			return fmt.Errorf("message %d: %w", j, err)
		}
		if visit != nil && !bytes.Equal(f.out[:n], want[j]) {
			return fmt.Errorf("message %d: data decodes to different bytes", j)
		}
	}
	if visit != nil {
		visit(i, f.ssz)
	}
	return nil
}

// FramedSnappy is golang/snappy per message as a node reads it from a plain stream
// (framedSnappy): for frames whose message data is raw SSZ (Payload.Framed, payload mode
// ssz). Its key, golang-snappy-framed, tells it from golang-snappy, the bare Decode of each
// unit from a slice.
func FramedSnappy() Impl {
	return Impl{
		Name:  "golang-snappy-framed",
		Label: "golang/snappy " + codec.ModuleVersion("github.com/golang/snappy") + " per message, frames read from a plain stream",
		new:   func() coder { return &framedSnappy{} },
	}
}

// snappyStreamCoder is snappystream's block API at window 0: plain Snappy blocks, one per
// message.
type snappyStreamCoder struct {
	enc *snappystream.Encoder
	dec *snappystream.Decoder
	buf []byte
	out []byte
}

func (s *snappyStreamCoder) stateBytes() (enc, dec int64) {
	return int64(s.enc.StateBytes()), int64(s.dec.StateBytes())
}

func (s *snappyStreamCoder) encode(msgs [][]byte, emit func([]byte)) {
	s.enc.Reset()
	for _, m := range msgs {
		s.buf = s.enc.Encode(s.buf[:0], m)
		if emit != nil {
			emit(s.buf)
		}
	}
}

func (s *snappyStreamCoder) decode(e *Encoded, visit func(int, []byte)) error {
	s.dec.Reset()
	for i, u := range e.Units {
		d, err := s.dec.Decode(s.out[:0], u)
		if err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		s.out = d
		if visit != nil {
			visit(i, d)
		}
	}
	return nil
}

// specCoder runs a codec spec's Writer and Reader, as streamsim's nodes do: a Write per
// message (zstd: flushed), a Reader reading each message whole (framed: as a node reads a
// frame). A node keeps a stream's Writer and Reader for the stream's life, so the coder keeps
// them too: each call starts a new stream direction on the state they hold
// (codec.WriterResetter, codec.ReaderResetter), and what a call costs is the codec's
// per-message work. With fresh set, or for a codec that cannot reset, each call opens a new
// Writer and Reader: the cost of a new stream (allocating and first touching the codec's
// state) is then in every call, amortized over its messages only.
type specCoder struct {
	spec     codec.Spec
	fresh    bool
	sink     unitSink
	src      bytes.Reader
	w        io.WriteCloser
	r        io.ReadCloser
	out      []byte
	encState int64 // the last Writer's and Reader's state bytes, open
	decState int64
}

func (s *specCoder) stateBytes() (enc, dec int64) { return s.encState, s.decState }

// unitSink keeps the bytes of each Write.
type unitSink struct {
	buf  []byte
	emit func([]byte)
}

func (u *unitSink) Write(p []byte) (int, error) {
	if u.emit != nil {
		u.emit(p)
	}
	return len(p), nil
}

func (s *specCoder) encode(msgs [][]byte, emit func([]byte)) {
	s.sink.emit = emit
	wr, reset := s.w.(codec.WriterResetter)
	if reset && !s.fresh {
		wr.Reset(&s.sink)
	} else {
		s.w = s.spec.NewWriter(&s.sink, codec.WithoutTiming()) // the caller times the whole sequence
		_, reset = s.w.(codec.WriterResetter)
	}
	for _, m := range msgs {
		if _, err := s.w.Write(m); err != nil {
			panic(fmt.Sprintf("%s: %v", s.spec, err)) // writing to memory cannot fail
		}
	}
	// The frame end belongs to no message; it is not counted. A kept Writer never writes it:
	// its next call starts a new stream direction.
	s.sink.emit = nil
	s.encState = s.w.(codec.Meter).Stats().StateBytes
	if s.fresh || !reset {
		s.w.Close()
		s.w = nil
	}
}

func (s *specCoder) decode(e *Encoded, visit func(int, []byte)) error {
	s.src.Reset(e.Stream)
	rr, reset := s.r.(codec.ReaderResetter)
	if reset && !s.fresh {
		rr.Reset(&s.src)
	} else {
		s.r = s.spec.NewReader(&s.src, codec.WithoutTiming())
		_, reset = s.r.(codec.ReaderResetter)
	}
	r := s.r
	if s.fresh || !reset {
		defer func() { r.Close(); s.r = nil }()
	}
	if e.framed {
		// As a node reads a frame from its stream (sim/node's codecStream).
		var hdr [binary.MaxVarintLen64]byte
		for i, n := range e.Sizes {
			f, err := gossip.ReadPooledFrame(r, hdr[:], n)
			if err != nil {
				return fmt.Errorf("frame %d: %w", i, err)
			}
			if visit != nil {
				visit(i, f)
			}
			pool.Put(f)
		}
		s.decState = r.(codec.Meter).Stats().StateBytes
		return nil
	}
	for i, n := range e.Sizes {
		if cap(s.out) < n {
			s.out = make([]byte, n)
		}
		s.out = s.out[:n]
		if _, err := io.ReadFull(r, s.out); err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		if visit != nil {
			visit(i, s.out)
		}
	}
	s.decState = r.(codec.Meter).Stats().StateBytes
	return nil
}

// Impls returns the implementations this build has, in table order: the per-message
// Snappy implementations, then every codec family's bench specs (codec.Family.Bench) that
// this build runs: snappy-stream per message (window 0) and with history, and zstd's two
// implementations flushed per message.
func Impls() []Impl {
	golang := "golang/snappy " + codec.ModuleVersion("github.com/golang/snappy")
	klauspost := "klauspost/compress " + codec.ModuleVersion("github.com/klauspost/compress")
	impls := []Impl{
		{Name: "golang-snappy", Label: golang, Snappy: true, new: func() coder {
			return &perMessage{enc: gsnappy.Encode, dec: gsnappy.Decode}
		}},
		{Name: "klauspost-snappy", Label: klauspost + " snappy", Snappy: true, new: func() coder {
			return &perMessage{enc: ksnappy.Encode, dec: ksnappy.Decode}
		}},
		{Name: "s2-snappy", Label: klauspost + " s2 (EncodeSnappy)", Snappy: true, new: func() coder {
			return &perMessage{enc: s2.EncodeSnappy, dec: s2.Decode}
		}},
	}
	if libsnappy != nil {
		impls = append(impls, *libsnappy)
	}
	for _, f := range codec.Families() {
		for _, b := range f.Bench {
			spec, err := codec.Parse(b.Spec)
			if err != nil {
				panic(fmt.Sprintf("codec family %s: bench spec %q: %v", f.Name, b.Spec, err)) // codec's tests parse every one
			}
			if spec.Available() != nil {
				continue
			}
			impls = append(impls, SpecImpl(b.Name, spec))
		}
	}
	return impls
}

// SpecImpl is a codec spec under test: through the spec's Writer and Reader as streamsim's
// nodes run it, or through the block API where its family has one and the spec keeps no
// history (blockImpls: per-message Snappy blocks, beside the other per-message Snappy
// implementations).
func SpecImpl(name string, spec codec.Spec) Impl {
	if bi, ok := blockImpls[spec.Kind]; ok && spec.HistoryBytes() == 0 {
		return bi(name, spec)
	}
	label := spec.Implementation() + " " + spec.Explicit()
	if spec.Kind == codec.SnappyStream {
		label = "streamsim " + spec.Explicit() // as the block API's rows (blockImpls)
	}
	return Impl{
		Name:   name,
		Label:  label,
		Stream: spec.HistoryBytes() > 0,
		new:    func() coder { return &specCoder{spec: spec} },
	}
}

// blockImpls are the families measured through their block API when they keep no history:
// snappy-stream with window 0 writes plain Snappy blocks (the cross matrix), timed as the
// other Snappy implementations are, one block per message. With a window, a node runs the
// Writer and the Reader (the Reader scans each block for its end, decodes it and copies it
// out), and so does bench: the codec CPU a node pays (docs/results-schema.md, "Codec CPU").
var blockImpls = map[codec.Kind]func(name string, spec codec.Spec) Impl{
	codec.SnappyStream: func(name string, spec codec.Spec) Impl {
		return Impl{
			Name:   name,
			Label:  "streamsim " + spec.Explicit(),
			Snappy: true,
			new: func() coder {
				return &snappyStreamCoder{enc: snappystream.NewEncoder(0, spec.SnappyLevel), dec: snappystream.NewDecoder(0, 0)}
			},
		}
	},
}

// SnappyDecoder is a Snappy implementation's block decoder, for the cross matrix.
type SnappyDecoder struct {
	Name   string
	Decode func(dst, src []byte) ([]byte, error)
}

// SnappyDecoders returns every Snappy block decoder in this build.
func SnappyDecoders() []SnappyDecoder {
	ds := []SnappyDecoder{
		{"golang-snappy", gsnappy.Decode},
		{"klauspost-snappy", ksnappy.Decode},
		{"s2-snappy", s2.Decode},
	}
	if libsnappyDecode != nil {
		ds = append(ds, SnappyDecoder{"libsnappy", libsnappyDecode})
	}
	w0 := snappystream.NewDecoder(0, 0)
	ds = append(ds, SnappyDecoder{"snappy-stream-w0", func(dst, src []byte) ([]byte, error) {
		w0.Reset() // window 0: every block stands alone
		return w0.Decode(dst[:0], src)
	}})
	return ds
}
