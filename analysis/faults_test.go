package analysis

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
)

// writeNode writes a node's summary and message log into dir/<group>/0/.
func writeNode(t *testing.T, dir string, s *result.NodeSummary, events []result.MessageEvent) {
	t.Helper()
	d := filepath.Join(dir, s.Group, "0")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if events != nil {
		l, err := result.CreateMessageLog(filepath.Join(d, result.MessagesFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			l.Add(string(e.ID[:]), e.At, e.Published, e.Topic)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		s.Messages = result.MessagesFile
	}
	if err := result.WriteSummary(filepath.Join(d, result.SummaryFile), s); err != nil {
		t.Fatal(err)
	}
}

func msgID(b byte) (id [result.IDBytes]byte) {
	for i := range id {
		id[i] = b + byte(i)
	}
	return id
}

// Every case of the accounting: once, twice, missing in an outage window, missing with a
// drop, missing without a reason, an id nobody published; and an outage that never ends.
func TestFaultAccounting(t *testing.T) {
	dir := t.TempDir()
	start := time.Unix(1000, 0)
	at := func(s float64) int64 { return start.Add(time.Duration(s * float64(time.Second))).UnixNano() }
	const topic = "/eth2/8c9f62fe/beacon_attestation_0/ssz_snappy"
	var pubs []result.MessageEvent
	for i := 1; i <= 6; i++ {
		pubs = append(pubs, result.MessageEvent{ID: msgID(byte(i * 10)), At: at(float64(5 * i)), Published: true, Topic: topic})
	}
	base := func(group, role, peer string) *result.NodeSummary {
		return &result.NodeSummary{Scenario: "hub-leaves", Group: group, Role: role, PeerID: peer, Start: start, TimeScale: 12,
			FaultSchedule: "3:reset:leaf", Topics: []string{topic}}
	}
	writeNode(t, dir, base("publishers", result.RolePublisher, "P"), pubs)
	hub := base("hub", result.RoleHub, "H")
	hub.LostMessages = []result.LostMessages{{Reason: result.LostDropped, Peer: "R", IDs: []string{hex.EncodeToString(pubs[4].ID[:])}}}
	hub.Faults = []result.FaultEvent{{Spec: "3:reset:leaf", Kind: "reset", AtNs: at(15), Applied: true, Note: "cut"}}
	writeNode(t, dir, hub, []result.MessageEvent{})
	leaf := base("leaf", result.RoleLeaf, "R")
	leaf.Receiver = true
	leaf.Outages = []result.Outage{{Peer: "H", FromNs: at(15), ToNs: at(15.2), Cause: "reset by peer"}}
	dl := func(i int, s float64) result.MessageEvent { return result.MessageEvent{ID: pubs[i].ID, At: at(s)} }
	writeNode(t, dir, leaf, []result.MessageEvent{
		dl(0, 5.01),             // id 1 once
		dl(1, 10.01), dl(1, 11), // id 2 twice
		// id 3 (15 s) missing: the outage at 15 s
		// id 4 (20 s) missing: no reason
		// id 5 (25 s) missing: dropped for R at the hub
		dl(5, 30.01), // id 6 once
		{ID: msgID(200), At: at(31)},
	})

	a, err := LoadFaultAccounting(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Receivers) != 1 || a.OK || len(a.Faults) != 1 || a.Faults[0].AtS != 15 || a.WindowMs != 1000 {
		t.Fatalf("accounting %+v", a)
	}
	r := a.Receivers[0]
	want := ReceiverAccount{Published: 6, Once: 3, MissingOutage: 1, Unexplained: 1, Duplicates: 1, Unknown: 1}
	if r.Published != want.Published || r.Once != want.Once || r.MissingOutage != want.MissingOutage || r.Unexplained != want.Unexplained ||
		r.Duplicates != want.Duplicates || r.Unknown != want.Unknown || r.MissingDropped["dropped_rpc at hub/0"] != 1 || r.OK {
		t.Fatalf("account %+v", r)
	}
	// Connected parity: ids 1, 2, 4, 5, 6 were not exposed; 1 and 6 arrived once.
	if c := r.Connected[gossip.Attestation]; c.Published != 5 || c.Received != 2 || c.Identical {
		t.Errorf("connected parity %+v", c)
	}
	var b strings.Builder
	if err := WriteFaultAccounting(&b, a); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"accounting: FAIL", "link to hub/0 down from +15.000 s to +15.200 s (200 ms): reset by peer", "1 missing: dropped_rpc at hub/0", "delivered 2 times", "never published"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, b.String())
		}
	}

	// The same leaf with everything explained passes; an outage that never ends does not.
	leaf.Outages = append(leaf.Outages, result.Outage{Peer: "H", FromNs: at(19.5), ToNs: at(20.5), Cause: "disconnected"})
	writeNode(t, dir, leaf, []result.MessageEvent{dl(0, 5.01), dl(1, 10.01), dl(5, 30.01)})
	if a, _ = LoadFaultAccounting(dir); !a.OK {
		t.Fatalf("explained run fails: %v", a.Problems)
	}
	leaf.Outages[1].ToNs = 0
	writeNode(t, dir, leaf, []result.MessageEvent{dl(0, 5.01), dl(1, 10.01), dl(5, 30.01)})
	if a, _ = LoadFaultAccounting(dir); a.OK || !strings.Contains(strings.Join(a.Problems, ";"), "never came back") {
		t.Fatalf("a link that never came back: %v", a.Problems)
	}
}
