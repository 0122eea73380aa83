package hubleaves_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamsim/streamsim/internal/longtest"
	"github.com/streamsim/streamsim/scenarios/hubleaves"
	"github.com/streamsim/streamsim/scenarios/hubleaves/report"

	"github.com/streamsim/streamsim/sim/runner"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/sim/node"
)

// A short churn run: every fault kind at least once on hub-leaves (about 15 s). Every message
// at every leaf is received once or missing with a reason, the damaged links come back, and
// the leaves nobody touched at the time receive everything.
func TestChurnHubLeaves(t *testing.T) {
	longtest.Skip(t, "every fault kind on hub-leaves")
	dir := t.TempDir()
	specs, _ := node.ParseCodecs("plain,snappy-stream,zstd,snappy-stream")
	e := &runner.Embedded{Out: dir, Groups: hubleaves.HubLeavesGroups(2, specs), Params: map[string]string{
		runner.ParamProfile: "default", runner.ParamSlots: "6", runner.ParamTimeScale: "12", runner.ParamValidators: "32768", runner.ParamSeed: "5",
		hubleaves.ParamPublishers: "2", runner.ParamFaults: churnSchedule, runner.ParamSampleSlots: "0.5",
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runErr := e.Run(ctx)
	r, err := report.LoadRun(dir)
	if err != nil {
		t.Fatalf("load: %v (run: %v)", err, runErr)
	}
	var table strings.Builder
	r.WriteTable(&table)
	t.Log("\n" + table.String())
	if runErr != nil {
		t.Fatalf("run: %v", runErr)
	}
	a := r.Faults
	if a == nil || !a.OK || !r.Parity.OK {
		t.Fatalf("fault accounting: %+v", a)
	}
	// Every scheduled fault was carried out (reset and garbage by the hub, the others by the
	// leaf).
	applied := map[string]int{}
	for _, f := range a.Faults {
		if !f.Applied {
			t.Errorf("fault %s at %s not applied: %s", f.Spec, f.Node, f.Note)
		}
		applied[f.Spec]++
		if strings.Contains(f.Spec, "rogue") && !strings.Contains(f.Note, "the target reset the stream") {
			t.Errorf("rogue stream: %s", f.Note)
		}
	}
	faults, _ := runner.ParseFaults(churnSchedule, 6)
	for _, f := range faults {
		if applied[f.Spec] != 1 {
			t.Errorf("fault %s carried out %d times", f.Spec, applied[f.Spec])
		}
	}
	byNode := map[string]analysis.ReceiverAccount{}
	for _, ra := range a.Receivers {
		byNode[ra.Node] = ra
		if ra.Published == 0 || ra.Once == 0 {
			t.Errorf("%s: published %d, received %d", ra.Node, ra.Published, ra.Once)
		}
		for c, cp := range ra.Connected {
			if !cp.Identical || cp.Published == 0 {
				t.Errorf("%s %s: connected parity %+v", ra.Node, c, cp)
			}
		}
	}
	// The links hit by stream or connection faults went down and came back; the stranger's
	// stream is no link of the plan.
	for _, leaf := range []string{"leaf-0-plain/0", "leaf-1-snappy-stream/0", "leaf-2-zstd/0", "leaf-3-snappy-stream/0"} {
		ra, ok := byNode[leaf]
		if !ok {
			t.Fatalf("no account for %s", leaf)
		}
		if len(ra.Outages) == 0 {
			t.Errorf("%s: no outage recorded", leaf)
		}
		for _, o := range ra.Outages {
			if o.ToS < 0 || o.Peer != "hub/0" {
				t.Errorf("%s: outage %+v", leaf, o)
			}
		}
	}
	if n := len(byNode["leaf-1-snappy-stream/0"].Outages); n != 2 {
		t.Errorf("leaf-1: %d outages, want 2 (disconnect, reset)", n)
	}
	// Codec errors reset the damaged streams: the garbage and the stranger's stream at leaf-3
	// (snappy-stream); the garbage at the plain leaf-0 fails in pubsub's framing or protobuf
	// decoding, or in streamsim's frame bound, and resets the stream either way.
	errs := map[string]int64{}
	for _, n := range r.Nodes {
		errs[n.Group] = n.StreamErrors
		if n.Role == result.RoleLeaf && len(n.Samples) < 10 {
			t.Errorf("%s: %d samples", n.Group, len(n.Samples))
		}
	}
	if errs["leaf-3-snappy-stream"] < 1 {
		t.Errorf("stream errors %v", errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "hub", "0", result.MessagesFile)); err != nil {
		t.Errorf("fault runs log messages at every node: %v", err)
	}
}

// churnSchedule hits hub-leaves' leaves with every stream and connection fault kind.
const churnSchedule = "1:disconnect:leaf-1-snappy-stream:0.5, 1.5:reset:leaf-2-zstd, 2.3:garbage:leaf-3-snappy-stream, " +
	"3:rogue:leaf-3-snappy-stream, 3.5:slow:leaf-2-zstd:1:64KiB, 4.2:reset:leaf-1-snappy-stream, 4.5:garbage:leaf-0-plain"
