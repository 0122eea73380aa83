package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/analysis/page"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
	hlreport "github.com/streamsim/streamsim/scenarios/hubleaves/report"
	meshreport "github.com/streamsim/streamsim/scenarios/mesh/report"
	"github.com/streamsim/streamsim/scenarios/neighbourhood"
	nbreport "github.com/streamsim/streamsim/scenarios/neighbourhood/report"
)

// verdictPage writes the page's answer from runs of one kind joined by its Compare, as
// writeHTMLReport does, and returns its HTML.
func verdictPage(t *testing.T, kind result.ReportKind, labels []analysis.ABRun, reports []analysis.Report) string {
	t.Helper()
	k, err := analysis.KindOf(kind)
	if err != nil {
		t.Fatal(err)
	}
	p := &page.Page{Title: "verdict"}
	proposal, err := p.AddSource("proposal", mustJSON(map[string]any{}))
	if err != nil {
		t.Fatal(err)
	}
	s := &page.Section{ID: "sec1", Title: string(kind)}
	s.SetProposal(proposal)
	p.Sections = append(p.Sections, s)
	var runs []analysis.SectionRun
	for i, rep := range reports {
		label := fmt.Sprintf("seed%d-%s-%s", labels[i].Seed, labels[i].Codec, labels[i].Bandwidth)
		src, err := addSource(p, label, rep)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, analysis.SectionRun{Label: label, Report: rep, Src: src})
	}
	cmp, err := k.Compare(labels, reports)
	if err != nil {
		t.Fatal(err)
	}
	csrc, err := addSource(p, "comparison", cmp)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Section(s, runs, &analysis.SectionRun{Label: "comparison", Report: cmp, Src: csrc}); err != nil {
		t.Fatal(err)
	}
	if err := answerSection(p, proposal); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// verdictTables are the page's verdict tables (caption "Verdict: ...").
func verdictTables(html string) []string {
	var out []string
	for _, t := range regexp.MustCompile(`(?s)<table>.*?</table>`).FindAllString(html, -1) {
		if strings.Contains(t, "<caption>Verdict: ") {
			out = append(out, t)
		}
	}
	return out
}

// figSpan finds the span bound to path (any source) in html: its class and the cell around it.
func figSpan(html, path string) (class, cell string, ok bool) {
	re := regexp.MustCompile(`(?s)<td[^>]*>(?:(?:[^<]|<[^/]|</[^t])*?)<span class="(fig[^"]*)" data-src="s\d+" data-path="` + regexp.QuoteMeta(path) + `".*?</td>`)
	m := re.FindStringSubmatch(html)
	if m == nil {
		return "", "", false
	}
	return m[1], m[0], true
}

