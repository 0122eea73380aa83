package node

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	pool "github.com/libp2p/go-buffer-pool"
	"github.com/libp2p/go-libp2p/core/network"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
)

// codecStream is a gossipsub stream seen through its stream codec. pubsub writes one RPC frame
// per Write (comm.go), so each Write is one frame: it becomes one compressed unit on the
// wire. The read side yields decoded frames, reassembled one at a time so that each can be
// classified and metered; a frame's wire bytes are those of the codec unit that carried it, as
// the codec reader reports them (codec.Stats.WireBytes counts completed units only), so they
// do not depend on how the transport splits reads or how far ahead the reader buffers.
//
// Both sides are metered (raw, wire, frames, messages, codec CPU per category) and recorded
// when the node has a frame recorder. In payload mode ssz the writer un-Snappies message data
// before compression and the reader re-Snappies it before pubsub sees it.
//
// Codec CPU (docs/results-schema.md) is the time of the codec's own work on the frame, on
// either clock, timed by spans (cpuspan.go): the encode into memory (the unit goes to the
// transport after the span), the decode between the reader's transport reads; for plain,
// which does no stream work, today's per-message Snappy of the frame's messages
// (gossip.MessageSnappy: on a plain stream the wrapper does that work for its cost, outbound
// decoding the messages first, outside the span). The spans' own cost is taken out and metered
// apart. The codecs keep no clock (codec.WithoutTiming).
type codecStream struct {
	network.Stream
	node *Node
	spec codec.Spec
	ssz  bool // payload mode ssz: raw SSZ inside the codec (never on plain streams)
	// bare: a plain stream with a peer the node does not meter (WithMeteredPeers): frames
	// pass through unmetered and unrecorded.
	bare bool

	wmu     chanLock
	w       io.WriteCloser
	wire    countingWriter
	wside   *streamSide
	wlast   codec.Stats
	wtrace  uint32
	wclosed bool
	sszBuf  []byte
	unit    bytes.Buffer // the encoded unit, before it goes out
	wcpu    cpuMeter
	wdebt   chargeDebt

	rmu      chanLock
	r        io.ReadCloser
	rwire    countingReader
	rside    *streamSide
	rlast    codec.Stats
	rtrace   uint32
	hdr      [binary.MaxVarintLen64]byte // the length prefix while it is read
	frame    []byte                      // the current decoded frame (as the codec yielded it; from go-buffer-pool)
	pending  []byte                      // what pubsub has not read yet of the current frame
	snappyed []byte                      // ssz mode: the current frame with data re-Snappied
	rerr     error
	rcpu     cpuMeter
	rdebt    chargeDebt

	msgSnappy gossip.MessageSnappy // plain: today's per-message Snappy, for its cost

	closeOnce sync.Once

	streamFaults // fault injection and the link log (linklog.go)
}

func newCodecStream(n *Node, s network.Stream, spec codec.Spec) *codecStream {
	cs := &codecStream{Stream: s, node: n, spec: spec, ssz: n.cfg.payloadSSZ && ProtocolFor(spec) != PlainProtocol,
		wmu: newChanLock(), rmu: newChanLock()}
	cs.bare = spec.IsPlain() && n.cfg.metered != nil && !n.cfg.metered(s.Conn().RemotePeer())
	cs.wire.w = s
	cs.rwire.r = s
	cs.rwire.cpu = &cs.rcpu
	n.links.opened(cs) // link log (linklog.go)
	return cs
}

// chanLock is a mutex made of a one-slot channel. The stream's locks are held across writes
// and reads that wait on the network (and fault injection, the pair reset's hold and flow
// control wait for them); in a synctest bubble a goroutine blocked on a sync.Mutex is not
// durably blocked, so a holder waiting for simulated time would freeze the clock
// (go-libp2p-pubsub#718), while a blocked channel send is a durable wait. About 20 ns more per
// frame than a sync.Mutex.
type chanLock chan struct{}

func newChanLock() chanLock { return make(chanLock, 1) }
func (l chanLock) Lock()    { l <- struct{}{} }
func (l chanLock) Unlock()  { <-l }

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// countingReader remembers whether the underlying stream failed or ended, to tell a codec
// error (reset the stream) from a transport one.
type countingReader struct {
	r   io.Reader
	err error
	// timed: the codec reader is decoding a frame, in a span of cpu that ends before each
	// read of the stream and starts again after it (the transport's reads are not the codec's).
	timed bool
	span  cpuSpan
	cpu   *cpuMeter
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.timed {
		c.cpu.add(c.span.end())
	}
	n, err := c.r.Read(p)
	if err != nil {
		c.err = err
	}
	if c.timed {
		c.span = c.cpu.span()
	}
	return n, err
}

