package replay

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/analysis/page"
	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/units"
)

// SweepKind is the report of a sweep's outputs (the directory `streamsim sweep --out` wrote):
// a report kind like a scenario's, so that `streamsim report` reads sweeps beside runs.
const SweepKind = "sweep"

// SweepFile is the sweep's JSON in its --out directory.
const SweepFile = "sweep.json"

func init() {
	analysis.RegisterKind(analysis.Kind{Name: SweepKind, Load: func(dir string) (analysis.Report, error) { return LoadSweep(dir) }, Section: sweepSection})
}

// SweepReport is a sweep read back from its outputs, with a verdict: every configuration
// decoded back to its input.
type SweepReport struct {
	*Report
	verdict analysis.Verdict
}

// LoadSweep reads dir/sweep.json.
func LoadSweep(dir string) (*SweepReport, error) {
	b, err := os.ReadFile(filepath.Join(dir, SweepFile))
	if err != nil {
		return nil, err
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, SweepFile), err)
	}
	v := analysis.Verdict{Build: rep.Build, Optimized: true, Checks: analysis.Checks{OK: true}, Notes: rep.Notes}
	for _, r := range rep.Results {
		if !r.Verified {
			v.Problem("%s %s %s did not decode back to its input", r.View, r.Payload, r.Config)
		}
	}
	if len(rep.Results) == 0 {
		v.Problem("the sweep holds no results")
	}
	return &SweepReport{Report: &rep, verdict: v}, nil
}

// Outcome is the sweep's verdict.
func (s *SweepReport) Outcome() *analysis.Verdict { return &s.verdict }

// WriteTable prints the sweep's Markdown table.
func (s *SweepReport) WriteTable(w io.Writer) error { return s.Report.WriteMarkdown(w) }

// ProposalRow is one row of the proposal's results table (docs/inputs.md §1): percent
// of today's wire bytes, inbound. A category's Low and High differ where the proposal gives a
// range; zero means not published.
type ProposalRow struct {
	Config         string      `json:"config"`
	DefaultTotal   float64     `json:"default_total"`
	AllTotal       float64     `json:"all_subnets_total"`
	Attestation    ProposalFig `json:"attestation"`
	Aggregate      ProposalFig `json:"aggregate"`
	Block          ProposalFig `json:"block"`
	DataColumn     float64     `json:"data_column"`
	ControlDefault float64     `json:"control_default"`
	ControlAll     float64     `json:"control_all_subnets"`
}

// ProposalFig is a published figure or range.
type ProposalFig struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// proposalOrder is the proposal's table's row order (the "better" level shares 64 KiB's row).
var proposalOrder = []string{"plain", "none", "zstd:3:2MiB", "snappy-stream:4KiB:fast", "snappy-stream:64KiB:fast", "snappy-stream:1MiB:fast"}

// ProposalTable is the proposal's results table, from the figures the sweep compares with.
func ProposalTable() []ProposalRow {
	var out []ProposalRow
	for _, name := range proposalOrder {
		p := published[name]
		out = append(out, ProposalRow{Config: name, DefaultTotal: p.defaultTotal, AllTotal: p.allTotal,
			Attestation: ProposalFig{p.att[0], p.att[1]}, Aggregate: ProposalFig{p.agg[0], p.agg[1]}, Block: ProposalFig{p.block[0], p.block[1]},
			DataColumn: p.column, ControlDefault: p.controlDefault, ControlAll: p.control})
	}
	return out
}

// ProposalLiveCheck is one run of the proposal's live check (docs/inputs.md §1): the
// snappy-stream node's bytes on the wire as a percentage of the plain node's, both direct
// peers of a hub on mainnet (all subnets, inbound, no control), with the payloads the stream
// carried.
type ProposalLiveCheck struct {
	Payload string  `json:"payload"`
	Pct     float64 `json:"pct"`
	Minutes int     `json:"minutes"`
}

// ProposalLiveChecks are the proposal's two live-check runs: raw SSZ inside the stream
// (40 minutes), then payloads kept Snappy-compressed (10 minutes).
var ProposalLiveChecks = []ProposalLiveCheck{{gossip.PayloadSSZ, 44.1, 40}, {gossip.PayloadSSZSnappy, 43.1, 10}}

// ResultsPayloadNotStated is the results table's payload mode: the proposal does not state
// which payloads its replay put inside the streams.
const ResultsPayloadNotStated = "not stated"

