package workload

import (
	"fmt"
	"strings"
)

// Era is a date's mainnet: the inputs that change with forks and the gas limit, set together.
// Params.ApplyEra copies them into Params; Source says where each comes from.
type Era struct {
	Name string
	// GasLimit is the execution gas limit of the date.
	GasLimit uint64
	// MEVBlockShare is the share of blocks built by MEV-Boost builders; the rest are built
	// locally by the proposer's execution client.
	MEVBlockShare float64
	// MEVGasUsed and LocalGasUsed are the median gas used of the two kinds of block.
	MEVGasUsed, LocalGasUsed uint64
	// MEVBlockBytes and LocalBlockBytes are their median SSZ sizes (SignedBeaconBlock).
	MEVBlockBytes, LocalBlockBytes int
	// BlobTarget and BlobMax are the blob schedule (target and maximum blobs per block).
	BlobTarget, BlobMax int
	// RollupCalldataShare is the share of transaction bytes that is rollup batch data posted
	// as calldata (before EIP-4844 moved it to blobs).
	RollupCalldataShare float64
	// BlockSigma, when set, replaces the σ of the blocks' lognormal size (defaultBlockSigma).
	BlockSigma float64
	// Content names the model of ordinary transactions' content ("2023", "2025" or "2026"): the
	// real payloads its statistics were fitted to (docs/workload-content.md).
	Content string
	// Records lays the content model's long calls out as arrays of records (withRecords,
	// fitted to the in-call recurrence of the 100 consecutive payloads of 1 Feb 2026).
	Records bool
	// Source names where the figures come from.
	Source string
}

// DefaultEra is the era of DefaultParams.
const DefaultEra = "2026-05"

// blobBlockShare is the share of blocks that carry blobs once there are blobs (reference
// figure ~85 %, usage not verified against a 2026 source).
const blobBlockShare = 0.85

// eras are the known eras, oldest first.
var eras = []Era{
	{
		// The 14 consecutive blocks (18 090 205–218) whose content statistics the block
		// generator is checked against: before blobs, rollups posted batches as calldata.
		Name: "2023-09", GasLimit: 30_000_000,
		MEVBlockShare: 0.95, MEVGasUsed: 15_000_000, LocalGasUsed: 11_000_000 / 2,
		MEVBlockBytes: 165_000, LocalBlockBytes: 90_000,
		BlobTarget: 0, BlobMax: 0, RollupCalldataShare: 0.37, Content: "2023",
		// σ as when the era was fitted to the sample (the 2026 content's refit moved the others').
		BlockSigma: 0.43,
		Source: "gas limit 30 M (2023); no blobs (Capella, before Dencun); gas used at the EIP-1559 target; " +
			"sizes and rollup calldata share from the content statistics of mainnet blocks 18 090 205–218 (docs/workload-content.md); " +
			"builder share as 2026-05 (no 2023 figure taken); transaction content: model 2023, refitted to the same blocks",
	},
	{
		Name: "2025-06", GasLimit: 36_000_000,
		MEVBlockShare: 0.95, MEVGasUsed: 18_000_000, LocalGasUsed: 6_600_000,
		MEVBlockBytes: 99_000, LocalBlockBytes: 42_000,
		BlobTarget: 6, BlobMax: 9, Content: "2025",
		Source: "gas limit 36 M (Feb 2025); blobs 6/9 (Pectra, EIP-7691, 7 May 2025); " +
			"builder mix, gas used and sizes as 2026-05 scaled by the gas limit (EIP-1559 keeps gas used at half of it); " + content2025Source,
	},
	{
		Name: "2025-12", GasLimit: 60_000_000,
		MEVBlockShare: 0.95, MEVGasUsed: 30_000_000, LocalGasUsed: 11_000_000,
		MEVBlockBytes: 165_000, LocalBlockBytes: 70_000,
		BlobTarget: 10, BlobMax: 15, Content: "2025",
		Source: "gas limit 60 M (25 Nov 2025); blobs 10/15 (BPO1, 9 Dec 2025); builder mix, gas used and sizes as 2026-05; " + content2025Source,
	},
	{
		Name: "2026-02", GasLimit: 60_000_000,
		MEVBlockShare: 0.95, MEVGasUsed: 30_000_000, LocalGasUsed: 11_000_000,
		MEVBlockBytes: 165_000, LocalBlockBytes: 70_000,
		BlobTarget: 14, BlobMax: 21, Content: "2026",
		Source: "gas limit 60 M (25 Nov 2025); blobs 14/21 (BPO2, 7 Jan 2026); builder mix, gas used and sizes as 2026-05; " +
			"transaction content: model 2026, fitted to the 100 consecutive mainnet payloads 24 364 071-170 (1 Feb 2026; 28 of them in workload/payloadstat/testdata)",
	},
	{
		Name: "2026-05", GasLimit: 60_000_000,
		MEVBlockShare: 0.95, MEVGasUsed: 30_000_000, LocalGasUsed: 11_000_000,
		MEVBlockBytes: 165_000, LocalBlockBytes: 70_000,
		BlobTarget: 14, BlobMax: 21, Content: "2025",
		Source: "ethpandaops 2026-05 block-size-vs-propagation (50 318 blocks, 25 Apr–2 May 2026): MEV-Boost 95 % of blocks, " +
			"median SSZ 165 KB and 30 M gas (MEV), 70 KB and 11 M (local); gas limit 60 M (25 Nov 2025); blobs 14/21 (BPO2, 7 Jan 2026); " + content2025Source,
	},
}

