package replay

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/analysis/page"
	"github.com/streamsim/streamsim/gossip"
)

// A sweep under topic streams whose grid has no plain configuration still writes its layout
// tables: the codec's gain on its layout's plain bytes is then not known ("–").
func TestLayoutTablesWithoutPlain(t *testing.T) {
	rep := &Report{
		Layouts: []string{LayoutOneStream, LayoutTopicStreams},
		Views:   []TrafficSummary{{View: "recorded", Total: 2000}},
		Results: []Result{
			{View: "recorded", Config: "snappy-stream:64KiB:fast", Layout: LayoutOneStream, Total: 900, PlainTotal: 2000, RelativeTotal: 45, Verified: true},
			{View: "recorded", Config: "snappy-stream:64KiB:fast", Layout: LayoutTopicStreams, Total: 1000, PlainTotal: 2000, RelativeTotal: 50, Verified: true},
		},
	}
	var md strings.Builder
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if want := "| snappy-stream:64KiB:fast | ssz_snappy | topic-streams | 50.0 % | – | – | – | – |"; !strings.Contains(md.String(), want) {
		t.Errorf("markdown lacks %q:\n%s", want, md.String())
	}
}

// The HTML section of a sweep under two layouts has a table per layout, each with its own
// plain row: a configuration's two layouts are never rows of one table.
func TestSweepSectionPerLayout(t *testing.T) {
	rep := &Report{Layouts: []string{LayoutOneStream, LayoutTopicStreams}, Views: []TrafficSummary{{View: "recorded", Total: 2000}}}
	for _, l := range rep.Layouts {
		rep.Results = append(rep.Results,
			Result{View: "recorded", Config: "plain", Layout: l, Total: 2000, PlainTotal: 2000, RelativeTotal: 100, Verified: true},
			Result{View: "recorded", Config: "snappy-stream:64KiB:fast", Payload: gossip.PayloadSSZSnappy, Layout: l, Total: 900, PlainTotal: 2000, RelativeTotal: 45, Verified: true})
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	p := &page.Page{}
	src, err := p.AddSource("sweep", js.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	s := &page.Section{ID: "sweep"}
	p.Sections = []*page.Section{s}
	if err := sweepSection(s, []analysis.SectionRun{{Label: "sweep", Report: &SweepReport{Report: rep}, Src: src}}, nil); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	html := out.String()
	for _, l := range rep.Layouts {
		if h := "<h3>View recorded, payload ssz_snappy, layout " + l + "</h3>"; strings.Count(html, h) != 1 {
			t.Errorf("%d headings %q, want 1", strings.Count(html, h), h)
		}
	}
	// Results 0 and 1 (one stream) share tables, 2 and 3 (topic streams) the next ones.
	at := func(i int) int {
		return strings.Index(html, fmt.Sprintf(`data-path="results.%d.encoder_state_bytes"`, i))
	} // in the CPU and memory table
	for _, c := range []struct {
		a, b int
		same bool
	}{{0, 1, true}, {2, 3, true}, {1, 2, false}} {
		i, j := at(c.a), at(c.b)
		if i < 0 || j < i || strings.Contains(html[i:j], "<h3>") != !c.same {
			t.Errorf("results %d and %d: in one table %v, want %v", c.a, c.b, !c.same, c.same)
		}
	}
}

// ParseLayouts keeps each layout once, in order, and names the allowed ones on a bad or
// empty list.
func TestParseLayouts(t *testing.T) {
	got, err := ParseLayouts(" topic-streams,one-stream,topic-streams,")
	if err != nil || strings.Join(got, ",") != "topic-streams,one-stream" {
		t.Errorf("got %q, %v; want topic-streams,one-stream", got, err)
	}
	for _, bad := range []string{"per-topic", " , "} {
		if _, err := ParseLayouts(bad); err == nil || !strings.Contains(err.Error(), "allowed one-stream, topic-streams") {
			t.Errorf("%q: %v, want an error naming the allowed layouts", bad, err)
		}
	}
}
