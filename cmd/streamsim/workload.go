package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/trace"
	"github.com/streamsim/streamsim/workload"
)

func init() {
	register("workload", "generate the synthetic mainnet workload; print per-category figures, optionally write a trace", runWorkloadCmd)
}

// messageCategories are the categories the workload produces, in report order.
var messageCategories = []gossip.Category{gossip.Attestation, gossip.Aggregate, gossip.Block, gossip.DataColumn, gossip.SyncCommittee}

func runWorkloadCmd(args []string) error { return runWorkload(args, os.Stdout) }

func runWorkload(args []string, stdout io.Writer) error {
	def := workload.DefaultParams()
	fs := flag.NewFlagSet("workload", flag.ContinueOnError)
	profileName := fs.String("profile", "all-subnets", "topics of the receiving node: "+strings.Join(workload.ProfileNames, ", "))
	slots := fs.Int("slots", 50, "number of 12 s slots to generate")
	seed := fs.Int64("seed", def.Seed, "random seed (same seed and parameters, same bytes)")
	jsonOut := fs.Bool("json", false, "print one JSON object instead of the table")
	statsOut := fs.Bool("stats", false, "also print the content statistics of blocks, aggregates and contributions beside their targets (docs/inputs.md §4, §8)")
	tracePath := fs.String("trace", "", "write the profile's frames to this trace file (\".gz\" suffix: gzip)")
	custody := fs.Int("custody", -1, "custody columns, overriding the profile's (4..128)")
	forkDigest := fs.String("fork-digest", def.ForkDigest, "fork digest in topics, 8 hex characters")
	era := fs.String("era", workload.DefaultEra, "mainnet date whose gas limit, builder mix, block sizes, blob schedule and transaction content to use: "+strings.Join(workload.EraNames(), ", ")+" (sources below)")
	fs.IntVar(&def.Validators, "validators", def.Validators, "active validators")
	fs.Float64Var(&def.Participation, "participation", def.Participation, "share of committee members whose attestation is seen on gossip")
	fs.Float64Var(&def.BlockProbability, "block-probability", def.BlockProbability, "probability that a slot has a block")
	fs.IntVar(&def.BlockMedianBytes, "block-bytes", def.BlockMedianBytes, "median SSZ size of a MEV-Boost block (the era's by default)")
	fs.IntVar(&def.BlobsMax, "blobs-max", def.BlobsMax, "most blobs in a block with blobs")
	fs.Float64Var(&def.AggregatorCompleteShare, "aggregator-complete", def.AggregatorCompleteShare, "share of aggregators holding every timely vote (0..1)")
	fs.Float64Var(&def.AggregatorMissShare, "aggregator-miss", def.AggregatorMissShare, "mean share of timely votes an incomplete aggregator misses (0..1)")
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintln(out, "usage: streamsim workload [flags]")
		fmt.Fprintln(out, "\nGenerates the synthetic mainnet workload and prints, per category, what a node of the profile")
		fmt.Fprintln(out, "receives (one copy of each message) next to the recording's figures (docs/inputs.md).")
		fs.PrintDefaults()
		writeEras(out)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	if *slots < 1 {
		return usageError{fmt.Errorf("--slots %d: want at least 1", *slots)}
	}
	profile, err := workload.ParseProfile(*profileName)
	if err != nil {
		return usageError{fmt.Errorf("--profile: %w", err)}
	}
	if *custody >= 0 {
		if *custody < 4 || *custody > 128 {
			return usageError{fmt.Errorf("--custody %d: want 4..128", *custody)}
		}
		if profile, err = profile.WithCustody(*custody); err != nil {
			return usageError{fmt.Errorf("--custody: %w", err)}
		}
	}
	// The era sets its figures first; a parameter flag given on the command line wins.
	p := workload.DefaultParams()
	if err := p.ApplyEra(*era); err != nil {
		return usageError{fmt.Errorf("--era: %w", err)}
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "validators":
			p.Validators = def.Validators
		case "participation":
			p.Participation = def.Participation
		case "block-probability":
			p.BlockProbability = def.BlockProbability
		case "block-bytes":
			p.BlockMedianBytes = def.BlockMedianBytes
		case "blobs-max":
			p.BlobsMax = def.BlobsMax
		case "aggregator-complete":
			p.AggregatorCompleteShare = def.AggregatorCompleteShare
		case "aggregator-miss":
			p.AggregatorMissShare = def.AggregatorMissShare
		}
	})
	p.Seed = *seed
	p.ForkDigest = *forkDigest
	g, err := workload.NewGenerator(p)
	if err != nil {
		return usageError{err}
	}

	var tw *workload.TraceWriter
	var traceFile *trace.Writer
	if *tracePath != "" {
		traceFile, err = trace.Create(*tracePath, workload.TraceHeader(p, profile, *slots))
		if err != nil {
			return err
		}
		defer traceFile.Close()
		if tw, err = workload.NewTraceWriter(traceFile, profile); err != nil {
			return err
		}
	}
	var stats workload.Stats
	var content *workload.ContentStats
	if *statsOut {
		content = &workload.ContentStats{}
	}
	frames := 0
	for range *slots {
		msgs, err := g.NextSlot()
		if err != nil {
			return err
		}
		stats.Add(msgs, &profile)
		if content != nil {
			// Network-wide: content statistics describe what is published, not one profile.
			if err := content.Add(msgs); err != nil {
				return err
			}
		}
		if tw != nil {
			n, err := tw.WriteSlot(msgs)
			if err != nil {
				return fmt.Errorf("write %s: %w", *tracePath, err)
			}
			frames += n
		}
	}
	if traceFile != nil {
		if err := traceFile.Close(); err != nil {
			return fmt.Errorf("close %s: %w", *tracePath, err)
		}
	}
	if *jsonOut {
		return writeWorkloadJSON(stdout, profile.Name, *slots, p.Seed, p.Era, &stats, content)
	}
	writeWorkloadTable(stdout, profile, *slots, p.Seed, p.Era, &stats)
	if content != nil {
		fmt.Fprintln(stdout)
		writeContentTable(stdout, content)
	}
	if *tracePath != "" {
		fmt.Fprintf(stdout, "\nwrote %d frames to %s\n", frames, *tracePath)
	}
	return nil
}

