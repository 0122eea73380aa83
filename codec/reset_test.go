package codec

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// TestResetStartsAFreshStream: a snappy-stream Writer and Reader reset after a stream write
// and read the next one byte for byte as fresh ones do, at every window and level.
func TestResetStartsAFreshStream(t *testing.T) {
	var a, b [][]byte
	for i := range 300 {
		a = append(a, bytes.Repeat([]byte(fmt.Sprintf("frame %d of the first stream ", i%40)), 1+i%9))
		b = append(b, bytes.Repeat([]byte(fmt.Sprintf("frame %d of the second ", i%17)), 1+i%5))
	}
	for _, name := range []string{"snappy-stream:0", "snappy-stream:64KiB:fast", "snappy-stream:1MiB:fast", "snappy-stream:64KiB:better"} {
		spec, err := Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		write := func(w io.Writer, frames [][]byte) {
			for _, f := range frames {
				if _, err := w.Write(f); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
		}
		var fresh bytes.Buffer
		write(spec.NewWriter(&fresh), b)

		var first, second bytes.Buffer
		w := spec.NewWriter(&first)
		write(w, a)
		wr, ok := w.(WriterResetter)
		if !ok {
			t.Fatalf("%s: the Writer has no Reset", name)
		}
		wr.Reset(&second)
		write(w, b)
		if !bytes.Equal(second.Bytes(), fresh.Bytes()) {
			t.Fatalf("%s: the reset Writer wrote %d bytes, a fresh one %d, not the same", name, second.Len(), fresh.Len())
		}
		if st := w.(Meter).Stats(); st.RawBytes != int64(totalLen(b)) || st.WireBytes != int64(second.Len()) {
			t.Errorf("%s: stats after reset %+v, want the second stream's alone", name, st)
		}

		r := spec.NewReader(&first)
		read := func(frames [][]byte) {
			for i, f := range frames {
				got := make([]byte, len(f))
				if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got, f) {
					t.Fatalf("%s: frame %d: %v", name, i, err)
				}
			}
		}
		read(a)
		rr, ok := r.(ReaderResetter)
		if !ok {
			t.Fatalf("%s: the Reader has no Reset", name)
		}
		rr.Reset(&second)
		read(b)
		if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Errorf("%s: after the second stream: %d bytes, %v", name, n, err)
		}
		if st := r.(Meter).Stats(); st.RawBytes != int64(totalLen(b)) {
			t.Errorf("%s: reader stats after reset %+v, want the second stream's alone", name, st)
		}
	}
}

func totalLen(frames [][]byte) (n int) {
	for _, f := range frames {
		n += len(f)
	}
	return n
}
