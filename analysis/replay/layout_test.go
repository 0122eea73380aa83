package replay

import (
	"strings"
	"testing"
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
