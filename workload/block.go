package workload

import (
	"fmt"
	"math"
	"time"

	"github.com/OffchainLabs/go-bitfield"
	"github.com/attestantio/go-eth2-client/spec/altair"
	"github.com/attestantio/go-eth2-client/spec/bellatrix"
	"github.com/attestantio/go-eth2-client/spec/capella"
	"github.com/attestantio/go-eth2-client/spec/deneb"
	"github.com/attestantio/go-eth2-client/spec/electra"
	"github.com/attestantio/go-eth2-client/spec/phase0"
	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"

	"github.com/streamsim/streamsim/gossip"
)

// Block builders' fee recipients and extra data: a handful produce most mainnet blocks.
var builders = []struct {
	extra string
	fee   common.Address
}{
	{"beaverbuild.org", common.HexToAddress("0x95222290DD7278Aa3Ddd389Cc1E1d165CC4BAfe5")},
	{"Titan (titanbuilder.xyz)", common.HexToAddress("0x4838B106FCe9647Bdf1E7877BF73cE8B0BAD5f97")},
	{"BuilderNet (Flashbots)", common.HexToAddress("0xdadB0d80178819F2319190D340ce9A924f783711")},
	{"rsync-builder.xyz", common.HexToAddress("0x1f9090aaE28b8a3dCeaDf281B0F12828e676c326")},
	{"@bloXroute", common.HexToAddress("0x965Df5Ff6116C395187E288e5C87fb96CfB8141c")},
}

// Extra data of locally built blocks: the execution client's default.
var localExtra = []string{"geth/v1.16.7/linux/go1.24.9", "Nethermind v1.35.2", "reth/v1.9.3/linux", "besu 25.11.0", "erigon 3.2.2"}

// Graffiti as proposers set it (client version strings, pool tags, often empty).
var graffiti = []string{"", "", "Lighthouse/v8.0.1-e3ee7fe", "teku/v25.11.1", "Nethermind-Lodestar", "RP-NMC v1.18.5", "GE-PR", "stakefish", "Prysm/v7.0.0"}

const (
	// Rollup batches posted as calldata before EIP-4844 were tens of kilobytes each (an
	// Optimism frame is at most 120 000 bytes).
	rollupBatchMinBytes = 20_000
	rollupBatchMaxBytes = 120_000
	gasPerBlob          = 131072
	withdrawalAmountMin = 17_000_000 // Gwei: the ~0.017 ETH of a partial-withdrawal sweep
)

// chainState is what successive blocks share: execution chain, withdrawal sweep, senders.
type chainState struct {
	txs              *txSource
	eth1             *phase0.ETH1Data
	blockNumber      uint64
	parentHash       phase0.Hash32
	baseFee          uint64
	excessBlobGas    uint64
	withdrawalIndex  uint64
	withdrawalCursor uint64
	withdrawalAddrs  []bellatrix.ExecutionAddress
}

func newChainState(g *Generator) (*chainState, error) {
	txs, err := newTxSource(g.rng, g.fill, contentFor(g.p))
	if err != nil {
		return nil, err
	}
	c := &chainState{
		txs:              txs,
		blockNumber:      23_900_000,
		baseFee:          1_000_000_000 + g.rng.Uint64N(2_000_000_000),
		excessBlobGas:    g.rng.Uint64N(200) * gasPerBlob,
		withdrawalIndex:  110_000_000,
		withdrawalCursor: uint64(g.rng.IntN(g.p.Validators)),
		withdrawalAddrs:  make([]bellatrix.ExecutionAddress, 64),
	}
	c.eth1 = &phase0.ETH1Data{DepositCount: 2_100_000, BlockHash: make([]byte, 32)}
	g.fill(c.eth1.DepositRoot[:])
	g.fill(c.eth1.BlockHash)
	g.fill(c.parentHash[:])
	for i := range c.withdrawalAddrs {
		g.fill(c.withdrawalAddrs[i][:])
	}
	return c, nil
}

