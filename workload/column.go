package workload

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/attestantio/go-eth2-client/spec/deneb"
	"github.com/attestantio/go-eth2-client/spec/phase0"
)

// Cell is one cell of the extended blob matrix: FIELD_ELEMENTS_PER_CELL (64) field elements
// of 32 bytes.
type Cell [bytesPerCell]byte

// DataColumnSidecar is the Fulu gossip container of one column of a block's blob matrix
// (consensus-specs specs/fulu/das-core.md):
//
//	class DataColumnSidecar(Container):
//	    index: ColumnIndex
//	    column: List[Cell, MAX_BLOB_COMMITMENTS_PER_BLOCK]
//	    kzg_commitments: List[KZGCommitment, MAX_BLOB_COMMITMENTS_PER_BLOCK]
//	    kzg_proofs: List[KZGProof, MAX_BLOB_COMMITMENTS_PER_BLOCK]
//	    signed_block_header: SignedBeaconBlockHeader
//	    kzg_commitments_inclusion_proof: Vector[Bytes32, KZG_COMMITMENTS_INCLUSION_PROOF_DEPTH]
//
// go-eth2-client v0.30.1 has no Go type for it. Its SSZ encoding is a fixed part of
// DataColumnSidecarFixedBytes (index, three 4-byte offsets, the 208-byte header, the 4×32
// proof) followed by the three lists: 356 + 2144·B bytes for B blobs.
type DataColumnSidecar struct {
	Index                        uint64
	Column                       []Cell
	KZGCommitments               []deneb.KZGCommitment
	KZGProofs                    []deneb.KZGProof
	SignedBlockHeader            *phase0.SignedBeaconBlockHeader
	KZGCommitmentsInclusionProof [inclusionProofDepth][32]byte
}

const (
	signedHeaderBytes = 208
	// DataColumnSidecarFixedBytes is the SSZ size of a sidecar without blobs.
	DataColumnSidecarFixedBytes = 8 + 3*4 + signedHeaderBytes + inclusionProofDepth*32
	// DataColumnSidecarBlobBytes is the SSZ size each blob adds: a cell, a commitment, a proof.
	DataColumnSidecarBlobBytes = bytesPerCell + 48 + 48
)

var errSSZ = errors.New("invalid ssz")

// SizeSSZ returns the encoded size.
func (d *DataColumnSidecar) SizeSSZ() int {
	return DataColumnSidecarFixedBytes + len(d.Column)*bytesPerCell + 48*len(d.KZGCommitments) + 48*len(d.KZGProofs)
}

// MarshalSSZ returns the SSZ encoding.
func (d *DataColumnSidecar) MarshalSSZ() ([]byte, error) {
	return d.MarshalSSZTo(make([]byte, 0, d.SizeSSZ()))
}

// MarshalSSZTo appends the SSZ encoding to dst.
func (d *DataColumnSidecar) MarshalSSZTo(dst []byte) ([]byte, error) {
	for _, n := range []int{len(d.Column), len(d.KZGCommitments), len(d.KZGProofs)} {
		if n > maxBlobCommitments {
			return dst, fmt.Errorf("data column sidecar: list of %d above %d: %w", n, maxBlobCommitments, errSSZ)
		}
	}
	if d.SignedBlockHeader == nil || d.SignedBlockHeader.Message == nil {
		return dst, fmt.Errorf("data column sidecar: missing signed block header: %w", errSSZ)
	}
	dst = binary.LittleEndian.AppendUint64(dst, d.Index)
	off := DataColumnSidecarFixedBytes
	dst = binary.LittleEndian.AppendUint32(dst, uint32(off))
	off += len(d.Column) * bytesPerCell
	dst = binary.LittleEndian.AppendUint32(dst, uint32(off))
	off += len(d.KZGCommitments) * 48
	dst = binary.LittleEndian.AppendUint32(dst, uint32(off))
	var err error
	if dst, err = d.SignedBlockHeader.MarshalSSZTo(dst); err != nil {
		return dst, fmt.Errorf("data column sidecar header: %w", err)
	}
	for i := range d.KZGCommitmentsInclusionProof {
		dst = append(dst, d.KZGCommitmentsInclusionProof[i][:]...)
	}
	for i := range d.Column {
		dst = append(dst, d.Column[i][:]...)
	}
	for i := range d.KZGCommitments {
		dst = append(dst, d.KZGCommitments[i][:]...)
	}
	for i := range d.KZGProofs {
		dst = append(dst, d.KZGProofs[i][:]...)
	}
	return dst, nil
}

// UnmarshalSSZ decodes an SSZ encoding, checking offsets and list bounds.
func (d *DataColumnSidecar) UnmarshalSSZ(b []byte) error {
	if len(b) < DataColumnSidecarFixedBytes {
		return fmt.Errorf("data column sidecar: %d bytes, below the fixed %d: %w", len(b), DataColumnSidecarFixedBytes, errSSZ)
	}
	o1 := int(binary.LittleEndian.Uint32(b[8:]))
	o2 := int(binary.LittleEndian.Uint32(b[12:]))
	o3 := int(binary.LittleEndian.Uint32(b[16:]))
	if o1 != DataColumnSidecarFixedBytes || o2 < o1 || o3 < o2 || o3 > len(b) {
		return fmt.Errorf("data column sidecar: offsets %d, %d, %d in %d bytes: %w", o1, o2, o3, len(b), errSSZ)
	}
	lists := []struct {
		name      string
		part      []byte
		itemBytes int
	}{{"column", b[o1:o2], bytesPerCell}, {"kzg_commitments", b[o2:o3], 48}, {"kzg_proofs", b[o3:], 48}}
	for _, l := range lists {
		if len(l.part)%l.itemBytes != 0 || len(l.part)/l.itemBytes > maxBlobCommitments {
			return fmt.Errorf("data column sidecar: %s of %d bytes: %w", l.name, len(l.part), errSSZ)
		}
	}
	hdr := new(phase0.SignedBeaconBlockHeader)
	if err := hdr.UnmarshalSSZ(b[20 : 20+signedHeaderBytes]); err != nil {
		return fmt.Errorf("data column sidecar header: %w", err)
	}
	out := DataColumnSidecar{
		Index:             binary.LittleEndian.Uint64(b),
		SignedBlockHeader: hdr,
		Column:            make([]Cell, (o2-o1)/bytesPerCell),
		KZGCommitments:    make([]deneb.KZGCommitment, (o3-o2)/48),
		KZGProofs:         make([]deneb.KZGProof, (len(b)-o3)/48),
	}
	p := b[20+signedHeaderBytes:]
	for i := range out.KZGCommitmentsInclusionProof {
		copy(out.KZGCommitmentsInclusionProof[i][:], p[32*i:])
	}
	for i := range out.Column {
		copy(out.Column[i][:], b[o1+i*bytesPerCell:])
	}
	for i := range out.KZGCommitments {
		copy(out.KZGCommitments[i][:], b[o2+i*48:])
	}
	for i := range out.KZGProofs {
		copy(out.KZGProofs[i][:], b[o3+i*48:])
	}
	*d = out
	return nil
}
