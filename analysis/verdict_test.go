package analysis

import (
	"slices"
	"testing"
)

// A run's reasons to stay out of verdicts: its flags, then each problem no flag names; a late
// run's problem is named once, as lateness.
func TestVerdictReasons(t *testing.T) {
	v := NewVerdict()
	if got := v.Reasons(); len(got) != 0 {
		t.Fatalf("a clean run gives reasons %v", got)
	}
	v.Flag(FlagSaturated, "the machine was saturated")
	v.Late("publishing fell behind by %d ms", 900)
	v.Problem("delivery incomplete")
	want := []Flag{{FlagSaturated, "the machine was saturated"}, {FlagLate, "publishing fell behind by 900 ms"}, {FlagFailed, "delivery incomplete"}}
	if got := v.Reasons(); !slices.Equal(got, want) {
		t.Errorf("reasons %v, want %v", got, want)
	}
	if v.OK || !slices.Contains(v.Notes, "the machine was saturated") {
		t.Errorf("a flag is a note and lateness a problem: ok %v, notes %v", v.OK, v.Notes)
	}
}