// Proposal is the proposal's published figures as one JSON document (the HTML report's
// source for its first section).
type Proposal struct {
	Rows []ProposalRow `json:"rows"`
	// The results table is inbound, per view; its payload mode is not stated.
	ResultsDirection string              `json:"results_direction"`
	ResultsPayload   string              `json:"results_payload"`
	LiveChecks       []ProposalLiveCheck `json:"live_checks"`
	// Traffic is the recording's inbound MiB per hour per view and category: the shares the
	// sweep's "at the proposal's mix" weights with.
	Traffic map[string]map[string]float64 `json:"traffic_mib_per_hour"`
}

// PublishedFigures returns the proposal's figures.
func PublishedFigures() Proposal {
	tr := map[string]map[string]float64{}
	for view, mix := range proposalTraffic {
		tr[view] = map[string]float64{}
		for c, v := range mix {
			if v > 0 {
				tr[view][gossip.Category(c).String()] = v
			}
		}
	}
	return Proposal{Rows: ProposalTable(), ResultsDirection: "in", ResultsPayload: ResultsPayloadNotStated,
		LiveChecks: ProposalLiveChecks, Traffic: tr}
}

// ProposalIndex is the ProposalTable row a configuration stands beside (-1: none).
func ProposalIndex(config string) int {
	c, err := ParseConfig(config)
	if err != nil {
		return -1
	}
	name := c.Name
	if name == "snappy-stream:64KiB:better" {
		name = "snappy-stream:64KiB:fast"
	}
	for i, n := range proposalOrder {
		if n == name {
			return i
		}
	}
	return -1
}

