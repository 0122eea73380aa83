package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/streamsim/streamsim/gossip"
)

func sampleFrames(t *testing.T, n int) []Frame {
	t.Helper()
	rng := rand.New(rand.NewSource(1))
	var frames []Frame
	for i := 0; i < n; i++ {
		data := make([]byte, rng.Intn(3000))
		rng.Read(data)
		frame, err := gossip.AppendPublishFrame(nil, gossip.Topic("8c9f62fe", gossip.AttestationTopic(i%64)), data)
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, Frame{
			At:       time.Duration(i) * 37 * time.Millisecond,
			Stream:   uint32(i % 3),
			Category: gossip.Category(i % int(gossip.NumCategories)),
			Data:     frame,
		})
	}
	return frames
}

func sampleStreams() []Stream {
	var out []Stream
	for i := uint32(0); i < 3; i++ {
		out = append(out, Stream{ID: i, Node: "leaf", Peer: fmt.Sprintf("hub%d", i), Direction: DirectionIn, Protocol: "/meshsub/1.2.0", Codec: "plain"})
	}
	return out
}

func writeSample(t *testing.T, w *Writer, frames []Frame) {
	t.Helper()
	for _, s := range sampleStreams() {
		if err := w.AddStream(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range frames {
		if err := w.WriteFrame(f); err != nil {
			t.Fatal(err)
		}
	}
}

func readAll(t *testing.T, r *Reader) []Frame {
	t.Helper()
	var got []Frame
	for {
		f, err := r.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		f.Data = append([]byte(nil), f.Data...)
		got = append(got, f)
	}
}

func TestRoundTrip(t *testing.T) {
	frames := sampleFrames(t, 200)
	var buf bytes.Buffer
	h := Header{Source: "test", Params: map[string]string{"seed": "7", "profile": "all-subnets"}}
	w, err := NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	writeSample(t, w, frames)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Header(); got.Version != Version || got.Source != "test" || got.Params["seed"] != "7" {
		t.Fatalf("header %+v", got)
	}
	got := readAll(t, r)
	if !reflect.DeepEqual(got, frames) {
		t.Fatalf("frames differ: got %d, want %d", len(got), len(frames))
	}
	if !reflect.DeepEqual(r.Streams(), sampleStreams()) {
		t.Fatalf("streams %+v", r.Streams())
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("after end: %v, want io.EOF", err)
	}
}

func TestFileGzip(t *testing.T) {
	frames := sampleFrames(t, 50)
	for _, name := range []string{"t.trace", "t.trace.gz"} {
		path := filepath.Join(t.TempDir(), name)
		w, err := Create(path, Header{Source: "test"})
		if err != nil {
			t.Fatal(err)
		}
		writeSample(t, w, frames)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, r); !reflect.DeepEqual(got, frames) {
			t.Fatalf("%s: frames differ", name)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWriterRejects(t *testing.T) {
	w, err := NewWriter(io.Discard, Header{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFrame(Frame{Stream: 9}); err == nil {
		t.Fatal("frame on undeclared stream accepted")
	}
	if err := w.AddStream(Stream{ID: 1, Direction: "sideways"}); err == nil {
		t.Fatal("bad direction accepted")
	}
	if err := w.AddStream(Stream{ID: 1, Direction: DirectionOut}); err != nil {
		t.Fatal(err)
	}
	if err := w.AddStream(Stream{ID: 1, Direction: DirectionOut}); err == nil {
		t.Fatal("duplicate stream accepted")
	}
}

func TestReaderRejectsCorruption(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{Source: "test"})
	writeSample(t, w, sampleFrames(t, 5))
	w.Close()
	full := buf.Bytes()

	// Every truncation point ends in io.EOF only at a record boundary, else an ErrFormat error.
	// One bufio.Reader of the Reader's own size, reset to each cut, is what NewReader reads
	// through (bufio.NewReaderSize keeps a reader already that large): the same reads without
	// a fresh 256 KiB buffer for each of the ~8 000 cuts.
	boundaries := map[int]bool{}
	cutReader := bufio.NewReaderSize(nil, 256<<10)
	for cut := 0; cut < len(full); cut++ {
		cutReader.Reset(bytes.NewReader(full[:cut]))
		r, err := NewReader(cutReader)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("cut %d: header error %v is not ErrFormat", cut, err)
			}
			continue
		}
		for {
			_, err = r.Next()
			if err != nil {
				break
			}
		}
		if err != io.EOF && !errors.Is(err, ErrFormat) {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if err == io.EOF {
			boundaries[cut] = true
		}
	}
	// 3 stream declarations and 5 frames: 8 record ends, before the full length.
	if len(boundaries) != 8 {
		t.Fatalf("clean truncation points %d, want 8 (one per record end)", len(boundaries))
	}

	bad := append([]byte(nil), full...)
	bad[0] = 'X'
	if _, err := NewReader(bytes.NewReader(bad)); !errors.Is(err, ErrFormat) {
		t.Fatalf("bad magic: %v", err)
	}
	// A frame length far beyond MaxFrameBytes is rejected before allocating.
	var huge bytes.Buffer
	w, _ = NewWriter(&huge, Header{})
	w.AddStream(Stream{ID: 0, Direction: DirectionIn})
	w.Flush()
	huge.Write([]byte{kindFrame, 0, 0, 0})
	huge.Write([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}) // ~4 GiB
	r, err := NewReader(&huge)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); !errors.Is(err, ErrFormat) {
		t.Fatalf("huge frame: %v", err)
	}
}

func FuzzReader(f *testing.F) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{Source: "fuzz"})
	w.AddStream(Stream{ID: 0, Direction: DirectionIn})
	frame, _ := gossip.AppendPublishFrame(nil, "/eth2/00000000/beacon_block/ssz_snappy", []byte("payload"))
	w.WriteFrame(Frame{At: time.Second, Data: frame, Category: gossip.Block})
	w.Close()
	f.Add(buf.Bytes())
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		for i := 0; i < 1000; i++ {
			fr, err := r.Next()
			if err != nil {
				if err != io.EOF && !errors.Is(err, ErrFormat) {
					t.Fatalf("unexpected error kind: %v", err)
				}
				return
			}
			if len(fr.Data) > MaxFrameBytes {
				t.Fatal("oversized frame")
			}
		}
	})
}
