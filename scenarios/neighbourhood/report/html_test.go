package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/analysis/page"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/scenarios/neighbourhood"
)

// The neighbourhood's HTML section: figures bound to the report's JSON, and for a codec run
// over several seeds the calibration table with its spread as WriteCalibration prints it.
func TestSection(t *testing.T) {
	raw := map[gossip.Category]int64{gossip.Attestation: 1000, gossip.Control: 500}
	p := &page.Page{}
	var runs []analysis.SectionRun
	for i, label := range []string{"seed1", "seed2"} {
		r := fakeRun(label, raw, map[gossip.Category]float64{gossip.Attestation: 0.5, gossip.Control: 0.9}, 10)
		r.Figures.Codec, r.Figures.Seed, r.Figures.Subnets, r.Figures.Slots, r.Figures.TimeScale = "plain", int64(i+1), 4, 10, 1
		for _, c := range []string{"attestation", "control"} {
			r.Figures.Categories = append(r.Figures.Categories, neighbourhoodCategory(c, float64(100*(i+1))))
		}
		var js bytes.Buffer
		if err := r.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		src, err := p.AddSource(label, js.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, analysis.SectionRun{Label: label, Report: r, Src: src})
		if got := r.ABLabel(); got.Seed != int64(i+1) || got.Codec != "plain" {
			t.Errorf("AB label %+v", got)
		}
	}
	s := &page.Section{ID: "nb", Title: "neighbourhood"}
	p.Sections = append(p.Sections, s)
	if err := section(s, runs, nil); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	html := out.String()
	for _, want := range []string{
		"calibration over 2 runs (seed1, seed2)",        // WriteCalibration's own table
		"150.0 ± 70.7 (100.0–200.0)",                    // attestation MiB/h over the two seeds
		`data-path="figures.categories.0.mib_per_hour"`, // per-run figures bound to JSON
		`data-path="figures.wire.0.relative_pct"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("section lacks %q", want)
		}
	}
}

func neighbourhoodCategory(c string, mib float64) neighbourhood.CategorySummary {
	return neighbourhood.CategorySummary{Category: c, MiBh: mib, RecordingMiBh: 3188, Copies: fptr(2), RecordingCopies: 1.6}
}

func fptr(v float64) *float64 { return &v }
