package workload

import (
	"encoding/hex"
	"fmt"
	"time"
)

// SlotDuration is the mainnet slot length; Message.At offsets are in unscaled slot time.
const SlotDuration = 12 * time.Second

// Consensus constants of the mainnet preset used by the rate model.
const (
	slotsPerEpoch        = 32
	maxCommitteesPerSlot = 64
	targetCommitteeSize  = 128
	syncCommitteeSize    = 512
	syncSubcommitteeSize = syncCommitteeSize / 4
	numberOfColumns      = 128
	maxBlockAttestations = 8 // MAX_ATTESTATIONS_ELECTRA
	// TARGET_AGGREGATORS_PER_COMMITTEE and TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE
	targetAggregatorsPerCommittee        = 16
	targetAggregatorsPerSyncSubcommittee = 16
	maxWithdrawals                       = 16 // MAX_WITHDRAWALS_PER_PAYLOAD
	maxBlobCommitments                   = 4096
	inclusionProofDepth                  = 4 // KZG_COMMITMENTS_INCLUSION_PROOF_DEPTH
	bytesPerCell                         = 2048
	mainnetChainID                       = 1
	mainnetGenesisUnixTime               = 1606824023
)

// Params are the rate model's knobs. DefaultParams reproduces docs/inputs.md §4; every field
// is part of the determinism contract: equal Params give byte-identical output.
type Params struct {
	// Seed seeds every random choice.
	Seed int64
	// ForkDigest is the 8-hex-character fork digest in topics.
	ForkDigest string
	// FirstSlot is the slot number of the first generated slot (it appears in message
	// contents; At is measured from its start).
	FirstSlot uint64

	// Validators is the number of active validators; committees are validators/32 per slot
	// split into 64 committees.
	Validators int
	// Participation is the share of a slot's committee members whose SingleAttestation is
	// observed on gossip by a node subscribed to every subnet. On mainnet the recording saw
	// 24 087 per slot against 31 250 committee members at 1.0 M validators (0.771), well below
	// on-chain participation (~0.97); the default calibrates to the observation.
	Participation float64
	// HeadVoteShare is the share of attestations (and aggregates) carrying the slot's head
	// vote; the rest carry a second AttestationData (a late block seen as missing).
	HeadVoteShare float64
	// SecondDataProbability is the probability that a slot has a second AttestationData at
	// all; the minority share is concentrated in those slots.
	SecondDataProbability float64
	// ThirdDataProbability is the probability that a slot also has a third, rare value.
	ThirdDataProbability float64
	// BitsSetShare is the share of a committee's members whose vote is timely for its
	// aggregators: the bit density of aggregates, contributions, the block's attestations and
	// sync aggregate. Default 0.95: participation ≈ 0.96 × head accuracy ≈ 0.99
	// (docs/workload-content.md).
	BitsSetShare float64
	// AggregatorCompleteShare is the share of aggregators (and sync contribution aggregators)
	// that hold every timely vote; the others miss the latest AggregatorMissShare × x of the
	// votes, x exponential with mean 1. With the gossip subset rule they decide how many
	// aggregates propagate; the defaults give docs/inputs.md §4's ~1.5 per committee.
	AggregatorCompleteShare float64
	AggregatorMissShare     float64
	// SyncAggregatorCompleteShare is AggregatorCompleteShare for sync contributions (one
	// AttestationData per slot there, so fewer distinct contributions per subcommittee).
	SyncAggregatorCompleteShare float64
	// SyncMessages is the number of sync committee messages per slot (out of 512 members).
	// The default 394 plus the ~6 contributions that propagate gives the recording's 400.2
	// sync-committee messages per slot (80 046 in 200 slots).
	SyncMessages int

	// Era names the date whose gas limit, builder mix, block sizes, blob schedule and rollup
	// calldata the fields below were set from (ApplyEra); "" if they were set by hand.
	Era string

	// BlockProbability is the probability that a slot has a block.
	BlockProbability float64
	// MEVBlockShare is the share of blocks built by MEV-Boost builders (the builder's fee
	// recipient and extra data); the rest are built locally.
	MEVBlockShare float64
	// BlockMedianBytes (MEV-Boost blocks) and LocalBlockMedianBytes (locally built) with
	// BlockSigma describe the lognormal SSZ size of a SignedBeaconBlock; sizes are clamped
	// to [the block without transactions, MaxBlockBytes]. BlockSigma 0.39 (defaultBlockSigma;
	// era 2023-09 keeps 0.43) puts the p99 of blocks on the wire near the source's 184 kB
	// with the 2025 content and its calls repeated from earlier blocks (1 000 blocks, two
	// seeds: 173 and 187 kB; 170 and 178 kB at 0.38, 196 and 199 kB at 0.40, 205 and 198 kB
	// at 0.43).
	BlockMedianBytes      int
	LocalBlockMedianBytes int
	BlockSigma            float64
	// MEVGasUsed and LocalGasUsed are the median gas used of the two kinds of block; a
	// block's gas used follows its size's lognormal draw (σ GasUsedSigma), at most GasLimit.
	MEVGasUsed, LocalGasUsed uint64
	GasUsedSigma             float64
	// RollupCalldataShare is the share of transaction bytes that is rollup batch data in
	// calldata (random, as compressed batches are): eras before EIP-4844 only.
	RollupCalldataShare float64
	// MaxBlockBytes is the largest block: the gossip MAX_PAYLOAD_SIZE.
	MaxBlockBytes int
	// BlobBlockShare is the share of blocks that carry blobs; those carry BlobsMin..BlobsMax
	// blobs (uniform), never more than MaxBlobsPerBlock.
	BlobBlockShare   float64
	BlobsMin         int
	BlobsMax         int
	MaxBlobsPerBlock int
	// BlobTarget is the blob schedule's target, around which the blob base fee moves.
	BlobTarget int
	// GasLimit is the execution block gas limit.
	GasLimit uint64
}

