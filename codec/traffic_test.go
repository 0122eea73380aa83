package codec

import (
	"encoding/binary"
	"fmt"
	"math/rand"

	"github.com/streamsim/streamsim/gossip"
)

// This file generates the benchmark inputs deterministically from a seed, standing in
// for workload/ so that codec benchmarks do not depend on it.

const benchForkDigest = "4a26c58b"

// attestationFrames returns n RPC frames, each publishing one SingleAttestation-shaped
// payload (committee_index, attester_index, 128-byte AttestationData, 96-byte signature:
// 240 bytes of raw SSZ) on one of the 64 attestation subnets, interleaved, with one
// AttestationData per slot and perSlot attestations per slot.
func attestationFrames(seed int64, n, perSlot int) [][]byte {
	rng := rand.New(rand.NewSource(seed))
	topics := make([]string, gossip.AttestationSubnets)
	for i := range topics {
		topics[i] = gossip.Topic(benchForkDigest, gossip.AttestationTopic(i))
	}
	var data [128]byte
	epochRoot := make([]byte, 32)
	rng.Read(epochRoot)
	frames := make([][]byte, 0, n)
	slot := uint64(9_000_000)
	for len(frames) < n {
		slot++
		epoch := slot / 32
		// AttestationData: slot, index (0 since Electra), head root, source, target.
		binary.LittleEndian.PutUint64(data[0:], slot)
		binary.LittleEndian.PutUint64(data[8:], 0)
		rng.Read(data[16:48])
		binary.LittleEndian.PutUint64(data[48:], epoch-1)
		copy(data[56:88], epochRoot)
		binary.LittleEndian.PutUint64(data[88:], epoch)
		rng.Read(data[96:128])
		committeeOffset := int(slot%32) * 64
		for i := 0; i < perSlot && len(frames) < n; i++ {
			subnet := rng.Intn(gossip.AttestationSubnets)
			committee := uint64((subnet - committeeOffset%64 + 64) % 64)
			payload := make([]byte, 0, 240)
			payload = binary.LittleEndian.AppendUint64(payload, committee)
			payload = binary.LittleEndian.AppendUint64(payload, uint64(rng.Intn(1_100_000)))
			payload = append(payload, data[:]...)
			sig := make([]byte, 96)
			rng.Read(sig)
			payload = append(payload, sig...)
			f, err := gossip.AppendPublishFrame(nil, topics[subnet], payload)
			if err != nil {
				panic(fmt.Sprintf("frame: %v", err))
			}
			frames = append(frames, f)
		}
	}
	return frames
}

// blockPayloads returns n ~100 KB beacon-block-like payloads: fixed-layout headers,
// attestations with shared data and random signatures, an execution payload with
// transactions that reuse addresses and selectors, and withdrawals.
func blockPayloads(seed int64, n int) [][]byte {
	rng := rand.New(rand.NewSource(seed))
	rnd := func(k int) []byte { b := make([]byte, k); rng.Read(b); return b }
	addrs := make([][]byte, 200)
	for i := range addrs {
		addrs[i] = rnd(20)
	}
	selectors := make([][]byte, 30)
	for i := range selectors {
		selectors[i] = rnd(4)
	}
	u64 := func(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }
	var out [][]byte
	for k := 0; k < n; k++ {
		slot := uint64(9_000_000 + k)
		b := make([]byte, 0, 110_000)
		b = u64(b, slot)
		b = u64(b, uint64(rng.Intn(1_100_000)))
		b = append(b, rnd(32*3)...) // parent, state roots, randao part
		b = append(b, rnd(96)...)   // randao reveal
		b = append(b, make([]byte, 32)...)
		for a := 0; a < 8; a++ { // attestations: bits, data, signature
			bits := make([]byte, 64)
			for i := range bits {
				bits[i] = 0xff &^ byte(1<<uint(rng.Intn(8)))
			}
			b = append(b, bits...)
			b = u64(b, slot-1)
			b = u64(b, 0)
			b = append(b, rnd(32)...)
			b = u64(b, slot/32-1)
			b = append(b, make([]byte, 32)...)
			b = u64(b, slot/32)
			b = append(b, rnd(32)...)
			b = append(b, rnd(96)...)
		}
		for len(b) < 95_000 { // transactions
			b = append(b, 0x02, 0xf8, byte(rng.Intn(256)))
			b = u64(b, uint64(rng.Intn(1000)))
			b = append(b, addrs[rng.Intn(len(addrs))]...)
			b = append(b, selectors[rng.Intn(len(selectors))]...)
			for arg := rng.Intn(4); arg >= 0; arg-- {
				b = append(b, make([]byte, 12)...)
				b = append(b, addrs[rng.Intn(len(addrs))]...)
			}
			b = append(b, make([]byte, 32-rng.Intn(8))...)
			b = append(b, rnd(1+rng.Intn(8))...)
			b = append(b, rnd(65)...) // signature
		}
		for w := 0; w < 16; w++ { // withdrawals
			b = u64(b, uint64(50_000_000+k*16+w))
			b = u64(b, uint64(rng.Intn(1_100_000)))
			b = append(b, addrs[rng.Intn(len(addrs))]...)
			b = u64(b, uint64(rng.Intn(20_000_000)))
		}
		out = append(out, b)
	}
	return out
}

// cells returns n random 2048-byte cells (blob data is incompressible).
func cells(seed int64, n int) [][]byte {
	rng := rand.New(rand.NewSource(seed))
	out := make([][]byte, n)
	for i := range out {
		out[i] = make([]byte, 2048)
		rng.Read(out[i])
	}
	return out
}
