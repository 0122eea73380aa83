package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/analysis/page"
	"github.com/streamsim/streamsim/analysis/replay"
	"github.com/streamsim/streamsim/result"
)

// The HTML report (streamsim report --html): one page from any mix of run outputs and sweeps.
// The page's code knows no report kind: each argument's runs are read with their kind, runs of
// one kind under one argument form a section, joined by the kind's Compare when they are the
// runs of an A/B, and the kind's Section hook fills it (or the page lists the report's JSON).

// htmlSection is the runs of one kind found under one argument.
type htmlSection struct {
	arg    string
	kind   analysis.Kind
	runs   []reportRun
	loaded []analysis.SectionRun
	joined *analysis.SectionRun
}

// expectedRun says what an argument without a run should have held.
const expectedRun = "expected a run's outputs (<group>/<instance>/summary.json below it, as `streamsim run --out` or Testground write), a directory of such runs, collected .tgz archives, or a sweep's --out directory (sweep.json)"

// writeHTMLReport reads every argument's runs and writes the page to out; it returns the
// labels of runs that failed their checks. An argument without a run, or a run that cannot
// be read, is named on the page (and in the error list) and the page is written for the rest.
func writeHTMLReport(out string, args []string, tmp string) (failed, missing []string, err error) {
	p := &page.Page{Title: "streamsim: stream compression for Ethereum gossip, the decision report",
		Intro: "What compressing a whole gossipsub stream (/snappy-stream/meshsub/1.2.0, or zstd) does to a consensus node's bytes, latency and CPU against today's per-message Snappy, measured by streamsim on real go-libp2p hosts with unmodified go-libp2p-pubsub. Every figure names its report's JSON (Data, at the end); each section states the command, commit, machine and clock of its runs, and any problem its runs carried comes first."}
	var sections []*htmlSection
	for _, arg := range args {
		runs, ferr := findReportRuns(arg, tmp)
		if ferr != nil {
			missing = append(missing, fmt.Sprintf("%s: %v; %s", arg, ferr, expectedRun))
			continue
		}
		trimCommonLabelPrefix(runs)
		byKind := map[result.ReportKind]*htmlSection{}
		for _, run := range runs {
			kind, kerr := reportKindOf(run.dir)
			if kerr != nil {
				missing = append(missing, fmt.Sprintf("%s (run %s): %v", arg, run.label, kerr))
				continue
			}
			sec := byKind[kind.Name]
			if sec == nil {
				sec = &htmlSection{arg: arg, kind: kind}
				byKind[kind.Name] = sec
				sections = append(sections, sec)
			}
			sec.runs = append(sec.runs, run)
		}
	}
	p.Missing = missing

	for i, sec := range sections {
		s := &page.Section{ID: fmt.Sprintf("sec%d", i+1), Title: fmt.Sprintf("%s: %s", sec.kind.Name, filepath.Base(filepath.Clean(sec.arg)))}
		p.Sections = append(p.Sections, s)
		var reports []analysis.Report
		var labels []analysis.ABRun
		joinable := true
		for _, run := range sec.runs {
			rep, lerr := sec.kind.Load(run.dir)
			if lerr != nil {
				s.Problems = append(s.Problems, fmt.Sprintf("run %s could not be read: %v", run.label, lerr))
				failed = append(failed, run.label)
				continue
			}
			if d, ok := rep.(interface{ SetDir(string) }); ok {
				d.SetDir(run.label)
			}
			src, serr := addSource(p, string(sec.kind.Name)+" "+run.label, rep)
			if serr != nil {
				return nil, nil, serr
			}
			s.Runs = append(s.Runs, runMeta(run, src))
			v := rep.Outcome()
			for _, pr := range v.Problems {
				s.Problems = append(s.Problems, run.label+": "+pr)
			}
			for _, n := range v.Notes {
				s.Notes = append(s.Notes, run.label+": "+n)
			}
			if !v.OK {
				failed = append(failed, run.label)
			}
			sec.loaded = append(sec.loaded, analysis.SectionRun{Label: run.label, Report: rep, Src: src})
			reports = append(reports, rep)
			if l, ok := rep.(analysis.ABLabeler); ok {
				labels = append(labels, l.ABLabel())
			} else {
				joinable = false
			}
		}
		if len(reports) > 1 && joinable && sec.kind.Compare != nil {
			cmp, cerr := sec.kind.Compare(labels, reports)
			if cerr != nil {
				s.Problems = append(s.Problems, fmt.Sprintf("the runs could not be compared: %v", cerr))
			} else {
				src, serr := addSource(p, string(sec.kind.Name)+" comparison of "+filepath.Base(filepath.Clean(sec.arg)), cmp)
				if serr != nil {
					return nil, nil, serr
				}
				sec.joined = &analysis.SectionRun{Label: "comparison", Report: cmp, Src: src}
				// The comparison's own problems repeat its runs'; its notes are its own.
				for _, n := range cmp.Outcome().Notes {
					if n = "comparison: " + n; !slices.Contains(s.Notes, n) {
						s.Notes = append(s.Notes, n)
					}
				}
			}
		}
		if len(sec.loaded) == 0 {
			continue
		}
		if sec.kind.Section == nil {
			for _, r := range sec.loaded {
				s.AllFigures(r.Src)
			}
			if sec.joined != nil {
				s.AllFigures(sec.joined.Src)
			}
			continue
		}
		if herr := sec.kind.Section(s, sec.loaded, sec.joined); herr != nil {
			s.Problems = append(s.Problems, fmt.Sprintf("the %s section could not be drawn: %v", sec.kind.Name, herr))
		}
	}
	if err := answerSection(p); err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return nil, nil, fmt.Errorf("--html: %w", err)
	}
	return failed, missing, nil
}

