package bench

import (
	"fmt"
	"math/rand"
	"time"

	pb "github.com/libp2p/go-libp2p-pubsub/pb"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/workload"
)

// Framing is how a gossipsub implementation puts messages and control into RPC frames.
type Framing uint8

const (
	// GoFraming is go-libp2p-pubsub's: a forwarded message goes out in a frame of its own,
	// but the heartbeat's control (every topic's IHAVE, IWANT) leaves in one frame behind
	// the messages queued while the heartbeat ran, control after them (protobuf field order).
	GoFraming Framing = iota
	// RustFraming is rust-libp2p's: every message and every IHAVE, IWANT, IDONTWANT, GRAFT
	// and PRUNE is an RPC frame of its own.
	RustFraming
)

func (f Framing) String() string {
	if f == RustFraming {
		return "rust"
	}
	return "go"
}

// GossipParams shape a control-heavy peer stream built from the gossip rules every client
// implements (go-libp2p-pubsub emitGossip, rust-libp2p emit_gossip and the others alike):
// each heartbeat the peer advertises the ids of the last 3 heartbeats' messages of a topic
// (shuffled) to a peer it picks with probability PickShare, so an id comes back on our
// stream one or two heartbeats later, 64 KiB – 1 MiB back at these rates; meanwhile it
// forwards the attestations of the subnets it shares a mesh with.
type GossipParams struct {
	Shape   GossipShape
	Seed    int64
	Framing Framing
	// Heartbeats to generate; the first WarmHeartbeats only fill the history.
	Heartbeats, WarmHeartbeats int
	Heartbeat                  time.Duration
	// GossipTopics is how many topics the peer gossips to us (not meshed with us);
	// GossipIDsPerSecond their messages per second together (each one IHAVE id).
	GossipTopics       int
	GossipIDsPerSecond int
	// PickShare is the chance the peer picks us as a gossip target for a topic in a
	// heartbeat (max(D_lazy, factor × eligible) / eligible).
	PickShare float64
	// MeshSubnets are the attestation subnets the peer forwards to us (workload messages);
	// ForwardShare is the share of their messages it forwards to us.
	MeshSubnets  int
	ForwardShare float64
	// IWantIDs is how many ids the peer asks us for per heartbeat (ids we advertised:
	// new to this stream).
	IWantIDs int
	// BatchMessages (go framing) is how many messages queue while the heartbeat runs and
	// leave in its frame, before its control.
	BatchMessages int
}

// GossipShape names a GossipParams preset.
type GossipShape string

const (
	// FarGossip is the control-heavy stream of issue 36: about 220 KB of IHAVE per
	// heartbeat (16 000 ids/s over 32 topics, picked with q = 1/3: about 70 % of the id
	// mentions are first mentions), so ids come back 200–500 KiB later, beside two meshed
	// attestation subnets.
	FarGossip GossipShape = "far"
	// NearGossip gossips 2 400 ids/s over 8 topics: one heartbeat is about 45 KB of stream,
	// so about half the repeats lie within 64 KiB (the neighbourhood's calibration form).
	NearGossip GossipShape = "near"
)

// GossipShapes lists the presets.
var GossipShapes = []GossipShape{FarGossip, NearGossip}

// DefaultGossipParams returns a shape's parameters for seed and framing.
func DefaultGossipParams(shape GossipShape, seed int64, f Framing) GossipParams {
	p := GossipParams{
		Shape: shape, Seed: seed, Framing: f,
		Heartbeats: 24, WarmHeartbeats: 6, Heartbeat: 700 * time.Millisecond,
		GossipTopics: 32, GossipIDsPerSecond: 16000, PickShare: 1.0 / 3,
		MeshSubnets: 2, ForwardShare: 0.5,
		IWantIDs: 12, BatchMessages: 40,
	}
	if shape == NearGossip {
		p.GossipTopics, p.GossipIDsPerSecond = 8, 2400
	}
	return p
}

