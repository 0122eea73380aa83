package neighbourhood

import (
	"math"
	"strings"
	"testing"
	"time"

	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/peer"
)

// The mechanism's counts: a peer's heartbeats with IHAVE on a topic are counted once per
// heartbeat interval however many IHAVE RPCs it sends in one, the share is over the peer's
// heartbeats in the measured time, ids before the measured slots count as earlier mentions,
// and the distribution's percentiles are nearest-rank.
func TestMechanismCounts(t *testing.T) {
	plan, err := Plan(DefaultNeighbourhoodParams())
	if err != nil {
		t.Fatal(err)
	}
	m := newMechanism()
	a, b := peer.ID("peer-a"), peer.ID("peer-b")
	m.heartbeat[a], m.heartbeat[b] = 700*time.Millisecond, time.Second
	names := map[peer.ID]int{a: 0, b: 1}
	topic := plan.Peers[0].Topics[0]
	ihave := func(ids ...string) *pb.RPC {
		tp := topic
		return &pb.RPC{Control: &pb.ControlMessage{Ihave: []*pb.ControlIHave{{TopicID: &tp, MessageIDs: ids}}}}
	}
	start := time.Unix(1000, 0)
	m.recvFrom(a, ihave("w"), start.Add(-time.Second)) // warm-up
	m.begin(start)
	// Heartbeat 0: two RPCs; heartbeat 1: none; heartbeats 2 and 9: one each.
	for _, at := range []time.Duration{100 * time.Millisecond, 600 * time.Millisecond, 1500 * time.Millisecond, 6400 * time.Millisecond} {
		m.recvFrom(a, ihave("w", "x"), start.Add(at))
	}
	// The observed node was in peer a's mesh of the topic for 2 of the 7 s.
	got := m.result(plan, names, DefaultNeighbourhoodParams(), 7*time.Second, []map[string]time.Duration{{topic: 2 * time.Second}})
	var share, out float64
	for _, k := range got.Kinds {
		if k.Kind == TopicKind(topic) {
			share, out = k.IHaveShare.Max, k.IHaveShareOut.Max
		}
	}
	if share != 0.3 || math.Abs(out-0.3*7/5) > 1e-9 { // 3 heartbeats of 10; of the 5/7 out of the mesh
		t.Errorf("IHAVE heartbeat share %v (out of the mesh %v), want 3 of 10 (%v)", share, out, 0.3*7/5)
	}
	// 8 mentions over the measured slots, all but the first x repeats (w from the warm-up).
	if r := got.Recurrence; r.Mentions != 8 || r.Within[len(r.Within)-1] != 7 || math.Abs(got.RepeatShares[3]-7.0/8) > 1e-9 {
		t.Errorf("recurrence %+v, shares %v", r, got.RepeatShares)
	}
	d := distributionOf([]float64{5, 1, 4, 2, 3, 10, 6, 7, 9, 8})
	if d.N != 10 || d.Min != 1 || d.P10 != 1 || d.P50 != 5 || d.P90 != 9 || d.Max != 10 || d.Mean != 5.5 {
		t.Errorf("distribution %+v", d)
	}
	var sb strings.Builder
	got.print(&sb)
	for _, want := range []string{"≤ 4 KiB", "≤ 16 MiB 87.5 %", "expects"} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, sb.String())
		}
	}
}
