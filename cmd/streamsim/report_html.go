package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

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
	pub, err := json.MarshalIndent(replay.PublishedFigures(), "", "  ")
	if err != nil {
		return nil, nil, err
	}
	proposal, err := p.AddSource("the proposal's results (docs/inputs.md §1)", pub)
	if err != nil {
		return nil, nil, err
	}

	for i, sec := range sections {
		s := &page.Section{ID: fmt.Sprintf("sec%d", i+1), Title: fmt.Sprintf("%s: %s", sec.kind.Name, filepath.Base(filepath.Clean(sec.arg)))}
		s.SetProposal(proposal)
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
	if err := answerSection(p, proposal); err != nil {
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

// answerCategories are the answer's columns: the total, then the proposal's categories.
var answerCategories = []string{"total", "attestation", "aggregate", "block", "data_column", "control"}

// answerSection is the page's first section: the proposal's tables, then every row the
// sections offered, each measured figure beside the proposal's figure for the same payload,
// view and direction (or beside nothing, saying why), with the runs it came from, their seeds
// and spread; rows from runs with problems are marked with the reasons and show no
// difference.
func answerSection(p *page.Page, src *page.Source) error {
	s := &page.Section{ID: "answer", Title: "The answer: the proposal's results beside streamsim's"}
	p.Answer = s
	s.Para("The proposal measured a recorded Teku node's inbound traffic on mainnet (all attestation subnets, about 45 peers) replayed through each stream codec, relative to today's wire bytes (per-message Snappy); its live check put a snappy-stream node and a plain node behind one hub, once with raw SSZ inside the stream and once with the payloads kept Snappy. Its tables first, then what was measured here, each figure beside the proposal's for the same payload, view and direction, or beside nothing.")
	verdicts(s, p.Answers())
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
	s.Table("The proposal's results, inbound, % of today's wire bytes (payloads inside the stream: not stated)", []string{"configuration", "default node", "all subnets", "attestation", "aggregate", "block", "data column", "control (default)", "control (all)"}, rows)
	var live [][]page.Cell
	for i, lc := range replay.ProposalLiveChecks {
		live = append(live, []page.Cell{page.T(lc.Payload), page.F(src.Fig(fmt.Sprintf("live_checks.%d.minutes", i), page.Format{Unit: "min", Scale: 1})),
			page.F(src.Fig(fmt.Sprintf("live_checks.%d.pct", i), page.Pct))})
	}
	s.Table("The proposal's live check: hub supernode on mainnet, all subnets, inbound, no control", []string{"payload inside the stream", "measured", "snappy-stream node, % of the plain node's wire bytes"}, live)

	answers := p.Answers()
	if len(answers) == 0 {
		s.Para("No run on this page offered a measured row.")
		return nil
	}
	pp := page.Format{Unit: "pp", Scale: 1, Decimals: 1}
	head := append([]string{"configuration", "measured by", "view, direction, payload", "seeds", "status"}, answerCategories...)
	var out []page.Row
	flagged := 0
	for _, a := range answers {
		reasons := rowReasons(a)
		row := page.Row{Cells: []page.Cell{page.T(a.Config), {Text: a.By, Sub: []page.Cell{{Text: a.Measured}}},
			page.T(fmt.Sprintf("%s, %s, %s", a.View, a.Direction, a.Payload)), a.Seeds}}
		status := page.T("ok: no problem, flag or calibration note in its runs")
		if len(reasons) > 0 {
			flagged++
			row.Class = "flagged"
			status = page.Cell{Text: "left out of every verdict: " + strings.Join(reasonKinds(reasons), ", "), TDClass: "flagged"}
			for _, why := range reasons {
				status.Sub = append(status.Sub, page.Cell{Text: why, SubClass: "reason"})
			}
			status.Details = true
		}
		row.Cells = append(row.Cells, status)
		for _, key := range answerCategories {
			c, ok := a.Cells[key]
			if !ok {
				row.Cells = append(row.Cells, page.T("not measured"))
				continue
			}
			v := c.Value
			cell := page.Cell{Fig: &v, Class: "answer", Runs: a.Runs}
			if len(reasons) > 0 {
				cell.TDClass = "flagged"
			}
			if c.Low != nil && c.High != nil && c.Low.Found && c.High.Found && c.Low.Value != c.High.Value {
				cell.Sub = append(cell.Sub, page.Cell{Fig: c.Low, High: c.High, Prefix: "range over seeds"})
			}
			low, high, why := proposalPeer(src, a, key)
			prefix := "proposal, " + a.Payload
			if !a.LiveCheck {
				prefix = "proposal (its payloads not stated)"
			}
			switch {
			case why != "":
				cell.Sub = append(cell.Sub, page.Cell{Text: "proposal: none (" + why + ")"})
			case len(reasons) > 0:
				cell.Sub = append(cell.Sub, page.Cell{Fig: &low, High: &high, Prefix: prefix, Text: "(not compared: the run has problems)"})
			default:
				pc := page.Cell{Fig: &low, High: &high, Prefix: prefix}
				switch {
				case v.Found && v.Value < low.Value:
					pc.Sub = []page.Cell{{Fig: ptrFig(page.Difference(v, low, pp)), Diff: true, Prefix: "difference"}}
				case v.Found && v.Value > high.Value:
					pc.Sub = []page.Cell{{Fig: ptrFig(page.Difference(v, high, pp)), Diff: true, Prefix: "difference"}}
				case v.Found:
					pc.Text = "(inside the published range)"
				}
				cell.Sub = append(cell.Sub, pc)
			}
			row.Cells = append(row.Cells, cell)
		}
		out = append(out, row)
	}
	s.TableRows("Measured here, % of what 100 % is for each row (today's wire bytes of the same traffic unless the row says raw bytes); under each figure its spread over seeds, the proposal's figure for the same payload, view and direction and the difference in percentage points, or why none stands beside it", head, out)
	if flagged > 0 {
		s.Para(fmt.Sprintf("%d of %d rows come from runs with problems (failed, late, machine saturated or outside calibration): they are marked with the reasons and left out of every verdict.", flagged, len(answers)))
	}
	s.Para("Differences are findings, not errors: a live check carries no gossip control, a workload trace has no control (its total stands beside nothing), a mesh or neighbourhood run's mix is its own (its calibration table says how far from the recording), and short test runs compress less than 60 minutes of history. Arithmetic on the proposal's published shares (a sweep's totals at the proposal's mix) is in the sweep's section, labelled as such, never here.")
	return nil
}

// rowReasons are the reasons an answer row's runs give to keep it out of verdicts.
func rowReasons(a page.AnswerRow) []string {
	var reasons []string
	for _, r := range a.Runs {
		for _, why := range r.Reasons() {
			if !slices.Contains(reasons, why) {
				reasons = append(reasons, why)
			}
		}
	}
	return reasons
}

// reasonKinds are the kinds of reasons ("kind: reason"), each once, in their order.
func reasonKinds(reasons []string) []string {
	var kinds []string
	for _, why := range reasons {
		if k, _, _ := strings.Cut(why, ":"); !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// verdictPeers are the peer counts a node's codec memory is asked for.
var verdictPeers = page.MemoryPeers

// verdicts writes one verdict per configuration: the bytes it saved per view and direction,
// its codec CPU beside plain's, its codec memory, its p99 latency change
// per category, each figure bound to its JSON with the run it came from, its seeds and range.
// Rows from runs with problems are named and left out; a fact with reasons of its own (a
// latency difference whose runs had the machine saturated) is shown marked with them and is no
// figure of the verdict.
func verdicts(s *page.Section, answers []page.AnswerRow) {
	var configs []string
	byConfig := map[string][]page.AnswerRow{}
	for _, a := range answers {
		if byConfig[a.Config] == nil {
			configs = append(configs, a.Config)
		}
		byConfig[a.Config] = append(byConfig[a.Config], a)
	}
	if len(configs) == 0 {
		return
	}
	s.H3("Verdict per configuration")
	s.Para("Measured figures only, from runs without problems; each names its run, seeds and range. A figure from runs with problems (a latency difference whose runs had the machine saturated or fell behind) is shown marked with the reason and is not part of the verdict. " + page.CPUDefinition + ". Memory per node at 50, 100 and 200 peers is stated only where a run had that many peers.")
	for _, cfg := range configs {
		var rows [][]page.Cell
		var left []string
		maxPeers := 0.0
		measured := 0                      // the verdict's own figures
		perNode := map[int][][]page.Cell{} // memory per node at n peers, listed last
		for _, a := range byConfig[cfg] {
			if reasons := rowReasons(a); len(reasons) > 0 {
				left = append(left, fmt.Sprintf("%s (%s)", a.By, strings.Join(reasonKinds(reasons), ", ")))
				continue
			}
			from := page.Cell{Text: a.By, Sub: []page.Cell{{Prefix: "seeds:", Text: a.Seeds.Text, Fig: a.Seeds.Fig}}}
			if c, ok := a.Cells["total"]; ok {
				row := []page.Cell{page.T(page.FactBytes), page.T(fmt.Sprintf("view %s, %s, payload %s, total: %% of %s", a.View, a.Direction, a.Payload, a.Of)), {Fig: &c.Value, Class: "answer", Runs: a.Runs}, page.T("")}
				if c.Low != nil && c.High != nil && c.Low.Value != c.High.Value {
					row[3] = page.Cell{Fig: c.Low, High: c.High, Prefix: "range over seeds"}
				}
				rows = append(rows, append(row, from))
				measured++
			}
			for _, f := range a.Facts {
				if f.Kind == page.FactMemory && strings.HasPrefix(f.What, "peers") {
					maxPeers = max(maxPeers, f.Value.Value)
				}
				side := page.T("")
				switch {
				case f.Today != nil && f.Today.Found && f.Today.Value == 0:
					side = page.T("plain: no codec work metered in this run")
				case f.Today != nil:
					side = page.Cell{Fig: f.Today, Prefix: "plain, same run:"}
				case f.Low != nil && f.High != nil:
					side = page.Cell{Fig: f.Low, High: f.High, Prefix: "range over seeds"}
				}
				v := f.Value
				by := from // the fact's run and seeds: its own seeds where they are not the row's
				if f.Seeds != nil {
					by = page.Cell{Text: a.By, Sub: []page.Cell{{Prefix: "seeds:", Fig: f.Seeds}}}
				}
				if len(f.Reasons) > 0 {
					// Shown, marked with its reasons, and not a figure of the verdict.
					kinds := reasonKinds(f.Reasons)
					cell := page.Cell{Fig: &v, TDClass: "flagged", Details: true}
					for _, why := range f.Reasons {
						cell.Sub = append(cell.Sub, page.Cell{Text: why, SubClass: "reason"})
					}
					rows = append(rows, []page.Cell{page.T(f.Kind), page.T(f.What), cell,
						{Text: "left out of this verdict: " + strings.Join(kinds, ", "), TDClass: "flagged"}, by})
					left = append(left, fmt.Sprintf("%s, %s %s (%s)", a.By, f.Kind, f.What, strings.Join(kinds, ", ")))
					continue
				}
				row := []page.Cell{page.T(f.Kind), page.T(f.What), {Fig: &v, Class: "answer", Runs: a.Runs}, side, by}
				measured++
				if n, ok := perNodePeers(f); ok {
					perNode[n] = append(perNode[n], row)
					continue
				}
				rows = append(rows, row)
			}
		}
		for _, n := range verdictPeers {
			if len(perNode[n]) > 0 {
				rows = append(rows, perNode[n]...)
				continue
			}
			if float64(n) > maxPeers {
				why := fmt.Sprintf("no run here measured codec state with %d peers (the most: %.0f; a live check with --leaves <codec>*%d does)", n, maxPeers, n)
				if maxPeers == 0 {
					why = fmt.Sprintf("no run here measured codec state per node with its peers (a live check with --leaves <codec>*%d or a sweep with --layout does)", n)
				}
				rows = append(rows, []page.Cell{page.T(page.FactMemory), page.T(page.PerNodeWhat(n)), page.T("not measured"), page.T(why), page.T("")})
			}
		}
		caption := "Verdict: " + cfg
		if len(left) > 0 {
			caption += "; left out (from runs with problems): " + strings.Join(left, "; ")
		}
		if measured == 0 {
			s.Para(caption + ": no verdict, every run that measured it has problems.")
			continue
		}
		s.Table(caption, []string{"", "what", "measured", "beside it", "from"}, rows)
	}
}

// perNodePeers is n of a fact of a node's codec memory at n peers (page.PerNodeWhat) that
// the verdict asks for.
func perNodePeers(f page.Fact) (int, bool) {
	if f.Kind != page.FactMemory {
		return 0, false
	}
	for _, n := range verdictPeers {
		if strings.HasPrefix(f.What, page.PerNodeWhat(n)) {
			return n, true
		}
	}
	return 0, false
}

// proposalPeer is the proposal's figure (a range: low, high) for an answer row's category,
// or why none stands beside it: the same payload, view and direction, relative to the same
// thing.
func proposalPeer(src *page.Source, a page.AnswerRow, key string) (low, high page.Figure, why string) {
	switch {
	case a.Of != page.OfPlain:
		return low, high, "the proposal's figures are % of today's wire bytes; this is % of " + a.Of
	case a.Direction != "in":
		return low, high, "the proposal's figures are inbound; this is " + a.Direction
	case a.NotComparable[key] != "":
		return low, high, a.NotComparable[key]
	}
	idx := replay.ProposalIndex(a.Config)
	if idx < 0 {
		return low, high, "the proposal published no figure for " + a.Config
	}
	if a.LiveCheck {
		if key != "total" {
			return low, high, "the proposal's live check published totals only"
		}
		if a.View != "all-subnets" {
			return low, high, "the proposal's live check was an all-subnets hub; this is " + a.View
		}
		if replay.ProposalTable()[idx].Config != "snappy-stream:64KiB:fast" {
			return low, high, "the proposal's live check ran snappy-stream with 64 KiB of history only"
		}
		for i, lc := range replay.ProposalLiveChecks {
			if lc.Payload == a.Payload {
				f := src.Fig(fmt.Sprintf("live_checks.%d.pct", i), page.Pct)
				return f, f, ""
			}
		}
		return low, high, "the proposal's live check published no figure with " + a.Payload + " payloads"
	}
	b := fmt.Sprintf("rows.%d.", idx)
	switch key {
	case "total":
		switch a.View {
		case "all-subnets":
			f := src.Fig(b+"all_subnets_total", page.Pct)
			return f, f, ""
		case "default":
			f := src.Fig(b+"default_total", page.Pct)
			return f, f, ""
		}
		return low, high, "the proposal published totals for the default and all-subnets views only"
	case "attestation", "aggregate", "block":
		return src.Fig(b+key+".low", page.Pct), src.Fig(b+key+".high", page.Pct), ""
	case "data_column":
		if replay.ProposalTable()[idx].DataColumn == 0 {
			return low, high, "not published for " + a.Config
		}
		f := src.Fig(b+"data_column", page.Pct)
		return f, f, ""
	case "control":
		k := "control_all_subnets"
		if a.View == "default" {
			k = "control_default"
		} else if a.View != "all-subnets" {
			return low, high, "the proposal published control for the default and all-subnets views only"
		}
		f := src.Fig(b+k, page.Pct)
		return f, f, ""
	}
	return low, high, "not published"
}

func ptrFig(f page.Figure) *page.Figure { return &f }
