package page

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Every chart is inline SVG drawn here: grouped bars (with an optional range per bar) and
// lines (with vertical reference marks, for the percentiles on a CDF). Each bar and point is
// an element of class "mark" carrying its figure's data-src, data-path and data-value, so the
// browser test can check that a chart shows what the JSON holds and is not empty.

const (
	chartW, chartH                           = 860, 340
	marginL, marginR, marginT, marginB       = 72, 16, 34, 58
	plotW                                    = chartW - marginL - marginR
	plotH                                    = chartH - marginT - marginB
	legendRowH                               = 16
	fontAttr                                 = `font-family="DejaVu Sans,sans-serif" font-size="11"`
	legendCharW                              = 6.6 // average glyph width at font-size 11
	barGroupPad                              = 0.2
	pointRadius                              = 2.2
	refDash                                  = "4 3"
	gridColor, axisColor, textColor, refText = "#e3e3e3", "#555", "#222", "#444"
)

// palette colours series that are not a codec's (runs, regions); codecColors are the
// codecs', one per explicit configuration on every chart of the page.
var palette = []string{"#8c564b", "#bcbd22", "#e377c2", "#17becf", "#7f7f7f", "#393b79", "#637939", "#8c6d31"}

var codecColors = map[string]string{
	"plain":                      "#555555",
	"none":                       "#000000",
	"snappy-stream:4KiB:fast":    "#9ecae1",
	"snappy-stream:16KiB:fast":   "#6baed6",
	"snappy-stream:64KiB:fast":   "#2171b5",
	"snappy-stream:256KiB:fast":  "#08519c",
	"snappy-stream:1MiB:fast":    "#08306b",
	"snappy-stream:64KiB:better": "#9467bd",
	"snappy-stream:1MiB:better":  "#54278f",
	"zstd:3:2MiB":                "#d62728",
	"zstd+dict:3:2MiB":           "#ff7f0e",
}

// extraCodecColors are given, in turn, to codecs codecColors does not name.
var extraCodecColors = []string{"#2ca02c", "#98df8a", "#ff9896", "#c49c94", "#dbdb8d", "#9edae5", "#c5b0d5", "#f7b6d2"}

var extraAssigned = map[string]string{}

// Color is series i's color when the series is not a codec's.
func Color(i int) string { return palette[i%len(palette)] }

// CodecColor is a codec configuration's colour (explicit form: snappy-stream:64KiB:fast), the
// same on every chart.
func CodecColor(codec string) string {
	if c, ok := codecColors[codec]; ok {
		return c
	}
	if c, ok := extraAssigned[codec]; ok {
		return c
	}
	c := extraCodecColors[len(extraAssigned)%len(extraCodecColors)]
	extraAssigned[codec] = c
	return c
}

// seriesStyle is a series' fill (or stroke) colour, its data-codec attribute and its opacity:
// a codec's series takes the codec's colour, a variant of it (raw bytes, all nodes, p99)
// the same colour lighter.
func seriesStyle(codec, variant string, i int) (color, attr, opacity string) {
	if codec == "" {
		return Color(i), "", ""
	}
	attr = ` data-codec="` + esc(codec) + `"`
	if variant != "" {
		opacity = ` fill-opacity="0.45" stroke-opacity="0.55"`
		attr += ` data-variant="` + esc(variant) + `"`
	}
	return CodecColor(codec), attr, opacity
}

// BarSeries is one series of a grouped bar chart: a value per group (Found=false: no bar).
type BarSeries struct {
	Name string
	// Codec, when the series is one codec's (explicit form), colours it as that codec on
	// every chart; Variant marks a second series of the same codec (drawn lighter).
	Codec, Variant string
	Values         []Figure
	// Low and High, when set, draw each bar's range (min and max over seeds).
	Low, High []Figure
}

// BarChart is grouped bars: Groups along x, one bar per series in each.
type BarChart struct {
	Title, YLabel string
	Groups        []string
	Series        []BarSeries
	// RefY draws a horizontal reference line (100 % of plain); 0: none.
	RefY      float64
	RefYLabel string
}

// Point is one point of a line.
type Point struct{ X, Y Figure }

// LineSeries is one line.
type LineSeries struct {
	Name           string
	Codec, Variant string
	Points         []Point
}

// Mark is a vertical reference line at a figure's value (a percentile), in a series' color.
type Mark struct {
	Label  string
	At     Figure
	Series int
}

