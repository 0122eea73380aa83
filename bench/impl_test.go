package bench

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
)

// TestImplsGolden: the implementations, their names (the keys of benchmark names and JSON),
// labels and flags are those the bench had before it ranged over codec's families.
func TestImplsGolden(t *testing.T) {
	want := []string{
		"golang-snappy snappy", "klauspost-snappy snappy", "s2-snappy snappy", "libsnappy snappy",
		"snappy-stream-w0 snappy [streamsim snappy-stream:0:fast]",
		"snappy-stream-w0-better snappy [streamsim snappy-stream:0:better]",
		"snappy-stream stream [streamsim snappy-stream:64KiB:fast]",
		"snappy-stream-better stream [streamsim snappy-stream:64KiB:better]",
		"zstd stream [klauspost/compress * zstd:3:2MiB]",
		"zstd-c stream [libzstd * zstd-c:3:2MiB]",
	}
	var got []string
	for _, im := range Impls() {
		kind := "snappy"
		if im.Stream {
			kind = "stream"
		}
		if im.Snappy == im.Stream {
			kind = fmt.Sprintf("snappy=%v stream=%v", im.Snappy, im.Stream)
		}
		line := im.Name + " " + kind
		if strings.HasPrefix(im.Name, "snappy-stream") || strings.HasPrefix(im.Name, "zstd") {
			label := im.Label
			if f := strings.Fields(label); len(f) == 3 && f[0] != "streamsim" { // a library version
				label = f[0] + " * " + f[2]
			}
			line += " [" + label + "]"
		}
		got = append(got, line)
	}
	var expect []string
	golden := map[string]bool{}
	for _, w := range want {
		name := strings.Fields(w)[0]
		golden[name] = true
		if name == "libsnappy" && libsnappy == nil {
			continue
		}
		if s, _ := codec.Parse("zstd-c"); name == "zstd-c" && s.Available() != nil {
			continue
		}
		expect = append(expect, w)
	}
	// Implementations added since (a new family's bench specs) are checked by name only.
	benchNames := map[string]bool{}
	for _, f := range codec.Families() {
		for _, b := range f.Bench {
			benchNames[b.Name] = true
		}
	}
	var known []string
	for _, line := range got {
		name := strings.Fields(line)[0]
		switch {
		case golden[name]:
			known = append(known, line)
		case !benchNames[name]:
			t.Errorf("implementation %s is neither a per-message Snappy nor a codec family's bench spec", name)
		}
	}
	if strings.Join(known, "\n") != strings.Join(expect, "\n") {
		t.Errorf("implementations:\n%s\nwant:\n%s", strings.Join(known, "\n"), strings.Join(expect, "\n"))
	}
}

// TestImplsRoundTrip: every implementation decodes what it encoded, message by message, and
// the stream codecs with history beat their window-0 form on repetitive messages.
func TestImplsRoundTrip(t *testing.T) {
	var msgs [][]byte
	for i := range 50 {
		msgs = append(msgs, []byte(fmt.Sprintf("/eth2/8c9f62fe/beacon_attestation_%d/ssz_snappy slot %d", i%4, i/4)))
	}
	wire := map[string]int{}
	for _, im := range Impls() {
		e := im.Encode(msgs)
		n := 0
		if err := im.new().decode(e, func(i int, m []byte) {
			n++
			if !bytes.Equal(m, msgs[i]) {
				t.Errorf("%s: message %d decodes to %q", im.Name, i, m)
			}
		}); err != nil || n != len(msgs) {
			t.Errorf("%s: decoded %d of %d messages: %v", im.Name, n, len(msgs), err)
		}
		wire[im.Name] = e.WireBytes()
	}
	if wire["snappy-stream"] >= wire["snappy-stream-w0"] {
		t.Errorf("snappy-stream %d wire bytes, window 0 %d", wire["snappy-stream"], wire["snappy-stream-w0"])
	}
}

// TestFramedSnappy: golang-snappy-framed sends each frame with its messages' data
// Snappy-encoded (what a plain stream carries today), reads the frames back as a node reads a
// plain stream, and fails on a stream cut inside a frame.
func TestFramedSnappy(t *testing.T) {
	var frames [][]byte
	for i := range 20 {
		data := bytes.Repeat([]byte(fmt.Sprintf("attestation %d ", i)), 20)
		f, err := gossip.AppendPublishFrame(nil, fmt.Sprintf("/eth2/8c9f62fe/beacon_attestation_%d/ssz_snappy", i%4), data)
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, f)
	}
	im := FramedSnappy()
	e := im.Encode(frames)
	e.framed = true
	for i, u := range e.Units {
		want, err := gossip.AppendSnappyFrame(nil, frames[i])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(u, want) {
			t.Fatalf("unit %d is not the frame's ssz_snappy form", i)
		}
		if len(u) >= len(frames[i]) {
			t.Errorf("unit %d: %d bytes, the SSZ frame %d", i, len(u), len(frames[i]))
		}
	}
	n := 0
	if err := im.new().decode(e, func(i int, m []byte) {
		n++
		if !bytes.Equal(m, frames[i]) {
			t.Errorf("frame %d decodes to different bytes", i)
		}
	}); err != nil || n != len(frames) {
		t.Fatalf("decoded %d of %d frames: %v", n, len(frames), err)
	}
	cut := *e
	cut.Stream = e.Stream[:len(e.Stream)-1]
	if err := im.new().decode(&cut, nil); err == nil || !strings.Contains(err.Error(), "frame 19") {
		t.Errorf("a stream cut inside its last frame: %v", err)
	}
	// A message whose data is not the Snappy block it was: its declared length made 0x7f
	// bytes longer.
	c := im.new().(*framedSnappy)
	c.findSpans(e)
	if len(c.spans) != len(frames) {
		t.Fatalf("%d messages' data found in %d frames", len(c.spans), len(frames))
	}
	bad := *e
	bad.Stream = bytes.Clone(e.Stream)
	at := 0
	for _, u := range e.Units[:5] {
		at += len(u)
	}
	bad.Stream[at+c.spans[5].off] |= 0x7f
	if err := c.decode(&bad, nil); err == nil || !strings.Contains(err.Error(), "frame 5: message 0") {
		t.Errorf("corrupt data in frame 5: %v", err)
	}
}
