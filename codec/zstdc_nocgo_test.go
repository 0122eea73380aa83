//go:build !cgo

package codec

import (
	"bytes"
	"errors"
	"testing"
)

// Without cgo zstd-c still parses (reports read results that name it) but every use
// says that it needs cgo.
func TestZstdCWithoutCgo(t *testing.T) {
	s, err := Parse("zstd-c")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Available(); !errors.Is(err, errZstdCNeedsCgo) {
		t.Errorf("Available: %v", err)
	}
	if _, err := s.NewWriter(&bytes.Buffer{}).Write([]byte("x")); !errors.Is(err, errZstdCNeedsCgo) {
		t.Errorf("Write: %v", err)
	}
	if _, err := s.NewReader(bytes.NewReader(nil)).Read(make([]byte, 1)); !errors.Is(err, errZstdCNeedsCgo) {
		t.Errorf("Read: %v", err)
	}
}
