package replay

import (
	"fmt"
	"io"

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

// FramesCPU replays frames (one stream direction's RPC frames in order, ssz_snappy) through
// the sweep configuration config (ParseConfig) as the sweep replays a recording's, on the
// calling goroutine, and returns the codec CPU it reports per input byte: encode, decode and
// the meter's own, in ns (thread CPU; 0 where the thread clock is missing). The caller locks
// its goroutine to its thread. For the comparison of the live path, the sweep and bench on
// the same frames (sim/node's TestCodecCPUAgrees).
func FramesCPU(config string, frames [][]byte) (encode, decode, meter float64, err error) {
	cfg, err := ParseConfig(config)
	if err != nil {
		return 0, 0, 0, err
	}
	in, plain, err := oneStream(frames)
	if err != nil {
		return 0, 0, 0, err
	}
	r, err := replayFrames(cfg, gossip.PayloadSSZSnappy, in, plain, nil)
	if err != nil {
		return 0, 0, 0, err
	}
	return r.EncodeCPUNsPerB, r.DecodeCPUNsPerB, r.MeterCPUNsPerB, nil
}

// readFrame reads one frame of len(dst) bytes out of a codec Reader as a node reads it
// (gossip.ReadPooledFrame, like pubsub's varint reader): the length prefix a byte at a time,
// then the rest at once. The decode figures time this, as the live path's do.
func readFrame(r io.Reader, dst []byte) error {
	i := 0
	for i < len(dst) {
		if _, err := io.ReadFull(r, dst[i:i+1]); err != nil {
			return err
		}
		i++
		if dst[i-1] < 0x80 {
			break
		}
	}
	_, err := io.ReadFull(r, dst[i:])
	return err
}
