package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/analysis/page"
	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/scenarios/neighbourhood"
)

// ABLabel says which run of a live A/B this is (`streamsim report` joins runs read back from
// their outputs with it).
func (r *Report) ABLabel() analysis.ABRun {
	return analysis.ABRun{Seed: r.Figures.Seed, Codec: r.Figures.Codec}
}

// section is the neighbourhood's part of the HTML report: the A/B when the runs were
// compared, then each run's calibration against the recording, bytes per category in and
// out, control by kind, latency, and CPU and memory over the measured slots.
func section(s *page.Section, runs []analysis.SectionRun, joined *analysis.SectionRun) error {
	if joined != nil {
		ab, ok := joined.Report.(*AB)
		if !ok {
			return fmt.Errorf("comparison: not a neighbourhood A/B")
		}
		abSection(s, ab, joined.Src, runs)
	}
	s.H3("Calibration against the recording (docs/inputs.md §1)")
	if err := seedCalibration(s, runs); err != nil {
		return err
	}
	var rows [][]page.Cell
	for _, r := range runs {
		rep, ok := r.Report.(*Report)
		if !ok {
			return fmt.Errorf("run %s: not a neighbourhood report", r.Label)
		}
		for i, c := range rep.Figures.Categories {
			b := fmt.Sprintf("figures.categories.%d.", i)
			rows = append(rows, []page.Cell{page.T(r.Label), page.T(c.Category), page.F(r.Src.Fig(b+"recording_mib_per_hour", page.MiBh)),
				page.F(r.Src.Fig(b+"mib_per_hour", page.MiBh)), page.F(r.Src.Fig(b+"vs_recording_pct", page.Pct)), page.T(fmt.Sprint(c.Within)),
				page.F(r.Src.Fig(b+"copies", page.Ratio)), r.Src.Cell(b+"recording_copies", page.Ratio, "not in the recording")})
		}
		rows = append(rows, []page.Cell{page.T(r.Label), page.T("IHAVE ids per hour"), page.F(r.Src.Fig("figures.recording_ihave_ids_per_hour", page.Count)),
			page.F(r.Src.Fig("figures.ihave_ids_per_hour", page.Count))})
	}
	s.Table("The observed node's inbound traffic per hour of simulated time (per-subnet figures scaled to 64 subnets), copies per delivered message",
		[]string{"run", "category", "recording MiB/h", "MiB/h", "% of recording", "within ±25 %", "copies", "recording copies"}, rows)

	for _, dir := range []string{"in", "out"} {
		var groups []string
		var series []page.BarSeries
		for ri, r := range runs {
			rep := r.Report.(*Report)
			se := page.BarSeries{Name: r.Label, Codec: explicit(rep.Figures.Codec)}
			for i, w := range rep.Figures.Wire {
				if w.Direction != dir || w.Category == "total" {
					continue
				}
				if ri == 0 {
					groups = append(groups, w.Category)
				}
				if gi := slices.Index(groups, w.Category); gi >= 0 {
					for len(se.Values) <= gi {
						se.Values = append(se.Values, page.Figure{})
					}
					se.Values[gi] = r.Src.Fig(fmt.Sprintf("figures.wire.%d.relative_pct", i), page.Pct)
				}
			}
			series = append(series, se)
		}
		s.Bars(page.BarChart{Title: "Observed node, " + dir + "bound wire bytes per category, % of the same run's raw bytes", YLabel: "% of raw", Groups: groups, Series: series, RefY: 100, RefYLabel: "raw"},
			"The observed node's wire bytes per category, "+dir+"bound, as a percentage of the same run's raw (decoded) bytes, per run (codec), over the measured slots (figures.wire.<i>.relative_pct): runs of different codecs carry different traffic, so their bytes are compared with their own raw bytes, not with each other's.")
	}

	var slotCurves []page.SlotCurve
	for _, r := range runs {
		c := explicit(r.Report.(*Report).Figures.Codec)
		slotCurves = append(slotCurves, page.SlotCurve{Name: r.Label + " in", Codec: c, Src: r.Src, Path: "figures.by_slot", Dir: "in"},
			page.SlotCurve{Name: r.Label + " out", Codec: c, Variant: "out", Src: r.Src, Path: "figures.by_slot", Dir: "out"})
	}
	var cats []string
	for _, c := range gossip.Categories() {
		cats = append(cats, c.String())
	}
	s.BytesPerSlot("Observed node, wire bytes per slot", slotCurves, cats,
		"The observed node's wire bytes of the category in (solid colour) and out (lighter) per measured slot, per run (codec): the bytes between its byte totals at the start of consecutive measured slots, the last interval ending when its meters stopped (it holds the drain slot after the last measured one), so the intervals add up to the run's bytes over the measured slots; figures.by_slot.<j>.<in|out>.<category>.wire_bytes (raw_bytes beside them). Runs of different codecs carry different traffic.")

	var kinds []string
	for _, k := range gossip.ControlKinds() {
		kinds = append(kinds, k.String())
	}
	var idKinds []string
	for _, k := range []gossip.ControlKind{gossip.IHave, gossip.IWant, gossip.IDontWant} {
		idKinds = append(idKinds, k.String())
	}
	var ctlRows [][]page.Cell
	for _, dir := range []struct{ key, name string }{{"control_in", "inbound"}, {"control_out", "outbound"}} {
		var ctl, ids []page.BarSeries
		for _, r := range runs {
			c := explicit(r.Report.(*Report).Figures.Codec)
			se, id := page.BarSeries{Name: r.Label, Codec: c}, page.BarSeries{Name: r.Label, Codec: c}
			for _, k := range kinds {
				b := "figures." + dir.key + "." + k
				se.Values = append(se.Values, r.Src.Fig(b+".entries", page.Count))
				if slices.Contains(idKinds, k) {
					id.Values = append(id.Values, r.Src.Fig(b+".ids", page.Count))
				}
				if _, ok := r.Src.Lookup(b); ok {
					ctlRows = append(ctlRows, []page.Cell{page.T(r.Label), page.T(dir.name), page.T(k), page.F(r.Src.Fig(b+".entries", page.Count)),
						page.F(r.Src.Fig(b+".ids", page.Count)), page.F(r.Src.Fig(b+".raw_bytes", page.MB)), page.F(r.Src.Fig(b+".wire_bytes", page.MB))})
				}
			}
			ctl, ids = append(ctl, se), append(ids, id)
		}
		verb := map[string]string{"control_in": "received", "control_out": "sent"}[dir.key]
		s.Bars(page.BarChart{Title: "Observed node, " + dir.name + " control entries by kind", YLabel: "entries", Groups: kinds, Series: ctl},
			"Control entries the observed node "+verb+" per kind over the measured slots (figures."+dir.key+".<kind>.entries: an IHAVE or IWANT entry is one topic's list of message ids, a GRAFT or PRUNE one topic); every kind is in the JSON, zero included.")
		s.Bars(page.BarChart{Title: "Observed node, message ids in " + dir.name + " control by kind", YLabel: "message ids", Groups: idKinds, Series: ids},
			"Message ids the observed node "+verb+" in IHAVE, IWANT and IDONTWANT over the measured slots (figures."+dir.key+".<kind>.ids).")
	}
	s.Table("Control by kind, in and out, over the measured slots", []string{"run", "direction", "kind", "entries", "message ids", "raw", "wire"}, ctlRows)

	mechanismSection(s, runs)

	s.H3("Latency, CPU and memory")
	for _, c := range gossip.Categories() {
		var curves []page.CDFCurve
		for _, r := range runs {
			b := "figures.timing.latency." + c.String()
			if _, ok := r.Src.Lookup(b); ok {
				curves = append(curves, page.CDFCurve{Name: r.Label, Codec: explicit(r.Report.(*Report).Figures.Codec), Src: r.Src, Path: b})
			}
		}
		if len(curves) == 0 {
			continue // a category no run delivered is not a chart
		}
		s.LatencyCDF("Delivery latency CDF at the observed node: "+c.String(), "simulated ms from publication to delivery at the observed node (log scale)", curves,
			"Share of the observed node's deliveries within a latency, in simulated ms from the message's publication (validation included), one curve per run in its codec's colour; dashed: p50, p90, p99 per run. figures.timing.latency."+c.String()+".cdf_ms.")
	}
	var lat [][]page.Cell
	for _, r := range runs {
		for _, c := range gossip.Categories() {
			b := "figures.timing.latency." + c.String()
			if _, ok := r.Src.Lookup(b); !ok {
				continue
			}
			lat = append(lat, []page.Cell{page.T(r.Label), page.T(c.String()), page.F(r.Src.Fig(b+".messages", page.Count)),
				page.F(r.Src.Fig(b+".p50_ms", page.Ms1)), r.Src.Cell(b+".p90_ms", page.Ms1, "not recorded"), page.F(r.Src.Fig(b+".p99_ms", page.Ms1))})
		}
	}
	s.Table("Delivery latency at the observed node (simulated ms)", []string{"run", "category", "messages", "p50", "p90", "p99"}, lat)
	var cpu [][]page.Cell
	rss := page.LineChart{Title: "Process resident memory at the start of each measured slot", XLabel: "measured slot", YLabel: "MB"}
	for _, r := range runs {
		rep := r.Report.(*Report)
		cpu = append(cpu, []page.Cell{page.T(r.Label), page.F(r.Src.Fig("figures.cpu_s", page.Sec)), page.F(r.Src.Fig("figures.simulated_s", page.Sec)),
			page.F(r.Src.Fig("figures.wall_s", page.Sec)), page.F(r.Src.Fig("figures.cpu_s_per_simulated_minute", page.Sec)), page.F(r.Src.Fig("figures.wall_s_per_simulated_minute", page.Sec)),
			page.F(r.Src.Fig("figures.timing.cpu_utilization", page.Share)),
			page.F(r.Src.Fig("figures.timing.peak_rss_bytes", page.MB)), page.F(r.Src.Fig("figures.timing.lag_p99_ms", page.Ms)), page.F(r.Src.Fig("figures.max_lag_ms", page.Ms))})
		se := page.LineSeries{Name: r.Label, Codec: explicit(rep.Figures.Codec)}
		for i := range rep.Figures.Timing.RSSBySlot {
			se.Points = append(se.Points, page.Point{X: page.Const(float64(i), page.Count), Y: r.Src.Fig(fmt.Sprintf("figures.timing.rss_bytes_by_slot.%d", i), page.MB)})
		}
		rss.Series = append(rss.Series, se)
	}
	s.Table("CPU and memory (the whole process: every node of the neighbourhood)", []string{"run", "process CPU", "simulated", "wall", "CPU per simulated minute", "wall per simulated minute", "CPU share of the machine", "peak RSS", "periphery lag p99", "max lag"}, cpu)
	s.Lines(rss, "The neighbourhood process's resident memory per measured slot (figures.timing.rss_bytes_by_slot).")
	return nil
}

