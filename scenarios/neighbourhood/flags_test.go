package neighbourhood

import (
	"flag"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/sim/runner"
	"github.com/streamsim/streamsim/topology"
)

func runsOf(t *testing.T, args ...string) ([]runner.Run, error) {
	t.Helper()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	f := flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f.Runs(map[string]string{runner.ParamSeed: "7", topology.ParamTopologySeed: "3"})
}

// One codec is one run on it, keeping the given seeds; several codecs or --seeds are an A/B:
// seed-major, each seed's population (topology seed) and workload the same on every codec.
func TestRunFlags(t *testing.T) {
	runs, err := runsOf(t, "--codecs", "snappy-stream")
	if err != nil || len(runs) != 1 || runs[0].Params[runner.ParamCodec] != "snappy-stream" || runs[0].Params[topology.ParamTopologySeed] != "3" || runs[0].Seed != 7 {
		t.Fatalf("one codec: %+v, %v", runs, err)
	}
	runs, err = runsOf(t, "--codecs", "plain,snappy-stream,zstd", "--seeds", "1,2")
	if err != nil || len(runs) != 6 {
		t.Fatalf("A/B: %d runs, %v", len(runs), err)
	}
	want := []struct {
		seed  string
		codec string
	}{{"1", "plain"}, {"1", "snappy-stream"}, {"1", "zstd"}, {"2", "plain"}, {"2", "snappy-stream"}, {"2", "zstd"}}
	names := map[string]bool{}
	for i, r := range runs {
		if r.Params[runner.ParamSeed] != want[i].seed || r.Params[topology.ParamTopologySeed] != want[i].seed || r.Codec != want[i].codec || r.Params[runner.ParamCodec] != want[i].codec {
			t.Errorf("run %d: seed %s topology %s codec %s, want seed %s codec %s", i, r.Params[runner.ParamSeed], r.Params[topology.ParamTopologySeed], r.Codec, want[i].seed, want[i].codec)
		}
		if names[r.Name] || r.Name == "" {
			t.Errorf("run %d name %q not unique", i, r.Name)
		}
		names[r.Name] = true
	}
	if runs[0].Params[runner.ParamCodec] == runs[1].Params[runner.ParamCodec] {
		t.Error("runs share one parameter map")
	}
	runs, err = runsOf(t, "--codecs", "plain,snappy-stream")
	if err != nil || len(runs) != 2 || runs[1].Params[topology.ParamTopologySeed] != "3" || runs[1].Params[runner.ParamSeed] != "7" {
		t.Errorf("A/B without --seeds keeps --seed and topology_seed: %+v, %v", runs, err)
	}
	for _, bad := range [][]string{{"--codecs", "lz5"}, {"--seeds", "1,x"}} {
		if _, err := runsOf(t, bad...); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: %v, want an error naming %s", bad, err, bad[0])
		}
	}
}
