package replay

import (
	"strings"
	"testing"

	"github.com/streamsim/streamsim/gossip"
)

// A category the trace never had is not measured: its comparison has no difference, and says
// why; a total over traffic without one of the proposal's categories is not compared either.
// A measured category is compared as before (0 inside a published range).
func TestCompareNotMeasured(t *testing.T) {
	r := &Result{View: "all-subnets", Config: "snappy-stream:64KiB:fast", RelativeTotal: 53}
	for _, c := range []gossip.Category{gossip.Attestation, gossip.Aggregate, gossip.Block, gossip.DataColumn, gossip.SyncCommittee} {
		r.PlainBytes[c] = 1000
	}
	r.Relative[gossip.Attestation], r.Relative[gossip.Block] = 42.4, 99.9
	got := compare(r)
	ctl := got[gossip.Control.String()]
	if ctl.Diff != nil || !strings.Contains(ctl.Reason, "no control") {
		t.Errorf("control on a trace without control: diff %v, reason %q; want null with its reason", ctl.Diff, ctl.Reason)
	}
	tot := got["total"]
	if tot.Diff != nil || !strings.Contains(tot.Reason, "control") || tot.Low != 63.1 {
		t.Errorf("total without control: %+v; want the published 63.1 beside a null difference naming control", tot)
	}
	att := got[gossip.Attestation.String()]
	if att.Diff == nil || *att.Diff != 0.4 || att.Reason != "" {
		t.Errorf("attestation: %+v, want a difference of +0.4", att)
	}
	blk := got[gossip.Block.String()]
	if blk.Diff == nil || *blk.Diff != 6.9 {
		t.Errorf("block: %+v, want +6.9", blk)
	}
	r.PlainBytes[gossip.Control], r.Relative[gossip.Control] = 500, 93
	if c := compare(r)[gossip.Control.String()]; c.Diff == nil || *c.Diff != 0 {
		t.Errorf("control measured at the published figure: %+v, want a difference of 0", c)
	}
	if c := compare(r)["total"]; c.Diff == nil || *c.Diff != -10.1 {
		t.Errorf("total with every category: %+v, want -10.1", c)
	}
}

// The proposal's zstd-3 row names no implementation: libzstd's configuration (zstd-c) is set
// beside it as klauspost's is; another level or window is not.
func TestCompareZstdImplementations(t *testing.T) {
	for _, cfg := range []string{"zstd:3:2MiB", "zstd-c:3:2MiB", "zstd-c:9:2MiB", "zstd-c:3:1MiB"} {
		r := &Result{View: "all-subnets", Config: cfg}
		for _, c := range gossip.Categories() {
			r.PlainBytes[c] = 1000
		}
		r.Relative[gossip.Control] = 68.2
		c, ok := compare(r)[gossip.Control.String()]
		want := cfg == "zstd:3:2MiB" || cfg == "zstd-c:3:2MiB"
		if ok != want {
			t.Errorf("%s: compared with the proposal's zstd-3: %v, want %v", cfg, ok, want)
			continue
		}
		if ok && (c.Low != 64 || c.Diff == nil || *c.Diff != 4.2) {
			t.Errorf("%s: control %+v, want the proposal's 64 and +4.2", cfg, c)
		}
	}
}
