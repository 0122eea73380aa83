package workload

import (
	"bytes"
	"testing"

	"github.com/attestantio/go-eth2-client/spec/deneb"
	"github.com/attestantio/go-eth2-client/spec/phase0"
)

// FuzzDataColumnSidecar: decoding never panics, and whatever decodes re-encodes to the same
// bytes (SSZ encodings are canonical).
func FuzzDataColumnSidecar(f *testing.F) {
	hdr := &phase0.SignedBeaconBlockHeader{Message: &phase0.BeaconBlockHeader{Slot: 1}}
	for _, blobs := range []int{0, 1, 2} {
		d := &DataColumnSidecar{Index: 3, SignedBlockHeader: hdr, Column: make([]Cell, blobs),
			KZGCommitments: make([]deneb.KZGCommitment, blobs), KZGProofs: make([]deneb.KZGProof, blobs)}
		b, err := d.MarshalSSZ()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(make([]byte, DataColumnSidecarFixedBytes))
	f.Fuzz(func(t *testing.T, b []byte) {
		var d DataColumnSidecar
		if err := d.UnmarshalSSZ(b); err != nil {
			return
		}
		again, err := d.MarshalSSZ()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("re-encoding differs: %d vs %d bytes", len(again), len(b))
		}
	})
}
