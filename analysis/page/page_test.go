package page

import (
	"strconv"
	"strings"
	"testing"
)

func TestLookupAndFigures(t *testing.T) {
	p := &Page{}
	src, err := p.AddSource("run <a>", []byte(`{"leaves":[{"wire_bytes":1234567,"rel":45.04},{"rel":null}],"ok":true,"name":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		f    Format
		want string
	}{
		{"leaves.0.wire_bytes", MB, "1.23 MB"},
		{"leaves.0.rel", Pct, "45.0 %"},
		{"leaves.1.rel", Pct, "not measured"}, // null: the report says it was not measured
		{"leaves.2.rel", Pct, "–"},            // out of range
		{"leaves.x.rel", Pct, "–"},            // not an index
		{"ok", Count, "1"},
		{"name", Count, "–"}, // not a number
	} {
		if got := src.Fig(c.path, c.f).Text(); got != c.want {
			t.Errorf("%s: %q, want %q", c.path, got, c.want)
		}
	}
	d := Difference(src.Fig("leaves.0.rel", Pct), Const(63.1, Pct), Format{Unit: "pp", Scale: 1, Decimals: 1})
	if got := d.Text(); got != "-18.1 pp" {
		t.Errorf("difference %q, want -18.1 pp", got)
	}
	if _, err := p.AddSource("broken", []byte(`{"a":`)); err == nil || !strings.Contains(err.Error(), "broken") {
		t.Errorf("bad JSON: error %v, want one naming the report", err)
	}
}

func TestNiceTicks(t *testing.T) {
	for _, c := range []struct{ lo, hi float64 }{{0, 1}, {0, 7.3}, {0, 100}, {0, 0.02}, {0, 123456}, {0, 0}, {3, 3}} {
		ts := niceTicks(c.lo, c.hi)
		if len(ts) < 2 || len(ts) > 8 {
			t.Errorf("[%g, %g]: %d ticks %v", c.lo, c.hi, len(ts), ts)
			continue
		}
		if ts[0] > c.lo || ts[len(ts)-1] < c.hi {
			t.Errorf("[%g, %g]: ticks %v do not cover it", c.lo, c.hi, ts)
		}
	}
}

// A chart without data is a sentence saying so, never empty axes; text is escaped.
func TestEmptyChartAndEscaping(t *testing.T) {
	p := &Page{Title: "t"}
	src, _ := p.AddSource("s", []byte(`{"v":[1,2]}`))
	s := &Section{ID: "a", Title: "<b>run</b>", Problems: []string{"x & y"}}
	p.Sections = append(p.Sections, s)
	s.Bars(BarChart{Title: "nothing", Groups: []string{"g"}, Series: []BarSeries{{Name: "n", Values: []Figure{src.Fig("missing", Pct)}}}}, "c")
	s.Lines(LineChart{Title: "nothing either"}, "c")
	s.Bars(BarChart{Title: "bars", Groups: []string{"a", "b"}, Series: []BarSeries{{Name: "n", Values: []Figure{src.Fig("v.0", Count), src.Fig("v.1", Count)}}}}, "c")
	var b strings.Builder
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{"nothing: no data in this run.", "nothing either: no data in this run.", "&lt;b&gt;run&lt;/b&gt;", "x &amp; y", `data-path="v.1"`} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(html, "<svg"); n != 1 {
		t.Errorf("%d charts, want 1 (the empty ones are sentences)", n)
	}
	if strings.Index(html, "x &amp; y") > strings.Index(html, "<svg") {
		t.Error("the section's problem comes after its chart")
	}
}

// A latency CDF: its points run from 0 to 100 % of deliveries, each x bound to its element of
// cdf_ms; curves are in their codec's colour, the same as the codec's bars on another chart;
// p50, p90 and p99 are marked where the JSON has them; a curve without a CDF is named in the
// caption, and a chart with none is a sentence.
func TestLatencyCDF(t *testing.T) {
	cdf := make([]string, 100/CDFStepPct+1)
	for i := range cdf {
		cdf[i] = strconv.Itoa(10 + i*i)
	}
	p := &Page{Title: "t"}
	src, err := p.AddSource("run", []byte(`{"a":{"cdf_ms":[`+strings.Join(cdf, ",")+`],"p50_ms":635,"p90_ms":2035,"p99_ms":2411},"b":{"p50_ms":1},"bytes":[50]}`))
	if err != nil {
		t.Fatal(err)
	}
	pts := src.CDFPoints("a")
	if len(pts) != len(cdf) || pts[0].Y.Value != 0 || pts[len(pts)-1].Y.Value != 100 {
		t.Fatalf("%d points from %v %% to %v %%, want %d from 0 to 100", len(pts), pts[0].Y.Value, pts[len(pts)-1].Y.Value, len(cdf))
	}
	for i, pt := range pts {
		if pt.X.Path != "a.cdf_ms."+strconv.Itoa(i) || pt.X.Src != src || (i > 0 && (pt.X.Value < pts[i-1].X.Value || pt.Y.Value <= pts[i-1].Y.Value)) {
			t.Fatalf("point %d: %+v", i, pt)
		}
	}
	if src.CDFPoints("b") != nil || src.CDFPoints("missing") != nil {
		t.Error("a path without cdf_ms has points")
	}

	const codec = "zstd:3:2MiB"
	s := &Section{ID: "s", Title: "s"}
	p.Sections = append(p.Sections, s)
	if n := s.LatencyCDF("drawn", "ms", []CDFCurve{{Name: "z", Codec: codec, Src: src, Path: "a"}, {Name: "old run", Codec: "plain", Src: src, Path: "b"}}, "cap."); n != 1 {
		t.Errorf("%d curves drawn, want 1", n)
	}
	if n := s.LatencyCDF("empty", "ms", []CDFCurve{{Name: "old run", Src: src, Path: "b"}}, "cap."); n != 0 {
		t.Errorf("%d curves drawn from no CDF", n)
	}
	s.Bars(BarChart{Title: "bars", Groups: []string{"g"}, Series: []BarSeries{{Name: "z", Codec: codec, Values: []Figure{src.Fig("bytes.0", Count)}}}}, "c")
	var b strings.Builder
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if n := strings.Count(html, "<svg"); n != 2 {
		t.Errorf("%d charts, want 2 (the CDF and the bars)", n)
	}
	for _, want := range []string{"empty: not drawn: the JSON of old run holds no latency CDF (cdf_ms).", "No CDF in the JSON of old run.",
		`stroke="` + CodecColor(codec) + `" stroke-width`, `class="mark bar" `, `data-path="a.p99_ms"`, `data-path="a.cdf_ms.50"`, `>p90 2035 ms<`} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// The codec's curve, points and bar are all in its colour.
	for _, mark := range []string{`class="mark point"`, `class="mark bar"`} {
		for _, m := range strings.Split(html, mark)[1:] {
			if fill := strings.SplitN(strings.SplitN(m, `fill="`, 2)[1], `"`, 2)[0]; fill != CodecColor(codec) {
				t.Errorf("%s in %s, want the codec's %s", mark, fill, CodecColor(codec))
				break
			}
		}
	}
}

// A bytes-per-slot chart per category: each point bound to its interval's wire bytes (y), x
// the interval's slot; a category no curve has is not a chart; curves without a series are
// named, and with none the charts are a sentence.
func TestBytesPerSlot(t *testing.T) {
	p := &Page{Title: "t"}
	src, err := p.AddSource("run", []byte(`{"a":{"by_slot":[{"slot":1,"in":{"block":{"wire_bytes":1234567},"control":{"wire_bytes":0}},"out":{}},{"slot":2.5,"in":{"block":{"wire_bytes":0},"control":{"wire_bytes":0}},"out":{}}]},"old":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	s := &Section{ID: "s", Title: "s"}
	p.Sections = append(p.Sections, s)
	curves := []SlotCurve{{Name: "new", Codec: "plain", Src: src, Path: "a.by_slot", Dir: "in"}, {Name: "older", Src: src, Path: "old.by_slot", Dir: "in"}}
	if n := s.BytesPerSlot("Bytes", curves, []string{"attestation", "block", "control"}, "cap."); n != 1 {
		t.Errorf("%d charts, want 1 (block; no curve has attestation, control is 0 throughout)", n)
	}
	if n := s.BytesPerSlot("Nothing", curves[1:], []string{"block"}, "cap."); n != 0 {
		t.Errorf("%d charts from no series", n)
	}
	var b strings.Builder
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`data-path="a.by_slot.0.in.block.wire_bytes"`, `data-value="1.234567e+06" data-x="1" data-y="1.234567e+06"`,
		`data-path="a.by_slot.1.in.block.wire_bytes"`, `data-x="2.5" data-y="0"`, "No per-slot series in the JSON of older.",
		"Nothing: not drawn: the JSON of older holds no per-slot series", "Bytes: control: not drawn: 0 bytes in every interval of every line."} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(html, "<svg"); n != 1 {
		t.Errorf("%d charts, want 1", n)
	}
	if t.Failed() {
		t.Log(html)
	}
}
