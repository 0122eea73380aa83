package node

import (
	"fmt"
	"sync"

	"github.com/streamsim/streamsim/gossip"
)

// WithFraming sets how the node frames its outbound RPCs on gossip streams (gossip.Framing):
// pubsub writes go-libp2p-pubsub's frames and each stream writes them as a client of that
// framing would, every resulting frame a codec unit of its own (each client writes and
// flushes one RPC at a time). The content is unchanged; the bytes change by the extra frames'
// length prefixes and tags, as on mainnet. Default gossip.FramingGo: frames as pubsub writes
// them.
func WithFraming(f gossip.Framing) Option {
	return func(c *config) error {
		g, err := gossip.ParseFraming(string(f))
		if err != nil {
			return fmt.Errorf("node framing: %w", err)
		}
		c.framing = g
		return nil
	}
}

// Framing is the node's outbound framing.
func (n *Node) Framing() gossip.Framing {
	if n.cfg.framing == "" {
		return gossip.FramingGo
	}
	return n.cfg.framing
}

// reframeBuf is a stream write's scratch: the re-framer, its output and the frames' ends.
type reframeBuf struct {
	r    gossip.Reframer
	out  []byte
	ends []int
	kept []byte // the frame without withheld messages (withhold.go)
}

var reframeBufs = sync.Pool{New: func() any { return new(reframeBuf) }}

// Write sends one RPC frame as pubsub wrote it (comm.go handleSendingMessages writes one frame
// per Write), without the messages the node withholds from this peer (WithEchoWithholding),
// re-framed as the node's framing frames that content: one unit per frame.
func (s *codecStream) Write(frame []byte) (int, error) {
	e := s.node.echoes
	if e == nil || s.bare {
		return s.writeRPC(frame)
	}
	b := reframeBufs.Get().(*reframeBuf)
	defer reframeBufs.Put(b)
	kept := e.filter(b.kept, s.Conn().RemotePeer(), frame)
	if len(kept) == 0 {
		return len(frame), nil
	}
	if len(kept) != len(frame) {
		b.kept = kept[:0]
	}
	if _, err := s.writeRPC(kept); err != nil {
		return 0, err
	}
	return len(frame), nil
}

// writeRPC writes one RPC frame in the node's framing.
func (s *codecStream) writeRPC(frame []byte) (int, error) {
	f := s.node.cfg.framing
	if !f.Splits() {
		return s.writeFrame(frame)
	}
	b := reframeBufs.Get().(*reframeBuf)
	defer reframeBufs.Put(b)
	var err error
	b.out, b.ends, err = b.r.Append(b.out[:0], b.ends[:0], f, frame)
	if err != nil || len(b.ends) <= 1 {
		// One frame, or not a whole frame (pubsub never writes one; writeFrame meters it as
		// Other): as is.
		return s.writeFrame(frame)
	}
	start := 0
	for _, end := range b.ends {
		if _, err := s.writeFrame(b.out[start:end]); err != nil {
			return 0, err
		}
		start = end
	}
	return len(frame), nil
}
