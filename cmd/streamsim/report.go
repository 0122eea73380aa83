package main

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/analysis/replay"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/sim/runner"
)

func init() {
	register("report", "read every report kind from any run's or sweep's outputs (embedded, Testground, Kubernetes): print the reports, or write one HTML page (--html)", runReportCmd)
}

// reportRun is one run found among the report's arguments.
type reportRun struct {
	label string // the composition's run id where it can be told, else the archive or directory name
	dir   string // the run's outputs: <group>/<instance>/summary.json below it
}

func runReportCmd(args []string) error { return runReport(args, os.Stdout) }

func runReport(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	jsonOut := fs.Bool("json", false, "print each run's report as JSON instead of tables")
	tables := fs.Bool("tables", false, "with several runs, also print each run's full live-check table")
	htmlOut := fs.String("html", "", "write one self-contained HTML page (inline SVG charts, nothing fetched when opened) of every argument's runs to this file instead of printing tables")
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintln(out, "usage: streamsim report [flags] <collected .tgz | outputs dir | sweep --out dir>...")
		fmt.Fprintln(out, "\nReads the outputs of any scenario's run (embedded, Testground, Kubernetes) and prints the report `streamsim run` prints.")
		fmt.Fprintln(out, "Arguments: archives written by `testground run … --collect` or `testground collect`; a run's")
		fmt.Fprintln(out, "outputs directory (<task>/ with <group>/<instance>/summary.json below it); or a directory")
		fmt.Fprintln(out, "holding several of either; or a sweep's --out directory (sweep.json, printed as its table).")
		fmt.Fprintln(out, "One run prints its table; several runs (a sweep composition's")
		fmt.Fprintln(out, "[[runs]]) print one row per run. Exit status 1 when any run fails its checks (parity, drops).")
		fmt.Fprintln(out, "--html OUT.html writes the decision report instead: the proposal's table beside the measured rows,")
		fmt.Fprintln(out, "then one section per argument and report kind (a mesh or neighbourhood A/B joined as `run` joins it,")
		fmt.Fprintln(out, "sweeps from their --out directory); an argument without a run is named on the page.")
		fmt.Fprintln(out, "\nflags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usageError{errors.New("no collected archive or outputs directory given")}
	}

	tmp, err := os.MkdirTemp("", "streamsim-report-")
	if err != nil {
		return fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	if *htmlOut != "" {
		failed, missing, err := writeHTMLReport(*htmlOut, fs.Args(), tmp)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s\n", *htmlOut)
		var errs []string
		if len(missing) > 0 {
			errs = append(errs, fmt.Sprintf("%d argument(s) held no readable run: %s", len(missing), strings.Join(missing, "; ")))
		}
		if len(failed) > 0 {
			errs = append(errs, fmt.Sprintf("%d run(s) failed their checks: %s", len(failed), strings.Join(failed, ", ")))
		}
		if len(errs) > 0 {
			return errors.New(strings.Join(errs, "; "))
		}
		return nil
	}

	var runs []reportRun
	for _, arg := range fs.Args() {
		found, err := findReportRuns(arg, tmp)
		if err != nil {
			return err
		}
		runs = append(runs, found...)
	}
	if len(runs) == 0 {
		return errors.New("no runs found")
	}
	trimCommonLabelPrefix(runs)

	// Each run is read with its scenario's report kind; runs of one kind that can be joined
	// into one table (a sweep composition's [[runs]]) are, the others print one by one.
	type kindRuns struct {
		kind    analysis.Kind
		labels  []string
		reports []analysis.Report
	}
	var order []result.ReportKind
	byKind := map[result.ReportKind]*kindRuns{}
	for _, run := range runs {
		kind, err := reportKindOf(run.dir)
		if err != nil {
			return fmt.Errorf("run %s: %w", run.label, err)
		}
		rep, err := kind.Load(run.dir)
		if err != nil {
			return fmt.Errorf("run %s: %w", run.label, err)
		}
		if d, ok := rep.(interface{ SetDir(string) }); ok {
			d.SetDir(run.label)
		}
		k := byKind[kind.Name]
		if k == nil {
			k = &kindRuns{kind: kind}
			byKind[kind.Name] = k
			order = append(order, kind.Name)
		}
		k.labels = append(k.labels, run.label)
		k.reports = append(k.reports, rep)
	}
	var failed []string
	for _, name := range order {
		k := byKind[name]
		joined := len(k.reports) > 1 && k.kind.WriteRuns != nil && !*jsonOut
		for i, rep := range k.reports {
			var err error
			switch {
			case *jsonOut:
				err = rep.WriteJSON(w)
			case joined && !*tables:
			default:
				if len(runs) > 1 {
					fmt.Fprintf(w, "== run %s\n", k.labels[i])
				}
				if err = rep.WriteTable(w); err == nil && len(runs) > 1 {
					fmt.Fprintln(w)
				}
			}
			if err != nil {
				return err
			}
			if !rep.Outcome().OK {
				failed = append(failed, k.labels[i])
			}
		}
		if joined {
			if err := k.kind.WriteRuns(w, k.labels, k.reports); err != nil {
				return err
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d runs failed their checks: %s", len(failed), len(runs), strings.Join(failed, ", "))
	}
	return nil
}

// reportKind is the report kind of the scenario that wrote a run's first summary.
func reportKind(dir string) (analysis.Kind, error) {
	paths, err := result.FindSummaries(dir)
	if err != nil {
		return analysis.Kind{}, err
	}
	s, err := result.ReadSummary(paths[0])
	if err != nil {
		return analysis.Kind{}, err
	}
	sc, err := runner.Lookup(s.Scenario)
	if err != nil {
		return analysis.Kind{}, fmt.Errorf("written by %w", err)
	}
	return analysis.KindOf(sc.Report)
}

// findReportRuns resolves one argument into runs: an archive is extracted under tmp.
func findReportRuns(arg, tmp string) ([]reportRun, error) {
	fi, err := os.Stat(arg)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		if !isArchive(arg) {
			return nil, usageError{fmt.Errorf("%s: want a .tgz archive from testground collect or an outputs directory", arg)}
		}
		return extractRuns(arg, tmp)
	}
	// A sweep's --out directory.
	if _, err := os.Stat(filepath.Join(arg, replay.SweepFile)); err == nil {
		return []reportRun{{label: filepath.Base(filepath.Clean(arg)), dir: arg}}, nil
	}
	// A run's outputs directory: <group>/<instance>/summary.json.
	if m, _ := filepath.Glob(filepath.Join(arg, "*", "*", result.SummaryFile)); len(m) > 0 {
		return []reportRun{{label: filepath.Base(filepath.Clean(arg)), dir: arg}}, nil
	}
	// A directory of runs (local:exec's outputs/<runner>/<plan>/) or of archives.
	var runs []reportRun
	if m, _ := filepath.Glob(filepath.Join(arg, "*", "*", "*", result.SummaryFile)); len(m) > 0 {
		seen := map[string]bool{}
		for _, p := range m {
			dir := filepath.Dir(filepath.Dir(filepath.Dir(p)))
			if !seen[dir] {
				seen[dir] = true
				runs = append(runs, reportRun{label: filepath.Base(dir), dir: dir})
			}
		}
	}
	entries, err := os.ReadDir(arg)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() && isArchive(e.Name()) {
			found, err := extractRuns(filepath.Join(arg, e.Name()), tmp)
			if err != nil {
				return nil, err
			}
			runs = append(runs, found...)
		}
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s: no %s under <group>/<instance>/, no %s and no collected archives", arg, result.SummaryFile, replay.SweepFile)
	}
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].label < runs[j].label })
	return runs, nil
}