// block builds the slot's SignedBeaconBlock and, when it has blobs, its 128 column sidecars,
// and makes it the head.
func (g *Generator) block(i uint64, slot phase0.Slot, at time.Duration) error {
	c := g.chain
	blobs := 0
	if g.rng.Float64() < g.p.BlobBlockShare {
		blobs = g.p.BlobsMin + g.rng.IntN(g.p.BlobsMax-g.p.BlobsMin+1)
	}
	commitments := make([]deneb.KZGCommitment, blobs)
	for k := range commitments {
		g.fill(commitments[k][:])
		commitments[k][0] = 0x80 | commitments[k][0]&0x1f // compressed G1 point flags
	}
	// MEV-Boost or locally built: the builder's fee recipient and tag, or the proposer's
	// own address and its client's default extra data; each kind with its sizes.
	mev := g.rng.Float64() < g.p.MEVBlockShare
	median, gasMedian := g.p.BlockMedianBytes, g.p.MEVGasUsed
	builder := builders[g.rng.IntN(len(builders))]
	if !mev {
		median, gasMedian = g.p.LocalBlockMedianBytes, g.p.LocalGasUsed
		builder.extra = localExtra[g.rng.IntN(len(localExtra))]
		builder.fee = common.Address(c.withdrawalAddrs[g.rng.IntN(len(c.withdrawalAddrs))])
	}
	z := g.rng.NormFloat64()
	payload := &deneb.ExecutionPayload{
		ParentHash:    c.parentHash,
		FeeRecipient:  bellatrix.ExecutionAddress(builder.fee),
		BlockNumber:   c.blockNumber,
		GasLimit:      g.p.GasLimit,
		Timestamp:     mainnetGenesisUnixTime + uint64(slot)*uint64(SlotDuration/time.Second),
		ExtraData:     []byte(builder.extra),
		BaseFeePerGas: uint256.NewInt(c.baseFee),
		BlobGasUsed:   uint64(blobs) * gasPerBlob,
		ExcessBlobGas: c.excessBlobGas,
		Transactions:  []bellatrix.Transaction{},
	}
	g.fill(payload.StateRoot[:])
	g.fill(payload.ReceiptsRoot[:])
	g.fill(payload.LogsBloom[:])
	g.fill(payload.PrevRandao[:])
	g.fill(payload.BlockHash[:])
	for range maxWithdrawals {
		c.withdrawalCursor = (c.withdrawalCursor + 1 + uint64(g.rng.IntN(40))) % uint64(g.p.Validators)
		payload.Withdrawals = append(payload.Withdrawals, &capella.Withdrawal{
			Index:          capella.WithdrawalIndex(c.withdrawalIndex),
			ValidatorIndex: phase0.ValidatorIndex(c.withdrawalCursor),
			Address:        c.withdrawalAddrs[g.rng.IntN(len(c.withdrawalAddrs))],
			Amount:         phase0.Gwei(withdrawalAmountMin + g.rng.Uint64N(3_000_000)),
		})
		c.withdrawalIndex++
	}
	var gr [32]byte
	copy(gr[:], graffiti[g.rng.IntN(len(graffiti))])
	body := &electra.BeaconBlockBody{
		ETH1Data:              c.eth1,
		Graffiti:              gr,
		ProposerSlashings:     []*phase0.ProposerSlashing{},
		AttesterSlashings:     []*electra.AttesterSlashing{},
		Attestations:          g.blockAttestations(),
		Deposits:              []*phase0.Deposit{},
		VoluntaryExits:        []*phase0.SignedVoluntaryExit{},
		SyncAggregate:         &altair.SyncAggregate{SyncCommitteeBits: bitfield.NewBitvector512()},
		ExecutionPayload:      payload,
		BLSToExecutionChanges: []*capella.SignedBLSToExecutionChange{},
		BlobKZGCommitments:    commitments,
		ExecutionRequests: &electra.ExecutionRequests{
			Deposits:       []*electra.DepositRequest{},
			Withdrawals:    []*electra.WithdrawalRequest{},
			Consolidations: []*electra.ConsolidationRequest{},
		},
	}
	g.fill(body.RANDAOReveal[:])
	for b := range uint64(syncCommitteeSize) {
		if g.rng.Float64() < g.p.BitsSetShare {
			body.SyncAggregate.SyncCommitteeBits.SetBitAt(b, true)
		}
	}
	g.fill(body.SyncAggregate.SyncCommitteeSignature[:])
	signed := &electra.SignedBeaconBlock{Message: &electra.BeaconBlock{
		Slot:          slot,
		ProposerIndex: g.validator(),
		ParentRoot:    g.head,
		Body:          body,
	}}
	g.fill(signed.Message.StateRoot[:])
	g.fill(signed.Signature[:])

	// Fill the payload with transactions up to a lognormal SSZ size; gas used follows the
	// same draw.
	target := int(float64(median) * math.Exp(g.p.BlockSigma*z))
	size := signed.SizeSSZ()
	target = max(size, min(target, g.p.MaxBlockBytes))
	for k := 0; k < blobs; {
		n := min(blobs-k, 1+g.rng.IntN(6))
		hashes := make([]common.Hash, n)
		for j := range hashes {
			hashes[j] = versionedHash(commitments[k+j][:])
		}
		tx, err := c.txs.blobTx(c.baseFee, hashes)
		if err != nil {
			return err
		}
		payload.Transactions = append(payload.Transactions, tx)
		size += 4 + len(tx)
		k += n
	}
	c.txs.startBlock()
	// Rollup batches in calldata (before blobs): their share of the transaction bytes.
	if share := g.p.RollupCalldataShare; share > 0 {
		batches := int(float64(target-size) * share)
		for batches > rollupBatchMinBytes/2 {
			n := min(batches, rollupBatchMinBytes+g.rng.IntN(rollupBatchMaxBytes-rollupBatchMinBytes))
			tx, err := c.txs.batchTx(c.baseFee, n)
			if err != nil {
				return err
			}
			if size+4+len(tx) > g.p.MaxBlockBytes {
				break
			}
			payload.Transactions = append(payload.Transactions, tx)
			size += 4 + len(tx)
			batches -= n
		}
		// Batches land anywhere in the block.
		g.rng.Shuffle(len(payload.Transactions), func(i, j int) {
			payload.Transactions[i], payload.Transactions[j] = payload.Transactions[j], payload.Transactions[i]
		})
	}
	for size < target {
		tx, err := c.txs.tx(c.baseFee)
		if err != nil {
			return err
		}
		if size+4+len(tx) > g.p.MaxBlockBytes {
			break
		}
		payload.Transactions = append(payload.Transactions, tx)
		size += 4 + len(tx)
	}
	gasUsed := float64(gasMedian) * math.Exp(g.p.GasUsedSigma*z)
	payload.GasUsed = min(uint64(gasUsed), g.p.GasLimit)

	bodyRoot, err := body.HashTreeRoot()
	if err != nil {
		return fmt.Errorf("block body root: %w", err)
	}
	header := &phase0.SignedBeaconBlockHeader{
		Message: &phase0.BeaconBlockHeader{
			Slot: slot, ProposerIndex: signed.Message.ProposerIndex,
			ParentRoot: signed.Message.ParentRoot, StateRoot: signed.Message.StateRoot, BodyRoot: bodyRoot,
		},
		Signature: signed.Signature,
	}
	root, err := header.Message.HashTreeRoot()
	if err != nil {
		return fmt.Errorf("block root: %w", err)
	}
	buf, err := signed.MarshalSSZTo(g.sszBuf[:0])
	if err != nil {
		return fmt.Errorf("signed beacon block: %w", err)
	}
	g.sszBuf = buf
	if len(buf) != size {
		return fmt.Errorf("signed beacon block: %d bytes, size accounting says %d", len(buf), size)
	}
	g.emit(i, at, gossip.Block, g.topics.block, buf)

	g.head = root
	c.parentHash = payload.BlockHash
	c.blockNumber++
	// EIP-1559 and EIP-4844 style drift, kept in a mainnet-like range.
	c.baseFee = min(max(c.baseFee*uint64(1000+g.rng.IntN(251)-125)/1000, 100_000_000), 50_000_000_000)
	if t := g.p.BlobTarget; blobs > t {
		c.excessBlobGas += uint64(blobs-t) * gasPerBlob
	} else {
		c.excessBlobGas -= min(c.excessBlobGas, uint64(t-blobs)*gasPerBlob)
	}
	if blobs > 0 && !g.skipColumns {
		return g.columns(i, at, header, commitments)
	}
	return nil
}

