package report

import (
	"fmt"
	"slices"
	"sort"

	"github.com/streamsim/streamsim/analysis"

	"github.com/streamsim/streamsim/analysis/page"
	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/units"
)

// ABLabel says which run of an A/B a mesh run is: its seed, the codec of its compressed
// nodes (from the protocols offered), and the ordinary nodes' link rate when links were shaped.
func (r *MeshReport) ABLabel() analysis.ABRun {
	l := analysis.ABRun{Seed: r.Seed, Codec: "plain"}
	for _, p := range r.Codecs {
		if s, ok := codec.ParseProtocolID(p); ok && !s.IsPlain() {
			l.Codec = s.String()
			break
		}
	}
	rates := map[int64]int{}
	for _, n := range r.nodes {
		if n.Link != nil && n.Link.Class != "supernode" {
			rates[n.Link.UpBitsPerSec]++
		}
	}
	best := 0
	for rate, k := range rates {
		if k > best {
			best, l.Bandwidth = k, units.FormatBitsPerSec(rate)
		}
	}
	return l
}

// cdfCategories are the categories whose latency CDFs the page draws.
var cdfCategories = []gossip.Category{gossip.Attestation, gossip.Aggregate, gossip.Block, gossip.DataColumn, gossip.SyncCommittee}

// meshSection is the gossip mesh's part of the HTML report: the A/B first when the runs were
// compared, then the runs side by side (bytes, control by kind, latency CDFs, copies, CPU).
func meshSection(s *page.Section, runs []analysis.SectionRun, joined *analysis.SectionRun) error {
	if joined != nil {
		if err := abSection(s, joined, runs); err != nil {
			return err
		}
	}
	s.H3("Observed node: bytes per category")
	var byteRows [][]page.Cell
	for _, dir := range []struct{ key, name string }{{"in", "inbound"}, {"out", "outbound"}} {
		var series []page.BarSeries
		groups := presentIn(runs, "observed."+dir.key+".", gossip.Categories())
		for _, r := range runs {
			se := page.BarSeries{Name: r.Label, Codec: runCodec(r)}
			for _, g := range groups {
				se.Values = append(se.Values, r.Src.Fig("observed.wire_of_raw_pct."+dir.key+"."+g, page.Pct))
				b := "observed." + dir.key + "." + g
				if _, ok := r.Src.Lookup(b); ok {
					byteRows = append(byteRows, []page.Cell{page.T(r.Label), page.T(dir.name), page.T(g), page.F(r.Src.Fig(b+".raw_bytes", page.MB)),
						page.F(r.Src.Fig(b+".wire_bytes", page.MB)), r.Src.Cell("observed.wire_of_raw_pct."+dir.key+"."+g, page.Pct, "no raw bytes")})
				}
			}
			se.Values = append(se.Values, r.Src.Fig("observed.wire_of_raw_pct."+dir.key+".total", page.Pct))
			series = append(series, se)
		}
		s.Bars(page.BarChart{Title: "Observed node, " + dir.name + " wire bytes per category, % of the same run's raw bytes", YLabel: "% of raw", Groups: append(groups, "total"), Series: series, RefY: 100, RefYLabel: "raw"},
			"Wire bytes (after stream compression) of the observed node's gossip streams, "+dir.name+", as a percentage of the same bytes before it, per category and run (observed.wire_of_raw_pct."+dir.key+".<category>): runs carry different traffic (gossip's randomness is not seeded), so each run's bytes are compared with its own raw bytes; the bytes are in the table below.")
	}
	s.Table("Observed node: raw and wire bytes per category", []string{"run", "direction", "category", "raw", "wire", "wire, % of raw"}, byteRows)
	var slotCurves []page.SlotCurve
	for _, r := range runs {
		slotCurves = append(slotCurves, page.SlotCurve{Name: r.Label + " in", Codec: runCodec(r), Src: r.Src, Path: "observed.by_slot", Dir: "in"},
			page.SlotCurve{Name: r.Label + " out", Codec: runCodec(r), Variant: "out", Src: r.Src, Path: "observed.by_slot", Dir: "out"})
	}
	s.BytesPerSlot("Observed node, wire bytes per slot", slotCurves, presentIn(runs, "observed.in.", gossip.Categories()),
		"The observed node's wire bytes of the category in (solid colour) and out (lighter) per interval between its resource samples (one slot at the default sample period; the first interval starts when the measured phase does, the last ends when the node stopped, so it may be shorter or hold the drain), per run: observed.by_slot.<j>.<in|out>.<category>.wire_bytes.")

	s.H3("Control by kind")
	kinds := presentIn(runs, "observed.control_in.", gossip.ControlKinds())
	var ctl []page.BarSeries
	var ctlRows [][]page.Cell
	for _, r := range runs {
		in := page.BarSeries{Name: r.Label + " in", Codec: runCodec(r)}
		out := page.BarSeries{Name: r.Label + " out", Codec: runCodec(r), Variant: "out"}
		for _, k := range kinds {
			p := "observed.control_in." + k
			in.Values = append(in.Values, r.Src.Fig(p+".entries", page.Count))
			out.Values = append(out.Values, r.Src.Fig("observed.control_out."+k+".entries", page.Count))
			ctlRows = append(ctlRows, []page.Cell{page.T(r.Label), page.T(k), page.F(r.Src.Fig(p+".raw_bytes", page.MB)), page.F(r.Src.Fig(p+".wire_bytes", page.MB)),
				page.F(r.Src.Fig(p+".entries", page.Count)), page.F(r.Src.Fig(p+".ids", page.Count))})
		}
		ctl = append(ctl, in, out)
	}
	s.Bars(page.BarChart{Title: "Observed node, control entries by kind, in and out", YLabel: "entries", Groups: kinds, Series: ctl},
		"Control entries the observed node received and sent per kind (observed.control_in.<kind>.entries, control_out); bytes per kind are in the table below.")
	s.Table("Inbound control by kind", []string{"run", "kind", "raw", "wire", "entries", "message ids"}, ctlRows)

	s.H3("Delivery latency")
	for _, c := range cdfCategories {
		var curves []page.CDFCurve
		for _, r := range runs {
			if _, ok := r.Src.Lookup("latency." + c.String()); ok {
				curves = append(curves, page.CDFCurve{Name: r.Label, Codec: runCodec(r), Src: r.Src, Path: "latency." + c.String()})
			}
		}
		if len(curves) > 0 {
			s.LatencyCDF("Delivery latency CDF: "+c.String(), "ms from publish to first delivery (log scale)", curves,
				"Share of deliveries (publish to first delivery at each subscribed node, origin excluded) within a latency, one curve per run in its codec's colour; dashed: p50, p90, p99 per run. latency."+c.String()+".cdf_ms.")
		}
	}
	var latRows [][]page.Cell
	for _, r := range runs {
		for _, c := range cdfCategories {
			b := "latency." + c.String()
			if _, ok := r.Src.Lookup(b); !ok {
				continue
			}
			latRows = append(latRows, []page.Cell{page.T(r.Label), page.T(c.String()), page.F(r.Src.Fig(b+".deliveries", page.Count)),
				page.F(r.Src.Fig(b+".p50_ms", page.Ms1)), page.F(r.Src.Fig(b+".p90_ms", page.Ms1)), page.F(r.Src.Fig(b+".p99_ms", page.Ms1)),
				page.F(r.Src.Fig(b+".max_ms", page.Ms1)), page.F(r.Src.Fig(b+".t95_p50_ms", page.Ms1))})
		}
	}
	s.Table("Delivery latency per category", []string{"run", "category", "deliveries", "p50", "p90", "p99", "max", "95 % of subscribers, median"}, latRows)
	regionLatency(s, runs)

	s.H3("Duplicates")
	groups := presentIn(runs, "copies_observed.", gossip.Categories())
	var cp []page.BarSeries
	for _, r := range runs {
		obs, all := page.BarSeries{Name: r.Label + " observed", Codec: runCodec(r)}, page.BarSeries{Name: r.Label + " all nodes", Codec: runCodec(r), Variant: "all nodes"}
		for _, g := range groups {
			obs.Values = append(obs.Values, r.Src.Fig("copies_observed."+g, page.Ratio))
			all.Values = append(all.Values, r.Src.Fig("copies_all."+g, page.Ratio))
		}
		cp = append(cp, obs, all)
	}
	s.Bars(page.BarChart{Title: "Copies received per delivered message, per topic kind", YLabel: "copies", Groups: groups, Series: cp, RefY: 1, RefYLabel: "one copy"},
		"Received copies (first plus duplicates) per unique delivered message: the observed node's (copies_observed) and the mean over all nodes (copies_all).")
	var kindRows [][]page.Cell
	for _, r := range runs {
		rep, _ := r.Report.(*MeshReport)
		if rep == nil {
			continue
		}
		for i, k := range rep.Kinds {
			row := []page.Cell{page.T(r.Label), page.T(k.Kind), page.F(r.Src.Fig(fmt.Sprintf("kinds.%d.nodes", i), page.Count))}
			for _, c := range []gossip.Category{gossip.Attestation, gossip.Aggregate, gossip.Block, gossip.DataColumn} {
				row = append(row, r.Src.Cell(fmt.Sprintf("kinds.%d.copies.%s", i, c), page.Ratio, "none delivered"))
			}
			kindRows = append(kindRows, row)
		}
	}
	s.Table("Copies per delivered message by node kind", []string{"run", "node kind", "nodes", "attestation", "aggregate", "block", "data_column"}, kindRows)

	s.H3("Gossip, delivery, CPU and memory")
	var rows [][]page.Cell
	for _, r := range runs {
		rows = append(rows, []page.Cell{page.T(r.Label), page.F(r.Src.Fig("ihave_ids_per_message", page.Ratio)), page.F(r.Src.Fig("delivery.complete", page.Count)),
			page.F(r.Src.Fig("drops", page.Count)), page.F(r.Src.Fig("process.cpu_s", page.Sec)), page.F(r.Src.Fig("cpu_s_per_simulated_minute", page.Sec)), page.F(r.Src.Fig("wall_s_per_simulated_minute", page.Sec)), page.F(r.Src.Fig("process.cpu_share", page.Share)),
			page.F(r.Src.Fig("process.max_rss_bytes", page.MB)), page.F(r.Src.Fig("cpu_us_per_copy", page.Micro)),
			page.F(r.Src.Fig("observed.codec_time_ms", page.Ms1)), page.F(r.Src.Fig("observed.codec_state_bytes", page.KiB))})
	}
	s.Table("Per run (delivery complete: 1 yes, 0 no)", []string{"run", "IHAVE ids per message", "delivery complete", "pubsub drops", "process CPU", "CPU per simulated minute", "wall per simulated minute", "CPU share", "peak RSS", "CPU per copy", "observed codec time", "observed codec state"}, rows)

	var calRows [][]page.Cell
	for _, r := range runs {
		rep, _ := r.Report.(*MeshReport)
		if rep == nil {
			continue
		}
		for i, c := range rep.Calibration {
			b := fmt.Sprintf("calibration.%d.", i)
			calRows = append(calRows, []page.Cell{page.T(r.Label), page.T(c.Category.String()), page.F(r.Src.Fig(b+"recording_mib_h", page.MiBh)),
				page.F(r.Src.Fig(b+"raw_mib_h", page.MiBh)), page.F(r.Src.Fig(b+"wire_mib_h", page.MiBh)), page.F(r.Src.Fig(b+"raw_vs_recording", page.Ratio))})
		}
	}
	s.Table("Observed node's inbound traffic per hour of simulated time against the recording (docs/inputs.md §1)", []string{"run", "category", "recording", "raw (plain)", "wire", "raw / recording"}, calRows)
	return nil
}

