// Package workload generates synthetic mainnet-shaped Ethereum consensus gossip: real SSZ
// messages (Electra/Fulu types) in their ssz_snappy encoding, scheduled slot by slot.
//
// A Generator produces, for each 12-second slot, every message the whole network publishes on
// the consensus topics (all 64 attestation subnets, all 128 column subnets, …), each with its
// send time in the slot, its full topic and its payload. A Profile selects the topics one node
// subscribes to. Everything is derived from Params, including the random source: the same
// Params give byte-identical messages in the same order.
//
// Counts follow mainnet's rate model at about 1.0 M active validators (64 committees per
// slot, 512 sync committee members); layouts are the Electra/Fulu SSZ containers; payloads
// are Snappy block-encoded as on gossip:
//
//	attestations  validators/32 × participation per slot (SingleAttestation, 240 B), at ~4 s
//	aggregates    what the subset rule lets through of ~16 aggregators per committee, at ~8 s
//	blocks        block probability (SignedBeaconBlock), at 1.5–2.5 s; MEV-Boost or locally
//	              built, each with its own lognormal size and gas used (Params.Era)
//	columns       128 DataColumnSidecars per block with blobs (the era's blob schedule),
//	              just after the block
//	sync          sync committee messages at ~4 s; contributions as aggregates, at ~8 s
//
// "participation" is the share of attesting committee members whose SingleAttestation is
// observed on gossip by a node subscribed to all subnets; see Params.Participation.
//
// An era (Params.ApplyEra, default "2026-05") sets the gas limit, builder mix, block sizes,
// blob schedule and, before blobs, rollup batches in calldata, together. Block content
// (transaction recipients, selectors and calldata words) is drawn from heavy-tailed
// populations fitted to the content statistics of consecutive mainnet blocks, checked on
// their era; ContentStats measures them (docs/workload-content.md).
package workload
