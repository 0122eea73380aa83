package workload

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/holiman/uint256"

	"github.com/streamsim/streamsim/gossip"
)

// Profile is the set of topics one node subscribes to.
type Profile struct {
	Name string
	// AttestationSubnets, SyncSubnets and Columns are the subscribed subnets, sorted.
	AttestationSubnets []int
	SyncSubnets        []int
	Columns            []int
	wantNames          map[string]bool
}

// ProfileNames lists the profiles ParseProfile knows.
var ProfileNames = []string{"all-subnets", "default", "supernode"}

// profileNodeID is the node id whose custody columns the profiles use (get_custody_groups
// is a function of the node id; any fixed id gives a representative set).
var profileNodeID = uint256.NewInt(0)

// ParseProfile returns a named profile:
//
//	all-subnets  64 attestation subnets, 4 sync subnets, custody 8 (the recording's node)
//	default      2 attestation subnets, no sync subnets, custody 4 (a non-validating node)
//	supernode    all-subnets with all 128 columns (the live check's hub)
//
// Every profile has the global topics: beacon_block, beacon_aggregate_and_proof and
// sync_committee_contribution_and_proof.
func ParseProfile(name string) (Profile, error) {
	switch name {
	case "all-subnets":
		return newProfile(name, seq(gossip.AttestationSubnets), seq(gossip.SyncCommitteeSubnets), 8)
	case "default":
		// compute_subscribed_subnets gives a node SUBNETS_PER_NODE = 2 consecutive subnets.
		return newProfile(name, []int{0, 1}, nil, 4)
	case "supernode":
		return newProfile(name, seq(gossip.AttestationSubnets), seq(gossip.SyncCommitteeSubnets), numberOfColumns)
	}
	return Profile{}, fmt.Errorf("unknown profile %q (allowed: %s)", name, strings.Join(ProfileNames, ", "))
}

// WithCustody returns the profile with its column subscriptions replaced by the custody
// columns of custodyGroups groups (4..128).
func (p Profile) WithCustody(custodyGroups int) (Profile, error) {
	return newProfile(p.Name, p.AttestationSubnets, p.SyncSubnets, custodyGroups)
}

func newProfile(name string, att, sync []int, custody int) (Profile, error) {
	if custody < 0 || custody > numberOfColumns {
		return Profile{}, fmt.Errorf("custody %d: want 0..%d", custody, numberOfColumns)
	}
	p := Profile{
		Name:               name,
		AttestationSubnets: slices.Clone(att),
		SyncSubnets:        slices.Clone(sync),
		Columns:            CustodyColumns(profileNodeID, custody),
	}
	p.wantNames = map[string]bool{
		gossip.TopicBeaconBlock:       true,
		gossip.TopicAggregateAndProof: true,
		gossip.TopicContribution:      true,
	}
	for _, s := range p.AttestationSubnets {
		p.wantNames[gossip.AttestationTopic(s)] = true
	}
	for _, s := range p.SyncSubnets {
		p.wantNames[gossip.SyncCommitteeTopic(s)] = true
	}
	for _, c := range p.Columns {
		p.wantNames[gossip.DataColumnTopic(c)] = true
	}
	return p, nil
}

// Topics returns the profile's full topics for a fork digest, sorted.
func (p Profile) Topics(forkDigest string) []string {
	out := make([]string, 0, len(p.wantNames))
	for name := range p.wantNames {
		out = append(out, gossip.Topic(forkDigest, name))
	}
	slices.Sort(out)
	return out
}

// Wants reports whether the profile subscribes to a full topic (of any fork digest).
func (p Profile) Wants(topic string) bool {
	_, name, err := gossip.ParseTopic(topic)
	return err == nil && p.wantNames[name]
}

// CustodyColumns is the spec's get_custody_groups for a node id, mapped to columns with
// compute_columns_for_custody_group (one column per group on mainnet), sorted.
func CustodyColumns(nodeID *uint256.Int, groups int) []int {
	if groups >= numberOfColumns {
		return seq(numberOfColumns)
	}
	id := nodeID.Clone()
	seen := map[int]bool{}
	out := make([]int, 0, groups)
	one := uint256.NewInt(1)
	for len(out) < groups {
		le := id.Bytes32() // big-endian
		slices.Reverse(le[:])
		h := sha256.Sum256(le[:])
		g := int(binary.LittleEndian.Uint64(h[:8]) % numberOfColumns)
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
		id.Add(id, one) // wraps at 2^256, as the spec's overflow rule
	}
	slices.Sort(out)
	return out
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