// abSection is the mesh A/B: each codec's wire bytes relative to plain in the same seed, mean
// and range over seeds, and latency against plain's.
func abSection(s *page.Section, ab *analysis.SectionRun, runs []analysis.SectionRun) error {
	rep, ok := ab.Report.(*ABReport)
	if !ok {
		return fmt.Errorf("comparison: not an A/B report")
	}
	var sources []*page.Source
	payload := gossip.PayloadSSZSnappy
	for _, r := range runs {
		sources = append(sources, r.Src)
		if m, ok := r.Report.(*MeshReport); ok && len(m.nodes) > 0 && m.nodes[0].Payload != "" {
			payload = m.nodes[0].Payload
		}
	}
	type akey struct{ bw, codec string }
	answers := map[akey]*page.AnswerRow{}
	var answerOrder []akey
	s.H3("A/B: wire bytes relative to plain, same seed")
	type key struct{ bw, codec, scope string }
	var order []key
	series := map[key]*page.BarSeries{}
	var cats []string
	seen := map[string]bool{}
	for _, row := range rep.Rows {
		if !seen[row.Category] {
			seen[row.Category] = true
			cats = append(cats, row.Category)
		}
	}
	var rows [][]page.Cell
	for i, row := range rep.Rows {
		k := key{row.Bandwidth, row.Codec, row.Scope}
		if series[k] == nil {
			name := row.Codec + ", " + row.Scope
			if row.Bandwidth != "" {
				name += ", " + row.Bandwidth
			}
			variant := ""
			if row.Scope != "observed in" {
				variant = row.Scope
			}
			series[k] = &page.BarSeries{Name: name, Codec: explicit(row.Codec), Variant: variant, Values: make([]page.Figure, len(cats)), Low: make([]page.Figure, len(cats)), High: make([]page.Figure, len(cats))}
			order = append(order, k)
		}
		b := fmt.Sprintf("rows.%d.", i)
		ci := slices.Index(cats, row.Category)
		series[k].Values[ci] = ab.Src.Fig(b+"mean_pct", page.Pct)
		series[k].Low[ci], series[k].High[ci] = ab.Src.Fig(b+"min_pct", page.Pct), ab.Src.Fig(b+"max_pct", page.Pct)
		rows = append(rows, []page.Cell{page.T(linksLabel(row.Bandwidth)), page.T(row.Codec), page.T(row.Scope), page.T(row.Category), page.F(ab.Src.Fig(b+"seeds", page.Count)),
			page.F(ab.Src.Fig(b+"mean_pct", page.Pct)), page.F(ab.Src.Fig(b+"min_pct", page.Pct)), page.F(ab.Src.Fig(b+"max_pct", page.Pct)),
			ab.Src.Cell(b+"wire_of_raw_pct.mean", page.Pct, "no raw bytes"), ab.Src.Cell(b+"wire_of_raw_pct.min", page.Pct, ""), ab.Src.Cell(b+"wire_of_raw_pct.max", page.Pct, "")})
		// The observed all-subnets node's inbound rows are the answer's: % of the plain run's
		// wire bytes in the same seed, every category and the total.
		if row.Scope == "observed in" {
			if spec, err := codec.Parse(row.Codec); err == nil {
				ak := akey{row.Bandwidth, row.Codec}
				a := answers[ak]
				if a == nil {
					a = &page.AnswerRow{Config: spec.Explicit(), View: "all-subnets", Direction: "in", Payload: payload, By: "mesh A/B, " + linksLabel(row.Bandwidth),
						Of: page.OfPlain, Cells: map[string]page.AnswerCell{}, Runs: sources,
						Measured: "the observed all-subnets node's inbound wire bytes, % of the plain run's of the same seed"}
					answers[ak] = a
					answerOrder = append(answerOrder, ak)
				}
				if row.Category == "total" {
					a.Seeds = page.F(ab.Src.Fig(b+"seeds", page.Count))
				}
				a.Cells[row.Category] = page.AnswerCell{Value: ab.Src.Fig(b+"mean_pct", page.Pct), Low: ptr(ab.Src.Fig(b+"min_pct", page.Pct)), High: ptr(ab.Src.Fig(b+"max_pct", page.Pct))}
			}
		}
	}
	for _, k := range answerOrder {
		a := answers[k]
		for i, d := range rep.LatencyDiff {
			if d.Codec != k.codec || d.Bandwidth != k.bw {
				continue
			}
			b := fmt.Sprintf("latency_diff.%d.", i)
			f := page.Fact{Kind: page.FactLatency, What: d.Category.String() + ": codec minus plain in the same seed, ms (mesh A/B)",
				Value: ab.Src.Fig(b+"p99_ms.mean", page.Ms1), Low: ptr(ab.Src.Fig(b+"p99_ms.min", page.Ms1)), High: ptr(ab.Src.Fig(b+"p99_ms.max", page.Ms1)),
				Seeds: ptr(ab.Src.Fig(b+"seeds", page.Count))}
			if d.Saturated {
				// Latency on a machine busier than its cores is this machine's queueing: out of
				// the verdict, shown with why.
				f.Reasons = []string{analysis.FlagSaturated + ": the machine was saturated in one of the runs this difference compares (" + b + "saturated): latency figures show queueing in this machine, not the network"}
			}
			a.Facts = append(a.Facts, f)
		}
		s.Answer(*a)
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].scope > order[j].scope })
	var bars []page.BarSeries
	for _, k := range order {
		bars = append(bars, *series[k])
	}
	var rawBars []page.BarSeries
	for _, k := range order {
		se := *series[k]
		raw := page.BarSeries{Name: se.Name, Codec: se.Codec, Variant: se.Variant, Values: make([]page.Figure, len(cats)), Low: make([]page.Figure, len(cats)), High: make([]page.Figure, len(cats))}
		for i, row := range rep.Rows {
			if (key{row.Bandwidth, row.Codec, row.Scope}) != k {
				continue
			}
			b := fmt.Sprintf("rows.%d.wire_of_raw_pct.", i)
			ci := slices.Index(cats, row.Category)
			raw.Values[ci], raw.Low[ci], raw.High[ci] = ab.Src.Fig(b+"mean", page.Pct), ab.Src.Fig(b+"min", page.Pct), ab.Src.Fig(b+"max", page.Pct)
		}
		rawBars = append(rawBars, raw)
	}
	s.Bars(page.BarChart{Title: "Wire bytes, % of the same run's raw bytes (mean; whiskers: range over seeds)", YLabel: "% of raw", Groups: cats, Series: rawBars, RefY: 100, RefYLabel: "raw"},
		"Each codec's inbound wire bytes per category as a percentage of its own run's raw bytes (before stream compression), for the observed node and for all nodes; rows.<i>.wire_of_raw_pct. What the codec left of the traffic its run carried: a codec's run and plain's carry different traffic (gossip's randomness is not seeded), which the chart below, relative to plain, includes.")
	s.Bars(page.BarChart{Title: "Wire bytes, % of plain in the same seed (mean; whiskers: range over seeds)", YLabel: "% of plain", Groups: cats, Series: bars, RefY: 100, RefYLabel: "plain"},
		"Each codec's inbound wire bytes per category as a percentage of the plain run of the same seed, for the observed node and for all nodes; rows.<i>.mean_pct, min_pct, max_pct. The two runs' traffic differs (duplicates, IHAVE/IWANT), and the difference is in these figures as well as the codec's saving.")
	s.Table("A/B rows", []string{"links", "codec", "scope", "category", "seeds", "% of plain: mean", "min", "max", "% of own raw: mean", "min", "max"}, rows)
	var lat [][]page.Cell
	for i, d := range rep.LatencyDiff {
		b := fmt.Sprintf("latency_diff.%d.", i)
		lat = append(lat, []page.Cell{page.T(linksLabel(d.Bandwidth)), page.T(d.Codec), page.T(d.Category.String()), page.F(ab.Src.Fig(b+"seeds", page.Count)),
			page.F(ab.Src.Fig(b+"p50_ms.mean", page.Ms1)), page.F(ab.Src.Fig(b+"p99_ms.mean", page.Ms1)), page.F(ab.Src.Fig(b+"p99_ms.min", page.Ms1)), page.F(ab.Src.Fig(b+"p99_ms.max", page.Ms1)), page.T(fmt.Sprint(d.Saturated))})
	}
	s.Table("Latency against plain in the same seed (codec minus plain, ms)", []string{"links", "codec", "category", "seeds", "p50 diff", "p99 diff", "p99 diff min", "p99 diff max", "machine saturated"}, lat)
	return nil
}

