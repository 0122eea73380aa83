package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/streamsim/streamsim/sim/network"
	"github.com/streamsim/streamsim/units"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/sim/runner"
)

func init() {
	register("run", "run a scenario in this process and print its report (the default command; --scenario hub-leaves by default)", runRunCmd)
}

// defaultScenario is what `streamsim run` runs without --scenario: the proposal's live check.
var defaultScenario = runner.DefaultScenario

// setFlags collects repeated --set name=value flags.
type setFlags map[string]string

func (s setFlags) String() string { return "" }
func (s setFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("%q is not name=value", v)
	}
	s[strings.TrimSpace(k)] = val
	return nil
}

// paramFlag is the flag of a common scenario parameter: its value as the parameter's string.
type paramFlag struct {
	value  string
	isBool bool
}

func (f *paramFlag) String() string {
	if f == nil {
		return ""
	}
	return f.value
}
func (f *paramFlag) Set(v string) error { f.value = v; return nil }
func (f *paramFlag) IsBoolFlag() bool   { return f.isBool }

// runCommand is `streamsim run`'s flag set for one scenario: the common parameters' flags,
// the command's own, and the scenario's (runner.Scenario.Flags).
type runCommand struct {
	fs         *flag.FlagSet
	sc         *runner.Scenario
	params     map[string]*paramFlag
	sets       setFlags
	out        *string
	asJSON     *bool
	cpuProfile *string
	memLimit   *string
	own        runner.RunFlags
}

