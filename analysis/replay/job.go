package replay

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	pool "github.com/libp2p/go-buffer-pool"

	"github.com/streamsim/streamsim/bench"
	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
)

// errStarved is what a stream's feed returns when its decoder asks for more than has been
// encoded: every codec decodes unit by unit, so this is a codec reading ahead of the unit it
// was given, which the replay reports instead of blocking.
var errStarved = errors.New("decoder read past the encoded unit")

// feed is one stream's compressed bytes between its encoder and its decoder: the encoder
// appends a unit, the decoder takes it. It holds at most a batch's worth of units.
type feed struct {
	buf    []byte
	off    int
	closed bool
}

func (f *feed) Write(p []byte) (int, error) {
	if f.off == len(f.buf) {
		f.buf, f.off = f.buf[:0], 0
	}
	f.buf = append(f.buf, p...)
	return len(p), nil
}

func (f *feed) Read(p []byte) (int, error) {
	if f.off == len(f.buf) {
		if f.closed {
			return 0, io.EOF
		}
		return 0, errStarved
	}
	n := copy(p, f.buf[f.off:])
	f.off += n
	return n, nil
}

// len is how many encoded bytes have not been decoded yet.
func (f *feed) len() int { return len(f.buf) - f.off }

// streamReplay is one stream direction inside one configuration's replay.
type streamReplay struct {
	feed      *feed
	w         io.WriteCloser
	rd        io.ReadCloser
	lastParts [gossip.NumCategories]int // the last frame's, for the stream's closing bytes
	lastLen   int
	owner     *owner
	// Memory: whether the stream is due for the meter's next sample, the state the meter
	// counted for it last, and its encoder's and decoder's state at the end.
	touched  bool
	held     int64
	enc, dec int64
	rawBytes int64 // through the stream so far
	// closeWire is the encoder's closing bytes (zstd's frame end), kept for a job replayed
	// in groups until its last group attributes them; closed is set once it is closed.
	closeWire int
	closed    bool
}

// heldBytes is the codec state the recording node holds for the stream: the encoder's when
// it writes the stream, the decoder's when it reads it.
func (s *streamReplay) heldBytes() int64 {
	if s.owner != nil && s.owner.out {
		return s.w.(codec.Meter).Stats().StateBytes
	}
	return s.rd.(codec.Meter).Stats().StateBytes
}

// job is one configuration replaying one corpus (view and payload mode), one batch of frames
// at a time, with a live encoder and decoder per stream.
type job struct {
	cfg     Config
	key     corpusKey
	mem     memoryMeter
	dict    []byte
	r       Result
	streams map[string]*streamReplay
	order   []string
	// afterEncode runs between a batch's encoding and its decoding (tests corrupt a frame
	// there to check that a mismatch is caught).
	afterEncode func(batch []frameIn)
	// The batch's streams and wire bytes per frame; buf holds its decoded frames.
	batchStreams []*streamReplay
	batchWire    []int
	buf          []byte   // plain: the batch's decoded frames
	decoded      [][]byte // the batch's decoded frames, from go-buffer-pool until compared
	hdr          [binary.MaxVarintLen64]byte
	snappied     []byte
	back         []byte
	msgSnappy    []gossip.MessageSnappy // plain: the batch's messages (plain.go)
	// A job whose streams do not fit the memory budget at once replays them in groups, one
	// pass over the traces each (groupOf: stream → group; planMemory sets both). Every pass
	// gives it all of its corpus's frames, batch for batch; it replays its group's and keeps
	// their wire bytes (wires, by the frame's place in the corpus) until its last group, which
	// attributes every frame's in the corpus's order, so the sums are today's to the bit.
	groups  int
	group   int
	groupOf map[string]int
	seq     int // frames of the corpus seen this pass
	batchNo int // batches of the corpus seen this pass
	wires   []int32
	sub     []frameIn
	subAt   []int
}

func newJob(cfg Config, key corpusKey, viewName string) *job {
	j := &job{cfg: cfg, key: key, streams: map[string]*streamReplay{}}
	j.r = Result{View: viewName, Payload: key.payload, Config: cfg.Name, Layout: key.layout, Verified: true}
	if cfg.Spec.IsPlain() && !cfg.None {
		j.r.Payload = ""
	}
	return j
}

func (j *job) stream(name string, o *owner) *streamReplay {
	s := j.register(name, o)
	if s.feed == nil {
		s.feed = &feed{}
		opts := []codec.Option{codec.WithoutTiming()} // frames times the codecs' loops
		if j.cfg.Dict {
			opts = append(opts, codec.WithDict(j.dict))
		}
		s.w = j.cfg.Spec.NewWriter(s.feed, opts...)
		s.rd = j.cfg.Spec.NewReader(s.feed, opts...)
	}
	return s
}