// LineChart is lines over a numeric x axis.
type LineChart struct {
	Title, XLabel, YLabel string
	Series                []LineSeries
	Marks                 []Mark
	// YMax fixes the y axis' top (100 for a CDF in percent); 0: from the data.
	YMax float64
	// LogX draws x on a log10 scale (latency spans orders of magnitude); points at x <= 0
	// are left out.
	LogX bool
	// HRefs are horizontal reference lines (a codec's figure the lines are read against).
	HRefs []HRef
	// XTicks, when set, labels x at these values with these labels (window sizes).
	XTicks []XTick
	// Dots draws a series as unconnected points (the proposal's figures over a curve).
	Dots map[int]bool
	// BindY binds each point to its y figure (a measured series over time) instead of its x
	// (a CDF's latency).
	BindY bool
}

// HRef is a horizontal reference line at a figure, in a codec's colour.
type HRef struct {
	Label string
	At    Figure
	Codec string
}

// XTick is one labelled position on the x axis.
type XTick struct {
	At    float64
	Label string
}

// Bars adds a bar chart with a caption; without a single bar it adds the caption's
// statement that the run has no data for it instead of an empty chart.
func (s *Section) Bars(c BarChart, caption string) {
	max := 0.0
	bars := 0
	for _, se := range c.Series {
		for i, v := range se.Values {
			if v.Found {
				bars++
				max = math.Max(max, v.Value)
			}
			if i < len(se.High) && se.High[i].Found {
				max = math.Max(max, se.High[i].Value)
			}
		}
	}
	if bars == 0 {
		s.Para(c.Title + ": no data in this run.")
		return
	}
	max = math.Max(max, c.RefY)
	// Ticks are in the figures' display unit (MB for bytes), not the JSON's.
	var unit float64 = 1
	for _, se := range c.Series {
		for _, v := range se.Values {
			if v.Found {
				unit = v.Format.scale()
				break
			}
		}
		if unit != 1 {
			break
		}
	}
	ticksOf := niceTicks
	for _, se := range c.Series {
		for _, v := range se.Values {
			if v.Found && isCount(v.Format) {
				ticksOf = countTicks
			}
		}
	}
	ticks := scaled(ticksOf(0, max/unit), unit)
	top := ticks[len(ticks)-1]
	var b strings.Builder
	names := make([]string, len(c.Series))
	styles := make([][2]string, len(c.Series))
	for i, se := range c.Series {
		names[i], styles[i] = se.Name, [2]string{se.Codec, se.Variant}
	}
	_, _, legendRows := legendLayout(names)
	h := chartH + legendRows*legendRowH
	s.charts++
	openSVG(&b, s, c.Title, h, "bars")
	y := func(v float64) float64 { return marginT + plotH - v/top*plotH }
	yAxis(&b, ticks, y, c.YLabel, unit)
	groupW := float64(plotW) / float64(len(c.Groups))
	barW := groupW * (1 - barGroupPad) / float64(len(c.Series))
	for g, name := range c.Groups {
		x0 := marginL + float64(g)*groupW
		fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle" fill="%s">%s</text>`, fnum(x0+groupW/2), marginT+plotH+16, textColor, esc(name))
		for si, se := range c.Series {
			if g >= len(se.Values) || !se.Values[g].Found {
				continue
			}
			v := se.Values[g]
			bx := x0 + groupW*barGroupPad/2 + float64(si)*barW
			col, cattr, op := seriesStyle(se.Codec, se.Variant, si)
			fmt.Fprintf(&b, `<rect class="mark bar" x="%s" y="%s" width="%s" height="%s" fill="%s"%s%s%s data-value="%s"><title>%s, %s: %s</title></rect>`,
				fnum(bx), fnum(y(v.Value)), fnum(barW-1), fnum(y(0)-y(v.Value)), col, op, cattr, v.attrs(), exact(v.Value), esc(se.Name), esc(name), esc(v.Text()))
			if g < len(se.Low) && g < len(se.High) && se.Low[g].Found && se.High[g].Found {
				cx := bx + (barW-1)/2
				fmt.Fprintf(&b, `<path class="range" d="M%s %sV%sM%s %sH%sM%s %sH%s" stroke="#000" fill="none"%s/>`,
					fnum(cx), fnum(y(se.Low[g].Value)), fnum(y(se.High[g].Value)),
					fnum(cx-3), fnum(y(se.Low[g].Value)), fnum(cx+3), fnum(cx-3), fnum(y(se.High[g].Value)), fnum(cx+3), rangeAttrs(se.Low[g], se.High[g]))
			}
		}
	}
	if c.RefY > 0 {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%s" y2="%s" stroke="#000" stroke-dasharray="%s"/><text x="%d" y="%s" text-anchor="end" fill="%s">%s</text>`,
			marginL, marginL+plotW, fnum(y(c.RefY)), fnum(y(c.RefY)), refDash, marginL+plotW-2, fnum(y(c.RefY)-3), refText, esc(c.RefYLabel))
	}
	legend(&b, names, styles, chartH)
	b.WriteString("</svg>")
	s.figure(b.String(), caption)
}

