package workload

import (
	"slices"
	"testing"

	"github.com/holiman/uint256"

	"github.com/streamsim/streamsim/gossip"
)

func TestProfiles(t *testing.T) {
	const digest = "8c9f62fe"
	cases := []struct {
		name                string
		topics, att, sync   int
		columns             int
		wantAtt, wantNotAtt int
		wantCol, wantNotCol int
	}{
		{"all-subnets", 64 + 4 + 8 + 3, 64, 4, 8, 63, -1, 17, 18},
		{"default", 2 + 4 + 3, 2, 0, 4, 1, 2, 87, 19},
		{"supernode", 64 + 4 + 128 + 3, 64, 4, 128, 0, -1, 127, -1},
	}
	for _, c := range cases {
		p, err := ParseProfile(c.name)
		if err != nil {
			t.Fatal(err)
		}
		topics := p.Topics(digest)
		if len(topics) != c.topics || len(p.AttestationSubnets) != c.att || len(p.SyncSubnets) != c.sync || len(p.Columns) != c.columns {
			t.Errorf("%s: %d topics, %d/%d/%d subnets", c.name, len(topics), len(p.AttestationSubnets), len(p.SyncSubnets), len(p.Columns))
		}
		for _, topic := range topics {
			if !p.Wants(topic) || gossip.TopicCategory(topic) == gossip.Other {
				t.Errorf("%s: topic %s not wanted or not consensus", c.name, topic)
			}
		}
		for _, name := range []string{gossip.TopicBeaconBlock, gossip.TopicAggregateAndProof, gossip.TopicContribution} {
			if !p.Wants(gossip.Topic("01020304", name)) {
				t.Errorf("%s: misses %s", c.name, name)
			}
		}
		if !p.Wants(gossip.Topic(digest, gossip.AttestationTopic(c.wantAtt))) || !p.Wants(gossip.Topic(digest, gossip.DataColumnTopic(c.wantCol))) {
			t.Errorf("%s: misses a subnet it should have", c.name)
		}
		if c.wantNotAtt >= 0 && p.Wants(gossip.Topic(digest, gossip.AttestationTopic(c.wantNotAtt))) {
			t.Errorf("%s: wants attestation subnet %d", c.name, c.wantNotAtt)
		}
		if c.wantNotCol >= 0 && p.Wants(gossip.Topic(digest, gossip.DataColumnTopic(c.wantNotCol))) {
			t.Errorf("%s: wants column %d", c.name, c.wantNotCol)
		}
		if p.Wants("/meshsub/x") || p.Wants(gossip.Topic(digest, "voluntary_exit")) {
			t.Errorf("%s: wants a foreign topic", c.name)
		}
	}
	if _, err := ParseProfile("validator"); err == nil {
		t.Fatal("unknown profile accepted")
	}
	p, _ := ParseProfile("default")
	p16, err := p.WithCustody(16)
	if err != nil || len(p16.Columns) != 16 || len(p16.AttestationSubnets) != 2 {
		t.Fatalf("with custody 16: %v %v", p16.Columns, err)
	}
}

// TestCustodyColumns compares get_custody_groups with values computed independently
// (Python hashlib, the spec's definition), including the wrap at UINT256_MAX.
func TestCustodyColumns(t *testing.T) {
	max := new(uint256.Int).SetAllOne()
	cases := []struct {
		id     *uint256.Int
		groups int
		want   []int
	}{
		{uint256.NewInt(0), 4, []int{1, 17, 87, 102}},
		{uint256.NewInt(0), 8, []int{1, 17, 19, 42, 75, 87, 102, 117}},
		{new(uint256.Int).SubUint64(max, 1), 4, []int{1, 47, 87, 102}},
	}
	for _, c := range cases {
		if got := CustodyColumns(c.id, c.groups); !slices.Equal(got, c.want) {
			t.Errorf("node %v, %d groups: %v, want %v", c.id, c.groups, got, c.want)
		}
	}
	if got := CustodyColumns(uint256.NewInt(5), 128); len(got) != 128 || got[127] != 127 {
		t.Errorf("supernode custody %v", got)
	}
}
