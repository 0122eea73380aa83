package report

import (
	"fmt"

	"github.com/streamsim/streamsim/analysis"

	"github.com/streamsim/streamsim/analysis/page"
	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
)

// liveSection is the live check's part of the HTML report: per run, each leaf's inbound
// bytes against the plain leaf's, per category, and codec CPU and memory on both ends.
func liveSection(s *page.Section, runs []analysis.SectionRun, _ *analysis.SectionRun) error {
	for _, r := range runs {
		rep, ok := r.Report.(*RunReport)
		if !ok {
			return fmt.Errorf("run %s: not a %s report", r.Label, LiveCheckKind)
		}
		if len(runs) > 1 {
			s.H3("Run " + r.Label)
		}
		s.Para(fmt.Sprintf("Profile %s, payload %s, %d publishers, %d slots at %g× real time: every leaf is a direct peer of the hub only, so it receives every message of its profile and no gossip control.",
			rep.Profile, rep.Payload, rep.Publishers, rep.Schedule.Slots, rep.Schedule.TimeScale))
		var cats []string
		for _, c := range gossip.Categories() {
			for i := range rep.Leaves {
				if _, ok := r.Src.Lookup(fmt.Sprintf("leaves.%d.categories.%s", i, c)); ok {
					cats = append(cats, c.String())
					break
				}
			}
		}
		plain := -1
		for i, l := range rep.Leaves {
			if l.Codec == "plain" {
				plain = i
			}
		}
		var rel, wire, cpuBars, stateBars []page.BarSeries
		var rows, cpu [][]page.Cell
		answered := map[string]bool{} // one answer row per codec and run
		shown := rep.ShownLeaves()
		for _, i := range shown {
			l := rep.Leaves[i]
			b := fmt.Sprintf("leaves.%d.", i)
			name := l.Codec
			w := page.BarSeries{Name: name, Codec: explicit(l.Codec)}
			rs := page.BarSeries{Name: name, Codec: explicit(l.Codec)}
			for _, c := range cats {
				w.Values = append(w.Values, r.Src.Fig(b+"categories."+c+".wire_bytes", page.MB))
				rs.Values = append(rs.Values, r.Src.Fig(b+"categories."+c+".relative_to_plain", page.Pct))
			}
			rs.Values = append(rs.Values, r.Src.Fig(b+"relative_to_plain", page.Pct))
			wire = append(wire, w)
			if l.Codec != "plain" {
				rel = append(rel, rs)
			}
			rows = append(rows, []page.Cell{page.T(fmt.Sprintf("%s/%d", l.Group, l.Instance)), page.T(l.Codec), page.F(r.Src.Fig(b+"wire_bytes", page.MB)),
				page.F(r.Src.Fig(b+"raw_bytes", page.MB)), page.F(r.Src.Fig(b+"relative_to_plain", page.Pct)), page.F(r.Src.Fig(b+"bandwidth_counter_in", page.MB))})
			d, e := b+"cpu.decode.", b+"cpu.hub_encode."
			cpuBars = append(cpuBars, page.BarSeries{Name: l.Codec, Codec: explicit(l.Codec), Values: []page.Figure{r.Src.Fig(e+"ns_per_byte", page.NsB), r.Src.Fig(d+"ns_per_byte", page.NsB)}})
			stateBars = append(stateBars, page.BarSeries{Name: l.Codec, Codec: explicit(l.Codec), Values: []page.Figure{r.Src.Fig(e+"state_bytes", page.KiB), r.Src.Fig(d+"state_bytes", page.KiB)}})
			cpu = append(cpu, []page.Cell{page.T(l.Codec), page.F(r.Src.Fig(e+"us_per_block", page.Micro)), page.F(r.Src.Fig(e+"ns_per_byte", page.NsB)),
				page.F(r.Src.Fig(e+"core_pct", page.Pct)), page.F(r.Src.Fig(e+"state_bytes", page.KiB)),
				page.F(r.Src.Fig(d+"us_per_block", page.Micro)), page.F(r.Src.Fig(d+"ns_per_byte", page.NsB)),
				page.F(r.Src.Fig(d+"core_pct", page.Pct)), page.F(r.Src.Fig(d+"state_bytes", page.KiB))})
			// Each codec's first compressed leaf is an answer row (with the hub's codec memory
			// on that codec); the page sets it beside the proposal's live check run with the
			// same payloads and profile, or beside nothing.
			if l.Codec != "plain" && l.RelativeToPlain != nil && !answered[l.Codec] {
				answered[l.Codec] = true
				if spec, err := codec.Parse(l.Codec); err == nil {
					cells := map[string]page.AnswerCell{"total": {Value: r.Src.Fig(b+"relative_to_plain", page.Pct)}}
					for _, c := range cats {
						if f := r.Src.Fig(b+"categories."+c+".relative_to_plain", page.Pct); f.Found {
							cells[c] = page.AnswerCell{Value: f}
						}
					}
					var facts []page.Fact
					for _, end := range []struct{ key, what string }{{"hub_encode", "encode (the hub, for this leaf)"}, {"decode", "decode (the leaf)"}} {
						f := page.Fact{Kind: page.FactCPU, What: end.what + ", live check", Value: r.Src.Fig(b+"cpu."+end.key+".ns_per_byte", page.NsB)}
						if plain >= 0 {
							f.Today = ptrFig(r.Src.Fig(fmt.Sprintf("leaves.%d.cpu.%s.ns_per_byte", plain, end.key), page.NsB))
						}
						facts = append(facts, f, page.Fact{Kind: page.FactMemory, What: end.what + ": codec state of the stream", Value: r.Src.Fig(b+"cpu."+end.key+".state_bytes", page.KiB)})
					}
					facts = append(facts, hubMemoryFacts(r, rep, spec)...)
					s.Answer(page.AnswerRow{Config: spec.Explicit(), View: rep.Profile, Direction: "in", Payload: rep.Payload, LiveCheck: true, Facts: facts,
						By: "live check " + r.Label, Of: page.OfPlain, Seeds: page.T("1 run"), Cells: cells, Runs: []*page.Source{r.Src},
						Measured: "a direct-peer leaf's inbound wire bytes, % of the plain leaf's in the same run (no control)"})
				}
			}
		}
		if len(shown) < len(rep.Leaves) {
			s.Para(fmt.Sprintf("%d leaves in %d leaf groups: each group's first leaf is shown one by one below (the leaves of a group receive the same messages on the same codec); every leaf is in the run's JSON (leaves.<i>), and a leaf that failed parity is named in the run's problems above.", len(rep.Leaves), len(shown)))
		}
		s.Table("Leaves: inbound from the hub", []string{"leaf", "codec", "wire", "raw (decoded)", "wire, % of plain leaf", "BandwidthCounter in"}, rows)
		s.Bars(page.BarChart{Title: "Leaf inbound wire bytes, % of the plain leaf's", YLabel: "% of plain", Groups: append(append([]string{}, cats...), "total"), Series: rel, RefY: 100, RefYLabel: "plain"},
			"Each compressed leaf's wire bytes per category as a percentage of the plain leaf's in the same run (leaves.<i>.categories.<category>.relative_to_plain; total: leaves.<i>.relative_to_plain).")
		s.Bars(page.BarChart{Title: "Leaf inbound wire bytes per category", YLabel: "MB", Groups: cats, Series: wire},
			"Wire bytes per category and leaf, plain against each codec (leaves.<i>.categories.<category>.wire_bytes).")
		s.Bars(page.BarChart{Title: "Codec CPU per peer stream (" + page.CPULabel + ")", YLabel: "ns/B", Groups: []string{"encode (hub)", "decode (leaf)"}, Series: cpuBars},
			page.CPUDefinition+" (leaves.<i>.cpu.hub_encode.ns_per_byte, cpu.decode.ns_per_byte).")
		s.Bars(page.BarChart{Title: "Codec memory per peer stream", YLabel: "KiB", Groups: []string{"encoder (hub)", "decoder (leaf)"}, Series: stateBars},
			"The codec state of the leaf's inbound stream on both ends (leaves.<i>.cpu.hub_encode.state_bytes, cpu.decode.state_bytes).")
		s.Table("Codec CPU and memory per peer stream (hub encoding for the leaf; the leaf decoding)", []string{"codec", "encode µs/block", "encode " + page.CPULabel, "encode % of a core", "encoder state", "decode µs/block", "decode " + page.CPULabel, "decode % of a core", "decoder state"}, cpu)
		hubMemoryTable(s, r, rep)
		liveLatency(s, r, rep)
		s.H3("Bytes per slot")
		var slotCurves []page.SlotCurve
		for _, i := range shown {
			l := rep.Leaves[i]
			slotCurves = append(slotCurves, page.SlotCurve{Name: l.Codec, Codec: explicit(l.Codec), Src: r.Src, Path: fmt.Sprintf("leaves.%d.by_slot", i), Dir: "in"})
		}
		s.BytesPerSlot("Leaf inbound wire bytes per slot", slotCurves, cats,
			"Each leaf's inbound wire bytes of the category per interval between its resource samples (one slot at the default sample period; the first interval starts when the measured phase does, the last ends when the leaf stopped, so it may be shorter or hold the drain), one line per leaf in its codec's colour: leaves.<i>.by_slot.<j>.in.<category>.wire_bytes.")
		s.Table("Schedule", []string{"published", "max lag", "mean lag", "late messages", "scheduled", "elapsed", "kept up (1 yes)", "drops"}, [][]page.Cell{{
			page.F(r.Src.Fig("schedule.published", page.Count)), page.F(r.Src.Fig("schedule.max_lag_ms", page.Ms)), page.F(r.Src.Fig("schedule.mean_lag_ms", page.Ms)),
			page.F(r.Src.Fig("schedule.late_messages", page.Count)), page.F(r.Src.Fig("schedule.scheduled_s", page.Sec)), page.F(r.Src.Fig("schedule.elapsed_s", page.Sec)),
			page.F(r.Src.Fig("schedule.kept_up", page.Count)), page.F(r.Src.Fig("drops", page.Count))}})
	}
	return nil
}