// writeFrame sends one RPC frame as one codec unit; Write (framing.go) calls it per frame of
// the node's framing.
func (s *codecStream) writeFrame(frame []byte) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.wclosed {
		return 0, network.ErrReset
	}
	if s.w == nil {
		s.w = s.spec.NewWriter(&s.wire, codec.WithoutTiming())
		if !s.bare {
			s.wside = s.node.meter.side(s.Stream, "out", s.spec)
		}
	}
	s.node.links.holdFirst(s) // the pair reset's order (linklog.go)
	if s.bare && !s.cut {
		if _, err := s.w.Write(frame); err != nil {
			s.node.links.endedErr(s, err) // link log (linklog.go)
			return 0, err
		}
		return len(frame), nil
	}
	parts, err := gossip.SplitFrame(frame)
	if err != nil {
		// Not one whole frame: pubsub never does this; meter it as Other and send it as is.
		parts = gossip.FrameParts{}
		parts.Bytes[gossip.Other] = len(frame)
	}
	dominant := parts.Dominant() // of the frame as pubsub wrote it, which is what is recorded
	data := frame
	if s.ssz {
		if s.sszBuf, err = gossip.AppendSSZFrame(s.sszBuf[:0], frame); err != nil {
			s.fail(fmt.Errorf("payload to ssz: %w", err))
			return 0, err
		}
		data = s.sszBuf
		if p, err := gossip.SplitFrame(data); err == nil {
			parts = p
		}
	}
	if s.cut { // fault schedule: reset mid-unit (faultinject.go)
		return s.cutUnit(data)
	}
	before := s.wire.n
	var codecCPU time.Duration
	var meter meterCost
	if s.spec.IsPlain() {
		// Sent as it is; the codec CPU is what its messages cost their publisher's Snappy
		// (decoded first, outside the span). Not charged: plain adds no work to the stream.
		if _, err := s.w.Write(data); err != nil {
			s.node.links.endedErr(s, err) // link log (linklog.go)
			return 0, err
		}
		if s.msgSnappy.Load(frame, true) == nil && s.msgSnappy.Messages() > 0 {
			s.wcpu.begin(len(data))
			span := s.wcpu.span()
			s.msgSnappy.Encode()
			s.wcpu.add(span.end())
		}
		codecCPU, meter = s.wcpu.take(len(data))
	} else {
		// Encode into memory, timing the codec alone, charge it, then send the unit.
		s.unit.Reset()
		s.wire.w = &s.unit
		s.wcpu.begin(len(data))
		span := s.wcpu.span()
		_, err := s.w.Write(data)
		s.wcpu.add(span.end())
		s.wire.w = s.Stream
		codecCPU, meter = s.wcpu.take(len(data))
		if err == nil {
			if s.node.cfg.virtual && s.node.cfg.chargeCPU {
				if d := s.wdebt.due(codecCPU); d > 0 {
					time.Sleep(d)
				}
			}
			_, err = s.Stream.Write(s.unit.Bytes())
		}
		if err != nil {
			s.node.links.endedErr(s, err) // link log (linklog.go)
			return 0, err
		}
	}
	wire, cs := s.wire.n-before, statsDelta(s.w, &s.wlast)
	cs.Time = codecCPU
	var record func()
	if s.node.cfg.recorder != nil {
		record = func() { s.node.record(&s.wtrace, "out", s.Stream, s.spec, dominant, frame) }
	}
	s.wside.add(&parts, len(data), wire, cs, meter, record)
	return len(frame), nil
}