// writeEras lists the known eras with their figures and sources (--help).
func writeEras(w io.Writer) {
	fmt.Fprintln(w, "\neras (--era; a parameter flag given beside it overrides the era's figure):")
	for _, e := range workload.Eras() {
		blobs := "no blobs"
		if e.BlobMax > 0 {
			p := workload.DefaultParams()
			_ = p.ApplyEra(e.Name)
			blobs = fmt.Sprintf("blobs %d/%d (target/max): %.0f %% of blocks carry %d..%d, uniform", e.BlobTarget, e.BlobMax, 100*p.BlobBlockShare, p.BlobsMin, p.BlobsMax)
		}
		fmt.Fprintf(w, "  %s: gas limit %d M; MEV-Boost %.0f %% of blocks (median %d kB SSZ, %d M gas), local %d kB, %.1f M gas; %s; rollup calldata %.0f %% of transaction bytes\n",
			e.Name, e.GasLimit/1_000_000, 100*e.MEVBlockShare, e.MEVBlockBytes/1000, e.MEVGasUsed/1_000_000, e.LocalBlockBytes/1000,
			float64(e.LocalGasUsed)/1e6, blobs, 100*e.RollupCalldataShare)
		fmt.Fprintf(w, "    sources: %s\n", e.Source)
	}
}

type workloadCategoryJSON struct {
	MessagesPerSlot float64 `json:"messages_per_slot"`
	MeanSSZBytes    float64 `json:"mean_ssz_bytes"`
	MeanSnappyBytes float64 `json:"mean_snappy_bytes"`
	MiBPerHour      float64 `json:"mib_per_hour"`
}

type contentFigureJSON struct {
	Category  gossip.Category `json:"category"`
	Statistic string          `json:"statistic"`
	Value     float64         `json:"value"`
	Target    float64         `json:"target,omitempty"`
	Unit      string          `json:"unit,omitempty"`
	Source    string          `json:"source"`
	Within    bool            `json:"within"`
	Conflict  string          `json:"conflict,omitempty"`
}