// liveLatency draws each leaf's delivery-latency CDF per category (one curve per leaf, in its
// codec's colour) and tabulates the percentiles; a run whose JSON holds no latency gets the
// sentence its latency_note gives instead.
func liveLatency(s *page.Section, r analysis.SectionRun, rep *RunReport) {
	s.H3("Delivery latency")
	if rep.LatencyNote != "" {
		s.Para("Delivery latency per leaf: " + rep.LatencyNote + ".")
		return
	}
	var rows [][]page.Cell
	for _, c := range gossip.Categories() {
		var curves []page.CDFCurve
		for _, i := range rep.ShownLeaves() {
			l := rep.Leaves[i]
			b := fmt.Sprintf("leaves.%d.latency.%s", i, c)
			if _, ok := r.Src.Lookup(b); !ok {
				continue
			}
			curves = append(curves, page.CDFCurve{Name: l.Codec, Codec: explicit(l.Codec), Src: r.Src, Path: b})
			rows = append(rows, []page.Cell{page.T(l.Codec), page.T(c.String()), page.F(r.Src.Fig(b+".deliveries", page.Count)),
				page.F(r.Src.Fig(b+".p50_ms", page.Ms1)), page.F(r.Src.Fig(b+".p90_ms", page.Ms1)), page.F(r.Src.Fig(b+".p99_ms", page.Ms1)), page.F(r.Src.Fig(b+".max_ms", page.Ms1))})
		}
		if len(curves) == 0 {
			continue // a category no leaf received is not a chart
		}
		s.LatencyCDF("Delivery latency CDF: "+c.String(), "wall ms from the publisher's publish to the leaf's first delivery (log scale)", curves,
			"Share of a leaf's deliveries within a latency, one curve per leaf in its codec's colour: publisher to hub to leaf over loopback, both ends' codec work and flow control included, in wall ms (not scaled by the time scale); dashed: p50, p90, p99 per leaf. leaves.<i>.latency."+c.String()+".cdf_ms.")
	}
	if len(rows) == 0 {
		s.Para("Delivery latency per leaf: no leaf received a message with a recorded publish time.")
		return
	}
	s.Table("Delivery latency per leaf (wall ms)", []string{"leaf codec", "category", "deliveries", "p50", "p90", "p99", "max"}, rows)
}

