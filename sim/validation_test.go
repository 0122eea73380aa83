package sim

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/streamsim/streamsim/gossip"
)

func TestParseValidationDelays(t *testing.T) {
	d, err := ParseValidationDelays(DefaultValidationDelay)
	if err != nil {
		t.Fatal(err)
	}
	if d[gossip.Attestation] != (DelayRange{5 * time.Millisecond, 50 * time.Millisecond}) ||
		d[gossip.Block] != (DelayRange{20 * time.Millisecond, 100 * time.Millisecond}) || len(d) != 5 {
		t.Fatalf("default parsed as %v", d)
	}
	if again, err := ParseValidationDelays(d.String()); err != nil || again.String() != d.String() {
		t.Fatalf("round trip %q → %v, %v", d.String(), again, err)
	}
	if d, err := ParseValidationDelays("block:1.5s"); err != nil || d[gossip.Block] != (DelayRange{1500 * time.Millisecond, 1500 * time.Millisecond}) {
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

// A seed fixes every draw; draws stay in the range, differ between nodes and cover it.
func TestValidationDelayDraws(t *testing.T) {
	r := DelayRange{5 * time.Millisecond, 50 * time.Millisecond}
	a, b, c := validationSeed{1, 0}, validationSeed{1, 0}, validationSeed{1, 1}
	var differ int
	lo, hi := r.Max, r.Min
	for i := range 2000 {
		id := string(rune('a'+i%26)) + strings.Repeat("x", i%7) + string(rune(i))
		da, db, dc := a.delay(r, id), b.delay(r, id), c.delay(r, id)
		if da != db {
			t.Fatalf("same seed, node and id: %v vs %v", da, db)
		}
		if da < r.Min || da > r.Max {
			t.Fatalf("draw %v outside %v", da, r)
		}
		if da != dc {
			differ++
		}
		lo, hi = min(lo, da), max(hi, da)
	}
	if differ < 1900 || lo > 6*time.Millisecond || hi < 49*time.Millisecond {
		t.Errorf("draws: %d of 2000 differ between nodes, range seen %v..%v", differ, lo, hi)
	}
}

// A node forwards a message only after validating it: with a fixed delay at the relay, the
// relay's own delivery and the leaf behind it both come no earlier than the delay (divided
// by the time scale). (Without the delay the same 20 messages take a few milliseconds.)
func TestValidationDelaysForwarding(t *testing.T) {
	const delay = 3 * time.Second // 300 ms at testNode's time scale 10
	relay := testNode(t, "", false, nil)
	relay.opts = append(relay.opts, WithValidationDelay(ValidationDelays{gossip.Attestation: {delay, delay}}), WithNodeSeed(1, 0))
	pub := testNode(t, "", false, nil)
	leaf := testNode(t, "", false, nil)
	star(t, relay, pub, leaf)
	rRelay, rLeaf := subscribeTest(t, relay), subscribeTest(t, leaf)
	subscribeTest(t, pub)
	waitTopicPeers(t, relay, pub.ID(), leaf.ID())
	waitTopicPeers(t, pub, relay.ID())
	waitTopicPeers(t, leaf, relay.ID())
	start := time.Now()
	publishN(t, pub, 9, 20, rRelay, rLeaf)
	if el := time.Since(start); el < delay/10 {
		t.Fatalf("20 messages through a relay validating %v each (scaled %v) arrived in %v", delay, delay/10, el)
	}
}

// The mesh takes validation_delay; a bad value is refused before any node starts, naming it.
func TestMeshValidationDelayParam(t *testing.T) {
	p, err := Mesh.ParseParams(map[string]string{ParamValidationDelay: DefaultValidationDelay})
	if err != nil {
		t.Fatal(err)
	}
	if err := Mesh.Check(p, map[string]int{GroupNodes: 48}); err != nil {
		t.Fatalf("default delays refused: %v", err)
	}
	opts, err := Mesh.NodeOptions(p)
	if err != nil || len(opts) != 2 {
		t.Fatalf("node options %d, %v", len(opts), err)
	}
	var c config
	for _, o := range opts {
		if err := o(&c); err != nil {
			t.Fatal(err)
		}
	}
	if c.validation[gossip.Aggregate] != (DelayRange{5 * time.Millisecond, 20 * time.Millisecond}) {
		t.Errorf("mesh node validation %v", c.validation)
	}
	var pe *ParamError
	if _, err := Mesh.ParseParams(map[string]string{ParamValidationDelay: "block:50ms-10ms"}); !errors.As(err, &pe) || pe.Name != ParamValidationDelay {
		t.Errorf("bad delay: %v", err)
	}
}