func writeWorkloadJSON(w io.Writer, profile string, slots int, seed int64, era string, s *workload.Stats, content *workload.ContentStats) error {
	out := struct {
		Profile    string                                   `json:"profile"`
		Slots      int                                      `json:"slots"`
		Seed       int64                                    `json:"seed"`
		Era        string                                   `json:"era"`
		Categories map[gossip.Category]workloadCategoryJSON `json:"categories"`
		Content    []contentFigureJSON                      `json:"content,omitempty"`
	}{profile, slots, seed, era, map[gossip.Category]workloadCategoryJSON{}, nil}
	if content != nil {
		for _, f := range content.Figures() {
			out.Content = append(out.Content, contentFigureJSON{f.Category, f.Name, f.Value, f.Target, f.Unit, f.Source, f.Within(), f.Conflict})
		}
	}
	for _, c := range messageCategories {
		out.Categories[c] = workloadCategoryJSON{
			MessagesPerSlot: s.PerSlot(c),
			MeanSSZBytes:    s.MeanSSZ(c),
			MeanSnappyBytes: s.MeanSnappy(c),
			MiBPerHour:      s.MiBPerHour(c),
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

func writeWorkloadTable(w io.Writer, profile workload.Profile, slots int, seed int64, era string, s *workload.Stats) {
	rec := workload.RecordingFigures(profile.Name)
	fmt.Fprintf(w, "profile %s (%d attestation subnets, %d sync subnets, %d custody columns), %d slots, seed %d, era %s\n",
		profile.Name, len(profile.AttestationSubnets), len(profile.SyncSubnets), len(profile.Columns), slots, seed, era)
	fmt.Fprintln(w, "one copy of each message; rec. = the recording (docs/inputs.md), whose MiB/h counts every copy received")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "category\tmsgs/slot\trec.\tmean SSZ B\trec.\tmean ssz_snappy B\traw/Snappy\trec.\tMiB/h\trec. MiB/h\trec. copies\trec. ÷ copies\t")
	var total, totalRec float64
	for _, c := range messageCategories {
		r := rec[c]
		fmt.Fprintf(tw, "%s\t%.1f\t%s\t%.0f\t%s\t%.0f\t%.3f\t%s\t%.1f\t%s\t%s\t%s\t\n", c,
			s.PerSlot(c), opt(r.MessagesPerSlot, "%.1f"), s.MeanSSZ(c), opt(r.SSZBytes, "%.0f"), s.MeanSnappy(c),
			s.SnappyRatio(c), opt(r.SnappyRatio, "%.2f"), s.MiBPerHour(c), opt(r.MiBPerHour, "%.1f"),
			opt(r.Copies, "%.1f"), opt(div(r.MiBPerHour, r.Copies), "%.1f"))
		total += s.MiBPerHour(c)
		totalRec += div(r.MiBPerHour, r.Copies)
	}
	fmt.Fprintf(tw, "total\t\t\t\t\t\t\t\t%.1f\t\t\t%s\t\n", total, opt(totalRec, "%.1f"))
	tw.Flush()
}

// writeContentTable prints each content statistic beside its target and whether it is
// within the tolerance; a target given up for another says so.
func writeContentTable(w io.Writer, c *workload.ContentStats) {
	fmt.Fprintf(w, "content statistics over %d slots (%d blocks, %d transactions, %d aggregates, %d contributions; seen-sets reset every %d blocks)\n",
		c.Slots, c.Blocks, c.Txs, c.Aggregates, c.Contributions, workload.ContentWindow)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "category\tstatistic\tvalue\ttarget\tmet (±10 %)\tsource of the target")
	var missed []workload.ContentFigure
	for _, f := range c.Figures() {
		met := "yes"
		switch {
		case f.Target == 0:
			met = "—"
		case !f.Within() && f.Conflict != "":
			met = "no (see below)"
			missed = append(missed, f)
		case !f.Within():
			met = "NO"
		}
		target := "—"
		if f.Target != 0 {
			target = fmt.Sprintf("%.2f%s", f.Target, unitSuffix(f.Unit))
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f%s\t%s\t%s\t%s\n", f.Category, f.Name, f.Value, unitSuffix(f.Unit), target, met, f.Source)
	}
	tw.Flush()
	for _, f := range missed {
		fmt.Fprintf(w, "%s: %s\n", f.Name, f.Conflict)
	}
}

func unitSuffix(u string) string {
	switch u {
	case "":
		return ""
	case "%":
		return " %"
	}
	return " " + u
}

func opt(v float64, format string) string {
	if v == 0 {
		return "—"
	}
	return fmt.Sprintf(format, v)
}

func div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