// addSource adds a report's --json form to the page.
func addSource(p *page.Page, label string, rep analysis.Report) (*page.Source, error) {
	var b bytes.Buffer
	if err := rep.WriteJSON(&b); err != nil {
		return nil, fmt.Errorf("report %s: %w", label, err)
	}
	return p.AddSource(label, b.Bytes())
}

// reportKindOf is the kind of a run's outputs: a sweep's directory, or the kind its
// scenario names.
func reportKindOf(dir string) (analysis.Kind, error) {
	if _, err := os.Stat(filepath.Join(dir, replay.SweepFile)); err == nil {
		return analysis.KindOf(replay.SweepKind)
	}
	return reportKind(dir)
}

// runMeta is a run's provenance: from its first summary (origin, clock, transport), or from
// the report's own JSON (a sweep's origin; a sweep has no clock).
func runMeta(run reportRun, src *page.Source) page.RunMeta {
	m := page.RunMeta{Label: run.label, Dir: run.dir}
	var origin *result.Origin
	if paths, err := result.FindSummaries(run.dir); err == nil && len(paths) > 0 {
		if s, err := result.ReadSummary(paths[0]); err == nil {
			origin = s.Origin
			switch {
			case s.Clock != "":
				m.Clock = s.Clock
				if s.Transport != "" {
					m.Clock += " (" + s.Transport + ")"
				}
			case s.TimeScale > 0:
				m.Clock = fmt.Sprintf("not recorded (summaries before the clock field ran on the real clock), %g× real time", s.TimeScale)
			}
		}
	} else {
		var sweep struct {
			Origin *result.Origin `json:"origin"`
		}
		if json.Unmarshal(src.JSON(), &sweep) == nil {
			origin = sweep.Origin
		}
	}
	if origin != nil {
		m.Command, m.Commit = origin.Command, origin.Commit
		m.Machine = fmt.Sprintf("%s, %d cores, %s, %s", origin.Host, origin.Cores, origin.OS, origin.GoVersion)
	}
	return m
}

