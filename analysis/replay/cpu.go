package replay

import (
	"fmt"

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
// is missing). The caller locks its goroutine to its thread.
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
