package codec

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/klauspost/compress/dict"
	"github.com/klauspost/compress/zstd"
)

// TestResetStartsAFreshStream: a Writer and Reader of every codec that keeps state (snappy-stream
// at every window and level, zstd, zstd-c) reset after a stream write and read the next one
// byte for byte as fresh ones do, whether the first stream was left open (its frame abandoned,
// as a long-lived benchmark pair does) or closed first.
func TestResetStartsAFreshStream(t *testing.T) {
	var a, b [][]byte
	for i := range 300 {
		a = append(a, bytes.Repeat([]byte(fmt.Sprintf("frame %d of the first stream ", i%40)), 1+i%9))
		b = append(b, bytes.Repeat([]byte(fmt.Sprintf("frame %d of the second ", i%17)), 1+i%5))
	}
	for _, name := range []string{
		"snappy-stream:0", "snappy-stream:64KiB:fast", "snappy-stream:1MiB:fast", "snappy-stream:64KiB:better",
		"zstd", "zstd:1:64KiB", "zstd-c", "zstd-c:1:64KiB",
	} {
		spec, err := Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		if spec.Available() != nil {
			t.Logf("%s: not in this build", name)
			continue
		}
		for _, closeFirst := range []bool{false, true} {
			resetRoundTrip(t, spec, a, b, closeFirst)
		}
	}
	// With a dictionary: the reset encoder and decoder keep it.
	d, err := dict.BuildZstdDict(b[:200], dict.Options{MaxDictSize: 4096, HashBytes: 6, ZstdDictID: 7, ZstdLevel: zstd.SpeedDefault})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"zstd:3:64KiB", "zstd-c:3:64KiB"} {
		spec, err := Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		if spec.Available() == nil {
			resetRoundTrip(t, spec, a, b, false, WithDict(d))
		}
	}
}

// resetRoundTrip writes a and then, after a Reset, b through one Writer (closing it after a if
// closeFirst), checks that the second stream is a fresh Writer's for b, and reads both
// streams through one Reader, reset in between.
func resetRoundTrip(t *testing.T, spec Spec, a, b [][]byte, closeFirst bool, opts ...Option) {
	t.Helper()
	name := fmt.Sprintf("%s (closed first: %v)", spec, closeFirst)
	write := func(w io.Writer, frames [][]byte) {
		for _, f := range frames {
			if _, err := w.Write(f); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	var fresh bytes.Buffer
	fw := spec.NewWriter(&fresh, opts...)
	write(fw, b)
	if err := fw.Close(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}

	var first, second bytes.Buffer
	w := spec.NewWriter(&first, opts...)
	write(w, a)
	if closeFirst {
		if err := w.Close(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	wr, ok := w.(WriterResetter)
	if !ok {
		t.Fatalf("%s: the Writer has no Reset", name)
	}
	wr.Reset(&second)
	write(w, b)
	st := w.(Meter).Stats()
	if err := w.Close(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !bytes.Equal(second.Bytes(), fresh.Bytes()) {
		t.Fatalf("%s: the reset Writer wrote %d bytes, a fresh one %d, not the same", name, second.Len(), fresh.Len())
	}
	if st.RawBytes != int64(totalLen(b)) || st.Units != int64(len(b)) {
		t.Errorf("%s: stats after reset %+v, want the second stream's alone", name, st)
	}

	secondLen := second.Len()
	r := spec.NewReader(&first, opts...)
	read := func(frames [][]byte) {
		for i, f := range frames {
			got := make([]byte, len(f))
			if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got, f) {
				t.Fatalf("%s: frame %d: %v", name, i, err)
			}
		}
	}
	read(a)
	if closeFirst {
		if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Fatalf("%s: after the first stream: %d bytes, %v", name, n, err)
		}
		r.Close()
	}
	rr, ok := r.(ReaderResetter)
	if !ok {
		t.Fatalf("%s: the Reader has no Reset", name)
	}
	rr.Reset(&second)
	read(b)
	if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("%s: after the second stream: %d bytes, %v", name, n, err)
	}
	if st := r.(Meter).Stats(); st.RawBytes != int64(totalLen(b)) || st.WireBytes != int64(secondLen) {
		t.Errorf("%s: reader stats after reset %+v, want the second stream's alone (%d raw, %d wire)", name, st, totalLen(b), secondLen)
	}
}

func totalLen(frames [][]byte) (n int) {
	for _, f := range frames {
		n += len(f)
	}
	return n
}