// sweepSection is the sweep's part of the HTML report: per view, each configuration's bytes
// relative to plain per category, the proposal's figures and the differences, codec CPU and
// memory per stream direction.
func sweepSection(s *page.Section, runs []analysis.SectionRun, _ *analysis.SectionRun) error {
	for _, r := range runs {
		sr, ok := r.Report.(*SweepReport)
		if !ok {
			return fmt.Errorf("run %s: not a sweep", r.Label)
		}
		rep := sr.Report
		if len(runs) > 1 {
			s.H3("Sweep " + r.Label)
		}
		var traces []string
		for _, t := range rep.Traces {
			traces = append(traces, traceLabel(t))
		}
		dir := rep.Direction
		if dir == "" {
			dir = "every direction"
		}
		s.Para(fmt.Sprintf("Offline replay of %s (%s), %.0f %% of each trace's time only trains dictionaries; streams start empty at the split.",
			strings.Join(traces, "; "), dir, 100*rep.TrainSplit))
		cats := rep.reportCategories()
		// One table per view, payload and layout: a configuration replayed under two layouts
		// is two rows of different streams.
		type vp struct{ view, payload, layout string }
		var order []vp
		byVP := map[vp][]int{}
		for i, res := range rep.Results {
			k := vp{res.View, res.Payload, res.Layout}
			if res.Payload == "" || res.Payload == gossip.PayloadSSZ && res.Config == "none" {
				// plain and none are replayed once per view; they belong to every payload.
				k.payload = "*"
			}
			if byVP[k] == nil && k.payload != "*" {
				order = append(order, k)
			}
			byVP[k] = append(byVP[k], i)
		}
		for _, k := range order {
			idx := append(append([]int{}, byVP[vp{k.view, "*", k.layout}]...), byVP[k]...)
			scope := fmt.Sprintf("%s, payload %s", k.view, k.payload)
			if rep.hasLayouts() {
				scope += ", layout " + k.layout
			}
			s.H3("View " + scope)
			var groups []string
			for _, c := range cats {
				groups = append(groups, c.String())
			}
			groups = append(groups, "total")
			var bars, cpuBars []page.BarSeries
			var rows, cpu, mix [][]page.Cell
			for _, i := range idx {
				res := rep.Results[i]
				b := fmt.Sprintf("results.%d.", i)
				se := page.BarSeries{Name: res.Config, Codec: res.Config}
				row := []page.Cell{page.T(res.Config)}
				cells := map[string]page.AnswerCell{}
				for _, c := range cats {
					if res.PlainBytes[c] == 0 {
						// A category this view's traffic never had is not measured: no figure.
						se.Values = append(se.Values, page.Figure{})
						row = append(row, page.T("not in the trace"))
						continue
					}
					f := r.Src.Fig(fmt.Sprintf("%srelative.%d", b, c), page.Pct)
					se.Values = append(se.Values, f)
					row = append(row, page.F(f))
					cells[c.String()] = page.AnswerCell{Value: f}
				}
				total := r.Src.Fig(b+"relative_total", page.Pct)
				cells["total"] = page.AnswerCell{Value: total}
				se.Values = append(se.Values, total)
				row = append(row, page.F(total))
				if cmp, ok := res.Proposal["total"]; ok {
					row = append(row, page.F(r.Src.Fig(b+"proposal.total.low", page.Pct)))
					if why := TotalNotComparable(&res); why != "" {
						row = append(row, page.T(why))
					} else if cmp.Diff != nil {
						row = append(row, page.Cell{Fig: ptr(r.Src.Fig(b+"proposal.total.diff", pp)), Diff: true})
					} else {
						row = append(row, page.T(cmp.Reason))
					}
				} else {
					row = append(row, page.T("not published"), page.T(""))
				}
				if res.Config != "plain" {
					bars = append(bars, se)
				}
				rows = append(rows, row)
				if res.Config != "none" {
					cpuBars = append(cpuBars, page.BarSeries{Name: res.Config, Codec: res.Config, Values: []page.Figure{r.Src.Fig(b+"encode_thread_cpu_ns_per_byte", page.NsB), r.Src.Fig(b+"decode_thread_cpu_ns_per_byte", page.NsB)}})
				}
				cpu = append(cpu, []page.Cell{page.T(res.Config), page.F(r.Src.Fig(b+"encode_thread_cpu_ns_per_byte", page.NsB)), page.F(r.Src.Fig(b+"decode_thread_cpu_ns_per_byte", page.NsB)),
					page.F(r.Src.Fig(b+"encode_mb_per_s", mbs)), page.F(r.Src.Fig(b+"decode_mb_per_s", mbs)),
					page.F(r.Src.Fig(b+"encoder_state_bytes", page.KiB)), page.F(r.Src.Fig(b+"decoder_state_bytes", page.KiB))})
				if res.AtProposalMix > 0 {
					mix = append(mix, []page.Cell{page.T(res.Config), page.F(total), page.F(r.Src.Fig(b+"at_proposal_mix", page.Pct)), page.F(r.Src.Fig(b+"proposal.total.low", page.Pct))})
				}
				// The answer takes what the replay measured: the total of this traffic and
				// each category it has. Its total stands beside nothing where the traffic
				// lacks one of the proposal's categories (a workload trace has no control).
				if res.Config != "plain" && res.Config != "none" {
					dir := rep.Direction
					if dir == "" {
						dir = "in+out"
					}
					row := page.AnswerRow{Config: res.Config, View: res.View, Direction: dir, Payload: payloadLabel(res.Payload),
						By: "sweep " + r.Label, Of: page.OfPlain, Seeds: page.T(seedsOf(rep.Traces)), Cells: cells, Runs: []*page.Source{r.Src},
						Measured: "the view's streams replayed offline through the codec, against today's per-message Snappy on the same frames"}
					if why := TotalNotComparable(&res); why != "" {
						row.NotComparable = map[string]string{"total": why}
					}
					row.Facts = sweepFacts(r.Src, rep, i, idx)
					s.Answer(row)
				}
			}
			head := []string{"configuration"}
			for _, c := range cats {
				head = append(head, c.String())
			}
			head = append(head, "total", "proposal total", "difference")
			s.Bars(page.BarChart{Title: "Wire bytes, % of plain: view " + scope, YLabel: "% of plain", Groups: groups, Series: bars, RefY: 100, RefYLabel: "plain"},
				"Each configuration's wire bytes per category as a percentage of today's per-message Snappy on the same frames (results.<i>.relative, relative_total).")
			historyCharts(s, r.Src, rep, idx, k.view, cats)
			s.Table("Relative to plain, beside the proposal (difference: measured minus published, percentage points; 0 inside a published range; none where the trace lacks what the proposal's figure includes)", head, rows)
			if len(mix) > 0 {
				s.Table("Arithmetic on published shares, not a measurement: this sweep's per-category figures weighted by the proposal's MiB/h per category, control at the proposal's own control figure (results.<i>.at_proposal_mix); never in the answer",
					[]string{"configuration", "measured total (this traffic)", "at the proposal's mix", "proposal total"}, mix)
			}
			s.Bars(page.BarChart{Title: "Codec CPU, view " + scope + " (" + page.CPULabel + ")", YLabel: "ns/B", Groups: []string{"encode", "decode"}, Series: cpuBars},
				page.CPUDefinition+" (results.<i>.encode_thread_cpu_ns_per_byte, decode_thread_cpu_ns_per_byte).")
			s.Table("Codec CPU (thread CPU per input byte) and memory per stream direction (largest over the view's streams)",
				[]string{"configuration", "encode " + page.CPULabel, "decode " + page.CPULabel, "encode (wall)", "decode (wall)", "encoder state", "decoder state"}, cpu)
		}
	}
	return nil
}

