package neighbourhood

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/streamsim/streamsim/sim/node"

	"github.com/streamsim/streamsim/sim/runner"
	"github.com/streamsim/streamsim/topology"
)

// runFlags are the neighbourhood's flags of `streamsim run`: the codec of the observed node's
// links, and with several codecs or seeds a live A/B (one run per seed and codec, the same
// seed's population and workload on every codec).
type runFlags struct {
	codecs *string
	seeds  *string
}

func flags(fs *flag.FlagSet) runner.RunFlags {
	return &runFlags{
		codecs: fs.String("codecs", "plain", "codec specs of the observed node's links, comma-separated; with more than one (or with --seeds), "+
			"an A/B comparison: one run per seed and codec, the same population and workload on each"),
		seeds: fs.String("seeds", "", "A/B: workload and topology seeds, comma-separated (default: --seed and the topology_seed parameter)"),
	}
}

// Runs is one run, or the A/B's runs: for each seed, each codec (seed-major, so that a
// comparison cut short still holds whole seeds).
func (f *runFlags) Runs(params map[string]string) ([]runner.Run, error) {
	groups := []runner.Group{{ID: GroupName, Instances: 1}}
	specs, err := node.ParseCodecs(*f.codecs)
	if err != nil {
		return nil, fmt.Errorf("--codecs: %w", err)
	}
	var seeds []int64
	if *f.seeds != "" {
		for _, s := range strings.Split(*f.seeds, ",") {
			v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("--seeds: %q is not an integer", s)
			}
			seeds = append(seeds, v)
		}
	}
	if len(specs) == 1 && len(seeds) == 0 {
		params[runner.ParamCodec] = specs[0].String()
		seed, _ := strconv.ParseInt(params[runner.ParamSeed], 10, 64)
		return []runner.Run{{Params: params, Groups: groups, Seed: seed, Codec: specs[0].String()}}, nil
	}
	if len(seeds) == 0 {
		seed, err := strconv.ParseInt(params[runner.ParamSeed], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("--seed: %q is not an integer", params[runner.ParamSeed])
		}
		seeds = []int64{seed}
	}
	var runs []runner.Run
	for _, s := range seeds {
		for _, c := range specs {
			p := make(map[string]string, len(params)+3)
			for k, v := range params {
				p[k] = v
			}
			p[runner.ParamSeed], p[runner.ParamCodec] = strconv.FormatInt(s, 10), c.String()
			if len(seeds) > 1 || *f.seeds != "" {
				p[topology.ParamTopologySeed] = strconv.FormatInt(s, 10)
			}
			name := fmt.Sprintf("%02d-seed%d-%s", len(runs), s, strings.NewReplacer(":", "-", "/", "-").Replace(c.String()))
			runs = append(runs, runner.Run{Name: name, Params: p, Groups: groups, Seed: s, Codec: c.String()})
		}
	}
	return runs, nil
}

// FlagOf: --codecs sets the codec parameter.
func (f *runFlags) FlagOf(param string) string {
	if param == runner.ParamCodec {
		return "--codecs"
	}
	return ""
}
