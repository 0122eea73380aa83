package mesh

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/streamsim/streamsim/sim/runner"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/sim/node"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/units"
)

// meshRun is the mesh's part of `streamsim run`: its size, and the codecs, seeds and link
// rates of an A/B comparison.
type meshRun struct {
	nodes      *int
	codecs     *string
	seeds      *string
	bandwidths *string
}

func meshFlags(fs *flag.FlagSet) runner.RunFlags {
	return &meshRun{
		nodes: fs.Int("nodes", topology.DefaultMeshNodes, "nodes in the mesh (one group, \""+GroupNodes+"\")"),
		codecs: fs.String("codecs", "snappy-stream", "codec specs, comma-separated; with more than one (or with --seeds or --bandwidths), "+
			"an A/B comparison: one run per codec, seed and link rate, same topology, every node on the codec"),
		seeds: fs.String("seeds", "", "A/B: workload and topology seeds, comma-separated (default: --seed)"),
		bandwidths: fs.String("bandwidths", "", "A/B over shaped links: ordinary nodes' link rates, comma-separated (e.g. 10Mbit,50Mbit); "+
			"on the real clock needs --time-scale 1; latency charts go to --out"),
	}
}

func (f *meshRun) Runs(params map[string]string) ([]runner.Run, error) {
	if *f.nodes < Mesh.MinInstances || *f.nodes > Mesh.MaxInstances {
		return nil, fmt.Errorf("--nodes %d: want %d..%d", *f.nodes, Mesh.MinInstances, Mesh.MaxInstances)
	}
	groups := []runner.Group{{ID: GroupNodes, Instances: *f.nodes}}
	specs, err := node.ParseCodecs(*f.codecs)
	if err != nil {
		return nil, fmt.Errorf("--codecs: %w", err)
	}
	seed, err := strconv.ParseInt(params[runner.ParamSeed], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("--seed: %q is not an integer", params[runner.ParamSeed])
	}
	seeds := []int64{seed}
	if *f.seeds != "" {
		seeds = nil
		for _, s := range strings.Split(*f.seeds, ",") {
			v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("--seeds: %q is not an integer", s)
			}
			seeds = append(seeds, v)
		}
	}
	bws := []string{""}
	if *f.bandwidths != "" {
		bws = nil
		for _, b := range strings.Split(*f.bandwidths, ",") {
			b = strings.TrimSpace(b)
			if _, err := units.ParseBitsPerSec(b); err != nil {
				return nil, fmt.Errorf("--bandwidths: %w", err)
			}
			bws = append(bws, b)
		}
	}
	if len(specs) == 1 && len(seeds) == 1 && *f.bandwidths == "" {
		seed = seeds[0]
		params[runner.ParamSeed] = strconv.FormatInt(seed, 10)
		params[runner.ParamCodec] = specs[0].String()
		if _, set := params[topology.ParamCompressedShare]; !set && specs[0] != (codec.Spec{}) {
			params[topology.ParamCompressedShare] = "1" // every node on the codec unless --set says otherwise
		}
		return []runner.Run{{Params: params, Groups: groups, Seed: seed, Codec: specs[0].String()}}, nil
	}
	// A comparison: each codec, seed and link rate on the same seed's topology, every node on
	// the codec (plain: none).
	var runs []runner.Run
	for _, bw := range bws {
		for _, s := range seeds {
			for _, c := range specs {
				p := runner.MergeParams(params, map[string]string{
					runner.ParamSeed: strconv.FormatInt(s, 10), topology.ParamTopologySeed: strconv.FormatInt(s, 10),
					runner.ParamCodec: c.String(), topology.ParamCompressedShare: "1",
				})
				if c == (codec.Spec{}) {
					p[topology.ParamCompressedShare] = "0"
				}
				name := fmt.Sprintf("%02d-seed%d-%s", len(runs), s, strings.NewReplacer(":", "-", "/", "-").Replace(c.String()))
				if bw != "" {
					p[ParamLinks] = "true"
					p[runner.ParamOrdinaryBandwidth] = bw
					name += "-" + bw
				}
				runs = append(runs, runner.Run{Name: name, Params: p, Groups: groups, Seed: s, Codec: c.String(), Bandwidth: bw})
			}
		}
	}
	return runs, nil
}

// FlagOf: the A/B flags set these parameters.
func (f *meshRun) FlagOf(param string) string {
	switch param {
	case runner.ParamCodec:
		return "--codecs"
	case runner.ParamOrdinaryBandwidth:
		return "--bandwidths"
	}
	return ""
}