// presentIn returns, in their order, the names some run's JSON holds at prefix+name: the
// groups a chart or table over the runs shows.
func presentIn[T fmt.Stringer](runs []analysis.SectionRun, prefix string, names []T) []string {
	var out []string
	for _, n := range names {
		for _, r := range runs {
			if _, ok := r.Src.Lookup(prefix + n.String()); ok {
				out = append(out, n.String())
				break
			}
		}
	}
	return out
}

// regionLatency draws delivery latency per receiving node's region (runs over shaped links
// with regions): p50 and p99 per run, for attestations and blocks.
func regionLatency(s *page.Section, runs []analysis.SectionRun) {
	var regions []string
	for _, r := range runs {
		rep, _ := r.Report.(*MeshReport)
		if rep == nil {
			continue
		}
		for region := range rep.LatencyByRegion {
			if !slices.Contains(regions, region) {
				regions = append(regions, region)
			}
		}
	}
	if len(regions) == 0 {
		return
	}
	sort.Strings(regions)
	var rows [][]page.Cell
	for _, c := range []gossip.Category{gossip.Attestation, gossip.Block} {
		// Only the regions some run delivered this category in: an empty group is not drawn.
		var present []string
		for _, region := range regions {
			for _, r := range runs {
				if _, ok := r.Src.Lookup("latency_by_region." + region + "." + c.String()); ok {
					present = append(present, region)
					break
				}
			}
		}
		var series []page.BarSeries
		for _, r := range runs {
			p50, p99 := page.BarSeries{Name: r.Label + " p50", Codec: runCodec(r)}, page.BarSeries{Name: r.Label + " p99", Codec: runCodec(r), Variant: "p99"}
			for _, region := range present {
				b := "latency_by_region." + region + "." + c.String()
				p50.Values = append(p50.Values, r.Src.Fig(b+".p50_ms", page.Ms1))
				p99.Values = append(p99.Values, r.Src.Fig(b+".p99_ms", page.Ms1))
				if _, ok := r.Src.Lookup(b); ok {
					rows = append(rows, []page.Cell{page.T(r.Label), page.T(region), page.T(c.String()), page.F(r.Src.Fig(b+".deliveries", page.Count)),
						page.F(r.Src.Fig(b+".p50_ms", page.Ms1)), page.F(r.Src.Fig(b+".p90_ms", page.Ms1)), page.F(r.Src.Fig(b+".p99_ms", page.Ms1))})
				}
			}
			series = append(series, p50, p99)
		}
		if len(present) == 0 {
			s.Para("Delivery latency by receiving node's region, " + c.String() + ": no region delivered any in these runs.")
			continue
		}
		s.Bars(page.BarChart{Title: "Delivery latency by receiving node's region: " + c.String(), YLabel: "ms", Groups: present, Series: series},
			"p50 and p99 of publish to first delivery, by the receiving node's region (latency_by_region.<region>.<category>); regions that delivered none are left out.")
	}
	s.Table("Delivery latency by region", []string{"run", "region", "category", "deliveries", "p50", "p90", "p99"}, rows)
}

func ptr(f page.Figure) *page.Figure { return &f }

// explicit is a codec's explicit form (its colour on the page), or the name as given.
func explicit(c string) string {
	if s, err := codec.Parse(c); err == nil {
		return s.Explicit()
	}
	return c
}

// runCodec is the codec of a mesh run's compressed nodes, explicit.
func runCodec(r analysis.SectionRun) string {
	if m, ok := r.Report.(*MeshReport); ok {
		return explicit(m.ABLabel().Codec)
	}
	return ""
}