// register returns the stream's entry, added in the order streams first carry a frame.
func (j *job) register(name string, o *owner) *streamReplay {
	s := j.streams[name]
	if s == nil {
		s = &streamReplay{owner: o}
		j.streams[name] = s
		j.order = append(j.order, name)
	}
	return s
}

// startGroup prepares the job for a pass that replays its group g.
func (j *job) startGroup(g int) {
	j.group, j.seq, j.batchNo = g, 0, 0
	j.mem.node = nil // the streams of an earlier group are released
}

// split tells whether the job replays its streams in groups.
func (j *job) split() bool { return j.groups > 1 }

// batch replays one batch of the corpus's frames: all of them, or its group's.
func (j *job) batch(batch []frameIn) error {
	if !j.split() {
		return j.frames(batch)
	}
	sub, at := j.sub[:0], j.subAt[:0]
	for i := range batch {
		f := &batch[i]
		j.register(f.stream, f.owner)
		if j.groupOf[f.stream] == j.group {
			sub, at = append(sub, *f), append(at, j.seq+i)
		}
	}
	j.sub, j.subAt = sub, at
	if len(sub) > 0 {
		if err := j.frames(sub); err != nil {
			return err
		}
	}
	wire := j.batchWire[:len(sub)]
	if j.group < j.groups-1 {
		if need := j.seq + len(batch); len(j.wires) < need {
			j.wires = append(j.wires, make([]int32, need-len(j.wires))...)
		}
		for k, i := range at {
			j.wires[i] = int32(wire[k])
		}
	} else {
		// The last group: every frame's wire bytes, in the corpus's order.
		k := 0
		for i := range batch {
			f := &batch[i]
			var n int
			if k < len(at) && at[k] == j.seq+i {
				n = wire[k]
				k++
			} else {
				n = int(j.wires[j.seq+i])
			}
			attribute(&j.r, n, &f.parts, len(f.data), f.owner.dirIndex())
		}
	}
	j.mem.record(j.batchNo)
	j.seq += len(batch)
	j.batchNo++
	return nil
}

// frames replays a batch: every frame is encoded (its wire bytes attributed like its
// categories), then every frame is decoded and compared with what went in. The clocks
// bracket the codecs' loops only: streams are looked up before, wire bytes attributed and
// decoded frames compared after, and the codecs keep no clock of their own
// (codec.WithoutTiming), so the figures are the codecs' work (and the copy of their output
// into the feed) plus two clock reads per batch, which clockCost measures apart.
func (j *job) frames(batch []frameIn) error {
	for i := range batch {
		j.r.Frames++
		j.r.InputBytes += int64(len(batch[i].data))
	}
	if j.cfg.None {
		return j.none(batch)
	}
	ss := j.batchStreams[:0]
	total := 0
	for i := range batch {
		ss = append(ss, j.stream(batch[i].stream, batch[i].owner))
		total += len(batch[i].data)
	}
	if cap(j.batchWire) < len(batch) {
		j.batchWire = make([]int, len(batch))
	}
	wire := j.batchWire[:len(batch)]
	j.batchStreams = ss
	j.r.batches++
	plain, err := j.plainSend(batch, ss, wire) // plain: nil unless the streams are plain (plain.go)
	if err != nil {
		return err
	}

	wall0 := time.Now()
	cpu0, _ := bench.ThreadCPU()
	for i := range batch {
		if plain != nil {
			plain[i].Encode()
			continue
		}
		s := ss[i]
		before := s.feed.len()
		if _, err := s.w.Write(batch[i].data); err != nil {
			return fmt.Errorf("stream %s: encode frame %d: %w", batch[i].stream, j.r.Frames, err)
		}
		wire[i] = s.feed.len() - before
	}
	cpu1, _ := bench.ThreadCPU()
	j.r.EncodeTime += time.Since(wall0)
	j.r.encodeCPU += cpu1 - cpu0

	for i := range batch {
		f, s := &batch[i], ss[i]
		if !j.split() { // else batch attributes the frames in order at the last group
			attribute(&j.r, wire[i], &f.parts, len(f.data), f.owner.dirIndex())
		}
		s.lastParts, s.lastLen = f.parts, len(f.data)
		s.rawBytes += int64(len(f.data))
		j.mem.touch(s)
	}
	if j.afterEncode != nil {
		j.afterEncode(batch)
	}

	if plain != nil {
		if cap(j.buf) < total {
			j.buf = make([]byte, total)
		}
		if err := j.plainReceive(plain, batch, ss, j.buf[:total]); err != nil {
			return err
		}
	}
	if cap(j.decoded) < len(batch) {
		j.decoded = make([][]byte, len(batch))
	}
	decoded := j.decoded[:len(batch)]
	var derr error
	wall0 = time.Now()
	cpu0, _ = bench.ThreadCPU()
	for i := range batch {
		if plain != nil {
			plain[i].Decode()
			continue
		}
		// As a node reads a frame (sim/node's codecStream): gossip.ReadPooledFrame through
		// the codec's Reader into a buffer of go-buffer-pool. The frame's own length bounds it.
		if decoded[i], derr = gossip.ReadPooledFrame(ss[i].rd, j.hdr[:], len(batch[i].data)); derr != nil {
			decoded = decoded[:i]
			break
		}
	}
	cpu1, _ = bench.ThreadCPU()
	j.r.DecodeTime += time.Since(wall0)
	j.r.decodeCPU += cpu1 - cpu0
	bad := -1
	for i, off := 0, 0; i < len(decoded); i++ {
		d := decoded[i]
		if plain != nil {
			d = j.buf[off : off+len(batch[i].data)]
			off += len(d)
		}
		if bad < 0 && !bytes.Equal(d, batch[i].data) {
			bad = i
		}
		if plain == nil {
			pool.Put(d)
			decoded[i] = nil
		}
	}
	if derr != nil {
		return fmt.Errorf("stream %s: decode: %w", batch[len(decoded)].stream, derr)
	}
	if bad >= 0 {
		return fmt.Errorf("stream %s: %w", batch[bad].stream, ErrMismatch)
	}
	j.mem.sample()
	return nil
}