// A mesh A/B's latency difference whose runs had the machine saturated is no figure of the
// verdict: shown marked with its reason, not as a measured figure; the same A/B's other link
// setting, not saturated, gives its verdict its latency change.
func TestVerdictLeavesOutSaturatedLatency(t *testing.T) {
	att := gossip.Attestation
	run := func(obsWire int64, p99 float64, saturated bool) *meshreport.MeshReport {
		r := &meshreport.MeshReport{Verdict: analysis.Verdict{Optimized: true, Checks: analysis.Checks{OK: true}},
			Observed: meshreport.MeshNode{In: map[gossip.Category]result.CategoryBytes{att: {WireBytes: obsWire}}},
			Latency:  map[gossip.Category]*meshreport.Latency{att: {P50Ms: p99 / 4, P99Ms: p99}}}
		if saturated {
			// A machine busier than its cores, as the run's report finds it; its flag is
			// checked below in the page whose run carries it.
			r.Process = &result.Process{SchedP99Ms: result.SchedDelayLimitMs}
		}
		return r
	}
	labels := []analysis.ABRun{
		{Seed: 1, Codec: "plain", Bandwidth: "10Mbit"}, {Seed: 1, Codec: "snappy-stream", Bandwidth: "10Mbit"},
		{Seed: 1, Codec: "plain", Bandwidth: "50Mbit"}, {Seed: 1, Codec: "snappy-stream", Bandwidth: "50Mbit"},
	}
	reports := []analysis.Report{run(1000, 300, false), run(450, 320, false), run(1000, 200, false), run(450, 900, true)}
	html := verdictPage(t, meshreport.GossipMeshKind, labels, reports)

	ab := meshreport.MeshAB(labels, []*meshreport.MeshReport{reports[0].(*meshreport.MeshReport), reports[1].(*meshreport.MeshReport), reports[2].(*meshreport.MeshReport), reports[3].(*meshreport.MeshReport)})
	clean, saturated := -1, -1
	for i, d := range ab.LatencyDiff {
		if d.Category != att {
			continue
		}
		switch {
		case d.Bandwidth == "10Mbit" && !d.Saturated:
			clean = i
		case d.Bandwidth == "50Mbit" && d.Saturated:
			saturated = i
		}
	}
	if clean < 0 || saturated < 0 {
		t.Fatalf("latency diffs %+v: want a clean 10 Mbit/s and a saturated 50 Mbit/s attestation row", ab.LatencyDiff)
	}
	verdicts := verdictTables(html)
	if len(verdicts) != 1 {
		t.Fatalf("%d verdict tables, want 1 (snappy-stream)", len(verdicts))
	}
	v := verdicts[0]
	// The clean difference is a measured figure of the verdict.
	if class, _, ok := figSpan(v, fmt.Sprintf("latency_diff.%d.p99_ms.mean", clean)); !ok || class != "fig answer" {
		t.Errorf("the unsaturated p99 difference: in the verdict %v, class %q; want a measured figure (fig answer)", ok, class)
	}
	// The saturated one is shown, marked with its reason, and is no figure of the verdict.
	class, cell, ok := figSpan(v, fmt.Sprintf("latency_diff.%d.p99_ms.mean", saturated))
	switch {
	case !ok:
		t.Error("the saturated p99 difference is not shown in the verdict with its reason")
	case strings.Contains(class, "answer"):
		t.Errorf("the saturated p99 difference feeds the verdict (class %q)", class)
	case !strings.Contains(cell, "flagged") || !strings.Contains(cell, analysis.FlagSaturated+": "):
		t.Errorf("the saturated p99 difference is not marked with its reason: %s", cell)
	}
	if !strings.Contains(v, "left out of this verdict: "+analysis.FlagSaturated) || !strings.Contains(v, "left out (from runs with problems)") {
		t.Error("the verdict does not say the saturated latency is left out")
	}

	// The same saturated run as its report flags it ("machine saturated" in its JSON): every
	// figure its A/B gives is left out of the verdict, the latency with the rest.
	reports[3].(*meshreport.MeshReport).Flag(analysis.FlagSaturated, "the machine was saturated")
	html = verdictPage(t, meshreport.GossipMeshKind, labels, reports)
	for _, v := range verdictTables(html) {
		if strings.Contains(v, `data-path="latency_diff.`) && strings.Contains(v, `class="fig answer"`) {
			t.Errorf("a latency difference of an A/B with a saturated run feeds the verdict: %s", v)
		}
	}
	if !regexp.MustCompile(`left out \(from runs with problems\): mesh A/B[^;<]*\(machine saturated\)`).MatchString(html) {
		t.Error("the verdict does not name the saturated A/B as left out")
	}
}