// DefaultParams returns mainnet-shaped parameters of DefaultEra.
func DefaultParams() Params {
	p := Params{
		Seed:                        1,
		ForkDigest:                  "8c9f62fe",
		FirstSlot:                   13_000_000,
		Validators:                  1_000_000,
		Participation:               0.7708,
		HeadVoteShare:               0.97,
		SecondDataProbability:       0.25,
		ThirdDataProbability:        0.02,
		BitsSetShare:                0.95,
		AggregatorCompleteShare:     0.78,
		AggregatorMissShare:         0.02,
		SyncAggregatorCompleteShare: 0.4,
		SyncMessages:                394,
		BlockProbability:            0.995,
		BlockSigma:                  defaultBlockSigma,
		GasUsedSigma:                0.25,
		MaxBlockBytes:               10 << 20,
	}
	if err := p.ApplyEra(DefaultEra); err != nil {
		panic(err)
	}
	return p
}

// Validate reports the first parameter that is out of range.
func (p Params) Validate() error {
	if b, err := hex.DecodeString(p.ForkDigest); err != nil || len(b) != 4 {
		return fmt.Errorf("fork digest %q: want 8 hex characters", p.ForkDigest)
	}
	if p.Validators < slotsPerEpoch || p.Validators > 1<<26 {
		return fmt.Errorf("validators %d: want 32..%d", p.Validators, 1<<26)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"participation", p.Participation}, {"head vote share", p.HeadVoteShare},
		{"second data probability", p.SecondDataProbability}, {"third data probability", p.ThirdDataProbability},
		{"bits set share", p.BitsSetShare}, {"aggregator complete share", p.AggregatorCompleteShare},
		{"aggregator miss share", p.AggregatorMissShare}, {"sync aggregator complete share", p.SyncAggregatorCompleteShare}, {"block probability", p.BlockProbability},
		{"blob block share", p.BlobBlockShare}, {"MEV block share", p.MEVBlockShare},
		{"rollup calldata share", p.RollupCalldataShare},
	} {
		if !(f.v >= 0 && f.v <= 1) {
			return fmt.Errorf("%s %v: want 0..1", f.name, f.v)
		}
	}
	if p.HeadVoteShare < 1 && p.SecondDataProbability == 0 {
		return fmt.Errorf("head vote share %v below 1 needs a second data probability above 0", p.HeadVoteShare)
	}
	if p.SecondDataProbability > 0 && (1-p.HeadVoteShare)/p.SecondDataProbability > 0.5 {
		return fmt.Errorf("head vote share %v with second data probability %v puts the minority above half of a slot",
			p.HeadVoteShare, p.SecondDataProbability)
	}
	if p.SyncMessages < 0 || p.SyncMessages > syncCommitteeSize {
		return fmt.Errorf("sync messages %d: want 0..%d", p.SyncMessages, syncCommitteeSize)
	}
	if p.MaxBlockBytes < 4096 || p.MaxBlockBytes > 10<<20 {
		return fmt.Errorf("max block bytes %d: want 4096..%d", p.MaxBlockBytes, 10<<20)
	}
	if p.BlockMedianBytes <= 0 || p.BlockMedianBytes > p.MaxBlockBytes {
		return fmt.Errorf("block median bytes %d: want 1..%d", p.BlockMedianBytes, p.MaxBlockBytes)
	}
	if p.LocalBlockMedianBytes <= 0 || p.LocalBlockMedianBytes > p.MaxBlockBytes {
		return fmt.Errorf("local block median bytes %d: want 1..%d", p.LocalBlockMedianBytes, p.MaxBlockBytes)
	}
	if !(p.BlockSigma >= 0 && p.BlockSigma <= 3) {
		return fmt.Errorf("block sigma %v: want 0..3", p.BlockSigma)
	}
	if !(p.GasUsedSigma >= 0 && p.GasUsedSigma <= 3) {
		return fmt.Errorf("gas used sigma %v: want 0..3", p.GasUsedSigma)
	}
	if p.RollupCalldataShare > 0.9 {
		return fmt.Errorf("rollup calldata share %v: want 0..0.9", p.RollupCalldataShare)
	}
	if p.Era != "" {
		if _, err := LookupEra(p.Era); err != nil {
			return err
		}
	}
	if p.MaxBlobsPerBlock < 0 || p.MaxBlobsPerBlock > maxBlobCommitments {
		return fmt.Errorf("max blobs per block %d: want 0..%d", p.MaxBlobsPerBlock, maxBlobCommitments)
	}
	if p.BlobsMin < 0 || p.BlobsMax < p.BlobsMin || p.BlobsMax > p.MaxBlobsPerBlock {
		return fmt.Errorf("blobs %d..%d: want 0 ≤ min ≤ max ≤ max blobs per block (%d)", p.BlobsMin, p.BlobsMax, p.MaxBlobsPerBlock)
	}
	if p.GasLimit < 1_000_000 {
		return fmt.Errorf("gas limit %d: want at least 1000000", p.GasLimit)
	}
	if p.MEVGasUsed > p.GasLimit || p.LocalGasUsed > p.GasLimit {
		return fmt.Errorf("median gas used %d (MEV), %d (local): want at most the gas limit %d", p.MEVGasUsed, p.LocalGasUsed, p.GasLimit)
	}
	if p.BlobTarget < 0 || p.BlobTarget > p.MaxBlobsPerBlock {
		return fmt.Errorf("blob target %d: want 0..max blobs per block (%d)", p.BlobTarget, p.MaxBlobsPerBlock)
	}
	return nil
}

// committeeMembers is the number of validators assigned to attest in one slot.
func (p Params) committeeMembers() int { return p.Validators / slotsPerEpoch }

// committeesPerSlot is get_committee_count_per_slot.
func (p Params) committeesPerSlot() int {
	c := p.Validators / slotsPerEpoch / targetCommitteeSize
	return max(1, min(maxCommitteesPerSlot, c))
}

// AttestationsPerSlot is the model's mean number of SingleAttestations per slot.
func (p Params) AttestationsPerSlot() float64 {
	return float64(p.committeeMembers()) * p.Participation
}

// defaultBlockSigma is BlockSigma of DefaultParams and of every era that does not set its own.
const defaultBlockSigma = 0.39
