package gossip

import (
	"hash/maphash"

	"google.golang.org/protobuf/encoding/protowire"
)

// MessageKey identifies a published message by its topic and data (an encoded pubsub Message,
// as a frame's publish field carries it): the two fields a message id is computed from under
// StrictNoSign, hashed with seed. The same message encoded by two nodes has the same key.
func MessageKey(seed maphash.Seed, msg []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	var topic, data []byte
	for len(msg) > 0 {
		num, typ, tn := protowire.ConsumeTag(msg)
		if tn < 0 {
			break
		}
		fn := protowire.ConsumeFieldValue(num, typ, msg[tn:])
		if fn < 0 {
			break
		}
		if typ == protowire.BytesType {
			switch num {
			case fieldMessageTopic:
				topic, _ = protowire.ConsumeBytes(msg[tn:])
			case fieldMessageData:
				data, _ = protowire.ConsumeBytes(msg[tn:])
			}
		}
		msg = msg[tn+fn:]
	}
	h.Write(topic)
	h.WriteByte(0)
	h.Write(data)
	return h.Sum64()
}

// PublishedMessages yields the encoded Message of every publish field of one length-prefixed
// RPC frame, in order. A malformed frame yields what precedes the fault.
func PublishedMessages(frame []byte) func(yield func(msg []byte) bool) {
	return func(yield func([]byte) bool) {
		body, _, err := FrameBody(frame)
		if err != nil {
			return
		}
		for f, err := range Fields(body) {
			if err != nil {
				return
			}
			if f.Is(FieldPublish) && !yield(f.Value) {
				return
			}
		}
	}
}

// DropMessages appends frame to dst without the published messages for which drop returns
// true, and returns the result and how many it dropped. Every other field stays, byte for
// byte and in order; only the length prefix is rewritten. When nothing is dropped the frame
// is returned as it is (dst unused); when every field is dropped the result is empty. A
// malformed frame is an error and dst is returned unchanged.
func DropMessages(dst, frame []byte, drop func(msg []byte) bool) ([]byte, int, error) {
	body, _, err := FrameBody(frame)
	if err != nil {
		return dst, 0, err
	}
	start := len(dst)
	dropped := 0
	for f, err := range Fields(body) {
		if err != nil {
			return dst[:start], 0, err
		}
		if f.Is(FieldPublish) && drop(f.Value) {
			dropped++
			continue
		}
		dst = append(dst, f.All...)
	}
	if dropped == 0 {
		return frame, 0, nil
	}
	kept := len(dst) - start
	if kept == 0 {
		return dst[start:], dropped, nil
	}
	// The length prefix goes in front of the kept fields.
	p := protowire.SizeVarint(uint64(kept))
	dst = append(dst, make([]byte, p)...)
	copy(dst[start+p:], dst[start:start+kept])
	protowire.AppendVarint(dst[start:start], uint64(kept))
	return dst[start:], dropped, nil
}

// MessageCategory is the category of an encoded pubsub Message by its topic (Other when it
// has none).
func MessageCategory(msg []byte) Category { return topicBytesCategory(messageTopic(msg)) }
