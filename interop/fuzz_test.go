package interop

import (
	"bytes"
	"context"
	"sync"
	"testing"
)

// fuzzCodec is one JS codec process shared by every input of a fuzz run (and by the fuzzing
// workers' inputs in each worker process); it ends with the test binary, when its stdin closes.
var (
	fuzzOnce  sync.Once
	fuzzCodec *Codec
	fuzzErr   error
)

// FuzzCrossDecode is a differential fuzz target: on any input, read as a snappy-stream at
// window 4 KiB or 64 KiB (the first byte chooses) with a 1 MiB bound, the JS StreamDecoder and
// the Go Reader must give the same verdict: the same output, and the same error kind or none.
// The seeds are the conformance cases and a Go-encoded stream of workload frames.
//
//	go test ./interop -run '^$' -fuzz FuzzCrossDecode -fuzztime 60s
func FuzzCrossDecode(f *testing.F) {
	requireNode(f)
	for _, c := range conformanceCases() {
		sel := byte(0)
		if c.windowBytes > 4<<10 {
			sel = 1
		}
		f.Add(append([]byte{sel}, bytes.Join(c.blocks, nil)...))
	}
	f.Add(append([]byte{1}, bytes.Join(goEncode(64<<10, traceFrames(f, 3, true, 12)), nil)...))
	f.Add(append([]byte{0}, bytes.Join(goEncode(4<<10, traceFrames(f, 3, false, 12)), nil)...))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		fuzzOnce.Do(func() { fuzzCodec, fuzzErr = StartCodec(context.Background(), "") })
		if fuzzErr != nil {
			t.Fatal(fuzzErr)
		}
		w := 4 << 10
		if in[0]&1 == 1 {
			w = 64 << 10
		}
		const bound = 1 << 20
		stream := in[1:]
		goOut, goErr := goDecodeStream(w, bound, stream)
		js, err := fuzzCodec.DecodeStream(w, bound, stream, 0)
		if err != nil {
			t.Fatal(err)
		}
		if js.Code != ErrorKind(goErr) || !bytes.Equal(js.Output, goOut) {
			t.Fatalf("window %d, %d B: JS %d bytes, %s %q; Go %d bytes, %v", w, len(stream), len(js.Output), js.Code, js.Err, len(goOut), goErr)
		}
	})
}
