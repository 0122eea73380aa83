package replay

import (
	"fmt"
	"io"

	"github.com/streamsim/streamsim/gossip"
)

// Plain streams do no codec work, but their messages cost today's per-message Snappy: the
// sweep's codec CPU for plain is that (docs/results-schema.md, "codec CPU"), encoding each
// message's SSZ as its publisher did and decoding its data as a receiver does
// (gossip.MessageSnappy), timed like the codecs' loops; the frames themselves go through the
// plain streams outside the clocks.

// plainSend sends a batch on plain streams (wire[i]: frame i's wire bytes) and loads each
// frame's messages for the timed encode; it returns nil when the job's streams are not plain.
func (j *job) plainSend(batch []frameIn, ss []*streamReplay, wire []int) ([]gossip.MessageSnappy, error) {
	if !j.cfg.Spec.IsPlain() {
		return nil, nil
	}
	if len(j.msgSnappy) < len(batch) {
		j.msgSnappy = append(j.msgSnappy, make([]gossip.MessageSnappy, len(batch)-len(j.msgSnappy))...)
	}
	ms := j.msgSnappy[:len(batch)]
	for i := range batch {
		s := ss[i]
		before := s.feed.len()
		if _, err := s.w.Write(batch[i].data); err != nil {
			return nil, fmt.Errorf("stream %s: send frame %d: %w", batch[i].stream, j.r.Frames, err)
		}
		wire[i] = s.feed.len() - before
		if err := ms[i].Load(batch[i].data, true); err != nil {
			return nil, fmt.Errorf("stream %s: today's Snappy: %w", batch[i].stream, err)
		}
	}
	return ms, nil
}

// plainReceive reads a batch's frames off plain streams into out (nothing when plain is nil).
func (j *job) plainReceive(plain []gossip.MessageSnappy, batch []frameIn, ss []*streamReplay, out []byte) error {
	if plain == nil {
		return nil
	}
	for i, off := 0, 0; i < len(batch); i++ {
		n := len(batch[i].data)
		if _, err := io.ReadFull(ss[i].rd, out[off:off+n]); err != nil {
			return fmt.Errorf("stream %s: receive: %w", batch[i].stream, err)
		}
		off += n
	}
	return nil
}
