package node

import (
	"bytes"
	"io"
	"testing"

	snet "github.com/streamsim/streamsim/sim/network"

	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-msgio"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/workload"
)

// memStream is a gossip stream over memory: reads come from r, writes go to w (discarded
// when nil). Only what codecStream and pubsub's reader use is implemented.
type memStream struct {
	network.Stream
	r    io.Reader
	w    io.Writer
	conn *memConn
	dir  network.Direction
}

type memConn struct {
	network.Conn
	remote peer.ID
}

func (c *memConn) RemotePeer() peer.ID { return c.remote }

func (s *memStream) Read(p []byte) (int, error) { return s.r.Read(p) }
func (s *memStream) Write(p []byte) (int, error) {
	if s.w == nil {
		return len(p), nil
	}
	return s.w.Write(p)
}
func (s *memStream) Conn() network.Conn            { return s.conn }
func (s *memStream) Stat() network.Stats           { return network.Stats{Direction: s.dir} }
func (s *memStream) Protocol() protocol.ID         { return PlainProtocol }
func (s *memStream) Close() error                  { return nil }
func (s *memStream) Reset() error                  { return nil }
func (s *memStream) SetProtocol(protocol.ID) error { return nil }

// benchFrames are RPC frames as the overhead benchmark's mesh carries them: one slot's
// messages, one per frame, each followed by an IDONTWANT of its id, and every eighth by an
// IHAVE of eight ids (the mix of the mesh's frames is about half control, half messages).
func benchFrames(b *testing.B) [][]byte {
	wp := workload.DefaultParams() // the overhead benchmark's workload (package sim)
	wp.Seed, wp.Validators = 11, 65536
	gen, err := workload.NewGenerator(wp)
	if err != nil {
		b.Fatal(err)
	}
	msgs, err := gen.NextSlot()
	if err != nil {
		b.Fatal(err)
	}
	var frames [][]byte
	var ids []string
	for i, m := range msgs {
		f, err := gossip.AppendPublishFrame(nil, m.Topic, m.Data)
		if err != nil {
			b.Fatal(err)
		}
		id := gossip.MessageID(m.Topic, m.Data)
		ids = append(ids, string(id[:]))
		dw, err := gossip.AppendFrame(nil, &pb.RPC{Control: &pb.ControlMessage{Idontwant: []*pb.ControlIDontWant{{MessageIDs: ids[i:]}}}})
		if err != nil {
			b.Fatal(err)
		}
		frames = append(frames, f, dw)
		if i%8 == 7 {
			topic := m.Topic
			ih, err := gossip.AppendFrame(nil, &pb.RPC{Control: &pb.ControlMessage{Ihave: []*pb.ControlIHave{{TopicID: &topic, MessageIDs: ids[i-7 : i+1]}}}})
			if err != nil {
				b.Fatal(err)
			}
			frames = append(frames, ih)
		}
	}
	return frames
}

// benchNode is a node whose streams the stream benchmarks wrap (its own pubsub idle).
func benchNode(b testing.TB) *Node {
	h, err := (&snet.TCP{}).Host(nil)
	if err != nil {
		b.Fatal(err)
	}
	n, err := NewNode(h, WithFlowControl(false)) // as the mesh runs
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.Close() })
	return n
}

// BenchmarkStreamRead reads the frames as pubsub's reader does (msgio's varint reader, one
// frame at a time): bare from the stream, sim through the plain codecStream (framing,
// splitting by category, metering). The difference is what streamsim adds per frame read.
func BenchmarkStreamRead(b *testing.B) {
	frames := benchFrames(b)
	var all []byte
	for _, f := range frames {
		all = append(all, f...)
	}
	n := benchNode(b)
	remote := n.ID() // any peer id
	for _, side := range []string{"bare", "sim"} {
		b.Run(side, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(all)))
			for b.Loop() {
				ms := &memStream{r: bytes.NewReader(all), conn: &memConn{remote: remote}, dir: network.DirInbound}
				var s network.Stream = ms
				if side == "sim" {
					s = newCodecStream(n, ms, codec.Spec{Kind: codec.Plain})
				}
				r := msgio.NewVarintReaderSize(s, MaxMessageBytes)
				for range frames {
					msg, err := r.ReadMsg()
					if err != nil {
						b.Fatal(err)
					}
					r.ReleaseMsg(msg)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(frames)), "ns/frame")
		})
	}
}

// BenchmarkStreamWrite writes the frames as pubsub's writer does (one Write per frame): bare
// to the stream, sim through the plain codecStream.
func BenchmarkStreamWrite(b *testing.B) {
	frames := benchFrames(b)
	size := 0
	for _, f := range frames {
		size += len(f)
	}
	n := benchNode(b)
	remote := n.ID()
	for _, side := range []string{"bare", "sim"} {
		b.Run(side, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				ms := &memStream{conn: &memConn{remote: remote}, dir: network.DirOutbound}
				var s network.Stream = ms
				if side == "sim" {
					s = newCodecStream(n, ms, codec.Spec{Kind: codec.Plain})
				}
				for _, f := range frames {
					if _, err := s.Write(f); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(frames)), "ns/frame")
		})
	}
}
