package bench

import (
	"testing"
	"time"

	"github.com/streamsim/streamsim/codec"
)

// TestMeasureStreamPair: a stream codec's bench runs on a long-lived Writer and Reader in
// batches, several passes of the same messages (reset where the codec can, else reopened:
// zstd's frame end stays out of the next pass) each decoding back, and reports its state.
func TestMeasureStreamPair(t *testing.T) {
	tr, err := Trace(1, 1, "attestation", false)
	if err != nil {
		t.Fatal(err)
	}
	tr.Msgs = tr.Msgs[:1500] // three batches
	tr.Raw = 0
	for _, m := range tr.Msgs {
		tr.Raw += len(m)
	}
	ps, err := Payloads(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"snappy-stream:64KiB:fast", "zstd:3:1MiB"} {
		spec, err := codec.Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []Payload{tr, ps[0]} {
			r, err := Measure(SpecImpl(name, spec), p, 2, time.Millisecond)
			if err != nil {
				t.Fatalf("%s on %s: %v", name, p.Name, err)
			}
			if r.EncodeNsPerMsg <= 0 || r.DecodeNsPerMsg <= 0 || r.EncoderStateBytes <= 0 || r.DecoderStateBytes <= 0 {
				t.Errorf("%s on %s: %+v", name, p.Name, r)
			}
			sp := &streamPair{spec: spec}
			for pass := range 3 {
				if _, _, err := sp.pass(p.Msgs, p.Framed, nil); err != nil {
					t.Fatalf("%s on %s, pass %d: %v", name, p.Name, pass, err)
				}
			}
		}
	}
	if n := BatchLen(2000, func(int) int { return 100 }); n != BatchFrames {
		t.Errorf("BatchLen of small messages %d, want %d", n, BatchFrames)
	}
	if n := BatchLen(2000, func(int) int { return 100 << 10 }); n != 3 {
		t.Errorf("BatchLen of 100 KiB messages %d, want 3", n)
	}
}
