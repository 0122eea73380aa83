package bench

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"sort"
	"time"

	pool "github.com/libp2p/go-buffer-pool"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
)

// BatchFrames and BatchBytes bound a batch: the frames a node-like loop encodes before it
// decodes them, up to BatchFrames until BatchBytes are reached. streamsim sweep replays in
// the same batches (analysis/replay), so bench's stream codecs run in the sweep's conditions.
const (
	BatchFrames = 512
	BatchBytes  = 256 << 10
)

// BatchLen is how many of the next n messages (size(i) bytes each) make one batch.
func BatchLen(n int, size func(i int) int) int {
	k, total := 0, 0
	for k < min(n, BatchFrames) && total < BatchBytes {
		total += size(k)
		k++
	}
	return k
}

// pairFeed is the wire between a stream pair's Writer and Reader: the Writer appends a
// batch's units, the Reader takes them.
type pairFeed struct {
	buf []byte
	off int
}

func (f *pairFeed) Write(p []byte) (int, error) {
	if f.off == len(f.buf) {
		f.buf, f.off = f.buf[:0], 0
	}
	f.buf = append(f.buf, p...)
	return len(p), nil
}

func (f *pairFeed) Read(p []byte) (int, error) {
	if f.off == len(f.buf) {
		return 0, io.EOF
	}
	n := copy(p, f.buf[f.off:])
	f.off += n
	return n, nil
}

// streamPair is a stream codec's Writer and Reader over one in-memory wire, kept across
// passes as a node keeps a stream's codecs: each pass starts a new stream direction on the
// state they hold (codec.WriterResetter, codec.ReaderResetter), so that a pass's messages
// are not matched against the last pass's, and its figures are the codec's steady-state work
// rather than the allocation and first touch of its state (at a 1 MiB window about 8 MB,
// 2 000 page faults at about 5 µs each on the shared VM). snappy-stream and zstd reset (zstd
// abandons the last pass's frame without its end and starts a new one); a codec that cannot
// (plain, which holds no state) gets a fresh Writer and Reader per pass, opened outside the
// clock.
type streamPair struct {
	spec codec.Spec
	feed pairFeed
	w    io.WriteCloser
	r    io.ReadCloser
	hdr  [binary.MaxVarintLen64]byte
	out  []byte
	// encState, decState: the Writer's and Reader's state bytes after the last pass.
	encState, decState int64
}

// start opens or resets the pair for a new stream direction.
func (s *streamPair) start() {
	wr, wok := s.w.(codec.WriterResetter)
	rr, rok := s.r.(codec.ReaderResetter)
	if !wok || !rok {
		if s.w != nil {
			s.w.Close() // its closing bytes (zstd's frame end) are not the next stream's
			s.r.Close()
		}
	}
	s.feed = pairFeed{buf: s.feed.buf[:0]}
	if wok && rok {
		wr.Reset(&s.feed)
		rr.Reset(&s.feed)
		return
	}
	s.w = s.spec.NewWriter(&s.feed, codec.WithoutTiming()) // pass times its loops
	s.r = s.spec.NewReader(&s.feed, codec.WithoutTiming())
}

// pass runs msgs through the pair as a node runs a stream's frames: in batches (BatchLen),
// each encoded, then decoded (framed: read as a node reads a frame, gossip.ReadPooledFrame;
// else each message read whole), and returns the thread CPU of the encoding and of the
// decoding, each loop's clock read (ClockCost) taken out; the wall clock where there is no
// thread clock. check, if set, sees every decoded message.
func (s *streamPair) pass(msgs [][]byte, framed bool, check func(i int, m []byte)) (enc, dec time.Duration, err error) {
	s.start()
	return s.run(msgs, framed, check)
}

