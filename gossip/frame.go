package gossip

import (
	"encoding/binary"
	"errors"
	"fmt"

	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// AppendFrame appends rpc as go-libp2p-pubsub writes it on a stream: uvarint(size) followed by
// the protobuf encoding, produced by the same marshaller (comm.go, handleSendingMessages).
func AppendFrame(dst []byte, rpc *pb.RPC) ([]byte, error) {
	size := proto.Size(rpc)
	dst = binary.AppendUvarint(dst, uint64(size))
	out, err := proto.MarshalOptions{}.MarshalAppend(dst, rpc)
	if err != nil {
		return dst, fmt.Errorf("marshal rpc: %w", err)
	}
	return out, nil
}

// AppendPublishFrame appends the frame of an RPC that carries one message with StrictNoSign
// (data and topic only), as a hub forwards it to a peer.
func AppendPublishFrame(dst []byte, topic string, data []byte) ([]byte, error) {
	return AppendFrame(dst, &pb.RPC{Publish: []*pb.Message{{Data: data, Topic: &topic}}})
}

// FrameParts is an RPC frame's bytes and messages split by category.
type FrameParts struct {
	// Bytes per category; they add up to the frame's length, length prefix included.
	Bytes [NumCategories]int
	// Messages per category: published messages by their topic; Control counts control
	// entries (IHAVE, IWANT, IDONTWANT, GRAFT, PRUNE, subscriptions).
	Messages [NumCategories]int
}

// Dominant returns the category holding most of the frame's bytes.
func (p *FrameParts) Dominant() Category {
	best := Other
	for c := Category(0); c < NumCategories; c++ {
		if p.Bytes[c] > p.Bytes[best] {
			best = c
		}
	}
	return best
}

// RPC field numbers (pubsub pb/rpc.proto).
const (
	rpcSubscriptions = 1
	rpcPublish       = 2
	rpcControl       = 3
	msgTopic         = 4
)

var errFrame = errors.New("malformed rpc frame")

// SplitFrame attributes the bytes of one length-prefixed RPC frame to categories by the
// encoded size of its parts (design.md): each published message to its topic's category,
// subscriptions and control to Control, unknown fields to Other. The length prefix is shared
// out in proportion.
func SplitFrame(frame []byte) (FrameParts, error) {
	var parts FrameParts
	body, n, err := frameBody(frame)
	if err != nil {
		return parts, err
	}
	for len(body) > 0 {
		var f field
		if f, body, err = nextField(body); err != nil {
			return parts, err
		}
		switch {
		case f.is(rpcPublish):
			c := TopicCategory(MessageTopic(f.value))
			parts.Bytes[c] += len(f.all)
			parts.Messages[c]++
		case f.is(rpcSubscriptions):
			parts.Bytes[Control] += len(f.all)
			parts.Messages[Control]++
		case f.is(rpcControl):
			parts.Bytes[Control] += len(f.all)
			parts.Messages[Control] += countFields(f.value)
		default:
			parts.Bytes[Other] += len(f.all)
		}
	}
	// Share the length prefix out in proportion, remainder to the dominant category.
	if total := len(frame) - n; total > 0 {
		given := 0
		for c := range parts.Bytes {
			extra := parts.Bytes[c] * n / total
			parts.Bytes[c] += extra
			given += extra
		}
		parts.Bytes[parts.Dominant()] += n - given
	} else {
		parts.Bytes[Control] += n
	}
	return parts, nil
}

// frameBody checks a frame's length prefix and returns the RPC bytes and the prefix length.
func frameBody(frame []byte) (body []byte, prefixBytes int, err error) {
	size, n := binary.Uvarint(frame)
	if n <= 0 {
		return nil, 0, fmt.Errorf("%w: bad length prefix", errFrame)
	}
	if uint64(len(frame)-n) != size {
		return nil, 0, fmt.Errorf("%w: length prefix says %d bytes, frame has %d", errFrame, size, len(frame)-n)
	}
	return frame[n:], n, nil
}

// field is one protobuf field: its number and wire type, all its bytes (tag included) and,
// for a length-delimited field, its contents.
type field struct {
	num        protowire.Number
	typ        protowire.Type
	all, value []byte
}

// is reports whether f is the length-delimited field num.
func (f field) is(num protowire.Number) bool { return f.num == num && f.typ == protowire.BytesType }

// nextField splits the first field off b.
func nextField(b []byte) (field, []byte, error) {
	num, typ, tn := protowire.ConsumeTag(b)
	if tn < 0 {
		return field{}, nil, fmt.Errorf("%w: %v", errFrame, protowire.ParseError(tn))
	}
	fn := protowire.ConsumeFieldValue(num, typ, b[tn:])
	if fn < 0 {
		return field{}, nil, fmt.Errorf("%w: field %d: %v", errFrame, num, protowire.ParseError(fn))
	}
	f := field{num: num, typ: typ, all: b[:tn+fn]}
	if typ == protowire.BytesType {
		f.value, _ = protowire.ConsumeBytes(b[tn:])
	}
	return f, b[tn+fn:], nil
}

// MessageTopic returns the topic of an encoded pubsub Message, or "" when it has none or is
// malformed.
func MessageTopic(msg []byte) string {
	for len(msg) > 0 {
		f, rest, err := nextField(msg)
		if err != nil {
			return ""
		}
		if f.is(msgTopic) {
			return string(f.value)
		}
		msg = rest
	}
	return ""
}

// countFields counts the top-level entries of a ControlMessage (one per IHAVE, IWANT, GRAFT,
// PRUNE or IDONTWANT entry).
func countFields(b []byte) int {
	n := 0
	for len(b) > 0 {
		var err error
		if _, b, err = nextField(b); err != nil {
			return n
		}
		n++
	}
	return n
}