// The neighbourhood A/B's p99 delivery-latency change per category (codec minus plain in the
// same seed) is a fact of the codec's verdict beside the mesh's: bound to the comparison's
// latency_diff, with its own seeds and range; one from a late run is shown marked and left out.
func TestVerdictHasNeighbourhoodLatency(t *testing.T) {
	run := func(codec string, seed int64, wire int64, p99 map[string]float64) *nbreport.Report {
		r := &nbreport.Report{Verdict: analysis.NewVerdict()}
		f := &r.Figures
		f.Codec, f.Seed, f.Complete = codec, seed, true
		f.Wire = []neighbourhood.WireLine{
			{Category: "attestation", Direction: "in", RawBytes: 1000, WireBytes: wire, RelativePct: float64(wire) / 10},
			{Category: "total", Direction: "in", RawBytes: 1000, WireBytes: wire, RelativePct: float64(wire) / 10}}
		f.Timing.Latency = map[string]neighbourhood.LatencyLine{}
		for c, v := range p99 {
			f.Timing.Latency[c] = neighbourhood.LatencyLine{Messages: 50, P50Ms: v / 2, P99Ms: v}
		}
		return r
	}
	labels := []analysis.ABRun{{Seed: 1, Codec: "plain"}, {Seed: 1, Codec: "snappy-stream"}, {Seed: 2, Codec: "plain"}, {Seed: 2, Codec: "snappy-stream"}}
	reports := []analysis.Report{
		run("plain", 1, 1000, map[string]float64{"attestation": 300, "block": 200}), run("snappy-stream", 1, 450, map[string]float64{"attestation": 340, "block": 190}),
		run("plain", 2, 1000, map[string]float64{"attestation": 320, "block": 210}), run("snappy-stream", 2, 460, map[string]float64{"attestation": 380, "block": 230}),
	}
	html := verdictPage(t, neighbourhood.ReportKind, labels, reports)
	verdicts := verdictTables(html)
	if len(verdicts) != 1 {
		t.Fatalf("%d verdict tables, want 1 (snappy-stream)", len(verdicts))
	}
	v := verdicts[0]
	k, err := analysis.KindOf(neighbourhood.ReportKind)
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := k.Compare(labels, reports)
	if err != nil {
		t.Fatal(err)
	}
	diffs := cmp.(*nbreport.AB).LatencyDiff
	if len(diffs) != 2 || diffs[0].Category != "attestation" || diffs[0].Seeds != 2 || diffs[0].P99.Mean != 50 || diffs[1].Category != "block" || diffs[1].P99.Mean != 5 {
		t.Fatalf("latency diffs %+v: want attestation +50 ms and block +5 ms over 2 seeds", diffs)
	}
	for i, d := range diffs {
		b := fmt.Sprintf("latency_diff.%d.", i)
		class, cell, ok := figSpan(v, b+"p99_ms.mean")
		if !ok || class != "fig answer" {
			t.Errorf("%s p99 change: in the verdict %v, class %q; want a measured figure", d.Category, ok, class)
			continue
		}
		row := v[strings.Index(v, cell):]
		row = row[:strings.Index(row, "</tr>")]
		for _, want := range []string{`data-path="` + b + `p99_ms.min"`, `data-path="` + b + `p99_ms.max"`, `data-path="` + b + `seeds"`, "neighbourhood A/B"} {
			if !strings.Contains(row, want) {
				t.Errorf("%s p99 change: its verdict row lacks %s: %s", d.Category, want, row)
			}
		}
	}

	// A late run (the periphery behind its schedule) is flagged in its JSON: its A/B's figures,
	// the latency with the rest, are left out of the verdict.
	late := run("snappy-stream", 2, 460, map[string]float64{"attestation": 380, "block": 230})
	late.Flag(analysis.FlagLate, "the periphery fell behind its schedule")
	html = verdictPage(t, neighbourhood.ReportKind, labels, []analysis.Report{reports[0], reports[1], reports[2], late})
	for _, v := range verdictTables(html) {
		if strings.Contains(v, `data-path="latency_diff.`) && strings.Contains(v, `class="fig answer"`) {
			t.Errorf("a latency difference of an A/B with a late run feeds the verdict: %s", v)
		}
	}
	if !strings.Contains(html, "left out (from runs with problems): neighbourhood A/B (late)") {
		t.Error("the verdict does not name the late A/B as left out")
	}
}

// hubLeavesNodes are the summaries of a hub-leaves run with a plain leaf and n snappy-stream
// leaves in one group (--leaves plain,snappy-stream*n): the hub's encoder for each holds
// 300 000 bytes, its decoder 70 000.
func hubLeavesNodes(n int) []*result.NodeSummary {
	att := gossip.Attestation
	parity := func(msgs int64, d uint64) *result.Parity {
		return &result.Parity{Messages: map[gossip.Category]int64{att: msgs}, Digest: map[gossip.Category][2]uint64{att: {d, d}}}
	}
	hub := &result.NodeSummary{Role: result.RoleHub, Group: "hub", PeerID: "H", Duration: 2, Build: "optimized", Optimized: true,
		Streams: []result.StreamStats{{Peer: "P", Direction: "in", Codec: "plain"}, {Peer: "LP", Direction: "out", Codec: "plain", RawBytes: 1000, WireBytes: 1000}}}
	leaf := func(group string, i int, codec, id string, wire int64) *result.NodeSummary {
		return &result.NodeSummary{Role: result.RoleLeaf, Group: group, Instance: i, Codec: codec, PeerID: id, Duration: 2, Parity: parity(5, 1),
			Streams: []result.StreamStats{{Peer: "H", Direction: "in", Codec: codec, Protocol: "/" + codec, Frames: 5, RawBytes: 1000, WireBytes: wire,
				Categories: map[gossip.Category]result.CategoryBytes{att: {RawBytes: 1000, WireBytes: wire}}, CodecStats: result.CodecStats{Units: 5, RawBytes: 1000, TimeNs: 5000}}}}
	}
	nodes := []*result.NodeSummary{hub, leaf("leaf-0-plain", 0, "plain", "LP", 1000),
		{Role: result.RolePublisher, Group: "publishers", PeerID: "P", TimeScale: 1, Slots: 1, Build: "optimized", Optimized: true, Parity: parity(5, 1),
			Schedule: &result.Schedule{Messages: 5, SlotNs: 12e9, ScheduledNs: 12e9, ElapsedNs: 12e9}}}
	for i := range n {
		id := fmt.Sprintf("L%03d", i)
		nodes = append(nodes, leaf("leaf-1-snappy-stream", i, "snappy-stream", id, 400))
		hub.Streams = append(hub.Streams,
			result.StreamStats{Peer: id, Direction: "out", Codec: "snappy-stream", RawBytes: 1000, WireBytes: 400, CodecStats: result.CodecStats{Units: 5, RawBytes: 1000, TimeNs: 9000, StateBytes: 300_000}},
			result.StreamStats{Peer: id, Direction: "in", Codec: "snappy-stream", CodecStats: result.CodecStats{StateBytes: 70_000}})
	}
	return nodes
}

