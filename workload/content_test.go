package workload

import (
	"testing"
)

func contentOf(t testing.TB, p Params, slots int) *ContentStats {
	t.Helper()
	g, err := NewGenerator(p)
	if err != nil {
		t.Fatal(err)
	}
	var c ContentStats
	for range slots {
		msgs, err := g.NextSlot()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Add(msgs); err != nil {
			t.Fatal(err)
		}
	}
	return &c
}

func TestContentPrint(t *testing.T) {
	p := smallParams()
	p.BlockProbability = 1
	for _, seed := range []int64{1, 2} {
		p.Seed = seed
		c := contentOf(t, p, 56)
		for _, f := range c.Figures() {
			t.Logf("%-45s %8.2f %8.2f %v", f.Name, f.Value, f.Target, f.Within())
		}
	}
}