// blockAttestations packs the previous slots' votes: one aggregate per AttestationData of the
// previous slot over all its committees, then a few stragglers from older slots over a few
// committees each, at most MAX_ATTESTATIONS_ELECTRA.
func (g *Generator) blockAttestations() []*electra.Attestation {
	out := []*electra.Attestation{}
	if len(g.recentData) == 0 {
		return out
	}
	mk := func(data *phase0.AttestationData, committees []int, share float64) *electra.Attestation {
		a := &electra.Attestation{Data: data, CommitteeBits: bitfield.NewBitvector64()}
		n := 0
		for _, c := range committees {
			a.CommitteeBits.SetBitAt(uint64(c), true)
			n += g.committeeSizes[c]
		}
		a.AggregationBits = g.bitlist(n, share)
		g.fill(a.Signature[:])
		return a
	}
	all := seq(len(g.committeeSizes))
	prev := g.recentData[len(g.recentData)-1]
	out = append(out, mk(prev[0], all, g.p.BitsSetShare))
	for _, d := range prev[1:] {
		out = append(out, mk(d, g.someCommittees(), 0.1))
	}
	extra := g.rng.IntN(maxBlockAttestations - len(out) + 1)
	for range extra {
		older := g.recentData[g.rng.IntN(len(g.recentData))]
		out = append(out, mk(older[g.rng.IntN(len(older))], g.someCommittees(), 0.05))
	}
	return out
}