func isArchive(name string) bool {
	return strings.HasSuffix(name, ".tgz") || strings.HasSuffix(name, ".tar.gz")
}

// extractRuns extracts a collect archive (<task>/<group>/<instance>/… entries) into its own
// directory under tmp and returns one run per top-level directory. The run is labelled with
// the archive's name less the task id: for a composition with [[runs]], `testground run
// --collect` names archives <collect-file>-<run id>-<task id>.tgz.
func extractRuns(archive, tmp string) ([]reportRun, error) {
	dest, err := os.MkdirTemp(tmp, "archive-")
	if err != nil {
		return nil, err
	}
	tops, err := extractTarGz(archive, dest)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", archive, err)
	}
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(archive), ".tgz"), ".tar.gz")
	var runs []reportRun
	for _, top := range tops {
		label := strings.TrimSuffix(base, "-"+top)
		if len(tops) > 1 {
			label = top
		}
		runs = append(runs, reportRun{label: label, dir: filepath.Join(dest, top)})
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s: empty archive", archive)
	}
	return runs, nil
}

// extractTarGz extracts regular files and directories, refusing entries that would land
// outside dest, and returns the sorted top-level directory names.
func extractTarGz(archive, dest string) ([]string, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("not a gzip archive: %w", err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	tops := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read tar: %w", err)
		}
		name := filepath.Clean(filepath.FromSlash(h.Name))
		if !filepath.IsLocal(name) {
			return nil, fmt.Errorf("archive entry %q leaves the archive's directory", h.Name)
		}
		top := strings.Split(name, string(filepath.Separator))[0]
		path := filepath.Join(dest, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if name != "." {
				tops[top] = true
			}
			if err := os.MkdirAll(path, 0o755); err != nil {
				return nil, err
			}
		case tar.TypeReg:
			tops[top] = true
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return nil, err
			}
			out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return nil, err
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, fmt.Errorf("extract %s: %w", h.Name, err)
			}
		default:
			// Links and devices have no place in run outputs; skip them.
		}
	}
	var out []string
	for t := range tops {
		if fi, err := os.Stat(filepath.Join(dest, t)); err == nil && fi.IsDir() {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out, nil
}

// trimCommonLabelPrefix shortens labels of several runs to what tells them apart, cutting the
// shared prefix at a '-' (history-sweep-local-w1-4KiB, …-w2-16KiB → w1-4KiB, w2-16KiB).
func trimCommonLabelPrefix(runs []reportRun) {
	if len(runs) < 2 {
		return
	}
	prefix := runs[0].label
	for _, r := range runs[1:] {
		for !strings.HasPrefix(r.label, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	cut := strings.LastIndexByte(prefix, '-')
	if cut < 0 {
		return
	}
	for i := range runs {
		if len(runs[i].label) > cut+1 {
			runs[i].label = runs[i].label[cut+1:]
		}
	}
}
