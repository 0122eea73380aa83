package codec

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"

	zstddict "github.com/klauspost/compress/dict"
	"github.com/klauspost/compress/zstd"
)

func TestParseCanonical(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"snappy-stream", "snappy-stream"},
		{"snappy-stream:64KiB", "snappy-stream"},
		{"snappy-stream:65536:fast", "snappy-stream"},
		{"snappy-stream:4KiB", "snappy-stream:4KiB"},
		{"snappy-stream:4096", "snappy-stream:4KiB"},
		{"snappy-stream:0", "snappy-stream:0"},
		{"snappy-stream:1MiB:better", "snappy-stream:1MiB:better"},
		{"snappy-stream:64KiB:better", "snappy-stream:64KiB:better"},
		{"snappy-stream:16MiB", "snappy-stream:16MiB"},
		{"snappy-stream:1000", "snappy-stream:1000"},
		{"zstd", "zstd"},
		{"zstd:3", "zstd"},
		{"zstd:3:2MiB", "zstd"},
		{"zstd:1", "zstd:1"},
		{"zstd:3:64KiB", "zstd:3:64KiB"},
		{"zstd:11:16MiB", "zstd:11:16MiB"},
		{"zstd-c", "zstd-c"},
		{"zstd-c:3:2MiB", "zstd-c"},
		{"zstd-c:19", "zstd-c:19"},
		{"zstd-c:5:64KiB", "zstd-c:5:64KiB"},
	}
	for _, c := range cases {
		s, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if got := s.String(); got != c.want {
			t.Errorf("Parse(%q).String() = %q, want %q", c.in, got, c.want)
		}
		back, err := Parse(s.String())
		if err != nil || !reflect.DeepEqual(back, s) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", s.String(), back, err, s)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{
		"", "gzip", "plain:1", "snappy-stream:", "snappy-stream:17MiB", "snappy-stream:-1",
		"snappy-stream:64KiB:best", "snappy-stream:64KiB:fast:x", "snappy-stream:4kb",
		"zstd:2", "zstd:0", "zstd:x", "zstd:3:1000", "zstd-c:0", "zstd-c:20", "zstd-c:3:3000", "zstd-cc", "zstd:3:512", "zstd:3:32MiB", "zstd:3:2MiB:x",
	} {
		_, err := Parse(in)
		if err == nil {
			t.Errorf("Parse(%q) succeeded", in)
			continue
		}
		if !strings.Contains(err.Error(), "snappy-stream[:<window>[:fast|better]]") {
			t.Errorf("Parse(%q) error does not name the allowed forms: %v", in, err)
		}
	}
}

// sampleUnits returns n structured messages of varied sizes: repeated text with a counter,
// so every codec finds matches within and across units.
func sampleUnits(rng *rand.Rand, n int) [][]byte {
	var out [][]byte
	for i := 0; i < n; i++ {
		var b bytes.Buffer
		for j := rng.Intn(20); j >= 0; j-- {
			b.WriteString("/eth2/00000000/beacon_attestation_")
			b.WriteByte(byte('0' + rng.Intn(10)))
			b.Write(make([]byte, rng.Intn(40)))
		}
		sig := make([]byte, rng.Intn(100))
		rng.Read(sig)
		b.Write(sig)
		out = append(out, b.Bytes())
	}
	return out
}