func abSection(s *page.Section, ab *AB, src *page.Source, runs []analysis.SectionRun) {
	var sources []*page.Source
	payload := gossip.PayloadSSZSnappy
	for _, r := range runs {
		sources = append(sources, r.Src)
		if rep, ok := r.Report.(*Report); ok {
			payload = rep.payload
		}
	}
	answers := map[string]*page.AnswerRow{}
	var answerOrder []string
	s.H3("Live A/B on the observed node's links")
	var cats []string
	for _, r := range ab.Rows {
		if slices.Index(cats, r.Category) < 0 {
			cats = append(cats, r.Category)
		}
	}
	var order []string
	series := map[string]*page.BarSeries{}
	var rows [][]page.Cell
	for i, r := range ab.Rows {
		b := fmt.Sprintf("rows.%d.", i)
		if series[r.Codec] == nil {
			series[r.Codec] = &page.BarSeries{Name: r.Codec, Codec: explicit(r.Codec), Values: make([]page.Figure, len(cats)), Low: make([]page.Figure, len(cats)), High: make([]page.Figure, len(cats))}
			order = append(order, r.Codec)
		}
		ci := slices.Index(cats, r.Category)
		se := series[r.Codec]
		se.Values[ci], se.Low[ci], se.High[ci] = src.Fig(b+"wire_of_raw_pct.mean", page.Pct), src.Fig(b+"wire_of_raw_pct.min", page.Pct), src.Fig(b+"wire_of_raw_pct.max", page.Pct)
		rows = append(rows, []page.Cell{page.T(r.Codec), page.T(r.Category), page.F(src.Fig(b+"seeds", page.Count)), page.F(src.Fig(b+"wire_of_raw_pct.mean", page.Pct)),
			page.F(src.Fig(b+"wire_of_raw_pct.min", page.Pct)), page.F(src.Fig(b+"wire_of_raw_pct.max", page.Pct)),
			src.Cell(b+"wire_of_plain_run_pct.mean", page.Pct, "no plain run of this seed"), src.Cell(b+"cpu_of_plain_run_pct.mean", page.Pct, "not measured")})
		// Every codec's inbound wire, % of its raw bytes, is an answer row; the proposal's
		// figures are % of today's wire bytes, so it stands beside none of them.
		// The total at the recording's mix is arithmetic on the recording's shares: never an
		// answer cell.
		if r.Codec != "plain" && r.Category != MixLabel {
			if spec, err := codec.Parse(r.Codec); err == nil {
				a := answers[r.Codec]
				if a == nil {
					a = &page.AnswerRow{Config: spec.Explicit(), View: "all-subnets", Direction: "in", Payload: payload, By: "neighbourhood A/B", Of: page.OfRaw,
						Cells: map[string]page.AnswerCell{}, Runs: sources,
						Measured: "the observed node's inbound wire bytes, % of the same run's raw bytes (runs of different codecs carry different traffic)"}
					answers[r.Codec] = a
					answerOrder = append(answerOrder, r.Codec)
				}
				key := r.Category
				if key == "total" {
					a.Seeds = page.F(src.Fig(b+"seeds", page.Count))
				}
				a.Cells[key] = page.AnswerCell{Value: src.Fig(b+"wire_of_raw_pct.mean", page.Pct), Low: ptr(src.Fig(b+"wire_of_raw_pct.min", page.Pct)), High: ptr(src.Fig(b+"wire_of_raw_pct.max", page.Pct))}
			}
		}
	}
	// Each codec's p99 delivery-latency change per category, against plain in the same seed,
	// is a fact of its verdict; one whose runs had the process saturated or fell behind their
	// schedule is shown with why and left out.
	var lat [][]page.Cell
	for i, d := range ab.LatencyDiff {
		b := fmt.Sprintf("latency_diff.%d.", i)
		lat = append(lat, []page.Cell{page.T(d.Codec), page.T(d.Category), page.F(src.Fig(b+"seeds", page.Count)),
			page.F(src.Fig(b+"p50_ms.mean", page.Ms1)), page.F(src.Fig(b+"p99_ms.mean", page.Ms1)), page.F(src.Fig(b+"p99_ms.min", page.Ms1)), page.F(src.Fig(b+"p99_ms.max", page.Ms1)),
			page.T(fmt.Sprint(d.Saturated)), page.T(fmt.Sprint(d.Late))})
		a := answers[d.Codec]
		if a == nil {
			continue
		}
		f := page.Fact{Kind: page.FactLatency, What: d.Category + ": codec minus plain in the same seed, simulated ms, at the observed node (neighbourhood A/B)",
			Value: src.Fig(b+"p99_ms.mean", page.Ms1), Low: ptr(src.Fig(b+"p99_ms.min", page.Ms1)), High: ptr(src.Fig(b+"p99_ms.max", page.Ms1)),
			Seeds: ptr(src.Fig(b+"seeds", page.Count))}
		if d.Saturated {
			f.Reasons = append(f.Reasons, analysis.FlagSaturated+": the process was saturated in one of the runs this difference compares ("+b+"saturated): in-process hops took longer than on an idle machine")
		}
		if d.Late {
			f.Reasons = append(f.Reasons, analysis.FlagLate+": the periphery fell behind its schedule in one of the runs this difference compares ("+b+"late): delivery timing is not the model's")
		}
		a.Facts = append(a.Facts, f)
	}
	for _, c := range answerOrder {
		s.Answer(*answers[c])
	}
	var bars []page.BarSeries
	for _, c := range order {
		bars = append(bars, *series[c])
	}
	s.Bars(page.BarChart{Title: "Observed node inbound: wire, % of the same run's raw bytes (mean; whiskers: range over seeds)", YLabel: "% of raw", Groups: cats, Series: bars, RefY: 100, RefYLabel: "raw"},
		"Per codec and category, the observed node's inbound wire bytes as a percentage of the same run's raw bytes (what plain would have put on the wire for this traffic); rows.<i>.wire_of_raw_pct.")
	s.Table("A/B rows", []string{"codec", "category", "seeds", "wire % of raw: mean", "min", "max", "% of the plain run's wire", "process CPU, % of plain run"}, rows)
	if len(lat) > 0 {
		s.Table("Delivery latency at the observed node against plain in the same seed (codec minus plain, simulated ms)", []string{"codec", "category", "seeds", "p50 diff", "p99 diff", "p99 diff min", "p99 diff max", "process saturated", "late"}, lat)
	} else {
		s.Para("Delivery latency against plain: not compared (no codec run has a plain run of the same seed that passed its checks).")
	}
}

