package snappystream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"testing"

	gsnappy "github.com/golang/snappy"
)

// decodeAll splits a stream into blocks the way the Reader does, using Decode on each.
func decodeAll(stream []byte, window, maxBlock int) ([]byte, error) {
	r := NewReader(bytes.NewReader(stream), window, maxBlock)
	return io.ReadAll(r)
}

// checkReaderAgainstDecoder reads stream with a Reader in small random reads and checks
// the result against a Reader fed all at once: both must produce the same bytes and
// fail alike.
func checkReaderAgainstDecoder(t *testing.T, stream []byte, window, maxBlock int) {
	t.Helper()
	whole, errWhole := decodeAll(stream, window, maxBlock)
	r := NewReader(&chunkReader{data: stream, rng: rand.New(rand.NewSource(int64(len(stream))))}, window, maxBlock)
	parts, errParts := io.ReadAll(r)
	if !bytes.Equal(whole, parts) || (errWhole == nil) != (errParts == nil) {
		t.Fatalf("chunked read differs: %d/%v vs %d/%v", len(parts), errParts, len(whole), errWhole)
	}
	// As a frame reader reads: a few bytes by ReadByte (a length prefix), some by Peek and
	// Discard, then a Read.
	r = NewReader(&chunkReader{data: stream, rng: rand.New(rand.NewSource(int64(len(stream))))}, window, maxBlock)
	pat := rand.New(rand.NewSource(int64(len(stream)) + 1))
	var mixed []byte
	var errMixed error
	buf := make([]byte, 1000)
	for errMixed == nil {
		for range pat.Intn(4) {
			var c byte
			if c, errMixed = r.ReadByte(); errMixed != nil {
				break
			}
			mixed = append(mixed, c)
		}
		if errMixed == nil && pat.Intn(2) == 0 {
			// Some of a block's bytes taken as a frame reader takes a frame whole in it.
			var b []byte
			if b, errMixed = r.Peek(); errMixed == nil {
				n := pat.Intn(len(b) + 1)
				mixed = append(mixed, b[:n]...)
				r.Discard(n)
			}
		}
		if errMixed == nil {
			var n int
			n, errMixed = r.Read(buf[:1+pat.Intn(len(buf))])
			mixed = append(mixed, buf[:n]...)
		}
	}
	if errMixed == io.EOF {
		errMixed = nil
	}
	if !bytes.Equal(mixed, parts) || fmt.Sprint(errMixed) != fmt.Sprint(errParts) {
		t.Fatalf("read with ReadByte differs: %d/%v vs %d/%v", len(mixed), errMixed, len(parts), errParts)
	}
	if errWhole != nil && !errors.Is(errWhole, ErrCorrupt) && !errors.Is(errWhole, ErrBlockTooLarge) && !errors.Is(errWhole, io.ErrUnexpectedEOF) {
		t.Fatalf("unclassified error: %v", errWhole)
	}
}

// FuzzDecode decodes arbitrary bytes as one block with a history made of a fixed first
// block. With window 0 it must agree with golang/snappy on accepting a block.
func FuzzDecode(f *testing.F) {
	enc := NewEncoder(64<<10, Fast)
	first := []byte("/eth2/4a26c58b/beacon_attestation_12/ssz_snappy\x00\x00\x00\x00\x00\x00\x00\x00 hello hello hello")
	enc.Encode(nil, first)
	f.Add(enc.Encode(nil, first))
	f.Add(enc.Encode(nil, []byte("hello /eth2/4a26c58b/beacon_attestation_13/ssz_snappy")))
	f.Add(gsnappy.Encode(nil, bytes.Repeat([]byte("abcdefgh"), 100)))
	f.Add([]byte{0})
	f.Add([]byte{8, 12, 'a', 'b', 'c', 'd', 1, 4})
	f.Add([]byte{20, 15<<2 | tagCopy4, 0xff, 0xff, 0, 0})
	f.Fuzz(func(t *testing.T, block []byte) {
		for _, w := range []int{0, 64 << 10} {
			d := NewDecoder(w, 1<<20)
			if w > 0 {
				if _, err := d.Decode(nil, NewEncoder(w, Fast).Encode(nil, first)); err != nil {
					t.Fatal(err)
				}
			}
			out, err := d.Decode(nil, block)
			if w == 0 {
				// golang/snappy allocates whatever a block declares, up to 4 GiB, before
				// reading its elements: ask it only about blocks within the bound.
				if n, derr := gsnappy.DecodedLen(block); derr == nil && n > 1<<20 {
					if err == nil {
						t.Fatalf("accepted a block declaring %d bytes, above the bound", n)
					}
					continue
				}
				want, gerr := gsnappy.Decode(nil, block)
				if err == nil && (gerr != nil || !bytes.Equal(out, want)) {
					t.Fatalf("accepted a block golang/snappy rejects (%v) or decoded it differently", gerr)
				}
				if err != nil && gerr == nil && len(want) <= 1<<20 && !errors.Is(err, ErrCorrupt) {
					t.Fatalf("rejected a block golang/snappy accepts: %v", err)
				}
				continue
			}
			if err == nil {
				// Re-encoding after the same history must round-trip.
				e := NewEncoder(w, Better)
				e.Encode(nil, first)
				d2 := NewDecoder(w, 1<<20)
				d2.Decode(nil, NewEncoder(w, Fast).Encode(nil, first))
				back, err := d2.Decode(nil, e.Encode(nil, out))
				if err != nil || !bytes.Equal(back, out) {
					t.Fatalf("re-encoded block does not round-trip: %v", err)
				}
			}
		}
	})
}

// FuzzReader reads arbitrary bytes as a stream, in one piece and in random pieces.
func FuzzReader(f *testing.F) {
	rng := rand.New(rand.NewSource(1))
	enc := NewEncoder(1000, Better)
	var stream []byte
	for i := 0; i < 8; i++ {
		stream = enc.Encode(stream, structured(rng, rng.Intn(600)))
	}
	f.Add(stream)
	f.Add(stream[:len(stream)/2])
	f.Add([]byte{})
	f.Add([]byte{0, 0, 1, 0, 'x'})
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, stream []byte) {
		checkReaderAgainstDecoder(t, stream, 1000, 1<<16)
	})
}
