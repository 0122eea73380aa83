package gossip

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Topic names of the consensus gossip domain (consensus-specs p2p-interface, Electra/Fulu).
const (
	TopicBeaconBlock       = "beacon_block"
	TopicAggregateAndProof = "beacon_aggregate_and_proof"
	TopicContribution      = "sync_committee_contribution_and_proof"
	prefixAttestation      = "beacon_attestation_"
	prefixSyncCommittee    = "sync_committee_"
	prefixDataColumn       = "data_column_sidecar_"
	encodingSuffix         = "ssz_snappy"
)

// Subnet counts of the consensus gossip domain.
const (
	AttestationSubnets   = 64
	SyncCommitteeSubnets = 4
	DataColumnSubnets    = 128
)

// AttestationTopic, SyncCommitteeTopic and DataColumnTopic name the subnet topics.
func AttestationTopic(subnet int) string   { return prefixAttestation + strconv.Itoa(subnet) }
func SyncCommitteeTopic(subnet int) string { return prefixSyncCommittee + strconv.Itoa(subnet) }
func DataColumnTopic(subnet int) string    { return prefixDataColumn + strconv.Itoa(subnet) }

// Topic returns the full gossip topic /eth2/<fork digest>/<name>/ssz_snappy. forkDigest is
// 8 lower-case hex characters.
func Topic(forkDigest, name string) string {
	return "/eth2/" + forkDigest + "/" + name + "/" + encodingSuffix
}

// ParseTopic splits a full gossip topic into its fork digest and name.
func ParseTopic(topic string) (forkDigest, name string, err error) {
	parts := strings.Split(topic, "/")
	// "", "eth2", digest, name, encoding
	if len(parts) != 5 || parts[0] != "" || parts[1] != "eth2" || parts[4] != encodingSuffix {
		return "", "", fmt.Errorf("topic %q is not of the form /eth2/<fork digest>/<name>/ssz_snappy", topic)
	}
	return parts[2], parts[3], nil
}

// NameCategory returns the category of a topic name (without the /eth2/… wrapping).
func NameCategory(name string) Category {
	switch {
	case name == TopicBeaconBlock:
		return Block
	case name == TopicAggregateAndProof:
		return Aggregate
	case name == TopicContribution:
		return SyncCommittee
	case subnetOf(name, prefixAttestation, AttestationSubnets) >= 0:
		return Attestation
	case subnetOf(name, prefixSyncCommittee, SyncCommitteeSubnets) >= 0:
		return SyncCommittee
	case subnetOf(name, prefixDataColumn, DataColumnSubnets) >= 0:
		return DataColumn
	}
	return Other
}

// TopicCategory returns the category of a full gossip topic; topics outside the consensus
// domain are Other.
func TopicCategory(topic string) Category {
	if c, ok := (*topicCategories.Load())[topic]; ok {
		return c
	}
	return cacheCategory(topic)
}

// topicBytesCategory is TopicCategory of a topic still in its frame, without copying it
// unless the cache misses.
func topicBytesCategory(topic []byte) Category {
	if c, ok := (*topicCategories.Load())[string(topic)]; ok {
		return c
	}
	return cacheCategory(string(topic))
}

// topicCategories caches TopicCategory: a run has a few hundred topics, and the meters ask
// for the category of every message in every frame and the tracer of every delivery.
// Readers load the map without a lock; a new topic replaces it with a copy. It stops growing
// at maxCachedTopics, so that topics made up by a hostile peer cannot grow it without bound.
var (
	topicCategories   atomic.Pointer[map[string]Category]
	topicCategoriesMu sync.Mutex
)

const maxCachedTopics = 1024

func init() { topicCategories.Store(&map[string]Category{}) }

func cacheCategory(topic string) Category {
	c := Other
	if _, name, err := ParseTopic(topic); err == nil {
		c = NameCategory(name)
	}
	topicCategoriesMu.Lock()
	defer topicCategoriesMu.Unlock()
	old := *topicCategories.Load()
	if _, ok := old[topic]; !ok && len(old) < maxCachedTopics {
		m := maps.Clone(old)
		m[topic] = c
		topicCategories.Store(&m)
	}
	return c
}

// Subnet returns the subnet number of a subnet topic name, or -1 for other names.
func Subnet(name string) int {
	for _, p := range []struct {
		prefix string
		n      int
	}{{prefixAttestation, AttestationSubnets}, {prefixSyncCommittee, SyncCommitteeSubnets}, {prefixDataColumn, DataColumnSubnets}} {
		if s := subnetOf(name, p.prefix, p.n); s >= 0 {
			return s
		}
	}
	return -1
}

func subnetOf(name, prefix string, n int) int {
	if !strings.HasPrefix(name, prefix) {
		return -1
	}
	digits := name[len(prefix):]
	if digits == "" || (len(digits) > 1 && digits[0] == '0') {
		return -1
	}
	s, err := strconv.Atoi(digits)
	if err != nil || s < 0 || s >= n {
		return -1
	}
	return s
}
