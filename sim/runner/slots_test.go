package runner

import (
	"testing"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/workload"
)

func slotsTestPlan(t *testing.T, n int) *topology.Plan {
	t.Helper()
	topics, err := workload.ParseProfile("all-subnets")
	if err != nil {
		t.Fatal(err)
	}
	all := topics.Topics(workload.DefaultParams().ForkDigest)
	plan := &topology.Plan{Nodes: make([]topology.Node, n), Observed: -1}
	var publishers []int
	for i := range plan.Nodes {
		plan.Nodes[i] = topology.Node{Role: topology.RoleNode, Publishes: true, Topics: all}
		publishers = append(publishers, i)
	}
	plan.DrawnOrigins(publishers, all)
	return plan
}

// Users of one workload with plans of the same origins share a source, whose origins are the
// plan's Origin of every message in schedule order; a plan of other origins (another member
// count) gets a source of its own; a slot is dropped once every user released it, and the
// last close removes the source.
func TestSlotSourceOrigins(t *testing.T) {
	wp := workload.DefaultParams()
	wp.Seed, wp.Validators = 9, 32768
	planA, planA2, planB := slotsTestPlan(t, 12), slotsTestPlan(t, 12), slotsTestPlan(t, 10)
	a, err := openSlots(wp, 2, planA)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := openSlots(wp, 2, planA2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := openSlots(wp, 2, planB)
	if err != nil {
		t.Fatal(err)
	}
	if a != a2 || a == b {
		t.Fatalf("sources: equal plans share %v, different plans share %v; want true, false", a == a2, a == b)
	}
	gen, err := workload.NewGenerator(wp)
	if err != nil {
		t.Fatal(err)
	}
	seq := 0
	for i := range 2 {
		want, err := gen.NextSlot()
		if err != nil {
			t.Fatal(err)
		}
		sa, err := a.slot(i)
		if err != nil {
			t.Fatal(err)
		}
		sb, err := b.slot(i)
		if err != nil {
			t.Fatal(err)
		}
		msgs, origins, originsB := sa.msgs, sa.origins, sb.origins
		if len(msgs) != len(want) || len(origins) != len(msgs) || len(originsB) != len(msgs) {
			t.Fatalf("slot %d: %d messages, %d origins (%d on plan B), want %d", i, len(msgs), len(origins), len(originsB), len(want))
		}
		differ := 0
		for j, m := range want {
			if got := planA.Origin(wp.Seed, int(m.Slot), seq, m.Topic); origins[j] != got {
				t.Fatalf("slot %d message %d (seq %d): origin %d, want %d", i, j, seq, origins[j], got)
			}
			if got := planB.Origin(wp.Seed, int(m.Slot), seq, m.Topic); originsB[j] != got {
				t.Fatalf("slot %d message %d on plan B: origin %d, want %d", i, j, originsB[j], got)
			}
			if originsB[j] != origins[j] {
				differ++
			}
			if id := gossip.MessageID(m.Topic, m.Data); origins[j] >= 0 && sa.ids[j] != id {
				t.Fatalf("slot %d message %d: id %x, want %x", i, j, sa.ids[j], id)
			}
			seq++
		}
		if differ == 0 {
			t.Errorf("slot %d: plans A and B give every message the same origin", i)
		}
		kept := func() bool {
			a.mu.Lock()
			defer a.mu.Unlock()
			return a.slots[i] != nil
		}
		a.release(i)
		if !kept() {
			t.Errorf("slot %d dropped after one of its two users released it", i)
		}
		a2.release(i)
		if kept() {
			t.Errorf("slot %d kept after both users released it", i)
		}
		b.release(i)
	}
	a.close()
	a2.close()
	b.close()
	sources.Lock()
	left := len(sources.m[wp])
	sources.Unlock()
	if left != 0 {
		t.Errorf("%d sources left after every user closed", left)
	}
}

// A source generates a short run's whole workload when it opens (before the measured phase),
// and a long run's only as far as preGenerateBytes go, the rest one slot ahead of need.
func TestSlotSourcePregenerates(t *testing.T) {
	wp := workload.DefaultParams()
	wp.Seed, wp.Validators = 10, 32768
	plan := slotsTestPlan(t, 12)
	made := func(s *slotSource) (int, int) {
		s.genMu.Lock()
		defer s.genMu.Unlock()
		s.mu.Lock()
		defer s.mu.Unlock()
		size := 0
		for _, e := range s.slots {
			for _, m := range e.msgs {
				size += len(m.Data)
			}
		}
		return s.made, size
	}
	short, err := openSlots(wp, 3, plan)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := made(short); n != 3 {
		t.Errorf("3-slot run: %d slots generated when the source opened, want 3", n)
	}
	short.close()

	const total = 500
	long, err := openSlots(wp, total, plan)
	if err != nil {
		t.Fatal(err)
	}
	defer long.close()
	n, size := made(long)
	if n < 2 || n >= total {
		t.Fatalf("%d-slot run: %d slots generated when the source opened, want some but not all", total, n)
	}
	if size > preGenerateBytes {
		t.Errorf("%d slots generated hold %d bytes, more than preGenerateBytes (%d)", n, size, preGenerateBytes)
	}
	// Taking the last generated slot starts the next one's generation (and taking that one
	// the one after it, which may have started by now).
	if _, err := long.slot(n - 1); err != nil {
		t.Fatal(err)
	}
	sl, err := long.slot(n)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := made(long); got < n+1 || len(sl.msgs) == 0 {
		t.Errorf("after taking slot %d: %d slots generated (slot %d has %d messages), want at least %d", n, got, n, len(sl.msgs), n+1)
	}
}
