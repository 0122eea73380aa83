package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/sim"
	"github.com/streamsim/streamsim/workload"
)

func init() {
	register("run", "run a scenario in this process and print its table (the default command; --scenario hub-leaves by default)", runRunCmd)
}

// Defaults of `streamsim run` are the scenario's (sim.DefaultSlots, sim.DefaultTimeScale):
// about a minute with no drops and lag under a slot on two cores (README, run section).
const (
	defaultRunSlots     = sim.DefaultSlots
	defaultRunTimeScale = sim.DefaultTimeScale
)

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

func runRunCmd(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	scenario := fs.String("scenario", sim.HubLeaves.Name, "scenario to run: "+scenarioNames())
	slots := fs.Int("slots", defaultRunSlots, "slots of workload to publish")
	timeScale := fs.Float64("time-scale", defaultRunTimeScale, "speed-up over real time (slot = 12 s / time scale; heartbeat scales too)")
	profile := fs.String("profile", "all-subnets", "hub-leaves: the leaves' subscription profile: "+strings.Join(workload.ProfileNames, ", "))
	leaves := fs.String("leaves", "plain,snappy-stream,zstd", "hub-leaves: leaf codec specs, comma-separated, one leaf each")
	payload := fs.String("payload", gossip.PayloadSSZSnappy, "payload inside compressed streams: ssz_snappy or ssz")
	publishers := fs.Int("publishers", 4, "hub-leaves: publisher nodes standing in for the network")
	seed := fs.Int64("seed", 1, "workload (and topology) seed")
	validators := fs.Int("validators", workload.DefaultParams().Validators, "active validators of the workload (fewer: lighter traffic)")
	out := fs.String("out", "", "outputs directory (Testground layout <group>/<instance>/); default: a new temporary directory")
	record := fs.Bool("record", false, "record RPC frames ("+sim.TraceFile+" per recording node)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object instead of the table")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	sets := setFlags{}
	fs.Var(sets, "set", "scenario parameter name=value (repeatable; see `streamsim scenarios`)")
	extra := registerScenarioFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	sc, err := sim.Lookup(*scenario)
	if err != nil {
		return usageError{fmt.Errorf("--scenario: %w", err)}
	}
	params := map[string]string{
		sim.ParamProfile:    *profile,
		sim.ParamSlots:      strconv.Itoa(*slots),
		sim.ParamTimeScale:  strconv.FormatFloat(*timeScale, 'g', -1, 64),
		sim.ParamPayload:    *payload,
		sim.ParamSeed:       strconv.FormatInt(*seed, 10),
		sim.ParamRecord:     strconv.FormatBool(*record),
		sim.ParamValidators: strconv.Itoa(*validators),
	}
	var groups []sim.Group
	switch sc {
	case sim.HubLeaves:
		specs, err := sim.ParseCodecs(*leaves)
		if err != nil {
			return usageError{fmt.Errorf("--leaves: %w", err)}
		}
		if *publishers < 1 {
			return usageError{fmt.Errorf("--publishers %d: want at least 1", *publishers)}
		}
		params[sim.ParamPublishers] = strconv.Itoa(*publishers)
		groups = sim.HubLeavesGroups(*publishers, specs)
	default:
		if groups, err = extra.groups(sc, params); err != nil {
			return usageError{err}
		}
	}
	for k, v := range sets {
		params[k] = v
	}
	// Every parameter is checked here, before any node starts, with the scenario's own
	// messages (the same a Testground run gives).
	if err := checkGroups(sc, params, groups); err != nil {
		return usageError{flagError(err)}
	}
	dir := *out
	if dir == "" {
		if dir, err = os.MkdirTemp("", "streamsim-run-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if sc == sim.Mesh {
		runs, err := extra.abRuns(*seed)
		if err != nil {
			return usageError{err}
		}
		if runs != nil {
			debug.SetGCPercent(400)
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			return runMeshAB(ctx, runs, params, groups[0].Instances, dir, *asJSON)
		}
	}
	e := &sim.Embedded{Scenario: sc.Name, Out: dir, Groups: groups, Params: params}
	if isTerminal(os.Stderr) {
		e.Progress = os.Stderr
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
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
	// memory the machine has.
	debug.SetGCPercent(400)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	started := time.Now()
	runErr := e.Run(ctx)
	if sc != sim.HubLeaves {
		return extra.report(sc, dir, runErr, *asJSON, started)
	}
	r, err := analysis.LoadRun(dir)
	if err != nil {
		if runErr != nil {
			return fmt.Errorf("hub-leaves: %w", runErr)
		}
		return err
	}
	var w io.Writer = os.Stdout
	if *asJSON {
		err = analysis.WriteLiveJSON(w, r)
	} else {
		err = analysis.WriteLiveTable(w, r)
		fmt.Fprintf(w, "outputs: %s (%s)\n", dir, time.Since(started).Round(time.Second))
	}
	if err != nil {
		return err
	}
	switch {
	case !r.Parity.OK:
		return errors.New(r.Parity.Message)
	case !r.Schedule.KeptUp:
		return fmt.Errorf("the run did not keep up at time scale %g (max lag %.0f ms against a %.0f ms slot, %d drops): lower --time-scale or --slots",
			*timeScale, r.Schedule.MaxLagMs, r.Schedule.SlotMs, r.Drops)
	case runErr != nil:
		return fmt.Errorf("hub-leaves: %w", runErr)
	case !r.OK:
		return fmt.Errorf("hub-leaves: %s", strings.Join(r.Problems, "; "))
	}
	return nil
}

// flagError names the flag of a scenario parameter error: a common parameter's own flag
// (--time-scale for time_scale), otherwise --set name.
func flagError(err error) error {
	var pe *sim.ParamError
	if !errors.As(err, &pe) {
		return err
	}
	switch pe.Name {
	case sim.ParamSlots, sim.ParamTimeScale, sim.ParamProfile, sim.ParamPayload, sim.ParamSeed, sim.ParamValidators, sim.ParamPublishers:
		return fmt.Errorf("--%s: %w", strings.ReplaceAll(pe.Name, "_", "-"), pe.Err)
	}
	return fmt.Errorf("--set %s: %w", pe.Name, pe.Err)
}

// checkGroups parses and checks every group's parameters as its instances will.
func checkGroups(sc *sim.Scenario, params map[string]string, groups []sim.Group) error {
	for _, g := range groups {
		p := map[string]string{}
		for k, v := range params {
			p[k] = v
		}
		for k, v := range g.Params {
			p[k] = v
		}
		parsed, err := sc.ParseParams(p)
		if err == nil && sc.Check != nil {
			err = sc.Check(parsed, map[string]int{g.ID: g.Instances})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func scenarioNames() string {
	var names []string
	for _, s := range sim.Scenarios() {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// isTerminal reports whether f is a character device (a terminal), without x/term.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
