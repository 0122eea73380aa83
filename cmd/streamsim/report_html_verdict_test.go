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
	meshreport "github.com/streamsim/streamsim/scenarios/mesh/report"
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
}
