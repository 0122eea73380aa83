//go:build cgo

package codec

import (
	"bytes"
	"io"
	"math/rand"
	"strings"
	"testing"
	"testing/iotest"
)

// TestZstdCrossDecode: libzstd reads klauspost's stream and klauspost reads libzstd's,
// frame by frame as they arrive, with the same exact wire accounting.
func TestZstdCrossDecode(t *testing.T) {
	frames := meteringFrames(rand.New(rand.NewSource(11)))
	for _, c := range []struct{ writer, reader string }{
		{"zstd", "zstd-c"}, {"zstd-c", "zstd"}, {"zstd:1:64KiB", "zstd-c:1:64KiB"}, {"zstd-c:9:1MiB", "zstd:3:1MiB"},
	} {
		ws, _ := Parse(c.writer)
		rs, _ := Parse(c.reader)
		var wire bytes.Buffer
		w := ws.NewWriter(&wire)
		var deltas []int64
		var last int64
		for _, f := range frames {
			if _, err := w.Write(f); err != nil {
				t.Fatal(err)
			}
			cur := w.(Meter).Stats().WireBytes
			deltas, last = append(deltas, cur-last), cur
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r := rs.NewReader(iotest.HalfReader(bytes.NewReader(wire.Bytes())))
		var before int64
		for i, f := range frames {
			got := make([]byte, len(f))
			if _, err := io.ReadFull(r, got); err != nil {
				t.Fatalf("%s read by %s: frame %d: %v", c.writer, c.reader, i, err)
			}
			if !bytes.Equal(got, f) {
				t.Fatalf("%s read by %s: frame %d differs", c.writer, c.reader, i)
			}
			after := r.(Meter).Stats().WireBytes
			if after-before != deltas[i] {
				t.Fatalf("%s read by %s: frame %d: %d wire bytes counted, %d written", c.writer, c.reader, i, after-before, deltas[i])
			}
			before = after
		}
		if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Fatalf("%s read by %s: after the last frame: %d, %v", c.writer, c.reader, n, err)
		}
		r.Close()
	}
}

// TestZstdCSizes: at the same level and window both implementations give sizes within a
// few percent on gossip-like frames, and each names itself.
func TestZstdCSizes(t *testing.T) {
	frames := sampleUnits(rand.New(rand.NewSource(12)), 400)
	size := func(spec string) int64 {
		s, _ := Parse(spec)
		w := s.NewWriter(io.Discard)
		for _, f := range frames {
			if _, err := w.Write(f); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		return w.(Meter).Stats().WireBytes
	}
	g, c := size("zstd"), size("zstd-c")
	if r := float64(c) / float64(g); r < 0.9 || r > 1.1 {
		t.Errorf("zstd-c %d bytes, zstd %d: ratio %.3f", c, g, r)
	}
	cs, _ := Parse("zstd-c")
	gs, _ := Parse("zstd")
	if !strings.HasPrefix(cs.Implementation(), "libzstd 1.") || !strings.HasPrefix(gs.Implementation(), "klauspost/compress") {
		t.Errorf("implementations: %q, %q", cs.Implementation(), gs.Implementation())
	}
	if err := cs.Available(); err != nil {
		t.Errorf("zstd-c in a cgo build: %v", err)
	}
	w := cs.NewWriter(io.Discard)
	r := cs.NewReader(bytes.NewReader(nil))
	if w.(Meter).Stats().StateBytes <= 0 || r.(Meter).Stats().StateBytes <= 0 {
		t.Error("libzstd state bytes not reported")
	}
	w.Close()
	r.Close()
}