var (
	pp  = page.Format{Unit: "pp", Scale: 1, Decimals: 1}
	mbs = page.Format{Unit: "MB/s", Scale: 1, Decimals: 0}
)

// payloadLabel names a result's payload mode ("" is plain's, replayed once on today's
// payloads).
func payloadLabel(p string) string {
	if p == "" {
		return gossip.PayloadSSZSnappy
	}
	return p
}

func ptr(f page.Figure) *page.Figure { return &f }

// historyCharts draws, for one view and payload, the history-size curve: each snappy-stream
// level's bytes as a % of today's against its window, in total and per category, zstd as a
// reference line, the proposal's figures (4 KiB, 64 KiB, 1 MiB) as points.
func historyCharts(s *page.Section, src *page.Source, rep *Report, idx []int, view string, cats []gossip.Category) {
	type point struct {
		window int
		i      int
	}
	levels := map[string][]point{}
	var order []string
	zstd := -1
	for _, i := range idx {
		c, err := ParseConfig(rep.Results[i].Config)
		if err != nil || c.Dict || c.None {
			continue
		}
		switch c.Spec.Kind {
		case codec.SnappyStream:
			lvl := c.Spec.SnappyLevel.String()
			if levels[lvl] == nil {
				order = append(order, lvl)
			}
			levels[lvl] = append(levels[lvl], point{c.Spec.WindowBytes, i})
		case codec.Zstd:
			if zstd < 0 {
				zstd = i
			}
		}
	}
	windows := map[int]bool{}
	for _, pts := range levels {
		sort.Slice(pts, func(a, b int) bool { return pts[a].window < pts[b].window })
		for _, p := range pts {
			windows[p.window] = true
		}
	}
	if len(windows) < 2 {
		s.Para(fmt.Sprintf("History-size chart, view %s: not drawn, the sweep replayed fewer than two snappy-stream windows (give --codecs several, 4KiB … 16MiB).", view))
		return
	}
	pub := PublishedFigures()
	propSrc := proposalSource(s)
	keys := []string{"total"}
	for _, c := range cats {
		keys = append(keys, c.String())
	}
	var ticks []page.XTick
	for w := range windows {
		ticks = append(ticks, page.XTick{At: float64(w), Label: units.FormatSize(w)})
	}
	sort.Slice(ticks, func(a, b int) bool { return ticks[a].At < ticks[b].At })
	for _, key := range keys {
		chart := page.LineChart{Title: fmt.Sprintf("History size: view %s, %s, %% of today's bytes", view, key), XLabel: "history window (log scale)", YLabel: "% of today's", LogX: true, XTicks: ticks, Dots: map[int]bool{}}
		path := func(i int) string {
			if key == "total" {
				return fmt.Sprintf("results.%d.relative_total", i)
			}
			return fmt.Sprintf("results.%d.relative.%d", i, categoryOf(key))
		}
		for _, lvl := range order {
			se := page.LineSeries{Name: "snappy-stream " + lvl}
			for _, p := range levels[lvl] {
				if key != "total" && rep.Results[p.i].PlainBytes[categoryOf(key)] == 0 {
					continue
				}
				se.Points = append(se.Points, page.Point{X: page.Const(float64(p.window), page.Count), Y: src.Fig(path(p.i), page.Pct)})
			}
			chart.Series = append(chart.Series, se)
		}
		if zstd >= 0 && (key == "total" || rep.Results[zstd].PlainBytes[categoryOf(key)] > 0) {
			chart.HRefs = append(chart.HRefs, page.HRef{Label: rep.Results[zstd].Config, At: src.Fig(path(zstd), page.Pct), Codec: rep.Results[zstd].Config})
		}
		if propSrc != nil && (view == "all-subnets" || view == "default") {
			se := page.LineSeries{Name: "the proposal (payloads not stated)"}
			for ri, row := range pub.Rows {
				c, err := ParseConfig(row.Config)
				if err != nil || c.Spec.Kind != codec.SnappyStream || !windows[c.Spec.WindowBytes] {
					continue
				}
				b := fmt.Sprintf("rows.%d.", ri)
				var p string
				switch key {
				case "total":
					p = b + map[string]string{"all-subnets": "all_subnets_total", "default": "default_total"}[view]
				case "attestation", "aggregate", "block":
					p = b + key + ".low"
				case "data_column":
					p = b + "data_column"
				default:
					continue
				}
				se.Points = append(se.Points, page.Point{X: page.Const(float64(c.Spec.WindowBytes), page.Count), Y: propSrc.Fig(p, page.Pct)})
			}
			if len(se.Points) > 0 {
				chart.Dots[len(chart.Series)] = true
				chart.Series = append(chart.Series, se)
			}
		}
		s.Lines(chart, fmt.Sprintf("Each snappy-stream level's wire bytes for %s as a %% of today's per-message Snappy on the same frames, against its history window (%s); dashed: zstd; large dots: the proposal's figures at its windows (its replay, payloads not stated; a range's low end).", key, "results.<i>.relative_total or relative.<category>"))
	}
}