// someCommittees returns 1–40 distinct committee indices, ascending: since Electra a
// proposer packs one AttestationData's votes from many committees into one attestation, so
// an older slot's stragglers span many committees with few bits each (this brings the
// consensus part to Electra's ≈ 12 KB).
func (g *Generator) someCommittees() []int {
	n := len(g.committeeSizes)
	var set bitfield.Bitvector64 = bitfield.NewBitvector64()
	k := 1 + g.rng.IntN(min(40, n))
	for set.Count() < uint64(k) {
		set.SetBitAt(uint64(g.rng.IntN(n)), true)
	}
	out := make([]int, 0, k)
	for c := range n {
		if set.BitAt(uint64(c)) {
			out = append(out, c)
		}
	}
	return out
}

// columns emits the block's 128 DataColumnSidecars shortly after the block: random cells and
// proofs, the block's commitments, header and signature, one inclusion proof for all.
func (g *Generator) columns(i uint64, blockAt time.Duration, header *phase0.SignedBeaconBlockHeader, commitments []deneb.KZGCommitment) error {
	sc := &DataColumnSidecar{
		Column:            make([]Cell, len(commitments)),
		KZGCommitments:    commitments,
		KZGProofs:         make([]deneb.KZGProof, len(commitments)),
		SignedBlockHeader: header,
	}
	for k := range sc.KZGCommitmentsInclusionProof {
		g.fill(sc.KZGCommitmentsInclusionProof[k][:])
	}
	for col := range numberOfColumns {
		sc.Index = uint64(col)
		for k := range sc.Column {
			g.fillCell(&sc.Column[k])
			g.fill(sc.KZGProofs[k][:])
			sc.KZGProofs[k][0] = 0x80 | sc.KZGProofs[k][0]&0x1f
		}
		buf, err := sc.MarshalSSZTo(g.sszBuf[:0])
		if err != nil {
			return err
		}
		g.sszBuf = buf
		at := blockAt + 20*time.Millisecond + g.delay(150*time.Millisecond, 0)
		g.emit(i, at, gossip.DataColumn, g.topics.column[col%gossip.DataColumnSubnets], buf)
	}
	return nil
}

// fillCell fills a cell with random field elements: 32-byte big-endian values below the
// BLS12-381 scalar modulus (0x73ed…), as an erasure-coded cell of rollup data is.
func (g *Generator) fillCell(c *Cell) {
	g.fill(c[:])
	for e := 0; e < bytesPerCell; e += 32 {
		c[e] %= 0x73
	}
}