// run is pass on the stream as it stands: msgs follow the messages before them.
func (s *streamPair) run(msgs [][]byte, framed bool, check func(i int, m []byte)) (enc, dec time.Duration, err error) {
	if s.w == nil {
		s.start()
	}
	_, thread := ThreadCPU()
	var cost time.Duration // each timed loop holds one clock read's cost
	if thread {
		cost = ClockCost()
	}
	clock := func() time.Duration {
		if d, ok := ThreadCPU(); ok {
			return d
		}
		return time.Duration(time.Now().UnixNano())
	}
	for at := 0; at < len(msgs); {
		batch := msgs[at : at+BatchLen(len(msgs)-at, func(i int) int { return len(msgs[at+i]) })]
		t0 := clock()
		for _, m := range batch {
			if _, err := s.w.Write(m); err != nil {
				return 0, 0, fmt.Errorf("%s: encode message %d: %w", s.spec, at, err)
			}
		}
		t1 := clock()
		for i, m := range batch {
			var d []byte
			if framed {
				d, err = gossip.ReadPooledFrame(s.r, s.hdr[:], len(m))
			} else {
				if cap(s.out) < len(m) {
					s.out = make([]byte, len(m))
				}
				d = s.out[:len(m)]
				_, err = io.ReadFull(s.r, d)
			}
			if err != nil {
				return 0, 0, fmt.Errorf("%s: decode message %d: %w", s.spec, at+i, err)
			}
			if check != nil {
				check(at+i, d)
			}
			if framed {
				pool.Put(d)
			}
		}
		t2 := clock()
		enc += t1 - t0 - cost
		dec += t2 - t1 - cost
		at += len(batch)
	}
	s.encState = s.w.(codec.Meter).Stats().StateBytes
	s.decState = s.r.(codec.Meter).Stats().StateBytes
	return enc, dec, nil
}

// timePair returns the median time of one pass's encoding and of its decoding, in ns, over
// o.Rounds rounds of at least o.RoundTime each, after a warm-up pass that checks the round
// trip.
func timePair(s *streamPair, p Payload, o Options) (encNs, decNs float64, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var bad error
	start := time.Now()
	if _, _, err := s.pass(p.Msgs, p.Framed, func(i int, m []byte) {
		if bad == nil && !bytes.Equal(m, p.Msgs[i]) {
			bad = fmt.Errorf("message %d decodes to different bytes", i)
		}
	}); err != nil {
		return 0, 0, err
	}
	if bad != nil {
		return 0, 0, bad
	}
	k := max(1, int(o.RoundTime/max(time.Since(start), time.Microsecond)))
	encs, decs := make([]float64, o.Rounds), make([]float64, o.Rounds)
	for r := range o.Rounds {
		runtime.GC()
		var e, d time.Duration
		for range k {
			pe, pd, err := s.pass(p.Msgs, p.Framed, nil)
			if err != nil {
				return 0, 0, err
			}
			e += pe
			d += pd
		}
		encs[r], decs[r] = float64(e.Nanoseconds())/float64(k), float64(d.Nanoseconds())/float64(k)
	}
	sort.Float64s(encs)
	sort.Float64s(decs)
	return encs[len(encs)/2], decs[len(decs)/2], nil
}

// StreamPair is bench's stream pair for a codec spec, to time a stream's frames in pieces
// with bench's own loop (sim/node's TestCodecCPUAgrees takes the live path, the sweep and
// bench through the same frames piece by piece): one long-lived Writer and Reader, each Run
// continuing the stream.
type StreamPair struct{ sp streamPair }

// NewStreamPair returns a stream pair of spec.
func NewStreamPair(spec codec.Spec) *StreamPair { return &StreamPair{sp: streamPair{spec: spec}} }

// Run encodes and decodes msgs on the stream as Measure's loop does (in batches: BatchLen
// from msgs[0], each encoded, then decoded; framed: read as a node reads a frame) and returns
// the thread CPU of the encoding and of the decoding, each loop's clock read taken out (the
// wall clock where there is no thread clock). The caller locks its goroutine to its thread.
func (p *StreamPair) Run(msgs [][]byte, framed bool) (enc, dec time.Duration, err error) {
	return p.sp.run(msgs, framed, nil)
}