// categoryOf is a category by name (the names are gossip's own).
func categoryOf(name string) gossip.Category {
	c, _ := gossip.ParseCategory(name)
	return c
}

// proposalSource is the page's source of the proposal's figures (nil: the page has none).
func proposalSource(s *page.Section) *page.Source { return s.ProposalSource() }

// sweepFacts are a result's figures for its configuration's verdict: bytes by direction,
// codec CPU beside plain's in the same view, codec state per peer.
func sweepFacts(src *page.Source, rep *Report, i int, view []int) []page.Fact {
	res := rep.Results[i]
	b := fmt.Sprintf("results.%d.", i)
	var facts []page.Fact
	for d, name := range []string{"inbound", "outbound"} {
		if res.DirPlainTotal[d] > 0 {
			facts = append(facts, page.Fact{Kind: page.FactBytes, What: fmt.Sprintf("view %s, %s, payload %s: %% of today's wire bytes", res.View, name, payloadLabel(res.Payload)),
				Value: src.Fig(fmt.Sprintf("%sdirection_relative_total.%d", b, d), page.Pct)})
		}
	}
	plain := -1
	for _, j := range view {
		if rep.Results[j].Config == "plain" && rep.Results[j].Layout == res.Layout {
			plain = j
		}
	}
	for _, dir := range []string{"encode", "decode"} {
		f := page.Fact{Kind: page.FactCPU, What: dir + ", view " + res.View + " (offline replay)", Value: src.Fig(b+dir+"_thread_cpu_ns_per_byte", page.NsB)}
		if plain >= 0 {
			f.Today = ptr(src.Fig(fmt.Sprintf("results.%d.%s_thread_cpu_ns_per_byte", plain, dir), page.NsB))
		}
		facts = append(facts, f)
	}
	if res.Memory.Peers == 0 {
		return facts // the replay measured no state per peer (it does with --layout)
	}
	// A side the replay did not run (an inbound-only sweep has no encoders of the node's)
	// holds 0, which is not a measurement: left out.
	if res.DirPlainTotal[1] > 0 {
		facts = append(facts, page.Fact{Kind: page.FactMemory, What: "encoders per peer (mean over the recording's peers)", Value: src.Fig(b+"memory.mean_peer_encoder_bytes", page.KiB)})
	}
	if res.DirPlainTotal[0] > 0 {
		facts = append(facts, page.Fact{Kind: page.FactMemory, What: "decoders per peer (mean over the recording's peers)", Value: src.Fig(b+"memory.mean_peer_decoder_bytes", page.KiB)})
	}
	facts = append(facts, page.Fact{Kind: page.FactMemory, What: "peers the replay measured", Value: src.Fig(b+"memory.peers", page.Count)})
	return facts
}

// seedsOf says what a sweep's figures come from: its traces, with their workload seeds.
func seedsOf(traces []TraceInfo) string {
	var seeds []string
	for _, t := range traces {
		if sd := cmp.Or(t.Params["seed"], t.Params["Seed"]); sd != "" {
			seeds = append(seeds, sd)
		}
	}
	out := fmt.Sprintf("%d trace(s), one replay", len(traces))
	if len(seeds) > 0 {
		out += ", workload seed " + strings.Join(seeds, ", ")
	}
	return out
}

// WriteJSON writes the sweep with its checks (ok, problems) at the top level, as every
// report's JSON has them.
func (s *SweepReport) WriteJSON(w io.Writer) error {
	return analysis.WriteJSON(w, struct {
		*Report
		analysis.Checks
	}{s.Report, s.verdict.Checks})
}
