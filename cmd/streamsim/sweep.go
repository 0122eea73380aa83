package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/streamsim/streamsim/analysis/replay"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/sim/runner"
	"github.com/streamsim/streamsim/units"
	"github.com/streamsim/streamsim/workload"
)

func init() {
	register("sweep", "replay traces through a codec × history grid; relative bytes, CPU, memory, charts", runSweepCmd)
}

func runSweepCmd(args []string) error {
	var progress io.Writer
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		progress = os.Stderr
	}
	return runSweep(args, os.Stdout, os.Stderr, progress)
}

var sweepFormats = []string{"md", "csv", "json"}

// runSweep runs the sweep command; stderr gets the memory plan, and progress, if not nil, a
// progress line (a terminal).
func runSweep(args []string, stdout, stderr, progress io.Writer) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	codecs := fs.String("codecs", replay.DefaultGridList, "comma-separated configurations: "+replay.ConfigForms)
	format := fs.String("format", "md", "table format on stdout: "+strings.Join(sweepFormats, ", "))
	outDir := fs.String("out", "", "also write sweep.md, sweep.csv, sweep.json and PNG/SVG charts to this directory")
	payloads := fs.String("payload", gossip.PayloadSSZSnappy+","+gossip.PayloadSSZ, "payload modes inside compressed streams: "+gossip.PayloadSSZSnappy+", "+gossip.PayloadSSZ)
	profiles := fs.String("profile", "all-subnets,default", "views, each the traces filtered to a profile's topics ("+strings.Join(workload.ProfileNames, ", ")+", or recorded: unfiltered)")
	split := fs.Float64("train-split", 0.25, "share of each trace's time that only trains dictionaries (0 <= split < 1); all configurations are measured on the rest")
	direction := fs.String("direction", "all", "stream directions to replay, from the recording node's view: in, out or all (the proposal's figures are inbound)")
	layout := fs.String("layout", replay.LayoutOneStream, "stream layouts, comma-separated: "+strings.Join(replay.Layouts, ", ")+
		" (the Topic Streams extension, libp2p/specs #729: a control stream and one stream per topic per peer and direction); each measured against today's plain bytes on one stream")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "configurations replayed in parallel")
	budget := fs.String("memory-budget", units.FormatSize(int(replay.DefaultMemoryBudget)), "memory the sweep may use ("+units.BytesForms+
		"): it estimates each configuration's codec state beforehand and replays configurations together while they fit, then in turn, "+
		"or a configuration's stream directions in groups; it refuses a budget too small for one stream direction")
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintln(out, "usage: streamsim sweep [flags] TRACE...")
		fmt.Fprintln(out, "\nReplays every stream direction of the traces (from `streamsim workload --trace` or a run's recorder)")
		fmt.Fprintln(out, "through each configuration, decodes it back and compares, and prints bytes relative to today's per")
		fmt.Fprintln(out, "category next to the proposal's published figures, with codec CPU and memory per stream direction.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageError{errors.New("no trace given (usage: streamsim sweep [flags] TRACE...)")}
	}
	grid, err := replay.ParseGrid(*codecs)
	if err != nil {
		return usageError{fmt.Errorf("--codecs: %w", err)}
	}
	switch *format {
	case "md", "csv", "json":
	default:
		return usageError{fmt.Errorf("--format %q: allowed %s", *format, strings.Join(sweepFormats, ", "))}
	}
	var modes []string
	for _, p := range splitList(*payloads) {
		if _, err := gossip.ParsePayload(p); err != nil {
			return usageError{fmt.Errorf("--payload: %w", err)}
		}
		modes = append(modes, p)
	}
	if len(modes) == 0 {
		return usageError{fmt.Errorf("--payload: empty (allowed: %s, %s)", gossip.PayloadSSZSnappy, gossip.PayloadSSZ)}
	}
	views := splitList(*profiles)
	for _, v := range views {
		if v == "recorded" {
			continue
		}
		if _, err := workload.ParseProfile(v); err != nil {
			return usageError{fmt.Errorf("--profile: %w (or recorded)", err)}
		}
	}
	if len(views) == 0 {
		return usageError{errors.New("--profile: empty")}
	}
	if *split < 0 || *split >= 1 {
		return usageError{fmt.Errorf("--train-split %g: want 0 <= split < 1", *split)}
	}
	dir := *direction
	switch dir {
	case "all":
		dir = ""
	case "in", "out":
	default:
		return usageError{fmt.Errorf("--direction %q: allowed in, out, all", *direction)}
	}
	layouts, err := replay.ParseLayouts(*layout)
	if err != nil {
		return usageError{fmt.Errorf("--layout: %w", err)}
	}
	if *workers < 1 {
		return usageError{fmt.Errorf("--workers %d: want at least 1", *workers)}
	}
	memBudget, err := units.ParseBytes(*budget)
	if err != nil {
		return usageError{fmt.Errorf("--memory-budget: %w", err)}
	}
	for _, c := range grid {
		if c.Dict && *split == 0 {
			return usageError{fmt.Errorf("--codecs has %s but --train-split is 0: a dictionary needs a training part", c.Name)}
		}
	}

	opts := replay.Options{Grid: grid, Payloads: modes, Profiles: views, TrainSplit: *split, Direction: dir, Layouts: layouts, Workers: *workers, MemoryBudget: memBudget}
	opts.Plan = func(p *replay.MemoryPlan) {
		fmt.Fprintln(stderr, "sweep: "+p.String())
		// The budget is the user's; the machine may have less to give right now.
		if avail := runner.MemAvailable(); avail > 0 && p.PeakBytes > avail {
			fmt.Fprintf(stderr, "sweep: warning: the estimated peak %s is above the memory this machine has available now (%s, /proc/meminfo MemAvailable): a smaller --memory-budget replays in more passes within it\n",
				units.FormatBytes(p.PeakBytes), units.FormatBytes(avail))
		}
	}
	if progress != nil {
		start := time.Now()
		opts.Progress = func(done, total int, last string) {
			el := time.Since(start)
			eta := time.Duration(float64(el) / float64(done) * float64(total-done))
			fmt.Fprintf(progress, "\r\033[Ksweep: %d/%d configurations, %s elapsed, ETA %s; done %s",
				done, total, el.Round(time.Second), eta.Round(time.Second), last)
			if done == total {
				fmt.Fprintln(progress)
			}
		}
	}
	rep, err := replay.Sweep(fs.Args(), opts)
	var be *replay.BudgetError
	if errors.As(err, &be) {
		return fmt.Errorf("--memory-budget %s is too small for even one configuration: the smallest pass (%s) needs an estimated %s; --memory-budget %s would fit (--memory-budget %s replays every configuration at once, estimated %s)",
			*budget, be.Unit, units.FormatBytes(be.Need), units.FormatSize(int(be.Fits)), units.FormatSize(int(be.AllFits)), units.FormatBytes(be.AllAtOnce))
	}
	if err != nil {
		return err
	}
	write := map[string]func(io.Writer) error{"md": rep.WriteMarkdown, "csv": rep.WriteCSV, "json": rep.WriteJSON}
	if err := write[*format](stdout); err != nil {
		return err
	}
	if *outDir == "" {
		return nil
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	for _, f := range sweepFormats {
		path := filepath.Join(*outDir, "sweep."+f)
		file, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		err = write[f](file)
		if cerr := file.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close %s: %w", path, cerr)
		}
		if err != nil {
			return err
		}
	}
	charts, err := rep.WriteCharts(*outDir)
	if err != nil {
		return err
	}
	if progress != nil {
		fmt.Fprintf(progress, "wrote sweep.md, sweep.csv, sweep.json and %d chart files to %s\n", len(charts), *outDir)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