// GossipStream is one direction of a peer stream: its frames in order, each frame's raw
// bytes per category (gossip.SplitFrame), and the first frame that counts (the ones before
// only warm the history).
type GossipStream struct {
	Name   string
	Frames [][]byte
	Parts  [][gossip.NumCategories]int
	Warm   int
}

// NewGossipStream generates the stream of p. The same p gives the same bytes.
func NewGossipStream(p GossipParams) (GossipStream, error) {
	rng := rand.New(rand.NewSource(p.Seed))
	wp := workload.DefaultParams()
	wp.Seed = p.Seed
	g, err := workload.NewGenerator(wp)
	if err != nil {
		return GossipStream{}, fmt.Errorf("workload: %w", err)
	}
	mesh := map[string]bool{}
	for i := range p.MeshSubnets {
		mesh[gossip.Topic(wp.ForkDigest, gossip.AttestationTopic(i*29%64))] = true
	}
	// The forwarded attestations of the mesh subnets, in send order, over the whole span.
	span := time.Duration(p.Heartbeats) * p.Heartbeat
	var msgs []workload.Message
	for s := 0; ; s++ {
		slot, err := g.NextSlot()
		if err != nil {
			return GossipStream{}, fmt.Errorf("workload slot %d: %w", s, err)
		}
		if len(slot) == 0 || slot[0].At >= span {
			break
		}
		for _, m := range slot {
			if mesh[m.Topic] && m.At < span && rng.Float64() < p.ForwardShare {
				msgs = append(msgs, m)
			}
		}
	}
	topics := make([]string, p.GossipTopics)
	for i := range topics {
		topics[i] = gossip.Topic(wp.ForkDigest, gossip.AttestationTopic(32+i%32))
		if i >= 32 {
			topics[i] = gossip.Topic(wp.ForkDigest, gossip.DataColumnTopic(i))
		}
	}
	perWindow := float64(p.GossipIDsPerSecond) * p.Heartbeat.Seconds() / float64(p.GossipTopics)
	// windows[t] holds topic t's ids of the last 3 heartbeats, newest first.
	windows := make([][3][][]byte, len(topics))
	newID := func() []byte {
		id := make([]byte, gossip.MessageIDBytes)
		rng.Read(id)
		return id
	}

	s := GossipStream{Name: fmt.Sprintf("gossip-%s-%s", p.Shape, p.Framing)}
	add := func(rpc *pb.RPC) error {
		f, err := gossip.AppendFrame(nil, rpc)
		if err != nil {
			return err
		}
		parts, err := gossip.SplitFrame(f)
		if err != nil {
			return err
		}
		s.Frames = append(s.Frames, f)
		s.Parts = append(s.Parts, parts.Bytes)
		return nil
	}
	publish := func(ms []workload.Message) *pb.RPC {
		rpc := &pb.RPC{}
		for _, m := range ms {
			rpc.Publish = append(rpc.Publish, &pb.Message{Data: m.Data, Topic: &m.Topic})
		}
		return rpc
	}
	next := 0
	for hb := range p.Heartbeats {
		if hb == p.WarmHeartbeats {
			s.Warm = len(s.Frames)
		}
		end := time.Duration(hb+1) * p.Heartbeat
		last := next
		for last < len(msgs) && msgs[last].At < end {
			last++
		}
		batch := last
		if p.Framing == GoFraming {
			batch = max(next, last-p.BatchMessages)
		}
		for ; next < batch; next++ {
			if err := add(publish(msgs[next : next+1])); err != nil {
				return s, err
			}
		}
		// The heartbeat: this window's ids shift in, then gossip to us on the topics
		// that picked us.
		var ihaves []*pb.ControlIHave
		for t := range topics {
			w := &windows[t]
			w[2], w[1] = w[1], w[0]
			n := int(perWindow*(0.8+0.4*rng.Float64()) + 0.5)
			w[0] = make([][]byte, n)
			for i := range w[0] {
				w[0][i] = newID()
			}
			if rng.Float64() >= p.PickShare {
				continue
			}
			var ids []string
			for _, win := range w {
				for _, id := range win {
					ids = append(ids, string(id))
				}
			}
			rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			ids = ids[:min(len(ids), 5000)] // MaxIHaveLength
			ihaves = append(ihaves, &pb.ControlIHave{TopicID: &topics[t], MessageIDs: ids})
		}
		iwant := &pb.ControlIWant{}
		for range p.IWantIDs {
			iwant.MessageIDs = append(iwant.MessageIDs, string(newID()))
		}
		switch p.Framing {
		case GoFraming:
			rpc := publish(msgs[next:last])
			rpc.Control = &pb.ControlMessage{Ihave: ihaves, Iwant: []*pb.ControlIWant{iwant}}
			if err := add(rpc); err != nil {
				return s, err
			}
		case RustFraming:
			for _, ih := range ihaves {
				if err := add(&pb.RPC{Control: &pb.ControlMessage{Ihave: []*pb.ControlIHave{ih}}}); err != nil {
					return s, err
				}
			}
			if err := add(&pb.RPC{Control: &pb.ControlMessage{Iwant: []*pb.ControlIWant{iwant}}}); err != nil {
				return s, err
			}
			for ; next < last; next++ {
				if err := add(publish(msgs[next : next+1])); err != nil {
					return s, err
				}
			}
		}
		next = last
	}
	return s, nil
}

