package workload

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/trace"
)

// TestTraceRoundTrip writes two slots of the default profile and reads them back frame for
// frame.
func TestTraceRoundTrip(t *testing.T) {
	p := smallParams()
	p.BlobBlockShare = 1
	profile, err := ParseProfile("default")
	if err != nil {
		t.Fatal(err)
	}
	slots := generate(t, p, 2)
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, TraceHeader(p, profile, len(slots)))
	if err != nil {
		t.Fatal(err)
	}
	tw, err := NewTraceWriter(w, profile)
	if err != nil {
		t.Fatal(err)
	}
	var want []Message
	for _, msgs := range slots {
		if _, err := tw.WriteSlot(msgs); err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if profile.Wants(m.Topic) {
				want = append(want, m)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	r, err := trace.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header()
	if h.Source != "workload" || h.Params["profile"] != "default" || h.Params["Seed"] != "1" || h.Params["slots"] != "2" {
		t.Fatalf("header %+v", h)
	}
	seen := map[gossip.Category]int{}
	for i := 0; ; i++ {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			if i != len(want) {
				t.Fatalf("read %d frames, wrote %d", i, len(want))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if i >= len(want) {
			t.Fatal("more frames than messages")
		}
		m := want[i]
		frame, _ := gossip.AppendPublishFrame(nil, m.Topic, m.Data)
		if f.At != m.At || f.Category != m.Category || f.Stream != TraceStreamID || !bytes.Equal(f.Data, frame) {
			t.Fatalf("frame %d differs from message %d (%v %v)", i, i, f.At, f.Category)
		}
		if len(f.Data) != PublishFrameBytes(m.Topic, len(m.Data)) {
			t.Fatalf("PublishFrameBytes %d, frame %d", PublishFrameBytes(m.Topic, len(m.Data)), len(f.Data))
		}
		parts, err := gossip.SplitFrame(f.Data)
		if err != nil || parts.Dominant() != m.Category {
			t.Fatalf("frame %d: split %v, dominant %v", i, err, parts.Dominant())
		}
		seen[m.Category]++
	}
	if s, ok := r.Stream(TraceStreamID); !ok || s != TraceStream() {
		t.Fatalf("stream %+v", s)
	}
	// The default profile: two attestation subnets, no sync subnets, 4 columns per blob block.
	if seen[gossip.Attestation] == 0 || seen[gossip.Block] == 0 || seen[gossip.DataColumn] != 4*seen[gossip.Block] {
		t.Fatalf("categories %v", seen)
	}
}