// Read yields decoded frame bytes to pubsub. pubsub reads a stream from one goroutine (its
// reader, or for an outbound stream the watch for its end) and reads a frame's length prefix
// a byte at a time: what is left of the current frame is handed out without the lock, which
// guards the codec reader against release.
func (s *codecStream) Read(p []byte) (int, error) {
	if len(s.pending) > 0 {
		n := copy(p, s.pending)
		s.pending = s.pending[n:]
		return n, nil
	}
	s.rmu.Lock()
	defer s.rmu.Unlock()
	for len(s.pending) == 0 {
		if s.rerr != nil {
			return 0, s.rerr
		}
		if err := s.nextFrame(); err != nil {
			s.rerr = err
			if s.rwire.err == nil {
				// The codec or the framing failed, not the transport.
				s.fail(err)
			} else {
				s.node.links.endedErr(s, err) // link log (linklog.go)
			}
			return 0, err
		}
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// nextFrame reads and decodes one frame into s.pending.
func (s *codecStream) nextFrame() error {
	if s.r == nil {
		s.r = s.spec.NewReader(&s.rwire, codec.WithMaxUnitBytes(maxFrameBytes), codec.WithoutTiming())
	}
	if s.Stat().Direction == network.DirInbound {
		s.node.links.holdFirst(s) // the pair reset's order (linklog.go)
	}
	s.node.AwaitBacklog(s.Conn().RemotePeer())
	if s.frame != nil {
		// pubsub has read all of the last frame (nothing is pending): its buffer goes back
		// to the pool, where the next frame of any stream finds it warm.
		pool.Put(s.frame)
		s.frame = nil
	}
	var err error
	plain := s.spec.IsPlain()
	if !plain {
		s.rcpu.begin(-1)
		s.rwire.timed, s.rwire.span = true, s.rcpu.span()
	}
	s.frame, err = gossip.ReadPooledFrame(s.r, s.hdr[:], maxFrameBytes)
	if !plain {
		s.rcpu.add(s.rwire.span.end())
		s.rwire.timed = false
	}
	if err != nil {
		s.rcpu.take(0)
		return err
	}
	if s.bare {
		s.frames.Add(1)
		s.node.links.throttle(int64(len(s.frame))) // slow-reader fault (linklog.go)
		s.pending = s.frame
		return nil
	}
	if plain && s.msgSnappy.Load(s.frame, false) == nil && s.msgSnappy.Messages() > 0 {
		// Today's per-message Snappy of the frame's messages, as a receiver decodes them.
		s.rcpu.begin(len(s.frame))
		span := s.rcpu.span()
		s.msgSnappy.Decode()
		s.rcpu.add(span.end())
	}
	if s.rside == nil {
		s.rside = s.node.meter.side(s.Stream, "in", s.spec)
	}
	parts, err := gossip.SplitFrame(s.frame)
	if err != nil {
		parts = gossip.FrameParts{}
		parts.Bytes[gossip.Other] = len(s.frame)
	}
	// The codec reader counts the wire bytes of the units it has returned completely; a frame
	// is one unit, so the delta is exactly this frame's, however the transport split reads.
	cs := statsDelta(s.r, &s.rlast)
	var meter meterCost
	cs.Time, meter = s.rcpu.take(len(s.frame))
	if !plain && s.node.cfg.virtual && s.node.cfg.chargeCPU {
		if d := s.rdebt.due(cs.Time); d > 0 {
			time.Sleep(d)
		}
	}
	s.frames.Add(1)
	s.node.links.throttle(cmp.Or(cs.WireBytes, int64(len(s.frame)))) // slow-reader fault (linklog.go)
	out := s.frame
	if s.ssz {
		if s.snappyed, err = gossip.AppendSnappyFrame(s.snappyed[:0], s.frame); err != nil {
			return fmt.Errorf("payload to ssz_snappy: %w", err)
		}
		out = s.snappyed
	}
	if s.node.echoes != nil {
		s.node.echoes.received(s.Conn().RemotePeer(), out) // withhold.go
	}
	var record func()
	if s.node.cfg.recorder != nil {
		record = func() { s.node.record(&s.rtrace, "in", s.Stream, s.spec, parts.Dominant(), out) }
	}
	s.rside.add(&parts, len(s.frame), cs.WireBytes, cs, meter, record)
	s.pending = out
	return nil
}

// fail resets the stream after a codec or framing error; pubsub sees the error and drops the
// stream, the peer opens a fresh one (with fresh codec history).
func (s *codecStream) fail(err error) {
	s.node.streamError(s.Stream, err)
	s.node.links.ended(s, "codec error: "+err.Error(), true) // link log (linklog.go)
	s.Stream.Reset()
	s.release()
}

// errStreamReleased is what Read returns once the stream's codec state is released.
var errStreamReleased = errors.New("gossip stream closed")

func (s *codecStream) release() {
	s.closeOnce.Do(func() {
		go func() {
			// Release codec state once in-flight Read/Write calls are done.
			s.wmu.Lock()
			if s.w != nil {
				s.w.Close()
				s.w = nil
			}
			s.wclosed = true
			s.wmu.Unlock()
			s.rmu.Lock()
			if s.r != nil {
				s.r.Close()
			}
			if s.rerr == nil {
				// pubsub's read loop may call Read again after the stream was closed under
				// it (a pair reset, a peer removed): it gets this, not the closed codec.
				s.rerr = errStreamReleased
			}
			s.rmu.Unlock()
		}()
	})
}

func (s *codecStream) Close() error {
	s.wmu.Lock()
	var err error
	if s.w != nil {
		err = s.w.Close()
		s.w = nil
	}
	s.wclosed = true
	s.wmu.Unlock()
	s.node.links.ended(s, "closed", false) // link log (linklog.go)
	s.release()
	if cerr := s.Stream.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *codecStream) Reset() error {
	s.node.links.ended(s, "reset by pubsub", true) // link log (linklog.go); a no-op after a failure seen
	err := s.Stream.Reset()
	s.release()
	return err
}

func (s *codecStream) ResetWithError(code network.StreamErrorCode) error {
	s.node.links.ended(s, fmt.Sprintf("reset by pubsub (code %d)", code), true) // link log (linklog.go)
	err := s.Stream.ResetWithError(code)
	s.release()
	return err
}

// statsDelta returns the codec's work since the last call; StateBytes is the current value.
func statsDelta(c any, last *codec.Stats) codec.Stats {
	m, ok := c.(codec.Meter)
	if !ok {
		return codec.Stats{}
	}
	cur := m.Stats()
	d := codec.Stats{
		Units:      cur.Units - last.Units,
		RawBytes:   cur.RawBytes - last.RawBytes,
		WireBytes:  cur.WireBytes - last.WireBytes,
		Time:       cur.Time - last.Time,
		StateBytes: cur.StateBytes,
	}
	*last = cur
	return d
}
