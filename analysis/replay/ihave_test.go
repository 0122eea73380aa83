package replay

import (
	"slices"
	"strings"
	"testing"

	pb "github.com/libp2p/go-libp2p-pubsub/pb"

	"github.com/streamsim/streamsim/gossip"
)

func ihaveFrame(t *testing.T, topic string, ids ...string) []byte {
	t.Helper()
	f, err := gossip.AppendFrame(nil, &pb.RPC{Control: &pb.ControlMessage{Ihave: []*pb.ControlIHave{{TopicID: &topic, MessageIDs: ids}}}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func padFrame(t *testing.T, n int) []byte {
	t.Helper()
	topic := "/eth2/00000000/beacon_block/ssz_snappy"
	f, err := gossip.AppendFrame(nil, &pb.RPC{Publish: []*pb.Message{{Topic: &topic, Data: make([]byte, n)}}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Repeats are counted per stream direction, grouped by how far back the stream carried the
// id, and an id mentioned farther back than the largest distance counts as new.
func TestIHaveRecurrence(t *testing.T) {
	r := newRecurrence()
	add := func(stream string, f []byte) {
		t.Helper()
		if err := r.add(stream, f); err != nil {
			t.Fatal(err)
		}
	}
	att := "/eth2/00000000/beacon_attestation_1/ssz_snappy"
	add("a", ihaveFrame(t, att, "id-1", "id-2", "id-3"))
	add("b", ihaveFrame(t, att, "id-1")) // another stream: a first mention
	add("a", ihaveFrame(t, att, "id-1")) // right after: within 4 KiB
	add("a", padFrame(t, 10<<10))
	add("a", ihaveFrame(t, att, "id-2")) // ~10 KiB back: within 64 KiB
	add("a", padFrame(t, 200<<10))
	add("a", ihaveFrame(t, att, "id-3", "id-4")) // ~210 KiB back: within 1 MiB; id-4 new
	add("a", padFrame(t, 17<<20))
	add("a", ihaveFrame(t, att, "id-1")) // 17 MiB back: beyond tracking, new
	s := r.r.Sum()
	if s.Mentions != 9 {
		t.Fatalf("mentions %d, want 9", s.Mentions)
	}
	if want := []int64{1, 2, 3, 3}; !slices.Equal(s.Within, want) {
		t.Errorf("within %v of %v, want %v", s.Within, s.Distances, want)
	}
	if got := s.RepeatShare(64 << 10); got != 2.0/9 {
		t.Errorf("repeat share at 64 KiB %v, want 2/9", got)
	}
	if got := s.RepeatShare(1 << 10); got != 0 {
		t.Errorf("repeat share below the smallest distance %v, want 0", got)
	}
	var b strings.Builder
	writeRecurrence(&b, s)
	for _, want := range []string{"9 mentions", "33.3 % repeat", "≤ 4 KiB 11.1 %", "≤ 64 KiB 22.2 %", "≤ 1 MiB 33.3 %", "≤ 16 MiB 33.3 %"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("line %q lacks %q", b.String(), want)
		}
	}
	if err := r.add("a", []byte{0x05, 0x0a}); err == nil {
		t.Error("a truncated frame was accepted")
	}
	var none strings.Builder
	writeRecurrence(&none, newRecurrence().r.Sum())
	if none.Len() != 0 {
		t.Errorf("no IHAVE: wrote %q", none.String())
	}
}
