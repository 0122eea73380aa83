package workload

import (
	"time"

	"github.com/streamsim/streamsim/gossip"
)

// CategoryStats sums one category's messages over a run of slots.
type CategoryStats struct {
	Messages    int64
	SSZBytes    int64
	SnappyBytes int64
	// FrameBytes is the length of the gossipsub RPC frames that carry the messages to a
	// direct peer (gossip.AppendPublishFrame: length prefix, protobuf, topic).
	FrameBytes int64
}

// Stats accumulates per-category figures of generated messages for a profile.
type Stats struct {
	Slots      int
	Categories [gossip.NumCategories]CategoryStats
}

// Add counts the messages of one slot that the profile wants (all when profile is nil).
func (s *Stats) Add(msgs []Message, profile *Profile) {
	s.Slots++
	for i := range msgs {
		m := &msgs[i]
		if profile != nil && !profile.Wants(m.Topic) {
			continue
		}
		c := &s.Categories[m.Category]
		c.Messages++
		c.SSZBytes += int64(m.SSZBytes)
		c.SnappyBytes += int64(len(m.Data))
		c.FrameBytes += int64(PublishFrameBytes(m.Topic, len(m.Data)))
	}
}

// PerSlot returns the mean number of messages per slot.
func (s *Stats) PerSlot(c gossip.Category) float64 {
	if s.Slots == 0 {
		return 0
	}
	return float64(s.Categories[c].Messages) / float64(s.Slots)
}

// MeanSSZ and MeanSnappy return mean message sizes in bytes.
func (s *Stats) MeanSSZ(c gossip.Category) float64 {
	return ratio(s.Categories[c].SSZBytes, s.Categories[c].Messages)
}

func (s *Stats) MeanSnappy(c gossip.Category) float64 {
	return ratio(s.Categories[c].SnappyBytes, s.Categories[c].Messages)
}

// SnappyRatio is raw SSZ bytes over ssz_snappy bytes.
func (s *Stats) SnappyRatio(c gossip.Category) float64 {
	return ratio(s.Categories[c].SSZBytes, s.Categories[c].SnappyBytes)
}

// MiBPerHour is the frame bytes per hour of mainnet time, one copy of each message.
func (s *Stats) MiBPerHour(c gossip.Category) float64 {
	if s.Slots == 0 {
		return 0
	}
	perSlot := float64(s.Categories[c].FrameBytes) / float64(s.Slots)
	return perSlot * float64(time.Hour/SlotDuration) / (1 << 20)
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// PublishFrameBytes is the length of gossip.AppendPublishFrame's output for a message, without
// building it: RPC{publish: Message{data, topic}} with a uvarint length prefix.
func PublishFrameBytes(topic string, dataBytes int) int {
	msg := 1 + uvarintLen(uint64(dataBytes)) + dataBytes + 1 + uvarintLen(uint64(len(topic))) + len(topic)
	rpc := 1 + uvarintLen(uint64(msg)) + msg
	return uvarintLen(uint64(rpc)) + rpc
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
