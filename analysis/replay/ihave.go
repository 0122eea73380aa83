package replay

import (
	"fmt"

	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"google.golang.org/protobuf/proto"

	"github.com/streamsim/streamsim/gossip"
)

// RecurrenceDistances are the distances, in bytes of a stream direction today, by which
// IHaveRecurrence groups repeats: a per-stream compressor with a history of that size can
// find a repeat at most that far back. The last one bounds what is tracked: an id mentioned
// again farther back than that counts as a first mention.
var RecurrenceDistances = []int64{4 << 10, 64 << 10, 1 << 20, 16 << 20}

// IHaveRecurrence is how the message ids of IHAVE entries recur on a view's stream
// directions: the bytes a stream compressor can save on control are mostly these repeats
// (an id is 20 random bytes, compressible only where the same stream carried it before).
// A gossipsub peer advertises each id of its last HistoryGossip heartbeat windows to a random
// subset of its non-mesh peers every heartbeat, so one receiver can get the same id from the
// same sender up to HistoryGossip times, one heartbeat apart; the distance in bytes between
// two mentions is what the stream carried in between, which grows with the traffic.
type IHaveRecurrence struct {
	// Mentions counts ids in IHAVE entries.
	Mentions int64 `json:"mentions"`
	// Within[i] counts the mentions of an id the same stream direction carried in an earlier
	// IHAVE at most Distances[i] bytes before (frame start to frame start, bytes as today);
	// the last is every repeat that is tracked.
	Distances []int64 `json:"distances_bytes"`
	Within    []int64 `json:"within"`
}

// RepeatShare is the share of mentions that repeat an earlier one on the same stream
// direction within distance bytes (0 when there are no mentions).
func (r IHaveRecurrence) RepeatShare(distance int64) float64 {
	if r.Mentions == 0 {
		return 0
	}
	var n int64
	for i, d := range r.Distances {
		if d <= distance {
			n = r.Within[i]
		}
	}
	return float64(n) / float64(r.Mentions)
}

// recurrence tracks IHAVE ids per stream direction of one view.
type recurrence struct {
	sum     IHaveRecurrence
	streams map[string]*idStream
}

type idStream struct {
	off       int64            // bytes of the stream so far
	last      map[string]int64 // id → offset of the frame that last mentioned it
	nextPrune int64
}

func newRecurrence() *recurrence {
	return &recurrence{
		sum:     IHaveRecurrence{Distances: RecurrenceDistances, Within: make([]int64, len(RecurrenceDistances))},
		streams: map[string]*idStream{},
	}
}

// add accounts one frame of stream as the view replays it.
func (r *recurrence) add(stream string, frame []byte) error {
	s := r.streams[stream]
	if s == nil {
		s = &idStream{last: map[string]int64{}}
		r.streams[stream] = s
	}
	at := s.off
	s.off += int64(len(frame))
	body, _, err := gossip.FrameBody(frame)
	if err != nil {
		return fmt.Errorf("IHAVE ids: %w", err)
	}
	maxDist := RecurrenceDistances[len(RecurrenceDistances)-1]
	for fld, err := range gossip.Fields(body) {
		if err != nil {
			return fmt.Errorf("IHAVE ids: %w", err)
		}
		if !fld.Is(gossip.FieldControl) {
			continue
		}
		var c pb.ControlMessage
		if err := proto.Unmarshal(fld.Value, &c); err != nil {
			return fmt.Errorf("IHAVE ids: control: %w", err)
		}
		for _, ih := range c.GetIhave() {
			for _, id := range ih.GetMessageIDs() {
				r.sum.Mentions++
				prev, ok := s.last[id]
				s.last[id] = at
				if !ok || at-prev > maxDist {
					continue
				}
				for i, d := range RecurrenceDistances {
					if at-prev <= d {
						r.sum.Within[i]++
					}
				}
			}
		}
	}
	// Forget ids no repeat can reach any more, so a long trace's state stays bounded.
	if s.off >= s.nextPrune {
		for id, o := range s.last {
			if s.off-o > maxDist {
				delete(s.last, id)
			}
		}
		s.nextPrune = s.off + maxDist
	}
	return nil
}