// Lines adds a line chart; without a point it states that the run has no data for it.
func (s *Section) Lines(c LineChart, caption string) {
	xmin, xmax, ymax := math.Inf(1), math.Inf(-1), 0.0
	points := 0
	for _, se := range c.Series {
		for _, p := range se.Points {
			if !p.X.Found || !p.Y.Found || (c.LogX && p.X.Value <= 0) {
				continue
			}
			points++
			xmin, xmax = math.Min(xmin, p.X.Value), math.Max(xmax, p.X.Value)
			ymax = math.Max(ymax, p.Y.Value)
		}
	}
	if points == 0 {
		s.Para(c.Title + ": no data in this run.")
		return
	}
	for _, h := range c.HRefs {
		if h.At.Found {
			ymax = math.Max(ymax, h.At.Value)
		}
	}
	if c.YMax > 0 {
		ymax = c.YMax
	}
	yunit, xunit := 1.0, 1.0
	xTicksOf, yTicksOf := niceTicks, niceTicks
	for _, se := range c.Series {
		for _, p := range se.Points {
			if p.Y.Found && p.X.Found {
				yunit, xunit = p.Y.Format.scale(), p.X.Format.scale()
				if isCount(p.X.Format) {
					xTicksOf = countTicks
				}
				if isCount(p.Y.Format) {
					yTicksOf = countTicks
				}
				break
			}
		}
	}
	yt := scaled(yTicksOf(0, ymax/yunit), yunit)
	ytop := yt[len(yt)-1]
	var xt []float64
	var xf func(float64) float64
	if c.LogX {
		lo, hi := math.Floor(math.Log10(xmin)), math.Ceil(math.Log10(xmax))
		if hi == lo {
			hi++
		}
		for e := lo; e <= hi; e++ {
			xt = append(xt, math.Pow(10, e))
		}
		xf = func(v float64) float64 { return marginL + (math.Log10(v)-lo)/(hi-lo)*plotW }
	} else {
		xt = scaled(xTicksOf(math.Min(0, xmin)/xunit, xmax/xunit), xunit)
		lo, hi := xt[0], xt[len(xt)-1]
		xf = func(v float64) float64 { return marginL + (v-lo)/(hi-lo)*plotW }
	}
	yf := func(v float64) float64 { return marginT + plotH - v/ytop*plotH }
	var b strings.Builder
	names := make([]string, len(c.Series))
	styles := make([][2]string, len(c.Series))
	for i, se := range c.Series {
		names[i], styles[i] = se.Name, [2]string{se.Codec, se.Variant}
	}
	_, _, legendRows := legendLayout(names)
	s.charts++
	openSVG(&b, s, c.Title, chartH+legendRows*legendRowH, "lines")
	yAxis(&b, yt, yf, c.YLabel, yunit)
	labels := map[float64]string{}
	if len(c.XTicks) > 0 {
		xt = xt[:0]
		for _, t := range c.XTicks {
			xt = append(xt, t.At)
			labels[t.At] = t.Label
		}
	}
	for _, t := range xt {
		x := xf(t)
		label, ok := labels[t]
		if !ok {
			label = tickLabel(t / xunit)
		}
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%d" y2="%d" stroke="%s"/><text class="tick" x="%s" y="%d" text-anchor="middle" fill="%s">%s</text>`,
			fnum(x), fnum(x), marginT, marginT+plotH, gridColor, fnum(x), marginT+plotH+16, textColor, esc(label))
	}
	for _, h := range c.HRefs {
		if !h.At.Found {
			continue
		}
		col, cattr, _ := seriesStyle(h.Codec, "", 0)
		y := yf(h.At.Value)
		fmt.Fprintf(&b, `<line class="mark ref" x1="%d" x2="%d" y1="%s" y2="%s" stroke="%s" stroke-dasharray="%s"%s%s data-value="%s"/><text x="%d" y="%s" text-anchor="end" fill="%s" font-size="10">%s</text>`,
			marginL, marginL+plotW, fnum(y), fnum(y), col, refDash, cattr, h.At.attrs(), exact(h.At.Value), marginL+plotW-2, fnum(y-3), col, esc(h.Label+" "+h.At.Text()))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" fill="%s">%s</text>`, marginL+plotW/2, marginT+plotH+34, textColor, esc(c.XLabel))
	for si, se := range c.Series {
		col, cattr, op := seriesStyle(se.Codec, se.Variant, si)
		var d strings.Builder
		var dots strings.Builder
		for _, p := range se.Points {
			if !p.X.Found || !p.Y.Found || (c.LogX && p.X.Value <= 0) {
				continue
			}
			cmd := "L"
			if d.Len() == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%s %s", cmd, fnum(xf(p.X.Value)), fnum(yf(p.Y.Value)))
			bound := p.X
			if bound.Src == nil || (c.BindY && p.Y.Src != nil) {
				bound = p.Y
			}
			fmt.Fprintf(&dots, `<circle class="mark point" cx="%s" cy="%s" r="%g" fill="%s"%s%s%s data-value="%s" data-x="%s" data-y="%s"><title>%s: %s, %s</title></circle>`,
				fnum(xf(p.X.Value)), fnum(yf(p.Y.Value)), pointRadius, col, op, cattr, bound.attrs(), exact(bound.Value), exact(p.X.Value), exact(p.Y.Value), esc(se.Name), esc(p.X.Text()), esc(p.Y.Text()))
		}
		if d.Len() > 0 && c.Dots[si] {
			b.WriteString(strings.ReplaceAll(dots.String(), fmt.Sprintf(`r="%g"`, pointRadius), `r="5"`))
		} else if d.Len() > 0 {
			fmt.Fprintf(&b, `<path class="series" d="%s" fill="none" stroke="%s"%s stroke-width="1.6"/>`, d.String(), col, op)
			b.WriteString(dots.String())
		}
	}
	// Mark labels: each on the highest row where it overlaps no label already placed (widths
	// estimated from the text's length), so that close percentiles do not print over each
	// other.
	type placed struct{ x0, x1 float64 }
	var rowsUsed [][]placed
	labelRow := func(x, w float64) int {
		for r := range rowsUsed {
			free := true
			for _, p := range rowsUsed[r] {
				if x < p.x1+4 && x+w > p.x0-4 {
					free = false
					break
				}
			}
			if free {
				rowsUsed[r] = append(rowsUsed[r], placed{x, x + w})
				return r
			}
		}
		rowsUsed = append(rowsUsed, []placed{{x, x + w}})
		return len(rowsUsed) - 1
	}
	for _, m := range c.Marks {
		if !m.At.Found || (c.LogX && m.At.Value <= 0) {
			continue
		}
		x := xf(m.At.Value)
		text := m.Label + " " + m.At.Text()
		w := float64(len([]rune(text))) * 6
		lx, anchor := x+2, "start"
		if lx+w > float64(marginL+plotW) {
			lx, anchor = x-2, "end"
		}
		row := labelRow(math.Min(lx, lx-w*boolTo(anchor == "end")), w)
		var col, cattr string
		if m.Series < len(c.Series) {
			col, cattr, _ = seriesStyle(c.Series[m.Series].Codec, "", m.Series)
		} else {
			col = Color(m.Series)
		}
		fmt.Fprintf(&b, `<line class="mark ref" x1="%s" x2="%s" y1="%d" y2="%d" stroke="%s" stroke-dasharray="%s"%s%s data-value="%s"/><text class="marklabel" x="%s" y="%d" text-anchor="%s" fill="%s" font-size="10">%s</text>`,
			fnum(x), fnum(x), marginT, marginT+plotH, col, refDash, cattr, m.At.attrs(), exact(m.At.Value),
			fnum(lx), marginT+10+row*11, anchor, col, esc(text))
	}
	legend(&b, names, styles, chartH)
	b.WriteString("</svg>")
	s.figure(b.String(), caption)
}

