package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/sim/network"

	"github.com/streamsim/streamsim/sim/runner"
)

func init() {
	register("scenarios", "list the registered scenarios: their parameters (type, unit, default, description) and run flags", runScenariosCmd)
}

func runScenariosCmd(args []string) error { return listScenarios(args, os.Stdout) }

// scenarioInfo is one scenario as `streamsim scenarios --json` prints it.
type scenarioInfo struct {
	Name      string            `json:"name"`
	Summary   string            `json:"summary"`
	Report    result.ReportKind `json:"report"`
	Instances [3]int            `json:"instances"` // min, default, max
	// Clocks are the clocks its embedded runs take, EmbeddedClock the one without --clock.
	Clocks        []string       `json:"clocks"`
	EmbeddedClock string         `json:"embedded_clock"`
	Params        []runner.Param `json:"params"`
	Flags         []flagInfo     `json:"flags"`
}

type flagInfo struct {
	Name    string `json:"name"`
	Default string `json:"default"`
	Usage   string `json:"usage"`
}

func listScenarios(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("scenarios", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the scenarios as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var infos []scenarioInfo
	for _, sc := range runner.Scenarios() {
		info := scenarioInfo{Name: sc.Name, Summary: sc.Summary, Report: sc.Report, Params: sc.Declared(),
			Instances: [3]int{sc.MinInstances, sc.DefaultInstances, sc.MaxInstances}}
		info.EmbeddedClock = sc.EmbeddedParams(nil)[runner.ParamClock]
		info.Clocks = []string{string(network.ClockReal)}
		if sc.VirtualClock {
			info.Clocks = append(info.Clocks, string(network.ClockVirtual))
		}
		if info.Report == "" {
			info.Report = analysis.NodesKind
		}
		if sc.Flags != nil {
			own := flag.NewFlagSet(sc.Name, flag.ContinueOnError)
			sc.Flags(own)
			own.VisitAll(func(f *flag.Flag) { info.Flags = append(info.Flags, flagInfo{f.Name, f.DefValue, f.Usage}) })
		}
		infos = append(infos, info)
	}
	if *asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(infos)
	}
	for i, info := range infos {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: %s\n", info.Name, info.Summary)
		fmt.Fprintf(w, "  report %s; instances %d..%d (default %d); clocks %s (embedded clock %s)\n", info.Report, info.Instances[0], info.Instances[2], info.Instances[1],
			strings.Join(info.Clocks, ", "), info.EmbeddedClock)
		if len(info.Flags) > 0 {
			fmt.Fprintf(w, "  run flags (streamsim run --scenario %s):\n", info.Name)
			for _, f := range info.Flags {
				fmt.Fprintf(w, "    --%s (default %q): %s\n", f.Name, f.Default, f.Usage)
			}
		}
		fmt.Fprintln(w, "  parameters (--set name=value; the common ones first):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "    name\ttype\tunit\tdefault\tdescription")
		for _, p := range info.Params {
			unit := p.Unit
			if unit == "" {
				unit = "-"
			}
			def := p.Default
			if def == "" {
				def = `""`
			}
			fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\n", p.Name, p.Type, unit, def, p.Desc)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
