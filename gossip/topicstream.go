package gossip

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// The Topic Streams extension (libp2p/specs PR #729, open; go-libp2p-pubsub PR #725, not
// released) moves topic-scoped application messages off the gossipsub stream onto one
// long-lived stream per topic and direction, protocol /gsts/v0beta. The initiator writes one
// length-prefixed TopicRPCHeader, then only length-prefixed TopicRPC messages:
//
//	message TopicRPCHeader { optional string topic = 1; }
//	message TopicRPC {
//	  optional TopicScopedMessage       publish = 1;  // exactly one of the two, never empty
//	  optional PartialMessagesExtension partial = 2;  // its topicID (field 1) omitted
//	}
//	// Message's fields under the same numbers; field 4 (topic) is never written.
//	message TopicScopedMessage { from = 1; data = 2; seqno = 3; reserved 4; signature = 5; key = 6; }
//
// The original stream becomes the control stream: subscriptions, IHAVE, IWANT, GRAFT, PRUNE,
// IDONTWANT, ControlExtensions and any other non-application field stay there. A TopicRPC
// holds one message (publish is optional, not repeated), so an RPC that carried n messages
// becomes n TopicRPC frames. These are the field numbers of the spec's extensions.proto as
// PR #729 stood in August 2026; they may change before it merges.

// TopicStreamsProtocolID is the topic streams' protocol id (specs PR #729).
const TopicStreamsProtocolID = "/gsts/v0beta"

const (
	fieldHeaderTopic    protowire.Number = 1  // TopicRPCHeader.topic
	fieldTopicPublish   protowire.Number = 1  // TopicRPC.publish
	fieldTopicPartial   protowire.Number = 2  // TopicRPC.partial
	FieldPartial        protowire.Number = 10 // RPC.partial (PartialMessagesExtension)
	fieldPartialTopicID protowire.Number = 1  // PartialMessagesExtension.topicID
)

// TopicFrame is one length-prefixed TopicRPC for the stream of Topic.
type TopicFrame struct {
	Topic string
	Frame []byte
}

// AppendTopicHeaderFrame appends the length-prefixed TopicRPCHeader that opens topic's stream.
func AppendTopicHeaderFrame(dst []byte, topic string) []byte {
	size := protowire.SizeTag(fieldHeaderTopic) + protowire.SizeBytes(len(topic))
	dst = binary.AppendUvarint(dst, uint64(size))
	dst = protowire.AppendTag(dst, fieldHeaderTopic, protowire.BytesType)
	return protowire.AppendString(dst, topic)
}

// SplitTopicStreams splits one length-prefixed RPC frame as a Topic Streams sender writes it:
// main is the frame left for the control stream (nil when nothing is left), each published
// message becomes a TopicRPC frame with its topic removed, each partial message one with its
// topicID removed, in the order the RPC held them. Every other field, known or not, stays on
// the control stream in its order with its bytes. It fails, naming the field, when a
// message or partial message has no topic or two different ones, or has no data (the spec
// forbids empty application messages), and when the frame is malformed.
func SplitTopicStreams(frame []byte) (main []byte, topics []TopicFrame, err error) {
	body, _, err := FrameBody(frame)
	if err != nil {
		return nil, nil, err
	}
	var rest []byte
	moved := false
	i := 0
	for f, err := range Fields(body) {
		if err != nil {
			return nil, nil, err
		}
		i++
		var (
			topic  []byte
			scoped []byte
			field  protowire.Number
		)
		switch {
		case f.Is(FieldPublish):
			topic, scoped, err = stripTopic(f.Value, fieldMessageTopic, fieldMessageData)
			field = fieldTopicPublish
		case f.Is(FieldPartial):
			topic, scoped, err = stripTopic(f.Value, fieldPartialTopicID, 0)
			field = fieldTopicPartial
		default:
			rest = append(rest, f.All...)
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%w: field %d (#%d of the rpc): %v", errFrame, f.Num, i, err)
		}
		moved = true
		size := protowire.SizeTag(field) + protowire.SizeBytes(len(scoped))
		tf := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen32+size), uint64(size))
		tf = protowire.AppendTag(tf, field, protowire.BytesType)
		tf = protowire.AppendBytes(tf, scoped)
		topics = append(topics, TopicFrame{Topic: string(topic), Frame: tf})
	}
	if !moved {
		return frame, nil, nil
	}
	if len(rest) > 0 {
		main = binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen32+len(rest)), uint64(len(rest)))
		main = append(main, rest...)
	}
	return main, topics, nil
}

// stripTopic returns msg's topic (field topicField) and msg without it. data, when not 0, is
// a field that must be present and not empty.
func stripTopic(msg []byte, topicField, data protowire.Number) (topic, stripped []byte, err error) {
	found, hasData := false, data == 0
	stripped = make([]byte, 0, len(msg))
	for f, err := range Fields(msg) {
		if err != nil {
			return nil, nil, err
		}
		switch {
		case f.Is(topicField):
			if found && !bytes.Equal(topic, f.Value) {
				return nil, nil, fmt.Errorf("two topics, %q and %q", topic, f.Value)
			}
			topic, found = f.Value, true
			continue
		case data != 0 && f.Is(data) && len(f.Value) > 0:
			hasData = true
		}
		stripped = append(stripped, f.All...)
	}
	if !found || len(topic) == 0 {
		return nil, nil, fmt.Errorf("no topic: it cannot be given a topic stream")
	}
	if !hasData {
		return nil, nil, fmt.Errorf("message on %s has no data, which a TopicRPC must not carry", topic)
	}
	return topic, stripped, nil
}
