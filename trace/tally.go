package trace

import (
	"errors"
	"fmt"
	"io"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
)

// Tally is what a recording holds for one stream direction, counted the way a node's meters
// count (gossip.SplitFrame): frames, raw bytes per category, control parts per kind. A run's
// summary and its recording are compared with it.
type Tally struct {
	Frames  int64
	Raw     [gossip.NumCategories]int64
	Control [gossip.NumControlKinds]gossip.ControlPart
}

// DirectionKey names a stream direction by the other end and the direction (the node's view).
type DirectionKey struct{ Peer, Direction string }

// TallyFrames reads every remaining frame of r and counts it per stream direction (several
// streams with the same peer and direction add up, as the meters do).
func TallyFrames(r *Reader) (map[DirectionKey]*Tally, error) {
	out := map[DirectionKey]*Tally{}
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		st, _ := r.Stream(f.Stream)
		parts, err := gossip.SplitFrame(f.Data)
		if err != nil {
			return nil, fmt.Errorf("frame of stream %d: %w", f.Stream, err)
		}
		k := DirectionKey{st.Peer, st.Direction}
		t := out[k]
		if t == nil {
			t = &Tally{}
			out[k] = t
		}
		t.Frames++
		for c, b := range parts.Bytes {
			t.Raw[c] += int64(b)
		}
		for c, p := range parts.Control {
			t.Control[c].Bytes += p.Bytes
			t.Control[c].Entries += p.Entries
			t.Control[c].IDs += p.IDs
		}
	}
}

// CompareStreams holds a node's metered stream directions (a summary's Streams) to the
// recording's tally exactly: per peer and direction, frames, raw bytes per category and
// control per kind (bytes, entries, ids). It returns every difference, none when they agree.
func CompareStreams(streams []result.StreamStats, rec map[DirectionKey]*Tally) []string {
	var diffs []string
	seen := 0
	for _, s := range streams {
		tl := rec[DirectionKey{Peer: s.Peer, Direction: s.Direction}]
		if tl == nil {
			diffs = append(diffs, fmt.Sprintf("%s %s: in the summary (%d frames), not in the recording", s.Direction, s.Peer, s.Frames))
			continue
		}
		seen++
		if tl.Frames != s.Frames {
			diffs = append(diffs, fmt.Sprintf("%s %s: %d frames recorded, %d metered", s.Direction, s.Peer, tl.Frames, s.Frames))
		}
		for _, c := range gossip.Categories() {
			if tl.Raw[c] != s.Categories[c].RawBytes {
				diffs = append(diffs, fmt.Sprintf("%s %s %s: %d raw bytes recorded, %d metered", s.Direction, s.Peer, c, tl.Raw[c], s.Categories[c].RawBytes))
			}
		}
		for _, k := range gossip.ControlKinds() {
			m := s.Control[k.String()]
			if p := tl.Control[k]; int64(p.Bytes) != m.RawBytes || int64(p.Entries) != m.Entries || int64(p.IDs) != m.IDs {
				diffs = append(diffs, fmt.Sprintf("%s %s %s: recorded %d B, %d entries, %d ids; metered %d B, %d entries, %d ids",
					s.Direction, s.Peer, k, p.Bytes, p.Entries, p.IDs, m.RawBytes, m.Entries, m.IDs))
			}
		}
	}
	if seen != len(rec) {
		diffs = append(diffs, fmt.Sprintf("%d stream directions recorded, %d in the summary", len(rec), seen))
	}
	return diffs
}
