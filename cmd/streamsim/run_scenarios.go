package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/sim"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/units"
)

// scenarioFlags are the run command's flags for scenarios other than hub-leaves: how their
// groups are built and how their reports are printed.
type scenarioFlags struct {
	nodes      *int
	codecs     *string
	seeds      *string
	bandwidths *string
}

func registerScenarioFlags(fs *flag.FlagSet) *scenarioFlags {
	return &scenarioFlags{
		nodes:  fs.Int("nodes", topology.DefaultMeshNodes, "mesh: nodes in the mesh (one group, \""+sim.GroupNodes+"\")"),
		codecs: fs.String("codecs", "snappy-stream", "mesh: codec specs, comma-separated; with more than one (or with --seeds), an A/B comparison: one run per codec and seed, same topology, every node on the codec"),
		seeds:  fs.String("seeds", "", "mesh A/B: workload and topology seeds, comma-separated (default: --seed)"),
		bandwidths: fs.String("bandwidths", "", "mesh A/B over shaped links: ordinary nodes' link rates, comma-separated (e.g. 10Mbit,50Mbit); needs --time-scale 1; "+
			"latency charts go to --out"),
	}
}

// groups returns the run's groups for scenario sc.
func (f *scenarioFlags) groups(sc *sim.Scenario, params map[string]string) ([]sim.Group, error) {
	if sc != sim.Mesh {
		return nil, fmt.Errorf("--scenario %s: the run command cannot build its groups", sc.Name)
	}
	if *f.nodes < sc.MinInstances || *f.nodes > sc.MaxInstances {
		return nil, fmt.Errorf("--nodes %d: want %d..%d", *f.nodes, sc.MinInstances, sc.MaxInstances)
	}
	specs, err := sim.ParseCodecs(*f.codecs)
	if err != nil {
		return nil, fmt.Errorf("--codecs: %w", err)
	}
	params[sim.ParamCodec] = specs[0].String()
	if specs[0] != (codec.Spec{}) {
		params[topology.ParamCompressedShare] = "1" // every node on the codec unless --set says otherwise
	}
	return []sim.Group{{ID: sim.GroupNodes, Instances: *f.nodes}}, nil
}

// abRuns lists the mesh runs of an A/B comparison (codec × seed), or nil for a single run.
func (f *scenarioFlags) abRuns(seed int64) ([]meshRun, error) {
	specs, err := sim.ParseCodecs(*f.codecs)
	if err != nil {
		return nil, fmt.Errorf("--codecs: %w", err)
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
		return nil, nil
	}
	var runs []meshRun
	for _, bw := range bws {
		for _, s := range seeds {
			for _, c := range specs {
				runs = append(runs, meshRun{seed: s, codec: c.String(), bandwidth: bw})
			}
		}
	}
	return runs, nil
}

type meshRun struct {
	seed      int64
	codec     string
	bandwidth string // ordinary nodes' link rate; "" for unshaped links
}

// report prints scenario sc's report of the run in dir.
func (f *scenarioFlags) report(sc *sim.Scenario, dir string, runErr error, asJSON bool, started time.Time) error {
	r, err := analysis.LoadMeshRun(dir)
	if err != nil {
		if runErr != nil {
			return fmt.Errorf("%s: %w", sc.Name, runErr)
		}
		return err
	}
	if asJSON {
		err = analysis.WriteMeshJSON(os.Stdout, r)
	} else {
		err = analysis.WriteMeshTable(os.Stdout, r)
		fmt.Printf("outputs: %s (%s)\n", dir, time.Since(started).Round(time.Second))
	}
	if err != nil {
		return err
	}
	switch {
	case runErr != nil:
		return fmt.Errorf("%s: %w", sc.Name, runErr)
	case !r.OK:
		return fmt.Errorf("%s: %s", sc.Name, strings.Join(r.Problems, "; "))
	}
	return nil
}

// runMeshAB runs the mesh once per codec and seed (every node on the codec; the topology
// and workload fixed by the seed) and prints the differences against plain.
func runMeshAB(ctx context.Context, runs []meshRun, base map[string]string, nodes int, dir string, asJSON bool) error {
	var reports []*analysis.MeshReport
	var labels []analysis.ABRun
	var errs []error
	for i, r := range runs {
		params := map[string]string{}
		for k, v := range base {
			params[k] = v
		}
		params[sim.ParamSeed] = strconv.FormatInt(r.seed, 10)
		params[topology.ParamTopologySeed] = strconv.FormatInt(r.seed, 10)
		params[sim.ParamCodec] = r.codec
		params[topology.ParamCompressedShare] = "1"
		if r.codec == "plain" {
			params[topology.ParamCompressedShare] = "0"
		}
		name := fmt.Sprintf("%02d-seed%d-%s", i, r.seed, strings.NewReplacer(":", "-", "/", "-").Replace(r.codec))
		if r.bandwidth != "" {
			params[sim.ParamLinks] = "true"
			params[sim.ParamOrdinaryBandwidth] = r.bandwidth
			name += "-" + r.bandwidth
		}
		if err := checkGroups(sim.Mesh, params, []sim.Group{{ID: sim.GroupNodes, Instances: nodes}}); err != nil {
			return usageError{flagError(err)}
		}
		out := filepath.Join(dir, name)
		e := &sim.Embedded{Scenario: sim.Mesh.Name, Out: out, Groups: []sim.Group{{ID: sim.GroupNodes, Instances: nodes}}, Params: params}
		if isTerminal(os.Stderr) {
			fmt.Fprintf(os.Stderr, "A/B run %d of %d: seed %d, %s, links %s\n", i+1, len(runs), r.seed, r.codec, r.bandwidth)
			e.Progress = os.Stderr
		}
		runErr := e.Run(ctx)
		rep, err := analysis.LoadMeshRun(out)
		if err != nil {
			return errors.Join(runErr, err)
		}
		if runErr != nil {
			errs = append(errs, fmt.Errorf("seed %d %s: %w", r.seed, r.codec, runErr))
		}
		reports = append(reports, rep)
		labels = append(labels, analysis.ABRun{Seed: r.seed, Codec: r.codec, Bandwidth: r.bandwidth})
		// A run's nodes are gone once it returns (the heap is back to a few MB), but Go keeps
		// the pages of its peak (about 5 GB for a 48-node zstd run: the encoders' and decoders'
		// windows, one pair per stream) until its scavenger gets to them; hand them back now so
		// that a long A/B does not hold the sum of its runs' peaks.
		debug.FreeOSMemory()
	}
	ab := analysis.MeshAB(labels, reports)
	var err error
	if asJSON {
		err = analysis.WriteMeshJSON(os.Stdout, ab)
	} else {
		err = analysis.WriteMeshABTable(os.Stdout, ab)
		fmt.Printf("outputs: %s\n", dir)
	}
	if files, cerr := ab.WriteLatencyCharts(dir); cerr != nil {
		err = errors.Join(err, cerr)
	} else if len(files) > 0 && !asJSON {
		fmt.Printf("latency charts: %s\n", strings.Join(files, ", "))
	}
	return errors.Join(append(errs, err)...)
}