func boolTo(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (s *Section) figure(svg, caption string) {
	s.blocks = append(s.blocks, "<figure>"+svg+"<figcaption>"+esc(caption)+"</figcaption></figure>")
}

func openSVG(b *strings.Builder, s *Section, title string, h int, kind string) {
	fmt.Fprintf(b, `<svg class="chart %s" id="%s-c%d" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" %s>`,
		kind, esc(s.ID), s.charts, chartW, h, chartW, h, fontAttr)
	fmt.Fprintf(b, `<text class="title" x="%d" y="18" font-size="13" font-weight="600" fill="%s">%s</text>`, marginL, textColor, esc(title))
}

func yAxis(b *strings.Builder, ticks []float64, y func(float64) float64, label string, unit float64) {
	for _, t := range ticks {
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%s" y2="%s" stroke="%s"/><text class="tick" x="%d" y="%s" text-anchor="end" fill="%s">%s</text>`,
			marginL, marginL+plotW, fnum(y(t)), fnum(y(t)), gridColor, marginL-5, fnum(y(t)+4), textColor, tickLabel(t/unit))
	}
	fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s"/><line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s"/>`,
		marginL, marginL, marginT, marginT+plotH, axisColor, marginL, marginL+plotW, marginT+plotH, marginT+plotH, axisColor)
	fmt.Fprintf(b, `<text x="14" y="%d" transform="rotate(-90 14 %d)" text-anchor="middle" fill="%s">%s</text>`, marginT+plotH/2, marginT+plotH/2, textColor, esc(label))
}

// legendLayout places legend items left to right, wrapping when a row is full (text width
// estimated from its length); it returns each item's position and the rows used.
func legendLayout(names []string) (xs, rows []int, n int) {
	x, row := marginL, 0
	for _, name := range names {
		w := 16 + int(float64(len([]rune(name)))*legendCharW) + 14
		if x+w > chartW && x > marginL {
			x, row = marginL, row+1
		}
		xs, rows = append(xs, x), append(rows, row)
		x += w
	}
	return xs, rows, row + 1
}

// legend draws each series' swatch in its colour (styles: codec and variant per series).
func legend(b *strings.Builder, names []string, styles [][2]string, top int) {
	xs, rows, _ := legendLayout(names)
	for i, n := range names {
		y := top - 8 + rows[i]*legendRowH
		col, _, op := seriesStyle(styles[i][0], styles[i][1], i)
		fmt.Fprintf(b, `<rect class="legend" x="%d" y="%d" width="12" height="10" fill="%s"%s/><text x="%d" y="%d" fill="%s">%s</text>`,
			xs[i], y-9, col, op, xs[i]+16, y, textColor, esc(n))
	}
}

func rangeAttrs(lo, hi Figure) string {
	if lo.Src == nil {
		return ""
	}
	return fmt.Sprintf(` data-src="%s" data-low="%s" data-high="%s" data-low-value="%s" data-high-value="%s"`, lo.Src.ID, esc(lo.Path), esc(hi.Path), exact(lo.Value), exact(hi.Value))
}

// exact is a value as JSON wrote it (shortest round-trip form).
func exact(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// scaled multiplies ticks chosen in display units back into the JSON's units.
func scaled(ticks []float64, unit float64) []float64 {
	for i := range ticks {
		ticks[i] *= unit
	}
	return ticks
}

// niceTicks returns 3 to 7 round tick values covering [lo, hi].
// countTicks are niceTicks with an integer step: an axis of counts (slots, messages) has no
// fractional ticks.
func countTicks(lo, hi float64) []float64 {
	t := niceTicks(lo, hi)
	if len(t) < 2 || t[1]-t[0] >= 1 {
		return t
	}
	var out []float64
	for v := math.Floor(lo); v <= math.Ceil(hi); v++ {
		out = append(out, v)
	}
	if len(out) < 2 {
		out = append(out, out[len(out)-1]+1)
	}
	return out
}

// isCount says whether a format is a plain count (no unit, no decimals).
func isCount(f Format) bool { return f.Unit == "" && f.Decimals == 0 && f.scale() == 1 }

func niceTicks(lo, hi float64) []float64 {
	if hi <= lo {
		hi = lo + 1
	}
	span := hi - lo
	step := math.Pow(10, math.Floor(math.Log10(span/5)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if span/(step*m) <= 6 {
			step *= m
			break
		}
	}
	start := math.Floor(lo/step) * step
	var out []float64
	for v := start; v < hi+step*0.999; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	if len(out) < 2 {
		out = append(out, start+step)
	}
	return out
}

func tickLabel(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return strconv.FormatFloat(v/1e9, 'g', 4, 64) + "G"
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'g', 4, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
