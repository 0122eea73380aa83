package gossip

// RecurrenceDistances are the distances, in bytes of a stream direction today, by which
// IHaveRecurrence groups repeats: a per-stream compressor with a history of that size can
// find a repeat at most that far back. The last one bounds what is tracked: an id mentioned
// again farther back than that counts as a first mention.
var RecurrenceDistances = []int64{4 << 10, 64 << 10, 1 << 20, 16 << 20}

// IHaveRecurrence is how the message ids of IHAVE entries recur on stream directions: the
// bytes a stream compressor can save on control are mostly these repeats (an id is 20 random
// bytes, compressible only where the same stream carried it before). A gossipsub peer
// advertises each id of its last HistoryGossip heartbeat windows to a random subset of its
// non-mesh peers every heartbeat, so one receiver can get the same id from the same sender up
// to HistoryGossip times, one heartbeat apart; the distance in bytes between two mentions is
// what the stream carried in between, which grows with the traffic.
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

// Recurrence follows IHAVE ids per stream direction, frame by frame in stream order, and
// sums them as an IHaveRecurrence. It is not safe for concurrent use.
type Recurrence struct {
	sum     IHaveRecurrence
	streams map[string]*idStream
}

type idStream struct {
	off       int64            // bytes of the stream so far
	last      map[string]int64 // id → offset of the frame that last mentioned it
	nextPrune int64
}

// NewRecurrence starts an empty count.
func NewRecurrence() *Recurrence {
	return &Recurrence{
		sum:     IHaveRecurrence{Distances: RecurrenceDistances, Within: make([]int64, len(RecurrenceDistances))},
		streams: map[string]*idStream{},
	}
}

// Frame accounts one frame of stream: frameBytes long (prefix included, bytes as today),
// with ids the message ids of its IHAVE entries in order.
func (r *Recurrence) Frame(stream string, frameBytes int64, ids func(yield func(string) bool)) {
	s := r.streams[stream]
	if s == nil {
		s = &idStream{last: map[string]int64{}}
		r.streams[stream] = s
	}
	at := s.off
	s.off += frameBytes
	maxDist := RecurrenceDistances[len(RecurrenceDistances)-1]
	if ids != nil {
		for id := range ids {
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
	// Forget ids no repeat can reach any more, so a long stream's state stays bounded.
	if s.off >= s.nextPrune {
		for id, o := range s.last {
			if s.off-o > maxDist {
				delete(s.last, id)
			}
		}
		s.nextPrune = s.off + maxDist
	}
}

// Sum is the count so far (a copy).
func (r *Recurrence) Sum() IHaveRecurrence {
	out := r.sum
	out.Within = append([]int64(nil), r.sum.Within...)
	return out
}

// Reset forgets the counts but not the ids already seen, so that a measurement that begins
// mid-stream (after a warm-up) counts repeats of ids the warm-up carried.
func (r *Recurrence) Reset() {
	r.sum.Mentions = 0
	r.sum.Within = make([]int64, len(RecurrenceDistances))
}

// Forget drops every stream's ids once the counting is over (Sum still answers), so a
// finished count holds no memory.
func (r *Recurrence) Forget() { r.streams = map[string]*idStream{} }

// RepeatShareOf is pubsub's rule turned into the share of IHAVE id mentions on one stream
// that repeat an earlier mention of the same id: a sender advertises each id in history (3)
// consecutive heartbeats and picks the receiver with probability q at each, independently,
// so of the 1 + … mentions an id gets, all but the first repeat. With n = history:
// mentions = n·q, ids mentioned at least once = 1 − (1 − q)^n, and the share is
// 1 − (1 − (1 − q)^n)/(n·q) (23 % at q = 0.25 and n = 3, 38 % at q ≈ 0.45, 67 % at q = 1).
func RepeatShareOf(q float64, history int) float64 {
	if q <= 0 || history < 1 {
		return 0
	}
	q = min(q, 1)
	once := 1.0
	for range history {
		once *= 1 - q
	}
	return 1 - (1-once)/(float64(history)*q)
}

// GossipChance is the probability q that a gossipsub peer with eligible non-mesh peers on a
// topic picks a given one for IHAVE at a heartbeat: min(1, max(dlazy, ⌊factor·eligible⌋) /
// eligible), as go-libp2p-pubsub's emitGossip picks (and rust-, jvm-, nim- and js-libp2p
// alike). 0 eligible: 0.
func GossipChance(eligible, dlazy int, factor float64) float64 {
	if eligible <= 0 {
		return 0
	}
	target := max(dlazy, int(factor*float64(eligible)))
	return min(1, float64(target)/float64(eligible))
}