// seedCalibration shows, for each codec run over several seeds, the calibration table with
// the spread over them (mean ± sd, range) exactly as `streamsim report` prints it
// (neighbourhood.WriteCalibration owns those figures).
func seedCalibration(s *page.Section, runs []analysis.SectionRun) error {
	var codecs []string
	byCodec := map[string][]int{}
	for i, r := range runs {
		rep, ok := r.Report.(*Report)
		if !ok {
			return fmt.Errorf("run %s: not a neighbourhood report", r.Label)
		}
		c := rep.Figures.Codec
		if byCodec[c] == nil {
			codecs = append(codecs, c)
		}
		byCodec[c] = append(byCodec[c], i)
	}
	for _, c := range codecs {
		idx := byCodec[c]
		if len(idx) < 2 {
			continue
		}
		var labels []string
		var sums []neighbourhood.Summary
		for _, i := range idx {
			labels = append(labels, runs[i].Label)
			sums = append(sums, runs[i].Report.(*Report).Figures)
		}
		var b strings.Builder
		if err := neighbourhood.WriteCalibration(&b, labels, sums); err != nil {
			s.Para(fmt.Sprintf("Codec %s over %d runs: %v", c, len(idx), err))
			continue
		}
		s.Pre(fmt.Sprintf("Codec %s over %d seeds: the calibration table with its spread (mean ± sd, min–max), as streamsim report prints it", c, len(idx)), b.String())
	}
	return nil
}

