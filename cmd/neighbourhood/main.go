// Command neighbourhood runs the neighbourhood scenario (package neighbourhood) in one
// process and prints its calibration table, until the scenario registry can run it as
// `streamsim run --scenario neighbourhood`.
//
//	go run ./cmd/neighbourhood                  # the calibration form
//	go run ./cmd/neighbourhood -set subnets=1 -slots 3 -warmup 2
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"

	"github.com/streamsim/streamsim/neighbourhood"
	"github.com/streamsim/streamsim/sim"
	"github.com/streamsim/streamsim/topology"
)

type setFlags map[string]string

func (s setFlags) String() string { return fmt.Sprint(map[string]string(s)) }
func (s setFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("-set %q: want name=value", v)
	}
	s[strings.TrimSpace(k)] = val
	return nil
}

func main() {
	cfg := neighbourhood.DefaultConfig()
	set := setFlags{}
	flag.Var(set, "set", "population parameter name=value (repeatable): "+strings.Join([]string{topology.ParamTopologySeed,
		topology.ParamObservedPeers, topology.ParamObservedClient, topology.ParamSubnets, topology.ParamMix, topology.ParamClients,
		topology.ParamDegrees, topology.ParamDialledShare, topology.ParamBoundary}, ", "))
	flag.IntVar(&cfg.Slots, "slots", cfg.Slots, "measured slots")
	flag.IntVar(&cfg.Warmup, "warmup", cfg.Warmup, "warm-up slots (not measured)")
	flag.Float64Var(&cfg.TimeScale, "time-scale", cfg.TimeScale, "speed-up over real time")
	flag.Int64Var(&cfg.Seed, "seed", cfg.Seed, "workload seed")
	flag.IntVar(&cfg.Validators, "validators", cfg.Validators, "active validators")
	flag.IntVar(&cfg.Copies, "copies", cfg.Copies, "boundary peers delivering each message to each real peer")
	vd := flag.String("validation-delay", sim.DefaultValidationDelay, "per-category validation delay (category:min-max,...; off)")
	flag.Parse()
	pop, err := topology.ParseNeighbourhoodParams(set)
	if err != nil {
		fail(err)
	}
	cfg.Population = pop
	if cfg.Validation, err = sim.ParseValidationDelays(*vd); err != nil {
		fail(err)
	}
	if !(cfg.TimeScale > 0) {
		fail(fmt.Errorf("flag -time-scale %g: want a positive number", cfg.TimeScale))
	}
	cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := neighbourhood.Run(ctx, cfg)
	if err != nil {
		fail(err)
	}
	rep.Print(os.Stdout)
	if !rep.Complete() {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "neighbourhood:", err)
	os.Exit(2)
}
