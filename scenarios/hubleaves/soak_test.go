package hubleaves_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/streamsim/streamsim/scenarios/hubleaves"
	"github.com/streamsim/streamsim/scenarios/hubleaves/report"

	"github.com/streamsim/streamsim/sim/runner"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/sim/node"
)

// The soak check's short form (STREAMSIM_SOAK=short, about 4 minutes on a busy machine): 400
// slots of light hub-leaves traffic at 24× real time, every node sampled every 2 slots; after
// warm-up (the seen-message TTL, 32 s at this time scale, plus two of pubsub's one-minute
// sweeps) heap, goroutines and streams stay flat, parity is exact and nothing is dropped. The
// hour-long forms are in docs/reliability.md.
func TestSoakShort(t *testing.T) {
	if os.Getenv("STREAMSIM_SOAK") != "short" {
		t.Skip("soak short form: set STREAMSIM_SOAK=short (about 4 minutes; .ci/run runs it as its own step)")
	}
	dir := t.TempDir()
	specs, _ := node.ParseCodecs("plain,snappy-stream,zstd")
	e := &runner.Embedded{Out: dir, Groups: hubleaves.HubLeavesGroups(2, specs), Params: map[string]string{
		runner.ParamProfile: "default", runner.ParamSlots: "400", runner.ParamTimeScale: "24", runner.ParamValidators: "32768", runner.ParamSeed: "2",
		hubleaves.ParamPublishers: "2", runner.ParamSampleSlots: "2",
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	runErr := e.Run(ctx)
	r, err := report.LoadRun(dir)
	if err != nil {
		t.Fatalf("load: %v (run: %v)", err, runErr)
	}
	var b strings.Builder
	analysis.WriteSoak(&b, r.Soak)
	t.Log(b.String())
	if runErr != nil || !r.Parity.OK || r.Drops != 0 {
		t.Fatalf("run: %v; parity %s; drops %d", runErr, r.Parity.Message, r.Drops)
	}
	if r.Soak == nil || !r.Soak.Judged || !r.Soak.OK || r.Soak.Samples < 150 {
		t.Fatalf("soak: %+v", r.Soak)
	}
}
