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
	register("run", "run the hub/leaf live check in this process and print its table (the default command)", runRunCmd)
}

// Defaults of `streamsim run` are the scenario's (sim.DefaultSlots, sim.DefaultTimeScale):
// about a minute with no drops and lag under a slot on two cores (README, run section).
const (
	defaultRunSlots     = sim.DefaultSlots
	defaultRunTimeScale = sim.DefaultTimeScale
)

func runRunCmd(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	slots := fs.Int("slots", defaultRunSlots, "slots of workload to publish")
	timeScale := fs.Float64("time-scale", defaultRunTimeScale, "speed-up over real time (slot = 12 s / time scale; heartbeat scales too)")
	profile := fs.String("profile", "all-subnets", "leaves' subscription profile: "+strings.Join(workload.ProfileNames, ", "))
	leaves := fs.String("leaves", "plain,snappy-stream,zstd", "leaf codec specs, comma-separated, one leaf each")
	payload := fs.String("payload", gossip.PayloadSSZSnappy, "payload inside compressed streams: ssz_snappy or ssz")
	publishers := fs.Int("publishers", 4, "publisher nodes standing in for the network")
	seed := fs.Int64("seed", 1, "workload seed")
	validators := fs.Int("validators", workload.DefaultParams().Validators, "active validators of the workload (fewer: lighter traffic)")
	out := fs.String("out", "", "outputs directory (Testground layout <group>/<instance>/); default: a new temporary directory")
	record := fs.Bool("record", false, "record every RPC frame of every stream direction ("+sim.TraceFile+" per node)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object instead of the table")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	specs, err := sim.ParseCodecs(*leaves)
	if err != nil {
		return usageError{fmt.Errorf("--leaves: %w", err)}
	}
	if _, err := workload.ParseProfile(*profile); err != nil {
		return usageError{fmt.Errorf("--profile: %w", err)}
	}
	if _, err := gossip.ParsePayload(*payload); err != nil {
		return usageError{fmt.Errorf("--payload: %w", err)}
	}
	switch {
	case *slots < 1:
		return usageError{fmt.Errorf("--slots %d: want at least 1", *slots)}
	case !(*timeScale > 0) || *timeScale > 1000:
		return usageError{fmt.Errorf("--time-scale %g: want a number in (0, 1000]", *timeScale)}
	case *publishers < 1:
		return usageError{fmt.Errorf("--publishers %d: want at least 1", *publishers)}
	case *validators < 32:
		return usageError{fmt.Errorf("--validators %d: want at least 32", *validators)}
	}
	dir := *out
	if dir == "" {
		if dir, err = os.MkdirTemp("", "streamsim-run-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
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
	e := &sim.Embedded{Out: dir, Leaves: specs, Params: params, Publishers: *publishers}
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

// isTerminal reports whether f is a character device (a terminal), without x/term.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
