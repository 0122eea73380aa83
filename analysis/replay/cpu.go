package replay

import (
	"fmt"

	"github.com/streamsim/streamsim/bench"
	"github.com/streamsim/streamsim/gossip"
)

// oneStream lays frames (RPC frames in order, ssz_snappy) out as one inbound stream of the
// replay, with the plain traffic they make.
func oneStream(frames [][]byte) ([]frameIn, TrafficSummary, error) {
	o := &owner{node: "0/n", peer: "0/n→p"}
	in := make([]frameIn, 0, len(frames))
	var plain TrafficSummary
	for i, f := range frames {
		parts, err := gossip.SplitFrame(f)
		if err != nil {
			return nil, plain, fmt.Errorf("frame %d: %w", i, err)
		}
		in = append(in, frameIn{stream: "s", data: f, parts: parts.Bytes, owner: o})
		for c, n := range parts.Bytes {
			plain.Bytes[c] += int64(n)
			plain.Total += int64(n)
		}
	}
	return in, plain, nil
}

// Stream is one stream direction's RPC frames (in order, ssz_snappy) laid out for the
// replay once, so that each replay of it (CPU) allocates what the replay itself does: its
// codecs' state, as a node's stream does. For the comparison of the live path, the sweep and
// bench on the same frames (sim/node's TestCodecCPUAgrees).
type Stream struct {
	in    []frameIn
	plain TrafficSummary
}

// OneStream lays frames out as one stream direction of the replay.
func OneStream(frames [][]byte) (*Stream, error) {
	in, plain, err := oneStream(frames)
	if err != nil {
		return nil, err
	}
	return &Stream{in: in, plain: plain}, nil
}

// CPU replays the stream through the sweep configuration config (ParseConfig) as the sweep
// replays a recording's, on the calling goroutine, and returns the codec CPU it reports per
// input byte: encode, decode and the meter's own, in ns (thread CPU; 0 where the thread clock
// is missing). The caller locks its goroutine to its thread. Each call opens fresh codecs:
// their setup (allocating their state and first touching it) is in the figures, as it is
// in a sweep's, amortized over the stream.
func (s *Stream) CPU(config string) (encode, decode, meter float64, err error) {
	cfg, err := ParseConfig(config)
	if err != nil {
		return 0, 0, 0, err
	}
	r, err := replayFrames(cfg, gossip.PayloadSSZSnappy, s.in, s.plain, nil)
	if err != nil {
		return 0, 0, 0, err
	}
	return r.EncodeCPUNsPerB, r.DecodeCPUNsPerB, r.MeterCPUNsPerB, nil
}

// Replayer is one configuration's replay of a Stream whose codecs stay open across calls,
// as a node's long-lived stream's do: after the first pass their state is allocated and
// touched, and what each further call reports is their steady-state work per byte, the
// figure a long stream's codec CPU converges to. Replay the frames in the sweep's batches
// (Batches) for the sweep's own conditions.
type Replayer struct {
	s   *Stream
	j   *job
	err error
}

// Replayer opens the stream's replay through config (ParseConfig).
func (s *Stream) Replayer(config string) (*Replayer, error) {
	cfg, err := ParseConfig(config)
	if err != nil {
		return nil, err
	}
	return &Replayer{s: s, j: newJob(cfg, corpusKey{payload: gossip.PayloadSSZSnappy, layout: LayoutOneStream}, s.plain.View)}, nil
}

// Replay replays the stream's frames [from, to), cut into batches as the sweep cuts them
// from frame from on (Batches), on the calling goroutine
// (locked to its thread), through the replayer's open codecs, and returns what the sweep
// reports for them per input byte: encode, decode and the meter's own, in ns of thread CPU,
// computed as the sweep computes a whole replay's (job.finish). The frames follow the ones
// before them on the stream: the codecs' history and tables carry over.
func (r *Replayer) Replay(from, to int) (encode, decode, meter float64, err error) {
	if r.err != nil {
		return 0, 0, 0, r.err
	}
	if from < 0 || to > len(r.s.in) || from >= to {
		return 0, 0, 0, fmt.Errorf("replay frames [%d, %d) of %d", from, to, len(r.s.in))
	}
	before := r.j.r
	for frames := r.s.in[from:to]; len(frames) > 0; {
		n := batchLen(len(frames), func(i int) int { return len(frames[i].data) })
		if r.err = r.j.frames(frames[:n]); r.err != nil {
			return 0, 0, 0, r.err
		}
		frames = frames[n:]
	}
	after := &r.j.r
	in := float64(after.InputBytes - before.InputBytes)
	m := float64(after.batches-before.batches) * float64(bench.ClockCost().Nanoseconds())
	encode = max(0, float64((after.encodeCPU-before.encodeCPU).Nanoseconds())-m) / in
	decode = max(0, float64((after.decodeCPU-before.decodeCPU).Nanoseconds())-m) / in
	return encode, decode, m / in, nil
}

// Close closes the replayer's codecs (the encoders' closing bytes must decode cleanly).
func (r *Replayer) Close() error {
	if r.err != nil {
		return r.err
	}
	r.err = r.j.finish(r.s.plain)
	return r.err
}

// Batches cuts frames (one stream direction's, in order) into the batches Stream.CPU replays
// them in: each is encoded whole, then decoded whole. The live path's check drives its streams
// in the same order (sim/node's TestCodecCPUAgrees), so that both measure the codec in the
// same conditions.
func Batches(frames [][]byte) [][][]byte {
	var out [][][]byte
	for len(frames) > 0 {
		n := batchLen(len(frames), func(i int) int { return len(frames[i]) })
		out = append(out, frames[:n])
		frames = frames[n:]
	}
	return out
}
