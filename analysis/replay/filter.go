package replay

import (
	"encoding/binary"
	"fmt"

	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/streamsim/streamsim/gossip"
)

// TopicFilter derives the view of a node with fewer subscriptions from frames recorded by a
// node with more, over the same connections. What it keeps of a frame:
//
//   - a published message when Wants(topic);
//   - a subscription entry when Wants(topic);
//   - an IHAVE, GRAFT or PRUNE entry when Wants(topic);
//   - an IWANT or IDONTWANT message id when the id names a message published on a wanted
//     topic somewhere in the traces (Known), and also when the id names no message of the
//     traces at all: its topic cannot be told, so it is kept (this over-counts the narrower
//     node's control, never under-counts it); ids of messages on unwanted topics are dropped;
//   - every other field (unknown fields, extensions) as it is.
//
// Entries left empty are dropped, a control message left empty is dropped, and a frame left
// with no fields at all is dropped. Kept fields keep their bytes and their order; the length
// prefix is recomputed.
type TopicFilter struct {
	Wants func(topic string) bool
	// Known maps a pubsub message id (gossip.PubsubMsgID) to whether its topic is wanted;
	// nil when the traces have no IWANT or IDONTWANT.
	Known map[string]bool
}

func (f *TopicFilter) keepID(id string) bool {
	wanted, known := f.Known[id]
	return wanted || !known
}

// AppendFiltered appends the filtered frame to dst. kept is false (and dst unchanged) when
// nothing of the frame is left. An unchanged frame is appended byte for byte.
func (f *TopicFilter) AppendFiltered(dst, frame []byte) (out []byte, kept bool, err error) {
	body, _, err := gossip.FrameBody(frame)
	if err != nil {
		return dst, false, fmt.Errorf("filter frame: %w", err)
	}
	// Only changed frames are rebuilt: most frames of a broader node's trace are kept or
	// dropped whole.
	var rebuilt []byte
	changed := false
	offset := 0 // of the field in body
	for fld, err := range gossip.Fields(body) {
		if err != nil {
			return dst, false, fmt.Errorf("filter frame: %w", err)
		}
		start := offset
		offset += len(fld.All)
		keep, replacement, err := f.filterField(fld)
		if err != nil {
			return dst, false, err
		}
		if !keep || replacement != nil {
			if !changed {
				changed = true
				rebuilt = append(rebuilt, body[:start]...)
			}
			if keep {
				rebuilt = protowire.AppendTag(rebuilt, fld.Num, fld.Type)
				rebuilt = protowire.AppendBytes(rebuilt, replacement)
			}
			continue
		}
		if changed {
			rebuilt = append(rebuilt, fld.All...)
		}
	}
	if !changed {
		return append(dst, frame...), true, nil
	}
	if len(rebuilt) == 0 {
		return dst, false, nil
	}
	dst = binary.AppendUvarint(dst, uint64(len(rebuilt)))
	return append(dst, rebuilt...), true, nil
}

// filterField decides on one top-level RPC field. It returns keep=false to drop it, or a
// non-nil replacement value (bytes type) to rewrite it.
func (f *TopicFilter) filterField(fld gossip.Field) (keep bool, replacement []byte, err error) {
	if fld.Type != protowire.BytesType {
		return true, nil, nil
	}
	val := fld.Value
	switch fld.Num {
	case gossip.FieldPublish:
		return f.Wants(gossip.MessageTopic(val)), nil, nil
	case gossip.FieldSubscriptions:
		var s pb.RPC_SubOpts
		if err := proto.Unmarshal(val, &s); err != nil {
			return false, nil, fmt.Errorf("filter frame: subscription: %w", err)
		}
		return f.Wants(s.GetTopicid()), nil, nil
	case gossip.FieldControl:
		var c pb.ControlMessage
		if err := proto.Unmarshal(val, &c); err != nil {
			return false, nil, fmt.Errorf("filter frame: control: %w", err)
		}
		if !f.filterControl(&c) {
			return true, nil, nil
		}
		if proto.Size(&c) == 0 {
			return false, nil, nil
		}
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(&c)
		if err != nil {
			return false, nil, fmt.Errorf("filter frame: marshal control: %w", err)
		}
		return true, b, nil
	}
	return true, nil, nil
}

