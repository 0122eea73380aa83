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
// out in proportion. It does not allocate.
func SplitFrame(frame []byte) (FrameParts, error) {
	var parts FrameParts
	size, n := binary.Uvarint(frame)
	if n <= 0 {
		return parts, fmt.Errorf("%w: bad length prefix", errFrame)
	}
	body := frame[n:]
	if uint64(len(body)) != size {
		return parts, fmt.Errorf("%w: length prefix says %d bytes, frame has %d", errFrame, size, len(body))
	}
	for len(body) > 0 {
		num, typ, tn := protowire.ConsumeTag(body)
		if tn < 0 {
			return parts, fmt.Errorf("%w: %v", errFrame, protowire.ParseError(tn))
		}
		fn := protowire.ConsumeFieldValue(num, typ, body[tn:])
		if fn < 0 {
			return parts, fmt.Errorf("%w: field %d: %v", errFrame, num, protowire.ParseError(fn))
		}
		field := body[:tn+fn]
		body = body[tn+fn:]
		switch {
		case num == rpcPublish && typ == protowire.BytesType:
			msg, _ := protowire.ConsumeBytes(field[tn:])
			c := TopicCategory(messageTopic(msg))
			parts.Bytes[c] += len(field)
			parts.Messages[c]++
		case num == rpcSubscriptions && typ == protowire.BytesType:
			parts.Bytes[Control] += len(field)
			parts.Messages[Control]++
		case num == rpcControl && typ == protowire.BytesType:
			parts.Bytes[Control] += len(field)
			ctl, _ := protowire.ConsumeBytes(field[tn:])
			parts.Messages[Control] += countFields(ctl)
		default:
			parts.Bytes[Other] += len(field)
		}
	}
	// Share the length prefix out in proportion, remainder to the dominant category.
	if total := int(size); total > 0 {
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

func messageTopic(msg []byte) string {
	for len(msg) > 0 {
		num, typ, tn := protowire.ConsumeTag(msg)
		if tn < 0 {
			return ""
		}
		if num == msgTopic && typ == protowire.BytesType {
			v, vn := protowire.ConsumeBytes(msg[tn:])
			if vn < 0 {
				return ""
			}
			return string(v)
		}
		fn := protowire.ConsumeFieldValue(num, typ, msg[tn:])
		if fn < 0 {
			return ""
		}
		msg = msg[tn+fn:]
	}
	return ""
}

// countFields counts the top-level entries of a ControlMessage (one per IHAVE, IWANT, GRAFT,
// PRUNE or IDONTWANT entry).
func countFields(b []byte) int {
	n := 0
	for len(b) > 0 {
		num, typ, tn := protowire.ConsumeTag(b)
		if tn < 0 {
			return n
		}
		fn := protowire.ConsumeFieldValue(num, typ, b[tn:])
		if fn < 0 {
			return n
		}
		b = b[tn+fn:]
		n++
	}
	return n
}