// mechanismSection is the IHAVE mechanism per run: per topic kind the eligible gossip targets at
// the real peers and the share of their heartbeats in which they sent the observed node IHAVE,
// and the IHAVE id recurrence by distance on its inbound streams.
func mechanismSection(s *page.Section, runs []analysis.SectionRun) {
	s.H3("The IHAVE mechanism")
	var rows, rec [][]page.Cell
	for _, r := range runs {
		rep := r.Report.(*Report)
		m := rep.Figures.Mechanism
		for i, k := range m.Kinds {
			b := fmt.Sprintf("figures.ihave_mechanism.kinds.%d.", i)
			rows = append(rows, []page.Cell{page.T(r.Label), page.T(k.Kind),
				page.F(r.Src.Fig(b+"eligible_targets.mean", page.Ratio)), page.F(r.Src.Fig(b+"eligible_targets.p10", page.Count)),
				page.F(r.Src.Fig(b+"eligible_targets.p50", page.Count)), page.F(r.Src.Fig(b+"eligible_targets.p90", page.Count)),
				page.F(r.Src.Fig(b+"ihave_heartbeat_share.mean", page.Share)), page.F(r.Src.Fig(b+"ihave_heartbeat_share.p10", page.Share)),
				page.F(r.Src.Fig(b+"ihave_heartbeat_share.p50", page.Share)), page.F(r.Src.Fig(b+"ihave_heartbeat_share.p90", page.Share)),
				page.F(r.Src.Fig(b+"ihave_heartbeat_share_out_of_mesh.mean", page.Share))})
		}
		row := []page.Cell{page.T(r.Label), page.F(r.Src.Fig("figures.ihave_mechanism.ihave_recurrence.mentions", page.Count))}
		for i := range m.RepeatShares {
			row = append(row, page.F(r.Src.Fig(fmt.Sprintf("figures.ihave_mechanism.repeat_share_within.%d", i), page.Share)))
		}
		row = append(row, page.F(r.Src.Fig("figures.ihave_mechanism.expected_repeat_share", page.Share)))
		rec = append(rec, row)
	}
	s.Table("Eligible gossip targets (subscribed peers outside the mesh) at the observed node's real peers on its topics, sampled each measured slot, and the share of a peer's heartbeats in which it sent the observed node IHAVE on a topic (per peer and topic)",
		[]string{"run", "topic kind", "eligible mean", "p10", "p50", "p90", "IHAVE share mean", "p10", "p50", "p90", "while out of its mesh, mean"}, rows)
	s.Table("IHAVE id mentions on the observed node's inbound streams repeating an id the same stream carried within a distance (the recording implies ≈ 38 %), and pubsub's rule at the run's inputs",
		[]string{"run", "mentions", "≤ 4 KiB", "≤ 64 KiB", "≤ 1 MiB", "≤ 16 MiB", "pubsub's rule expects"}, rec)
}

func ptr(f page.Figure) *page.Figure { return &f }

// explicit is a codec's explicit form (its colour on the page), or the name as given.
func explicit(c string) string {
	if s, err := codec.Parse(c); err == nil {
		return s.Explicit()
	}
	return c
}