// content2025Source says where the content of 2025 and later eras' transactions comes from.
const content2025Source = "transaction content: model 2025, fitted to mainnet payloads 22 162 263, 22 431 083-084 and 22 869 878 (2025, workload/payloadstat/testdata) within the block and to the 100 consecutive payloads 24 364 071-170 (1 Feb 2026) across blocks"

// Eras returns the known eras, oldest first.
func Eras() []Era { return append([]Era(nil), eras...) }

// EraNames are the names of the known eras, oldest first.
func EraNames() []string {
	names := make([]string, len(eras))
	for i, e := range eras {
		names[i] = e.Name
	}
	return names
}

// LookupEra returns the named era; an unknown name is an error naming the known ones.
func LookupEra(name string) (Era, error) {
	for _, e := range eras {
		if e.Name == name {
			return e, nil
		}
	}
	return Era{}, fmt.Errorf("unknown era %q: known eras are %s", name, strings.Join(EraNames(), ", "))
}

// ApplyEra sets the era's gas limit, builder mix, block sizes (medians and σ), blob schedule
// and rollup calldata in p. Blocks with blobs (BlobBlockShare of them) carry a count uniform in
// target−4 … target+2, never above the maximum: 10–16 at BPO2's 14/21.
func (p *Params) ApplyEra(name string) error {
	e, err := LookupEra(name)
	if err != nil {
		return err
	}
	p.Era = e.Name
	p.GasLimit = e.GasLimit
	p.MEVBlockShare = e.MEVBlockShare
	p.MEVGasUsed, p.LocalGasUsed = e.MEVGasUsed, e.LocalGasUsed
	p.BlockMedianBytes, p.LocalBlockMedianBytes = e.MEVBlockBytes, e.LocalBlockBytes
	p.BlockSigma = defaultBlockSigma
	if e.BlockSigma > 0 {
		p.BlockSigma = e.BlockSigma
	}
	p.BlobTarget, p.MaxBlobsPerBlock = e.BlobTarget, e.BlobMax
	p.RollupCalldataShare = e.RollupCalldataShare
	if e.BlobMax == 0 {
		p.BlobBlockShare, p.BlobsMin, p.BlobsMax = 0, 0, 0
		return nil
	}
	p.BlobBlockShare = blobBlockShare
	p.BlobsMin = max(1, e.BlobTarget-4)
	p.BlobsMax = min(e.BlobMax, e.BlobTarget+2)
	return nil
}

// contentFor is the transaction content model of p's era (with records if the era lays long
// calls out as records); parameters set by hand (no era) get the default era's.
func contentFor(p Params) *contentModel {
	if e, err := LookupEra(p.Era); err == nil {
		models := contentModels
		if e.Records {
			models = recordModels
		}
		if m, ok := models[e.Content]; ok {
			return m
		}
	}
	return &content2025
}