// A live check whose hub had 200 peers of a codec states that codec's memory per node at 50,
// 100 and 200 peers, each bound to its figure in the run's JSON; one with 8 has them "not
// measured", naming the most peers it had.
func TestVerdictMemoryPerNodeFromHubLeaves(t *testing.T) {
	verdict := func(n int) string {
		t.Helper()
		rep := hlreport.BuildRunReport(hubLeavesNodes(n))
		if !rep.OK {
			t.Fatalf("%d leaves: problems %q", n, rep.Problems)
		}
		k, err := analysis.KindOf(hlreport.LiveCheckKind)
		if err != nil {
			t.Fatal(err)
		}
		p := &page.Page{Title: "verdict"}
		proposal, err := p.AddSource("proposal", mustJSON(map[string]any{}))
		if err != nil {
			t.Fatal(err)
		}
		s := &page.Section{ID: "sec1", Title: "live"}
		s.SetProposal(proposal)
		p.Sections = append(p.Sections, s)
		src, err := addSource(p, "live", rep)
		if err != nil {
			t.Fatal(err)
		}
		if err := k.Section(s, []analysis.SectionRun{{Label: "live", Report: rep, Src: src}}, nil); err != nil {
			t.Fatal(err)
		}
		if err := answerSection(p, proposal); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := p.Write(&b); err != nil {
			t.Fatal(err)
		}
		vs := verdictTables(b.String())
		if len(vs) != 1 {
			t.Fatalf("%d leaves: %d verdict tables, want 1 (snappy-stream: one answer row for its %d leaves)", n, len(vs), n)
		}
		return vs[0]
	}
	v := verdict(200)
	for j, n := range []int{50, 100, 200} {
		path := fmt.Sprintf("hub_memory.1.per_node.%d.bytes", j)
		class, cell, ok := figSpan(v, path)
		if !ok || class != "fig answer" {
			t.Errorf("200 leaves: per node at %d peers: %s in the verdict %v, class %q; want a measured figure", n, path, ok, class)
			continue
		}
		// n peers × (300 000 + 70 000) B, in MiB.
		if want := fmt.Sprintf("%.2f", float64(n)*370_000/(1<<20)); !strings.Contains(cell, want) {
			t.Errorf("per node at %d peers: cell %s lacks %s MiB", n, cell, want)
		}
		if !strings.Contains(v, page.PerNodeWhat(n)+": the hub") {
			t.Errorf("200 leaves: no row %q", page.PerNodeWhat(n))
		}
	}
	if strings.Contains(v, "not measured") {
		t.Error("200 leaves: a per-node memory row says not measured")
	}
	if strings.Count(v, page.FactBytes) != 1 {
		t.Errorf("200 leaves: %d bytes rows, want 1 (one answer row per codec and run)", strings.Count(v, page.FactBytes))
	}

	v = verdict(8)
	for _, n := range []int{50, 100, 200} {
		row := regexp.MustCompile(`(?s)<tr>(?:(?:[^<]|<[^/]|</[^t]|</t[^r])*?)` + regexp.QuoteMeta(page.PerNodeWhat(n)) + `.*?</tr>`).FindString(v)
		if !strings.Contains(row, "not measured") || !strings.Contains(row, "(the most: 8;") {
			t.Errorf("8 leaves: per node at %d peers: row %q, want not measured with the most peers (8)", n, row)
		}
	}
	if _, _, ok := figSpan(v, "hub_memory.1.per_node.0.bytes"); ok {
		t.Error("8 leaves: a per-node memory figure in the verdict")
	}
}