// filterControl drops what the narrower node would not get and reports whether anything changed.
func (f *TopicFilter) filterControl(c *pb.ControlMessage) bool {
	changed := false
	var dropped bool
	c.Ihave, dropped = keepTopics(c.Ihave, f.Wants)
	changed = changed || dropped
	c.Graft, dropped = keepTopics(c.Graft, f.Wants)
	changed = changed || dropped
	c.Prune, dropped = keepTopics(c.Prune, f.Wants)
	changed = changed || dropped
	keepIDs := func(ids []string) []string {
		out := ids[:0]
		for _, id := range ids {
			if f.keepID(id) {
				out = append(out, id)
			}
		}
		changed = changed || len(out) != len(ids)
		return out
	}
	iwant := c.Iwant[:0]
	for _, e := range c.Iwant {
		if e.MessageIDs = keepIDs(e.MessageIDs); len(e.MessageIDs) > 0 {
			iwant = append(iwant, e)
		}
	}
	changed = changed || len(iwant) != len(c.Iwant)
	c.Iwant = iwant
	idw := c.Idontwant[:0]
	for _, e := range c.Idontwant {
		if e.MessageIDs = keepIDs(e.MessageIDs); len(e.MessageIDs) > 0 {
			idw = append(idw, e)
		}
	}
	changed = changed || len(idw) != len(c.Idontwant)
	c.Idontwant = idw
	return changed
}

// needsIDs reports whether a frame carries IWANT or IDONTWANT entries, which the filter can
// only attribute through the message ids of the traces.
func needsIDs(frame []byte) bool {
	body, _, err := gossip.FrameBody(frame)
	if err != nil {
		return false
	}
	for fld, err := range gossip.Fields(body) {
		if err != nil {
			return false
		}
		if fld.Is(gossip.FieldControl) {
			var c pb.ControlMessage
			if proto.Unmarshal(fld.Value, &c) == nil && (len(c.Iwant) > 0 || len(c.Idontwant) > 0) {
				return true
			}
		}
	}
	return false
}

// addMessageTopics records the topic of every message published in frame under its pubsub
// message id; interned keeps one copy of each topic string.
func addMessageTopics(topics, interned map[string]string, frame []byte) error {
	body, _, err := gossip.FrameBody(frame)
	if err != nil {
		return fmt.Errorf("message ids: %w", err)
	}
	var rpc pb.RPC
	if err := proto.Unmarshal(body, &rpc); err != nil {
		return fmt.Errorf("message ids: %w", err)
	}
	for _, m := range rpc.Publish {
		t := m.GetTopic()
		it, ok := interned[t]
		if !ok {
			it = t
			interned[t] = t
		}
		topics[gossip.PubsubMsgID(m)] = it
	}
	return nil
}

// knownFor is TopicFilter.Known for a view: each recorded message id with whether the view
// wants its topic.
func knownFor(topics map[string]string, wants func(string) bool) map[string]bool {
	if topics == nil {
		return nil
	}
	wanted := map[string]bool{}
	known := make(map[string]bool, len(topics))
	for id, t := range topics {
		w, ok := wanted[t]
		if !ok {
			w = wants(t)
			wanted[t] = w
		}
		known[id] = w
	}
	return known
}

// keepTopics keeps the control entries whose topic is wanted, in place, and reports whether
// any was dropped.
func keepTopics[E interface{ GetTopicID() string }](entries []E, wants func(string) bool) ([]E, bool) {
	kept := entries[:0]
	for _, e := range entries {
		if wants(e.GetTopicID()) {
			kept = append(kept, e)
		}
	}
	return kept, len(kept) != len(entries)
}
