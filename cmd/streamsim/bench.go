package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/streamsim/streamsim/bench"
)

func init() {
	register("bench", "time every Snappy and zstd implementation per payload type, after a cross-compatibility check", runBenchCmd)
}

func runBenchCmd(args []string) error {
	var progress io.Writer
	if isTerminal(os.Stderr) {
		progress = os.Stderr
	}
	return runBench(args, os.Stdout, progress)
}

// errIncompatible is returned when an implementation's Snappy blocks fail another's decoder.
var errIncompatible = errors.New("cross-compatibility check failed")

func runBench(args []string, stdout, progress io.Writer) error {
	def := bench.DefaultOptions()
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	seed := fs.Int64("seed", def.Seed, "workload seed of the payloads")
	slots := fs.Int("slots", def.Slots, "slots of workload traffic the payloads come from")
	rounds := fs.Int("rounds", def.Rounds, "timed rounds per figure; the median is reported")
	roundTime := fs.Duration("round-time", def.RoundTime, "least duration of one timed round")
	impls := fs.String("impls", "", "comma-separated implementations to time (default all in this build)")
	payloads := fs.String("payloads", "", "comma-separated payload types (default all: "+strings.Join(bench.PayloadNames, ", ")+")")
	catSlots := fs.Int("category-slots", def.CategorySlots, "slots of all-subnets frames for the per-category table of snappy-stream's levels (0: leave it out)")
	markdown := fs.Bool("markdown", false, "print Markdown tables")
	jsonOut := fs.Bool("json", false, "print one JSON object")
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintln(out, "usage: streamsim bench [flags]")
		fmt.Fprintln(out, "\nFor each payload type of the workload and each codec implementation in this build, the")
		fmt.Fprintln(out, "encode and decode time per message, MB/s and compressed size, side by side; before timing,")
		fmt.Fprintln(out, "every Snappy implementation's blocks are decoded by every Snappy decoder. libsnappy (C++)")
		fmt.Fprintln(out, "needs -tags libsnappy (scripts/bench.sh libsnappy), zstd-c needs cgo.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	if *markdown && *jsonOut {
		return usageError{errors.New("--markdown and --json exclude each other")}
	}
	if *catSlots < 0 {
		return usageError{fmt.Errorf("--category-slots %d: want 0 or more", *catSlots)}
	}
	if *slots < 1 || *rounds < 1 || *roundTime <= 0 {
		return usageError{fmt.Errorf("--slots %d, --rounds %d, --round-time %v: want positive values", *slots, *rounds, *roundTime)}
	}
	o := bench.Options{Seed: *seed, Slots: *slots, Rounds: *rounds, RoundTime: *roundTime, CategorySlots: *catSlots,
		Impls: splitList(*impls), Payloads: splitList(*payloads)}
	if progress != nil {
		start := time.Now()
		o.Progress = func(done, total int, what string) {
			if what == "" {
				fmt.Fprintf(progress, "\r\033[K")
				return
			}
			eta := ""
			if done > 0 {
				eta = ", about " + (time.Since(start) / time.Duration(done) * time.Duration(total-done)).Round(time.Second).String() + " left"
			}
			fmt.Fprintf(progress, "\r\033[Kbench %d/%d: %s%s", done+1, total, what, eta)
		}
	}
	rep, err := bench.Run(o)
	if err != nil {
		if strings.Contains(err.Error(), "allowed:") {
			return usageError{err}
		}
		return err
	}
	switch {
	case *jsonOut:
		err = rep.JSON(stdout)
	case *markdown:
		err = rep.Markdown(stdout)
	default:
		err = rep.Text(stdout)
	}
	if err != nil {
		return err
	}
	if !rep.Matrix.OK() {
		return errIncompatible
	}
	return nil
}
