package snappystream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand"
	"testing"
)

// refDecodeStream is an independent, deliberately naive decoder written from docs/format.md's
// wording of the format, not from decode.go: byte-at-a-time copies over a plain slice of
// everything decoded so far. It returns the blocks decoded before the first error.
func refDecodeStream(stream []byte, window, maxBlock int) ([][]byte, error) {
	var blocks [][]byte
	var hist []byte // the last min(window, decoded) bytes before the current block
	for len(stream) > 0 {
		// The length is a 32-bit varint of at most 5 bytes, as the C++ Snappy reads it
		// (golang/snappy alone also takes longer, non-canonical varints).
		n, k := binary.Uvarint(stream)
		if k <= 0 || k > 5 || n > 0xffffffff {
			return blocks, errors.New("bad length varint")
		}
		if n > uint64(maxBlock) {
			return blocks, errors.New("declared length above bound")
		}
		stream = stream[k:]
		out := []byte{}
		for uint64(len(out)) < n {
			if len(stream) == 0 {
				return blocks, errors.New("truncated")
			}
			tag := stream[0]
			var length, offset int
			switch tag & 3 {
			case 0:
				x := int(tag >> 2)
				hdr := 1
				if x >= 60 {
					nb := x - 59
					if len(stream) < 1+nb {
						return blocks, errors.New("truncated literal length")
					}
					x = 0
					for i := nb; i >= 1; i-- {
						x = x<<8 | int(stream[i])
					}
					hdr += nb
				}
				length = x + 1
				if len(stream) < hdr+length {
					return blocks, errors.New("truncated literal")
				}
				if uint64(len(out)+length) > n {
					return blocks, errors.New("literal past declared length")
				}
				out = append(out, stream[hdr:hdr+length]...)
				stream = stream[hdr+length:]
				continue
			case 1:
				if len(stream) < 2 {
					return blocks, errors.New("truncated copy1")
				}
				length = 4 + int(tag>>2)&7
				offset = int(tag&0xe0)<<3 | int(stream[1])
				stream = stream[2:]
			case 2:
				if len(stream) < 3 {
					return blocks, errors.New("truncated copy2")
				}
				length = 1 + int(tag>>2)
				offset = int(stream[1]) | int(stream[2])<<8
				stream = stream[3:]
			case 3:
				if len(stream) < 5 {
					return blocks, errors.New("truncated copy4")
				}
				length = 1 + int(tag>>2)
				offset = int(binary.LittleEndian.Uint32(stream[1:]))
				stream = stream[5:]
			}
			if uint64(len(out)+length) > n {
				return blocks, errors.New("copy past declared length")
			}
			if offset < 1 || offset > len(out)+len(hist) {
				return blocks, errors.New("offset out of range")
			}
			for i := 0; i < length; i++ {
				if back := len(out) - offset; back >= 0 {
					out = append(out, out[back])
				} else {
					out = append(out, hist[len(hist)+back])
				}
			}
		}
		blocks = append(blocks, out)
		hist = append(hist, out...)
		if len(hist) > window {
			hist = hist[len(hist)-window:]
		}
	}
	return blocks, nil
}

// checkAgainstReference decodes stream with the package's Reader and with refDecodeStream:
// both must accept the same streams with the same bytes, and on a bad stream both must fail
// after delivering the same complete blocks.
func checkAgainstReference(t *testing.T, stream []byte, window, maxBlock int) {
	t.Helper()
	want, refErr := refDecodeStream(stream, window, maxBlock)
	got, err := decodeAll(stream, window, maxBlock)
	wantBytes := bytes.Join(want, nil)
	if (err == nil) != (refErr == nil) {
		t.Fatalf("window %d: package error %v, reference error %v", window, err, refErr)
	}
	if err == nil && !bytes.Equal(got, wantBytes) {
		t.Fatalf("window %d: decoded %d bytes, reference %d, contents differ", window, len(got), len(wantBytes))
	}
	if err != nil && !bytes.HasPrefix(got, wantBytes) {
		t.Fatalf("window %d: before failing, package delivered %d bytes that are not the reference's %d complete-block bytes", window, len(got), len(wantBytes))
	}
}

// Encoder output at every level and window must decode with the independent reference, and
// so must damaged copies of it (where both must also agree on rejecting).
func TestReferenceDecoderAgrees(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	var msgs [][]byte
	for i := 0; i < 300; i++ {
		if i%3 == 0 {
			msgs = append(msgs, random(rng, 1+rng.Intn(3000)))
		} else {
			msgs = append(msgs, structured(rng, 1+rng.Intn(3000)))
		}
	}
	for _, window := range []int{0, 1 << 10, 4 << 10, 64 << 10, 1 << 20} {
		for _, level := range []Level{Fast, Better} {
			enc := NewEncoder(window, level)
			var stream []byte
			for _, m := range msgs {
				stream = enc.Encode(stream, m)
			}
			want, err := refDecodeStream(stream, window, 1<<20)
			if err != nil {
				t.Fatalf("window %d %v: reference rejects encoder output: %v", window, level, err)
			}
			if !bytes.Equal(bytes.Join(want, nil), bytes.Join(msgs, nil)) {
				t.Fatalf("window %d %v: reference decodes encoder output differently", window, level)
			}
			for i := 0; i < 40; i++ {
				bad := append([]byte(nil), stream[:rng.Intn(len(stream))+1]...)
				bad[rng.Intn(len(bad))] ^= byte(1 + rng.Intn(255))
				checkAgainstReference(t, bad, window, 1<<20)
			}
		}
	}
}

// FuzzReference checks the package's decoder against the reference on arbitrary streams,
// for a small and the default window.
func FuzzReference(f *testing.F) {
	enc := NewEncoder(4<<10, Fast)
	first := enc.Encode(nil, []byte("/eth2/4a26c58b/beacon_attestation_12/ssz_snappy attestation data attestation data"))
	f.Add(enc.Encode(first, []byte("/eth2/4a26c58b/beacon_attestation_13/ssz_snappy attestation data")))
	f.Add([]byte{8, 12, 'a', 'b', 'c', 'd', 1, 4, 4, 1, 8})
	f.Add([]byte{3, 8, 'x', 'y', 'z', 6, 10, 3, 0})
	f.Fuzz(func(t *testing.T, stream []byte) {
		for _, w := range []int{0, 16, 4 << 10} {
			checkAgainstReference(t, stream, w, 1<<16)
		}
	})
}
