package codec

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/streamsim/streamsim/gossip"
)

// meteringFrames are frames of varied sizes: tiny, attestation-sized, a few KiB, and
// some above zstd's 128 KiB block (several blocks per unit), compressible and not.
func meteringFrames(rng *rand.Rand) [][]byte {
	sizes := []int{1, 3, 280, 281, 500, 4 << 10, 60 << 10, 200 << 10, 12, 90, 300 << 10, 7, 1500}
	for i := 0; i < 60; i++ {
		sizes = append(sizes, 1+rng.Intn(2000))
	}
	var out [][]byte
	for i, n := range sizes {
		f := make([]byte, n)
		if i%3 == 0 {
			rng.Read(f) // incompressible
		} else {
			topic := []byte("/eth2/8c9f62fe/beacon_attestation_17/ssz_snappy")
			for j := 0; j < n; j += len(topic) + 16 {
				copy(f[j:], topic)
				if k := j + len(topic); k < n {
					rng.Read(f[k:min(n, k+16)])
				}
			}
		}
		out = append(out, f)
	}
	return out
}

// coalescingReader hands out up to 1 MiB per Read: everything a fast transport has.
type coalescingReader struct{ r *bytes.Reader }

func (c coalescingReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), 1<<20)]) }

// TestReaderWireBytesExact: after a reader has returned a whole frame, its WireBytes has
// grown by exactly the writer's WireBytes for that Write, whether the transport hands
// out everything at once or one byte per Read; before the frame's last byte is returned,
// the frame's wire bytes are not all counted.
func TestReaderWireBytesExact(t *testing.T) {
	frames := meteringFrames(rand.New(rand.NewSource(9)))
	for _, spec := range tableSpecs() {
		s, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		var wire bytes.Buffer
		w := s.NewWriter(&wire)
		deltas := make([]int64, len(frames))
		var last int64
		for i, f := range frames {
			if _, err := w.Write(f); err != nil {
				t.Fatal(err)
			}
			cur := w.(Meter).Stats().WireBytes
			deltas[i], last = cur-last, cur
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		total := w.(Meter).Stats().WireBytes
		if total != int64(wire.Len()) {
			t.Fatalf("%s: writer counted %d wire bytes, wrote %d", spec, total, wire.Len())
		}
		for _, src := range []struct {
			name string
			r    func() io.Reader
		}{
			{"coalescing", func() io.Reader { return coalescingReader{bytes.NewReader(wire.Bytes())} }},
			{"one-byte", func() io.Reader { return iotest.OneByteReader(bytes.NewReader(wire.Bytes())) }},
		} {
			t.Run(spec+"/"+src.name, func(t *testing.T) {
				r := s.NewReader(src.r())
				defer r.Close()
				m := r.(Meter)
				var before int64
				for i, f := range frames {
					got := make([]byte, len(f))
					// All but the last byte first: the frame is not complete yet.
					if _, err := io.ReadFull(r, got[:len(f)-1]); err != nil {
						t.Fatalf("frame %d: %v", i, err)
					}
					if d := m.Stats().WireBytes - before; d >= deltas[i] && !s.IsPlain() {
						t.Fatalf("frame %d: %d of its %d wire bytes counted before its last byte was returned", i, d, deltas[i])
					}
					if _, err := io.ReadFull(r, got[len(f)-1:]); err != nil {
						t.Fatalf("frame %d: %v", i, err)
					}
					if !bytes.Equal(got, f) {
						t.Fatalf("frame %d differs", i)
					}
					after := m.Stats().WireBytes
					if after-before != deltas[i] {
						t.Fatalf("frame %d (%d bytes): reader counted %d wire bytes, writer %d", i, len(f), after-before, deltas[i])
					}
					before = after
				}
				if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
					t.Fatalf("after the last frame: %d, %v", n, err)
				}
				if st := m.Stats(); st.WireBytes != total || st.RawBytes != w.(Meter).Stats().RawBytes {
					t.Fatalf("at the end: reader %+v, writer wrote %d wire bytes", st, total)
				}
			})
		}
	}
}

