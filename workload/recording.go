package workload

import "github.com/streamsim/streamsim/gossip"

// Recorded holds what the proposal's mainnet recording (docs/inputs.md §1, §3, §4) says about
// one category, for comparison with generated traffic. Zero means "not given".
type Recorded struct {
	// MessagesPerSlot counts unique messages per slot on an all-subnets node.
	MessagesPerSlot float64
	// SSZBytes and SnappyRatio (raw/Snappy) are per-message figures.
	SSZBytes    float64
	SnappyRatio float64
	// MiBPerHour is inbound traffic per hour for the profile, duplicates included;
	// Copies is the implied number of copies received per unique message.
	MiBPerHour float64
	Copies     float64
}

// RecordingFigures returns the recording's figures for a profile's view: "all-subnets" and
// "default" have traffic per hour; counts and sizes are for the all-subnets node.
func RecordingFigures(profile string) map[gossip.Category]Recorded {
	out := map[gossip.Category]Recorded{
		// Counts: the live check's 200 slots (docs/inputs.md §1), messages and contributions
		// together for sync committee.
		gossip.Attestation:   {MessagesPerSlot: 4_817_407.0 / 200, SSZBytes: 240, SnappyRatio: 240.0 / 226, Copies: 1.6},
		gossip.Aggregate:     {MessagesPerSlot: 18_962.0 / 200, SSZBytes: 506, SnappyRatio: 1 / 0.97, Copies: 9},
		gossip.Block:         {MessagesPerSlot: 199.0 / 200, SnappyRatio: 2.37, Copies: 9},
		gossip.DataColumn:    {MessagesPerSlot: 1_358.0 / 200, SnappyRatio: 1, Copies: 2},
		gossip.SyncCommittee: {MessagesPerSlot: 80_046.0 / 200, Copies: 1.7},
	}
	var mib map[gossip.Category]float64
	switch profile {
	case "all-subnets":
		mib = map[gossip.Category]float64{gossip.Attestation: 3188, gossip.Aggregate: 138, gossip.Block: 154, gossip.DataColumn: 109, gossip.SyncCommittee: 45}
	case "default":
		mib = map[gossip.Category]float64{gossip.Attestation: 107, gossip.Aggregate: 138, gossip.Block: 154, gossip.DataColumn: 109, gossip.SyncCommittee: 7.5}
	}
	for c, v := range mib {
		r := out[c]
		r.MiBPerHour = v
		out[c] = r
	}
	if profile != "all-subnets" {
		// Per-slot counts were recorded on the all-subnets node only.
		for c, r := range out {
			if c == gossip.Attestation || c == gossip.DataColumn || c == gossip.SyncCommittee {
				r.MessagesPerSlot = 0
				out[c] = r
			}
		}
	}
	return out
}
