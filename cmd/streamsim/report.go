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
	"text/tabwriter"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/result"
)

func init() {
	register("report", "print the live-check table from Testground outputs (collected .tgz or outputs dir)", runReportCmd)
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
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintln(out, "usage: streamsim report [flags] <collected .tgz | outputs dir>...")
		fmt.Fprintln(out, "\nReads Testground outputs (hub-leaves or mesh) and prints the table `streamsim run` prints.")
		fmt.Fprintln(out, "Arguments: archives written by `testground run … --collect` or `testground collect`; a run's")
		fmt.Fprintln(out, "outputs directory (<task>/ with <group>/<instance>/summary.json below it); or a directory")
		fmt.Fprintln(out, "holding several of either. One run prints its table; several runs (a sweep composition's")
		fmt.Fprintln(out, "[[runs]]) print one row per run. Exit status 1 when any run fails its checks (parity, drops).")
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

	// Mesh runs have their own report; each is printed on its own.
	var meshFailed []string
	kept := runs[:0]
	for _, run := range runs {
		if scenarioOf(run.dir) != "mesh" {
			kept = append(kept, run)
			continue
		}
		r, err := analysis.LoadMeshRun(run.dir)
		if err != nil {
			return fmt.Errorf("run %s: %w", run.label, err)
		}
		r.Dir = run.label
		if *jsonOut {
			err = analysis.WriteMeshJSON(w, r)
		} else {
			fmt.Fprintf(w, "== mesh run %s\n", run.label)
			err = analysis.WriteMeshTable(w, r)
		}
		if err != nil {
			return err
		}
		if !r.OK {
			meshFailed = append(meshFailed, run.label)
		}
	}
	runs = kept
	if len(runs) == 0 {
		if len(meshFailed) > 0 {
			return fmt.Errorf("mesh runs failed their checks: %s", strings.Join(meshFailed, ", "))
		}
		return nil
	}

	reports := make([]*analysis.RunReport, len(runs))
	for i, run := range runs {
		r, err := analysis.LoadRun(run.dir)
		if err != nil {
			return fmt.Errorf("run %s: %w", run.label, err)
		}
		r.Dir = run.label
		reports[i] = r
	}

	switch {
	case *jsonOut:
		for _, r := range reports {
			if err := analysis.WriteLiveJSON(w, r); err != nil {
				return err
			}
		}
	case len(reports) == 1:
		if err := analysis.WriteLiveTable(w, reports[0]); err != nil {
			return err
		}
	default:
		if *tables {
			for i, r := range reports {
				fmt.Fprintf(w, "== run %s\n", runs[i].label)
				if err := analysis.WriteLiveTable(w, r); err != nil {
					return err
				}
				fmt.Fprintln(w)
			}
		}
		if err := writeRunsTable(w, runs, reports); err != nil {
			return err
		}
	}

	var failed []string
	for i, r := range reports {
		if !r.OK {
			failed = append(failed, runs[i].label)
		}
	}
	failed = append(failed, meshFailed...)
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d runs failed their checks: %s", len(failed), len(reports)+len(meshFailed), strings.Join(failed, ", "))
	}
	return nil
}

// scenarioOf is the scenario that wrote a run's first summary ("" when unreadable).
func scenarioOf(dir string) string {
	paths, err := result.FindSummaries(dir)
	if err != nil {
		return ""
	}
	s, err := result.ReadSummary(paths[0])
	if err != nil {
		return ""
	}
	return s.Scenario
}

// writeRunsTable prints one row per run and compressed leaf: what a sweep composition's runs
// changed (the codec) against the run's plain leaf.
func writeRunsTable(w io.Writer, runs []reportRun, reports []*analysis.RunReport) error {
	first := reports[0]
	fmt.Fprintf(w, "hub-leaves: %d runs, profile %s, payload %s, %d slots at %g× real time\n\n",
		len(reports), first.Profile, first.Payload, first.Schedule.Slots, first.Schedule.TimeScale)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tcodec\tplain wire\tcodec wire\tvs plain\thub encode ns/byte\tleaf decode ns/byte\thub codec state\tparity\tresult\t")
	var builds []string
	for i, r := range reports {
		var plain *analysis.LeafReport
		for j := range r.Leaves {
			if r.Leaves[j].Codec == "plain" {
				plain = &r.Leaves[j]
				break
			}
		}
		rows := 0
		for j := range r.Leaves {
			l := &r.Leaves[j]
			if l == plain {
				continue
			}
			rows++
			plainWire := "-"
			if plain != nil {
				plainWire = reportMB(plain.WireBytes)
			}
			rel := "-"
			if l.RelativeToPlain != nil {
				rel = fmt.Sprintf("%.1f %%", *l.RelativeToPlain*100)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t\n",
				runs[i].label, l.Codec, plainWire, reportMB(l.WireBytes), rel,
				l.CPU.HubEncode.NsPerByte, l.CPU.Decode.NsPerByte, reportKiB(l.CPU.HubEncode.StateBytes),
				leafParity(r, l), okFail(r.OK))
		}
		if rows == 0 {
			fmt.Fprintf(tw, "%s\t(no compressed leaf)\t\t\t\t\t\t\t%s\t%s\t\n", runs[i].label, okFail(r.Parity.OK), okFail(r.OK))
		}
		if !contains(builds, r.Build) {
			builds = append(builds, r.Build)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nbuild: %s\n", strings.Join(builds, ", "))
	for _, r := range reports {
		if !r.Optimized {
			fmt.Fprintf(w, "note: CPU figures come from an %s build and are inflated; compare them only with each other\n", r.Build)
			break
		}
	}
	for i, r := range reports {
		for _, p := range r.Problems {
			fmt.Fprintf(w, "%s: %s\n", runs[i].label, p)
		}
	}
	return nil
}

func leafParity(r *analysis.RunReport, l *analysis.LeafReport) string {
	for _, p := range r.Parity.Leaves {
		if p.Group == l.Group && p.Instance == l.Instance {
			return okFail(p.OK)
		}
	}
	return "?"
}

func okFail(ok bool) string {
	if ok {
		return "OK"
	}
	return "FAIL"
}

func reportMB(n int64) string { return fmt.Sprintf("%.2f MB", float64(n)/1e6) }

func reportKiB(n int64) string { return fmt.Sprintf("%.0f KiB", float64(n)/1024) }

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
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
		return nil, fmt.Errorf("%s: no %s under <group>/<instance>/ and no collected archives", arg, result.SummaryFile)
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
