package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/sim/node"
)

func TestParseValidationDelays(t *testing.T) {
	d, err := ParseValidationDelays(DefaultValidationDelay)
	if err != nil {
		t.Fatal(err)
	}
	if d[gossip.Attestation] != (node.DelayRange{Min: 5 * time.Millisecond, Max: 50 * time.Millisecond}) ||
		d[gossip.Block] != (node.DelayRange{Min: 20 * time.Millisecond, Max: 100 * time.Millisecond}) || len(d) != 5 {
		t.Fatalf("default parsed as %v", d)
	}
	if again, err := ParseValidationDelays(d.String()); err != nil || again.String() != d.String() {
		t.Fatalf("round trip %q → %v, %v", d.String(), again, err)
	}
	if d, err := ParseValidationDelays("block:1.5s"); err != nil || d[gossip.Block] != (node.DelayRange{Min: 1500 * time.Millisecond, Max: 1500 * time.Millisecond}) {
		t.Fatalf("fixed delay: %v %v", d, err)
	}
	for _, off := range []string{"", "off", "0"} {
		if d, err := ParseValidationDelays(off); err != nil || len(d) != 0 {
			t.Errorf("%q: %v %v", off, d, err)
		}
	}
	for bad, want := range map[string]string{
		"attestation":                    "category:min-max",
		"control:5ms":                    "unknown category",
		"votes:5ms":                      "unknown category",
		"block:fast":                     "not a duration",
		"block:50ms-10ms":                "ordered",
		"block:-5ms":                     "not a duration", // "-5ms" reads as an empty lower bound
		"block:5ms,block:6ms":            "given twice",
		"attestation:5-50ms,block:-1s-2": "not a duration",
	} {
		_, err := ParseValidationDelays(bad)
		var pe *ParamError
		if err == nil || !errors.As(err, &pe) || pe.Name != ParamValidationDelay || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want a %s error containing %q", bad, err, ParamValidationDelay, want)
		}
	}
}