// hubMemoryTable tabulates the hub's codec state per codec: encoders plus decoders over its
// peers on the codec, per peer, and at each of page.MemoryPeers it had.
func hubMemoryTable(s *page.Section, r analysis.SectionRun, rep *RunReport) {
	if len(rep.HubMemory) == 0 {
		return
	}
	var rows [][]page.Cell
	for i, m := range rep.HubMemory {
		b := fmt.Sprintf("hub_memory.%d.", i)
		row := []page.Cell{page.T(m.Codec), page.F(r.Src.Fig(b+"peers", page.Count)), page.F(r.Src.Fig(b+"encoder_bytes", page.MiB)),
			page.F(r.Src.Fig(b+"decoder_bytes", page.MiB)), page.F(r.Src.Fig(b+"bytes", page.MiB)), page.F(r.Src.Fig(b+"bytes_per_peer", page.KiB))}
		for _, n := range page.MemoryPeers {
			cell := page.T("-")
			for j, pn := range m.PerNode {
				if pn.Peers == n {
					cell = page.F(r.Src.Fig(fmt.Sprintf("%sper_node.%d.bytes", b, j), page.MiB))
				}
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	head := []string{"codec", "peers", "encoders", "decoders", "total", "per peer"}
	for _, n := range page.MemoryPeers {
		head = append(head, fmt.Sprintf("first %d peers", n))
	}
	s.Table("The hub's codec memory per codec: encoders on its outbound streams plus decoders on its inbound ones, each stream's largest codec state over the run, summed over its peers on the codec (hub_memory.<i>; at n peers: the first n of them, leaves in run order, hub_memory.<i>.per_node; - : the hub had fewer)", head, rows)
}

// hubMemoryFacts are the verdict's figures of the hub's codec memory on spec: how many peers
// it had on it and, at each of page.MemoryPeers it had, the state of that many peers.
func hubMemoryFacts(r analysis.SectionRun, rep *RunReport, spec codec.Spec) []page.Fact {
	for i, m := range rep.HubMemory {
		if ms, err := codec.Parse(m.Codec); err != nil || ms.Explicit() != spec.Explicit() {
			continue
		}
		b := fmt.Sprintf("hub_memory.%d.", i)
		facts := []page.Fact{{Kind: page.FactMemory, What: "peers of the hub on this codec, live check", Value: r.Src.Fig(b+"peers", page.Count)}}
		for j, pn := range m.PerNode {
			facts = append(facts, page.Fact{Kind: page.FactMemory,
				What:  fmt.Sprintf("%s: the hub's encoders and decoders of %d of its %d peers on this codec, live check", page.PerNodeWhat(pn.Peers), pn.Peers, m.Peers),
				Value: r.Src.Fig(fmt.Sprintf("%sper_node.%d.bytes", b, j), page.MiB)})
		}
		return facts
	}
	return nil
}

// explicit is a codec's explicit form (its colour on the page), or the name as given.
func explicit(c string) string {
	if s, err := codec.Parse(c); err == nil {
		return s.Explicit()
	}
	return c
}

func ptrFig(f page.Figure) *page.Figure { return &f }