func TestRoundTripOverPipe(t *testing.T) {
	for _, spec := range tableSpecs() {
		t.Run(spec, func(t *testing.T) {
			s, err := Parse(spec)
			if err != nil {
				t.Fatal(err)
			}
			msgs := sampleUnits(rand.New(rand.NewSource(1)), 200)
			pr, pw := io.Pipe()
			w := s.NewWriter(pw)
			done := make(chan error, 1)
			var wireWrites int
			go func() {
				defer pw.Close()
				for _, m := range msgs {
					if _, err := w.Write(m); err != nil {
						done <- err
						return
					}
					wireWrites++
				}
				done <- w.Close()
			}()
			r := s.NewReader(pr)
			var want []byte
			for _, m := range msgs {
				want = append(want, m...)
			}
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if err := <-done; err != nil {
				t.Fatalf("write: %v", err)
			}
			if err := w.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("round trip: got %d bytes, want %d", len(got), len(want))
			}
			ws := w.(Meter).Stats()
			rs := r.(Meter).Stats()
			if ws.Units != int64(len(msgs)) || ws.RawBytes != int64(len(want)) {
				t.Errorf("writer stats %+v: want %d units, %d raw bytes", ws, len(msgs), len(want))
			}
			if rs.RawBytes != int64(len(want)) || rs.WireBytes != ws.WireBytes {
				t.Errorf("reader stats %+v vs writer %+v", rs, ws)
			}
			if s.Kind != Plain && ws.WireBytes >= ws.RawBytes {
				t.Errorf("%s did not compress: %d wire bytes for %d raw", spec, ws.WireBytes, ws.RawBytes)
			}
			if s.Kind == SnappyStream && rs.Units != int64(len(msgs)) {
				t.Errorf("reader counted %d blocks, want %d", rs.Units, len(msgs))
			}
			if s.Kind != Plain && (ws.StateBytes <= 0 || rs.StateBytes <= 0) {
				t.Errorf("state bytes not reported: writer %d reader %d", ws.StateBytes, rs.StateBytes)
			}
			if err := r.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}

// countingWriter records the size of every Write it gets.
type countingWriter struct{ sizes []int }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.sizes = append(c.sizes, len(p))
	return len(p), nil
}

func TestOneWritePerUnit(t *testing.T) {
	for _, spec := range familyNames() {
		s, _ := Parse(spec)
		var c countingWriter
		w := s.NewWriter(&c)
		for _, m := range sampleUnits(rand.New(rand.NewSource(2)), 10) {
			if _, err := w.Write(m); err != nil {
				t.Fatal(err)
			}
		}
		if len(c.sizes) != 10 {
			t.Errorf("%s: %d writes on the stream for 10 units", spec, len(c.sizes))
		}
	}
}

type failingWriter struct{}

var errBroken = errors.New("broken stream")

func (failingWriter) Write(p []byte) (int, error) { return 0, errBroken }

func TestWriteErrorsWrap(t *testing.T) {
	for _, spec := range familyNames() {
		s, _ := Parse(spec)
		_, err := s.NewWriter(failingWriter{}).Write([]byte("hello hello hello"))
		if !errors.Is(err, errBroken) {
			t.Errorf("%s: error %v does not wrap the stream's error", spec, err)
		}
	}
}

// slowWriter and slowReader sleep in every call, standing in for a congested stream.
type slowWriter struct{ w io.Writer }

func (s slowWriter) Write(p []byte) (int, error) {
	time.Sleep(5 * time.Millisecond)
	return s.w.Write(p)
}

type slowReader struct{ r io.Reader }

func (s slowReader) Read(p []byte) (int, error) {
	time.Sleep(5 * time.Millisecond)
	return s.r.Read(p)
}

// TestMeterTimeExcludesIO: codec time must not include time spent in the underlying
// stream's Write and Read.
func TestMeterTimeExcludesIO(t *testing.T) {
	for _, spec := range familyNames() {
		s, _ := Parse(spec)
		var buf bytes.Buffer
		w := s.NewWriter(slowWriter{&buf})
		msgs := sampleUnits(rand.New(rand.NewSource(4)), 20)
		for _, m := range msgs {
			if _, err := w.Write(m); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		r := s.NewReader(slowReader{bytes.NewReader(buf.Bytes())})
		if _, err := io.ReadAll(r); err != nil {
			t.Fatal(err)
		}
		// 20 slow calls take at least 100 ms; the codec work is well under that.
		if wt := w.(Meter).Stats().Time; wt > 50*time.Millisecond {
			t.Errorf("%s writer: codec time %v includes the stream's writes", spec, wt)
		}
		if rt := r.(Meter).Stats().Time; rt > 50*time.Millisecond {
			t.Errorf("%s reader: codec time %v includes the stream's reads", spec, rt)
		}
		if s.Kind != Plain && (w.(Meter).Stats().Time <= 0 || r.(Meter).Stats().Time <= 0) {
			t.Errorf("%s: no codec time measured", spec)
		}
	}
}

// A dictionary set on a zstd spec is used by both ends: frames that resemble it shrink, and
// a reader without the dictionary cannot decode the stream.
func TestZstdDictionary(t *testing.T) {
	spec, err := Parse("zstd")
	if err != nil {
		t.Fatal(err)
	}
	unit := []byte("/eth2/8c9f62fe/beacon_attestation_17/ssz_snappy and a shared AttestationData of the slot")
	rng := rand.New(rand.NewSource(5))
	var samples [][]byte
	for i := 0; i < 200; i++ {
		sig := make([]byte, 32)
		rng.Read(sig)
		samples = append(samples, append(append([]byte(nil), unit...), sig...))
	}
	dict, err := zstddict.BuildZstdDict(samples, zstddict.Options{MaxDictSize: 4096, HashBytes: 6, ZstdDictID: 7, ZstdLevel: zstd.SpeedDefault})
	if err != nil {
		t.Fatal(err)
	}
	encode := func(s Spec, opts ...Option) []byte {
		var wire bytes.Buffer
		w := s.NewWriter(&wire, opts...)
		if _, err := w.Write(unit); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return wire.Bytes()
	}
	plainWire, dictWire := encode(spec), encode(spec, WithDict(dict))
	if len(dictWire) >= len(plainWire) {
		t.Fatalf("with dictionary %d bytes, without %d", len(dictWire), len(plainWire))
	}
	got, err := io.ReadAll(spec.NewReader(bytes.NewReader(dictWire), WithDict(dict)))
	if err != nil || !bytes.Equal(got, unit) {
		t.Fatalf("dictionary round trip: %q, %v", got, err)
	}
	if got, err := io.ReadAll(spec.NewReader(bytes.NewReader(dictWire))); err == nil && bytes.Equal(got, unit) {
		t.Fatal("a reader without the dictionary decoded a dictionary stream")
	}
	if w := spec.NewWriter(io.Discard, WithDict(dict)); w.(Meter).Stats().StateBytes != spec.NewWriter(io.Discard).(Meter).Stats().StateBytes+int64(len(dict)) {
		t.Fatal("writer state does not count the dictionary")
	}
	snappy, _ := Parse("snappy-stream")
	if _, err := snappy.NewWriter(io.Discard, WithDict(dict)).Write(unit); err == nil || !strings.Contains(err.Error(), "zstd option") {
		t.Errorf("snappy-stream writer with a dictionary: %v, want an error naming the zstd option", err)
	}
}

// A stream can be released (its reader closed) between two reads of a unit: the next Read
// must fail, or at most hand out what the reader already holds and then fail, and never
// panic. A 1-byte read leaves the rest of the first unit in the reader's output buffer,
// which is where a closed snappy-stream Reader once panicked (found by the mesh soak).
func TestReadAfterCloseMidUnit(t *testing.T) {
	for _, spec := range tableSpecs() {
		t.Run(spec, func(t *testing.T) {
			s, err := Parse(spec)
			if err != nil {
				t.Fatal(err)
			}
			var wire bytes.Buffer
			w := s.NewWriter(&wire)
			msgs := sampleUnits(rand.New(rand.NewSource(2)), 3)
			for _, m := range msgs {
				if _, err := w.Write(m); err != nil {
					t.Fatal(err)
				}
			}
			r := s.NewReader(&wire)
			one := make([]byte, 1)
			if n, err := r.Read(one); n != 1 || err != nil {
				t.Fatalf("first read: %d, %v", n, err)
			}
			if err := r.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			buf := make([]byte, 64)
			held := 0
			for i := 0; ; i++ {
				n, err := r.Read(buf)
				held += n
				if err != nil {
					break
				}
				if i > 1000 || held > len(msgs[0])+len(msgs[1])+len(msgs[2]) {
					t.Fatalf("reads after Close go on: %d bytes", held)
				}
			}
		})
	}
}

// WithoutTiming leaves Stats.Time at 0 for every codec and changes nothing else: the same
// wire bytes, units and decoded bytes as a timed Writer and Reader.
func TestWithoutTiming(t *testing.T) {
	for _, spec := range familyNames() {
		s, _ := Parse(spec)
		msgs := sampleUnits(rand.New(rand.NewSource(4)), 20)
		var stats [2][2]Stats
		var wires [2][]byte
		for i, opts := range [][]Option{nil, {WithoutTiming()}} {
			var buf bytes.Buffer
			w := s.NewWriter(&buf, opts...)
			for _, m := range msgs {
				if _, err := w.Write(m); err != nil {
					t.Fatal(err)
				}
			}
			w.Close()
			r := s.NewReader(bytes.NewReader(buf.Bytes()), opts...)
			got, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(got, bytes.Join(msgs, nil)) {
				t.Fatalf("%s %d: read back: %v", spec, i, err)
			}
			stats[i] = [2]Stats{w.(Meter).Stats(), r.(Meter).Stats()}
			wires[i] = buf.Bytes()
		}
		if !bytes.Equal(wires[0], wires[1]) {
			t.Errorf("%s: WithoutTiming changes the wire bytes", spec)
		}
		for side := range 2 {
			timed, untimed := stats[0][side], stats[1][side]
			if untimed.Time != 0 {
				t.Errorf("%s side %d: WithoutTiming still measures %v", spec, side, untimed.Time)
			}
			timed.Time, untimed.Time = 0, 0
			if timed != untimed {
				t.Errorf("%s side %d: stats %+v without timing, %+v with", spec, side, untimed, timed)
			}
		}
	}
}