// none replays frames without compression: the wire carries the raw-SSZ frames themselves.
// "Decoding" is what a receiver would do before pubsub sees them: re-Snappy each payload;
// un-Snappying that again must give the same frame.
func (j *job) none(batch []frameIn) error {
	for i := range batch {
		f := &batch[i]
		if _, ok := j.streams[f.stream]; !ok {
			j.streams[f.stream] = nil
			j.order = append(j.order, f.stream)
		}
		attribute(&j.r, len(f.data), &f.parts, len(f.data), f.owner.dirIndex())
		var err error
		if j.snappied, err = gossip.AppendSnappyFrame(j.snappied[:0], f.data); err != nil {
			return fmt.Errorf("stream %s: %w", f.stream, err)
		}
		if j.back, err = gossip.AppendSSZFrame(j.back[:0], j.snappied); err != nil {
			return fmt.Errorf("stream %s: %w", f.stream, err)
		}
		if !bytes.Equal(j.back, f.data) {
			return fmt.Errorf("stream %s: %w", f.stream, ErrMismatch)
		}
	}
	return nil
}

// finish closes every stream (a stream's closing bytes, zstd's frame end, count with its
// last frame; its decoder must then end cleanly) and totals the result against plain. A job
// replayed in groups closes its group's streams, and totals at its last group.
func (j *job) finish(plain TrafficSummary) error {
	j.r.Streams = len(j.order)
	for _, name := range j.order {
		s := j.streams[name]
		if s == nil || s.feed == nil || s.closed {
			continue // none; a stream of another group
		}
		before := s.feed.len()
		encStats := s.w.(codec.Meter).Stats()
		wall0 := time.Now()
		cpu0, _ := bench.ThreadCPU()
		if err := s.w.Close(); err != nil {
			return fmt.Errorf("stream %s: close encoder: %w", name, err)
		}
		cpu1, _ := bench.ThreadCPU()
		j.r.EncodeTime += time.Since(wall0)
		j.r.encodeCPU += cpu1 - cpu0
		j.r.batches++
		s.closeWire = s.feed.len() - before
		if !j.split() {
			attribute(&j.r, s.closeWire, &s.lastParts, s.lastLen, s.owner.dirIndex())
		}
		s.enc = encStats.StateBytes
		j.r.EncoderStateBytes = max(j.r.EncoderStateBytes, encStats.StateBytes)
		s.feed.closed = true
		var one [1]byte
		if n, err := s.rd.Read(one[:]); n != 0 || (err != io.EOF && err != nil) {
			return fmt.Errorf("stream %s: after the last frame: %d more bytes, %v: %w", name, n, err, ErrMismatch)
		}
		decStats := s.rd.(codec.Meter).Stats()
		s.dec = decStats.StateBytes
		j.r.DecoderStateBytes = max(j.r.DecoderStateBytes, decStats.StateBytes)
		if err := s.rd.Close(); err != nil {
			return fmt.Errorf("stream %s: close decoder: %w", name, err)
		}
		s.closed = true
		if j.split() {
			s.feed, s.w, s.rd = nil, nil, nil // released before the next group
		}
	}
	// The last batch's streams and frames are not held past the pass: a finished job keeps
	// its figures only (the meter's list of streams touched, plain's messages of a batch).
	j.batchStreams, j.sub, j.subAt, j.buf = nil, nil, nil, nil
	j.mem.touched, j.msgSnappy = nil, nil
	if j.split() {
		if j.group < j.groups-1 {
			return nil
		}
		for _, name := range j.order {
			s := j.streams[name]
			attribute(&j.r, s.closeWire, &s.lastParts, s.lastLen, s.owner.dirIndex())
		}
		j.mem.peak = j.mem.seriesPeak()
		j.wires = nil // every frame's wire bytes are attributed
	}
	j.r.Memory = j.mem.summary(j.streams, j.order, int64(j.cfg.Spec.HistoryBytes()))
	for _, name := range j.order {
		j.streams[name] = nil // its state is released
	}
	r := &j.r
	r.PlainBytes, r.PlainTotal = plain.Bytes, plain.Total
	for cat := range r.Bytes {
		r.Total += r.Bytes[cat]
		if pct, ok := percentOf(r.Bytes[cat], float64(r.PlainBytes[cat])); ok {
			r.Relative[cat] = pct
		}
	}
	if pct, ok := percentOf(r.Total, float64(r.PlainTotal)); ok {
		r.RelativeTotal = pct
	}
	for d := range r.DirBytes {
		r.DirPlainTotal[d] = plain.DirTotal[d]
		for _, b := range r.DirBytes[d] {
			r.DirTotal[d] += b
		}
		if pct, ok := percentOf(r.DirTotal[d], float64(r.DirPlainTotal[d])); ok {
			r.DirRelativeTotal[d] = pct
		}
	}
	if r.InputBytes > 0 && !j.cfg.None {
		r.EncodeNsPerB = float64(r.EncodeTime.Nanoseconds()) / float64(r.InputBytes)
		r.DecodeNsPerB = float64(r.DecodeTime.Nanoseconds()) / float64(r.InputBytes)
		if r.EncodeTime > 0 {
			r.EncodeMBPerSec = float64(r.InputBytes) / 1e6 / r.EncodeTime.Seconds()
		}
		if r.DecodeTime > 0 {
			r.DecodeMBPerSec = float64(r.InputBytes) / 1e6 / r.DecodeTime.Seconds()
		}
		// Each bracket holds about one thread-CPU clock read of its own (bench.ClockCost): the
		// meter's cost, stated apart and taken out of the codecs' figures.
		meter := float64(r.batches) * float64(bench.ClockCost().Nanoseconds())
		r.MeterCPUNsPerB = meter / float64(r.InputBytes)
		r.EncodeCPUNsPerB = max(0, float64(r.encodeCPU.Nanoseconds())-meter) / float64(r.InputBytes)
		r.DecodeCPUNsPerB = max(0, float64(r.decodeCPU.Nanoseconds())-meter) / float64(r.InputBytes)
	}
	return nil
}