// StreamRatio is what a codec sent for a GossipStream, after its warm-up: wire bytes per
// category as a percentage of the frames' raw bytes (a frame's wire bytes shared out like its
// raw bytes, as streamsim sweep attributes them), and in total.
type StreamRatio struct {
	Spec       string
	Pct        [gossip.NumCategories]float64
	TotalPct   float64
	Raw, Wire  int64
	FrameBytes [gossip.NumCategories]int64
}

// Ratio encodes s on one stream with spec, checks that it decodes to the frames, and returns
// the percentages.
func (s GossipStream) Ratio(spec codec.Spec) (StreamRatio, error) {
	r := StreamRatio{Spec: spec.String()}
	var wire [gossip.NumCategories]float64
	var sink unitSink
	var sizes []int
	var all []byte
	sink.emit = func(b []byte) {
		sizes = append(sizes, len(b))
		all = append(all, b...)
	}
	w := spec.NewWriter(&sink)
	for i, f := range s.Frames {
		n0 := len(all)
		if _, err := w.Write(f); err != nil {
			return r, fmt.Errorf("%s: frame %d: %w", spec, i, err)
		}
		if i < s.Warm {
			continue
		}
		n := float64(len(all) - n0)
		for c, b := range s.Parts[i] {
			wire[c] += n * float64(b) / float64(len(f))
			r.FrameBytes[c] += int64(b)
		}
		r.Raw += int64(len(f))
		r.Wire += int64(len(all) - n0)
	}
	if err := w.Close(); err != nil {
		return r, err
	}
	c := &specCoder{spec: spec}
	err := c.decode(&Encoded{Stream: all, Sizes: frameSizes(s.Frames)}, func(i int, m []byte) {
		if string(m) != string(s.Frames[i]) {
			panic(fmt.Sprintf("%s: frame %d decodes to different bytes", spec, i))
		}
	})
	if err != nil {
		return r, fmt.Errorf("%s: decode: %w", spec, err)
	}
	for c := range wire {
		if r.FrameBytes[c] > 0 {
			r.Pct[c] = 100 * wire[c] / float64(r.FrameBytes[c])
		}
	}
	r.TotalPct = 100 * float64(r.Wire) / float64(r.Raw)
	return r, nil
}

func frameSizes(frames [][]byte) []int {
	out := make([]int, len(frames))
	for i, f := range frames {
		out[i] = len(f)
	}
	return out
}
