package snappystream

import (
	"bytes"
	"testing"
)

// TestOverlappingCopies checks every offset 1..20 and length 1..64 against a byte loop.
func TestOverlappingCopies(t *testing.T) {
	pattern := []byte("abcdefghijklmnopqrstuvwxyz")
	for offset := 1; offset <= 20; offset++ {
		for length := 1; length <= 64; length++ {
			block := []byte{byte(offset + length), byte(offset-1) << 2}
			block = append(block, pattern[:offset]...)
			block = append(block, byte(length-1)<<2|tagCopy2, byte(offset), 0)
			want := append([]byte{}, pattern[:offset]...)
			for i := 0; i < length; i++ {
				want = append(want, want[len(want)-offset])
			}
			got, err := NewDecoder(0, 0).Decode(nil, block)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("offset %d length %d: %q, %v; want %q", offset, length, got, err, want)
			}
			// Also with trailing room, which enables the 8-byte paths.
			block[0] += 20
			block = append(block, 19<<2)
			block = append(block, pattern[:20]...)
			got, err = NewDecoder(0, 0).Decode(nil, block)
			if err != nil || !bytes.Equal(got[:len(want)], want) || !bytes.Equal(got[len(want):], pattern[:20]) {
				t.Fatalf("offset %d length %d with room: %q, %v", offset, length, got, err)
			}
		}
	}
}