// TestZstdGateRejects: the block gate rejects, before the decoder sees them, a frame whose
// window exceeds the spec's (the decoder's memory bound), a reserved block type, a foreign
// magic number and a stream cut inside a block.
func TestZstdGateRejects(t *testing.T) {
	big, _ := Parse("zstd:3:4MiB")
	small, _ := Parse("zstd")
	var wire bytes.Buffer
	w := big.NewWriter(&wire)
	if _, err := w.Write(bytes.Repeat([]byte("attestation "), 100)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	stream := wire.Bytes()
	reserved := append([]byte(nil), stream...)
	reserved[6] |= 3 << 1 // the first block header follows magic, descriptor and window byte
	cases := []struct {
		name   string
		spec   Spec
		stream []byte
		want   string
	}{
		{"window above the spec", small, stream, "4194304-byte window"},
		{"reserved block type", big, reserved, "reserved block type"},
		{"foreign magic", big, []byte("not zstd at all"), "magic number"},
		{"cut inside a block", big, stream[:len(stream)-10], "unexpected EOF"},
	}
	for _, c := range cases {
		_, err := io.ReadAll(c.spec.NewReader(bytes.NewReader(c.stream)))
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}

// TestReadByteAsRead: a Reader's ReadByte (plain's and snappy-stream's: gossip.ReadPooledFrame
// reads a frame's length prefix with it) yields the bytes, the errors and the meters that
// Reads of one byte would, mixed with longer Reads as a frame reader mixes them, on a whole
// stream, on cuts of it and on streams with a corrupted byte.
func TestReadByteAsRead(t *testing.T) {
	frames := meteringFrames(rand.New(rand.NewSource(11)))[:24]
	for _, spec := range tableSpecs() {
		s, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.NewReader(bytes.NewReader(nil)).(io.ByteReader); !ok {
			if s.Kind == Plain || s.Kind == SnappyStream {
				t.Fatalf("%s: the Reader has no ReadByte", spec)
			}
			continue
		}
		var wire bytes.Buffer
		w := s.NewWriter(&wire)
		for _, f := range frames {
			if _, err := w.Write(f); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		full := wire.Bytes()
		inputs := [][]byte{full}
		for _, cut := range []int{0, 1, 2, 3, 17, 300, len(full) / 2, len(full) - 1} {
			inputs = append(inputs, full[:cut])
		}
		for _, at := range []int{0, 1, 5, 290, 2000, len(full) / 3, len(full) - 2} {
			bad := bytes.Clone(full)
			bad[at] ^= 0x5a
			inputs = append(inputs, bad)
		}
		// read reads in: runs of single bytes (ReadByte, or Read of one byte) between
		// Reads of up to 700 bytes, the same runs both ways.
		read := func(in []byte, byteReader bool) string {
			r := s.NewReader(bytes.NewReader(in), WithoutTiming())
			defer r.Close()
			rng := rand.New(rand.NewSource(5))
			var got []byte
			var one [1]byte
			buf := make([]byte, 700)
			for {
				var err error
				for range 1 + rng.Intn(3) {
					if byteReader {
						var c byte
						if c, err = r.(io.ByteReader).ReadByte(); err == nil {
							got = append(got, c)
						}
					} else if _, err = io.ReadFull(r, one[:]); err == nil {
						got = append(got, one[0])
					}
					if err != nil {
						break
					}
				}
				if err == nil {
					var n int
					n, err = r.Read(buf[:1+rng.Intn(len(buf))])
					got = append(got, buf[:n]...)
				}
				if err != nil {
					st := r.(Meter).Stats()
					return fmt.Sprintf("%d bytes %x, raw %d wire %d units %d: %v", len(got), sha256.Sum256(got), st.RawBytes, st.WireBytes, st.Units, err)
				}
			}
		}
		for i, in := range inputs {
			if a, b := read(in, true), read(in, false); a != b {
				t.Errorf("%s input %d (%d bytes): with ReadByte %s; with Read %s", spec, i, len(in), a, b)
			}
		}
		if got := read(full, true); !strings.HasSuffix(got, ": EOF") {
			t.Errorf("%s: the whole stream reads %s", spec, got)
		}
	}
}

// bytesOnly hides a Reader's Peek: a frame reader then reads byte by byte and by Read.
type bytesOnly struct{ r io.Reader }

func (b bytesOnly) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b bytesOnly) ReadByte() (byte, error)    { return b.r.(io.ByteReader).ReadByte() }

// TestReadFramePeek: gossip.ReadPooledFrame takes a frame whole in snappy-stream's decoded
// block from the Reader's Peek; it reads the same frames, fails with the same errors and
// leaves the same meters as reading the prefix byte by byte, on frames one per Write, two
// per Write, split over two Writes and with a padded prefix, whole, cut and corrupted, with a
// bound some frames exceed.
func TestReadFramePeek(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var frames [][]byte
	for i, n := range []int{10, 300, 5, 20000, 130, 90, 300, 1, 2000, 300, 300, 70} {
		data := make([]byte, n)
		if i%2 == 0 {
			rng.Read(data)
		}
		f, err := gossip.AppendPublishFrame(nil, "/eth2/8c9f62fe/beacon_attestation_9/ssz_snappy", data)
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, f)
	}
	// A padded prefix: the frame's length in two bytes where one would do.
	body := frames[0][1:]
	if len(body) >= 0x80 || int(frames[0][0]) != len(body) {
		t.Fatalf("frame 0 is %d bytes, prefix %#x", len(frames[0]), frames[0][0])
	}
	frames = append(frames, append([]byte{byte(len(body)) | 0x80, 0}, body...))
	for _, spec := range []string{"snappy-stream", "snappy-stream:0", "snappy-stream:4KiB"} {
		s, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		var wire bytes.Buffer
		w := s.NewWriter(&wire)
		for i := 0; i < len(frames); i++ {
			switch i % 4 {
			case 1: // two frames in one Write
				if i+1 < len(frames) {
					w.Write(append(bytes.Clone(frames[i]), frames[i+1]...))
					i++
					continue
				}
			case 2: // one frame in two Writes
				w.Write(frames[i][:len(frames[i])/2])
				w.Write(frames[i][len(frames[i])/2:])
				continue
			}
			w.Write(frames[i])
		}
		w.Close()
		full := wire.Bytes()
		inputs := [][]byte{full}
		for _, cut := range []int{1, 2, 40, 400, len(full) / 2, len(full) - 1} {
			inputs = append(inputs, full[:cut])
		}
		for _, at := range []int{0, 3, 350, len(full) / 3, len(full) - 5} {
			bad := bytes.Clone(full)
			bad[at] ^= 0x21
			inputs = append(inputs, bad)
		}
		read := func(in []byte, maxBytes int, peek bool) string {
			r := s.NewReader(bytes.NewReader(in), WithoutTiming())
			defer r.Close()
			var src io.Reader = r
			if !peek {
				src = bytesOnly{r}
			}
			var out []string
			var hdr [10]byte
			for {
				f, err := gossip.ReadPooledFrame(src, hdr[:], maxBytes)
				st := r.(Meter).Stats()
				if err != nil {
					return strings.Join(append(out, fmt.Sprintf("raw %d wire %d units %d: %v", st.RawBytes, st.WireBytes, st.Units, err)), "\n")
				}
				out = append(out, fmt.Sprintf("%d %x raw %d wire %d", len(f), sha256.Sum256(f), st.RawBytes, st.WireBytes))
			}
		}
		for i, in := range inputs {
			for _, maxBytes := range []int{1 << 20, 1000} {
				if a, b := read(in, maxBytes, true), read(in, maxBytes, false); a != b {
					t.Errorf("%s input %d (%d bytes), bound %d:\nwith Peek:\n%s\nbyte by byte:\n%s", spec, i, len(in), maxBytes, a, b)
				}
			}
		}
		if got := read(full, 1<<20, true); strings.Count(got, "\n") != len(frames) || !strings.HasSuffix(got, ": EOF") {
			t.Errorf("%s: the whole stream reads\n%s", spec, got)
		}
	}
}
