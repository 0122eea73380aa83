package replay

import (
	"bytes"
	"testing"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/workload"
)

// FuzzTopicFilter: on any input the filter returns an error or a frame that SplitFrame
// accepts, and filtering its output again changes nothing.
func FuzzTopicFilter(f *testing.F) {
	_, msgs, control := testTrace(f, f.TempDir(), 1)
	for _, m := range msgs[:8] {
		f.Add(m.frame)
	}
	for _, c := range control {
		f.Add(c)
	}
	prof, err := workload.ParseProfile("default")
	if err != nil {
		f.Fatal(err)
	}
	topics := map[string]string{}
	for _, m := range msgs {
		if err := addMessageTopics(topics, map[string]string{}, m.frame); err != nil {
			f.Fatal(err)
		}
	}
	filter := &TopicFilter{Wants: prof.Wants, Known: knownFor(topics, prof.Wants)}
	f.Fuzz(func(t *testing.T, frame []byte) {
		out, kept, err := filter.AppendFiltered(nil, frame)
		if err != nil || !kept {
			return
		}
		if _, err := gossip.SplitFrame(out); err != nil {
			t.Fatalf("filtered frame does not split: %v", err)
		}
		again, kept, err := filter.AppendFiltered(nil, out)
		if err != nil || !kept || !bytes.Equal(again, out) {
			t.Fatalf("filter not idempotent: kept %v, err %v", kept, err)
		}
	})
}