// attribute shares n wire bytes of direction dir out like the frame's categories.
func attribute(r *Result, n int, parts *[gossip.NumCategories]int, frameLen int, dir int) {
	if n == 0 || frameLen == 0 {
		return
	}
	scale := float64(n) / float64(frameLen)
	for cat, b := range parts {
		if b != 0 {
			r.Bytes[cat] += float64(b) * scale
			r.DirBytes[dir][cat] += float64(b) * scale
		}
	}
}

// replayFrames replays frames, in order and in batches, through one configuration on the
// calling goroutine: what Sweep does for each corpus, without the traces (benchmarks and
// tests).
func replayFrames(cfg Config, payload string, frames []frameIn, plain TrafficSummary, afterEncode func([]frameIn)) (Result, error) {
	j := newJob(cfg, corpusKey{payload: payload, layout: LayoutOneStream}, plain.View)
	j.afterEncode = afterEncode
	for len(frames) > 0 {
		n := batchLen(len(frames), func(i int) int { return len(frames[i].data) })
		if err := j.frames(frames[:n]); err != nil {
			return j.r, err
		}
		frames = frames[n:]
	}
	err := j.finish(plain)
	return j.r, err
}

// batchLen is how many of the next n frames (size(i) bytes each) the replay takes as one
// batch: up to batchFrames, until batchBytes are reached.
func batchLen(n int, size func(i int) int) int {
	k, total := 0, 0
	for k < min(n, batchFrames) && total < batchBytes {
		total += size(k)
		k++
	}
	return k
}