// scenarioArg finds --scenario's value among args without parsing them (the flag set depends
// on it); "" when absent.
func scenarioArg(args []string) string {
	for i, a := range args {
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "scenario" {
			continue
		}
		if hasVal {
			return val
		}
		if i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func newRunCommand(sc *runner.Scenario) *runCommand {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	c := &runCommand{fs: fs, sc: sc, params: map[string]*paramFlag{}, sets: setFlags{}}
	fs.String("scenario", defaultScenario, "scenario to run: "+scenarioNames()+" (streamsim scenarios lists them with their parameters)")
	declared := map[string]runner.Param{}
	for _, p := range sc.Declared() {
		declared[p.Name] = p
	}
	for _, name := range runner.FlagParams {
		d := declared[name]
		f := &paramFlag{value: d.Default, isBool: d.Type == "bool"}
		c.params[name] = f
		usage := d.Desc
		if d.Unit != "" {
			usage += " (" + d.Unit + ")"
		}
		fs.Var(f, runner.FlagName(name), usage)
	}
	c.out = fs.String("out", "", "outputs directory (Testground layout <group>/<instance>/); default: a new temporary directory")
	c.asJSON = fs.Bool("json", false, "print the report as one JSON object instead of the table")
	c.cpuProfile = fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	c.memLimit = fs.String("heap-limit", "", "the run's memory limit, Go's soft limit on its heap ("+units.BytesForms+"): near it the collector runs more often instead of the heap growing; "+
		"default the smaller of "+units.FormatSize(defaultMemoryLimit)+" and three quarters of the memory available at start; GOMEMLIMIT, when set, wins; "+
		"a run whose peak passes it says so in its report")
	fs.Var(c.sets, "set", "any parameter of the scenario, as name=value (repeatable; streamsim scenarios lists them)")
	if sc.Flags != nil {
		c.own = sc.Flags(fs)
	}
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: streamsim run [--scenario name] [flags]\n\nRuns scenario %s (%s) in this process and prints its report.\n", sc.Name, sc.Summary)
		fmt.Fprintln(w, "Other scenarios' flags: streamsim run --scenario <name> -h; every parameter: streamsim scenarios.")
		fmt.Fprintln(w, "\nflags:")
		fs.PrintDefaults()
	}
	return c
}

func runRunCmd(args []string) error {
	name := scenarioArg(args)
	if name == "" {
		name = defaultScenario
	}
	sc, err := runner.Lookup(name)
	if err != nil {
		return usageError{fmt.Errorf("--scenario: %w", err)}
	}
	c := newRunCommand(sc)
	if err := parseFlags(c.fs, args); err != nil {
		return err
	}
	if c.fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", c.fs.Args())}
	}
	if c.own == nil {
		return fmt.Errorf("scenario %s declares no run flags (runner.Scenario.Flags): streamsim run cannot build its groups", sc.Name)
	}
	params := map[string]string{}
	for name, f := range c.params {
		params[name] = f.value
	}
	if !c.timeScaleGiven() {
		// The time scale's default is no choice of clock: EmbeddedParams reads a time scale
		// given as asking for the real clock.
		delete(params, runner.ParamTimeScale)
	}
	for k, v := range c.sets {
		params[k] = v
	}
	params = sc.EmbeddedParams(params) // the scenario's clock unless --clock or --time-scale says
	if _, ok := params[runner.ParamTimeScale]; !ok {
		params[runner.ParamTimeScale] = c.params[runner.ParamTimeScale].value
	}
	if err := c.checkTimeScale(params); err != nil {
		return usageError{err}
	}
	runs, err := c.own.Runs(params)
	if err != nil {
		return usageError{err}
	}
	// Every parameter of every run is checked here, before any node starts, with the
	// scenario's own messages (the same a Testground run gives).
	for i, r := range runs {
		if runs[i].Parsed, err = sc.ParseGroups(r.Params, r.Groups); err != nil {
			return usageError{flagError(err, c.own)}
		}
	}
	kind, err := analysis.KindOf(sc.Report)
	if err != nil {
		return fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	dir := *c.out
	if dir == "" {
		if dir, err = os.MkdirTemp("", "streamsim-run-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	limit, err := runMemoryLimit(*c.memLimit, runner.MemAvailable())
	if err != nil {
		return usageError{fmt.Errorf("--heap-limit: %w", err)}
	}
	if *c.cpuProfile != "" {
		f, err := os.Create(*c.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	// Every node of the run shares this heap; collecting less often buys throughput with
	// memory the machine has, up to the memory limit (runMemoryLimit), near which the
	// collector runs more often instead: a heap target of 5× the live heap would be 13–19 GB
	// for the neighbourhood's full form (2.7–3.9 GB live).
	debug.SetGCPercent(400)
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := runAndReport(ctx, sc, kind, runs, dir, *c.asJSON, os.Stdout); err != nil {
		return err
	}
	if limit := debug.SetMemoryLimit(-1); limit < math.MaxInt64 {
		var ru syscall.Rusage
		if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil && ru.Maxrss<<10 > limit {
			fmt.Fprintf(os.Stderr, "run: warning: peak resident memory %s passed the memory limit %s: the run's live heap needed more than the limit (the collector ran at its busiest near it); a larger --heap-limit, or a smaller run, stays inside\n",
				units.FormatBytes(ru.Maxrss<<10), units.FormatBytes(limit))
		}
	}
	return nil
}

// defaultMemoryLimit is streamsim run's memory limit unless the machine has less to give:
// the same default as streamsim sweep's --memory-budget.
const defaultMemoryLimit = 8 << 30

// runMemoryLimit is the run's memory limit (debug.SetMemoryLimit): --heap-limit's value,
// or the smaller of defaultMemoryLimit and three quarters of avail (the memory available at
// start; 0: unknown).
func runMemoryLimit(flag string, avail int64) (int64, error) {
	if flag != "" {
		return units.ParseBytes(flag)
	}
	limit := int64(defaultMemoryLimit)
	if avail > 0 {
		limit = min(limit, avail/4*3)
	}
	return limit, nil
}

// timeScaleGiven reports whether --time-scale was given.
func (c *runCommand) timeScaleGiven() bool {
	given := false
	c.fs.Visit(func(f *flag.Flag) {
		if f.Name == runner.FlagName(runner.ParamTimeScale) {
			given = true
		}
	})
	return given
}

// checkTimeScale refuses a time scale asked for explicitly (--time-scale or --set time_scale)
// with the virtual clock, where simulated time runs at mainnet's pace and a scale means
// nothing; the default is ignored there (the summaries say time_scale 1).
func (c *runCommand) checkTimeScale(params map[string]string) error {
	if clock, err := network.ParseClock(params[runner.ParamClock]); err != nil || clock != network.ClockVirtual {
		return nil // a bad clock is reported with the other parameters
	}
	given := "--time-scale " + params[runner.ParamTimeScale]
	if v, set := c.sets[runner.ParamTimeScale]; set {
		given = "--set " + runner.ParamTimeScale + "=" + v // named as the user wrote it
	} else if !c.timeScaleGiven() {
		return nil
	}
	return fmt.Errorf("%s: means nothing with --clock virtual (simulated time runs at mainnet's pace whatever the machine does); drop it, or use --clock real", given)
}

// runAndReport makes the runs, then prints the report: one run's, or, for several runs of a
// kind that compares them, the comparison (with its charts), else each run's in turn.
func runAndReport(ctx context.Context, sc *runner.Scenario, kind analysis.Kind, runs []runner.Run, dir string, asJSON bool, w io.Writer) error {
	started := time.Now()
	var reports []analysis.Report
	var labels []analysis.ABRun
	var errs []error
	for i, r := range runs {
		out := dir
		if len(runs) > 1 {
			out = filepath.Join(dir, r.Name)
			if r.Name == "" {
				out = filepath.Join(dir, strconv.Itoa(i))
			}
		}
		e := &runner.Embedded{Scenario: sc.Name, Out: out, Groups: r.Groups, Params: r.Params, Parsed: r.Parsed}
		if isTerminal(os.Stderr) {
			if len(runs) > 1 {
				fmt.Fprintf(os.Stderr, "run %d of %d: %s\n", i+1, len(runs), r.Name)
			}
			e.Progress = os.Stderr
		}
		runErr := e.Run(ctx)
		rep, err := kind.Load(out)
		if err != nil {
			return errors.Join(runErr, err)
		}
		if runErr != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", sc.Name, r.Name, runErr))
		}
		reports = append(reports, rep)
		labels = append(labels, analysis.ABRun{Seed: r.Seed, Codec: r.Codec, Bandwidth: r.Bandwidth})
		// A run's nodes are gone once it returns, but Go keeps the pages of its peak (about
		// 5 GB for a 48-node zstd mesh: one codec window pair per stream) until its scavenger
		// gets to them; hand them back now so that a long comparison does not hold the sum of
		// its runs' peaks.
		debug.FreeOSMemory()
	}
	final := reports
	if len(reports) > 1 && kind.Compare != nil {
		cmp, err := kind.Compare(labels, reports)
		if err != nil {
			return err
		}
		final = []analysis.Report{cmp}
	}
	for _, rep := range final {
		var err error
		if asJSON {
			err = rep.WriteJSON(w)
		} else {
			err = rep.WriteTable(w)
		}
		if err != nil {
			return err
		}
		if ch, ok := rep.(analysis.Charter); ok {
			files, err := ch.WriteCharts(dir)
			if err != nil {
				errs = append(errs, err)
			} else if len(files) > 0 && !asJSON {
				fmt.Fprintf(w, "charts: %s\n", strings.Join(files, ", "))
			}
		}
		if err := rep.Outcome().Err(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", sc.Name, err))
		}
	}
	if !asJSON {
		fmt.Fprintf(w, "outputs: %s (%s)\n", dir, time.Since(started).Round(time.Second))
	}
	return errors.Join(errs...)
}

// flagError names the flag of a scenario parameter error: a common parameter's own flag
// (--time-scale for time_scale), the scenario's flag that sets it, otherwise --set name.
func flagError(err error, own runner.RunFlags) error {
	var pe *runner.ParamError
	if !errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("%s: %w", runner.FlagOf(pe.Name, own), pe.Err)
}

func scenarioNames() string {
	var names []string
	for _, s := range runner.Scenarios() {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// isTerminal reports whether f is a character device (a terminal), without x/term.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