// answerSection is the page's first section: the proposal's results table, then every row the
// sections offered beside the proposal's figure for the same configuration, with the
// difference.
func answerSection(p *page.Page) error {
	pub, err := json.MarshalIndent(replay.PublishedFigures(), "", "  ")
	if err != nil {
		return err
	}
	src, err := p.AddSource("the proposal's results (docs/inputs.md §1)", pub)
	if err != nil {
		return err
	}
	s := &page.Section{ID: "answer", Title: "The answer: the proposal's results beside streamsim's"}
	p.Answer = s
	s.Para("The proposal measured a recorded Teku node's inbound traffic on mainnet (all attestation subnets, about 45 peers) replayed through each stream codec, relative to today's wire bytes (per-message Snappy); its live check put a snappy-stream node and a plain node behind one hub. Its table first, then each measured row on this page beside the proposal's figure for the same configuration and view.")
	var rows [][]page.Cell
	for i, r := range replay.ProposalTable() {
		b := fmt.Sprintf("rows.%d.", i)
		rg := func(k string) page.Cell {
			return page.Cell{Fig: ptrFig(src.Fig(b+k+".low", page.Pct)), High: ptrFig(src.Fig(b+k+".high", page.Pct))}
		}
		column := page.T("not published")
		if r.DataColumn != 0 {
			column = page.F(src.Fig(b+"data_column", page.Pct))
		}
		rows = append(rows, []page.Cell{page.T(r.Config), page.F(src.Fig(b+"default_total", page.Pct)), page.F(src.Fig(b+"all_subnets_total", page.Pct)),
			rg("attestation"), rg("aggregate"), rg("block"), column,
			page.F(src.Fig(b+"control_default", page.Pct)), page.F(src.Fig(b+"control_all_subnets", page.Pct))})
	}
	s.Table("The proposal's results, inbound, % of today's wire bytes", []string{"configuration", "default node", "all subnets", "attestation", "aggregate", "block", "data column", "control (default)", "control (all)"}, rows)
	s.Table("The proposal's live check", []string{"", "snappy-stream node, % of the plain node's wire bytes"}, [][]page.Cell{{page.T("hub supernode on mainnet, raw SSZ payloads, no control"), page.F(src.Fig("live_check_snappy_stream_pct", page.Pct))}})

	pp := page.Format{Unit: "pp", Scale: 1, Decimals: 1}
	// One row per configuration and view, one column per measured source: each figure with
	// its difference from the proposal's.
	type rowKey struct {
		prop int
		view string
	}
	type cell struct{ value, diff page.Figure }
	var columns []string
	described := map[string]string{}
	cells := map[rowKey]map[string]cell{}
	props := map[rowKey]page.Figure{}
	for _, a := range p.Answers() {
		idx := replay.ProposalIndex(a.Config)
		if idx < 0 || (a.View != "all-subnets" && a.View != "default") {
			continue // nothing published to stand beside
		}
		key := rowKey{idx, a.View}
		viewKey := "all_subnets_total"
		if a.View == "default" {
			viewKey = "default_total"
		}
		if a.LiveCheck {
			if a.Config != "snappy-stream:64KiB:fast" {
				continue
			}
			key.view = "live check"
			viewKey = ""
		}
		table := src.Fig(fmt.Sprintf("rows.%d.%s", idx, viewKey), page.Pct)
		if viewKey == "" {
			table = src.Fig("live_check_snappy_stream_pct", page.Pct)
		}
		if !table.Found {
			continue
		}
		props[key] = table
		prop := table
		if a.Proposal != nil {
			prop = *a.Proposal
		}
		diff := page.Difference(a.Value, prop, pp)
		if a.Diff != nil {
			diff = *a.Diff
		}
		if _, ok := described[a.Column]; !ok {
			columns = append(columns, a.Column)
			described[a.Column] = a.Measured
		}
		if cells[key] == nil {
			cells[key] = map[string]cell{}
		}
		cells[key][a.Column] = cell{a.Value, diff}
	}
	if len(cells) == 0 {
		s.Para("No run on this page measured a configuration the proposal published.")
		return nil
	}
	keys := make([]rowKey, 0, len(cells))
	for k := range cells {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].view != keys[j].view {
			return keys[i].view < keys[j].view
		}
		return keys[i].prop < keys[j].prop
	})
	head := append([]string{"configuration", "view", "proposal"}, columns...)
	var measured [][]page.Cell
	for _, k := range keys {
		row := []page.Cell{page.T(replay.ProposalTable()[k.prop].Config), page.T(k.view), page.F(props[k])}
		for _, c := range columns {
			if v, ok := cells[k][c]; ok {
				row = append(row, page.Cell{Fig: &v.value, Paren: &v.diff})
			} else {
				row = append(row, page.T(""))
			}
		}
		measured = append(measured, row)
	}
	s.Table("Measured here beside the proposal: % of plain (difference from the proposal's figure in percentage points; a sweep's own comparison is 0 inside a published range)", head, measured)
	var legend []string
	for _, c := range columns {
		legend = append(legend, c+": "+described[c])
	}
	s.List(legend)
	s.Para("Differences are findings, not errors: the live check and the sweeps of synthetic workload carry no gossip control (the proposal's all-subnets traffic is 35 % control), a mesh or neighbourhood run's mix is its own (its calibration table says how far from the recording), and short test runs compress less than 60 minutes of history.")
	return nil
}

func ptrFig(f page.Figure) *page.Figure { return &f }
