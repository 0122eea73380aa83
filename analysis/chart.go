package analysis

import (
	"fmt"
	"image/color"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/units"
)

// historyPoint is one snappy-stream fast result at one window size.
type historyPoint struct {
	window int
	r      *Result
}

// historySeries returns the snappy-stream fast results of a view and payload by window
// size, smallest first.
func (rep *Report) historySeries(view, payload string) []historyPoint {
	snappyFast, _ := codec.Parse("snappy-stream")
	var out []historyPoint
	for i := range rep.Results {
		r := &rep.Results[i]
		if r.View != view || r.Payload != payload {
			continue
		}
		c, err := ParseConfig(r.Config)
		if err != nil || c.Dict || !c.Spec.SameExceptWindow(snappyFast) || c.Spec.HistoryBytes() == 0 {
			continue
		}
		out = append(out, historyPoint{c.Spec.HistoryBytes(), r})
	}
	slices.SortFunc(out, func(a, b historyPoint) int { return a.window - b.window })
	return out
}

func historyAxis(p *plot.Plot, pts []historyPoint) {
	p.X.Label.Text = "snappy-stream fast history (window)"
	p.X.Scale = plot.LogScale{}
	var ticks []plot.Tick
	for _, pt := range pts {
		ticks = append(ticks, plot.Tick{Value: float64(pt.window), Label: units.FormatSize(pt.window)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Add(plotter.NewGrid())
}

// maxY is the largest y of the series in plotutil's (name, XYs) argument list.
func maxY(args []any) float64 {
	m := 0.0
	for _, a := range args {
		if xys, ok := a.(plotter.XYs); ok {
			for _, xy := range xys {
				m = max(m, xy.Y)
			}
		}
	}
	return m
}

// WriteCharts writes, for each view, PNG and SVG charts: relative bytes against history size
// per category (one chart per payload mode) and encode and decode ns per byte against history
// size. It needs at least two snappy-stream fast window sizes and returns the files written.
func (rep *Report) WriteCharts(dir string) ([]string, error) {
	var files []string
	save := func(p *plot.Plot, name string) error {
		for _, ext := range []string{".png", ".svg"} {
			path := filepath.Join(dir, name+ext)
			if err := p.Save(18*vg.Centimeter, 11*vg.Centimeter, path); err != nil {
				return fmt.Errorf("chart %s: %w", path, err)
			}
			files = append(files, path)
		}
		return nil
	}
	cats := rep.reportCategories()
	for _, v := range rep.Views {
		cpu := plot.New()
		cpu.Title.Text = "Codec CPU vs history, view " + v.View
		cpu.Y.Label.Text = "ns per input byte (thread CPU of the replay loop)"
		var cpuArgs []any
		var cpuPts []historyPoint
		for _, payload := range rep.Payloads {
			pts := rep.historySeries(v.View, payload)
			if len(pts) < 2 {
				continue
			}
			cpuPts = pts
			p := plot.New()
			p.Title.Text = fmt.Sprintf("Bytes vs history, view %s, payload %s", v.View, payload)
			p.Y.Label.Text = "% of today's bytes"
			historyAxis(p, pts)
			var args []any
			for _, c := range append([]gossip.Category{gossip.NumCategories}, cats...) {
				xys := make(plotter.XYs, len(pts))
				for i, pt := range pts {
					xys[i].X = float64(pt.window)
					if c == gossip.NumCategories {
						xys[i].Y = pt.r.RelativeTotal
					} else {
						xys[i].Y = pt.r.Relative[c]
					}
				}
				name := "total"
				if c != gossip.NumCategories {
					name = c.String()
				}
				args = append(args, name, xys)
			}
			if err := addSeries(p, args); err != nil {
				return files, err
			}
			// The proposal's totals where it published them (4 KiB, 64 KiB, 1 MiB), as points.
			var prop plotter.XYs
			for _, pt := range pts {
				if cmp, ok := pt.r.Proposal["total"]; ok {
					prop = append(prop, plotter.XY{X: float64(pt.window), Y: (cmp.Low + cmp.High) / 2})
				}
			}
			if len(prop) > 0 {
				sc, err := plotter.NewScatter(prop)
				if err != nil {
					return files, fmt.Errorf("chart: %w", err)
				}
				sc.Shape = draw.CrossGlyph{}
				sc.Radius = vg.Points(5)
				sc.Color = color.Black
				p.Add(sc)
				p.Legend.Add("proposal's total", sc)
				args = append(args, "", prop) // for the y range
			}
			// Legend bottom left, where no series goes (every figure is well above 0).
			p.Y.Min, p.Y.Max = 0, max(105, maxY(args)+5)
			p.Legend.Left = true
			if err := save(p, "relative-"+fileSafe(v.View)+"-"+fileSafe(payload)); err != nil {
				return files, err
			}
			for _, dir := range []string{"encode", "decode"} {
				xys := make(plotter.XYs, len(pts))
				for i, pt := range pts {
					xys[i].X = float64(pt.window)
					xys[i].Y = pt.r.EncodeCPUNsPerB
					if dir == "decode" {
						xys[i].Y = pt.r.DecodeCPUNsPerB
					}
				}
				cpuArgs = append(cpuArgs, dir+" "+payload, xys)
			}
		}
		if len(cpuArgs) == 0 {
			continue
		}
		// plain's figures are the replay's own cost, the floor under every codec's.
		for i := range rep.Results {
			r := &rep.Results[i]
			if r.View == v.View && r.Config == "plain" {
				lo, hi := float64(cpuPts[0].window), float64(cpuPts[len(cpuPts)-1].window)
				cpuArgs = append(cpuArgs, "plain encode+decode (replay floor)",
					plotter.XYs{{X: lo, Y: r.EncodeCPUNsPerB + r.DecodeCPUNsPerB}, {X: hi, Y: r.EncodeCPUNsPerB + r.DecodeCPUNsPerB}})
			}
		}
		historyAxis(cpu, cpuPts)
		if err := addSeries(cpu, cpuArgs); err != nil {
			return files, err
		}
		// Legend at the top, above the series.
		cpu.Y.Min, cpu.Y.Max = 0, 1.6*maxY(cpuArgs)
		cpu.Legend.Top = true
		if err := save(cpu, "cpu-"+fileSafe(v.View)); err != nil {
			return files, err
		}
	}
	return files, nil
}

// addSeries adds (name, XYs) pairs as lines with points, plotutil's colors, dashes and
// shapes; a series named "total" is drawn black and thicker.
func addSeries(p *plot.Plot, args []any) error {
	for i := 0; i+1 < len(args); i += 2 {
		name, _ := args[i].(string)
		xys, _ := args[i+1].(plotter.XYs)
		l, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("chart %s: %w", name, err)
		}
		k := i / 2
		l.Color, sc.Color = plotutil.Color(k), plotutil.Color(k)
		l.Dashes = plotutil.Dashes(k)
		sc.Shape = plotutil.Shape(k)
		if name == "total" {
			l.Color, sc.Color = color.Black, color.Black
			l.Width = vg.Points(2)
		}
		p.Add(l, sc)
		p.Legend.Add(name, l, sc)
	}
	return nil
}

func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, s)
}

// WriteLatencyCharts draws, per category (attestation, block), delivery latency against the
// ordinary nodes' link rate: p50 and p99 per codec. Runs without shaped links are left out.
func (ab *ABReport) WriteLatencyCharts(dir string) ([]string, error) {
	var files []string
	codecs := map[string][]ABLatency{}
	var names []string
	for _, l := range ab.Latency {
		if l.Bandwidth == "" {
			continue
		}
		if codecs[l.Codec] == nil {
			names = append(names, l.Codec)
		}
		codecs[l.Codec] = append(codecs[l.Codec], l)
	}
	if len(names) == 0 {
		return nil, nil
	}
	for _, c := range []gossip.Category{gossip.Attestation, gossip.Block} {
		p := plot.New()
		p.Title.Text = "Delivery latency vs link rate: " + c.String()
		p.X.Label.Text = "ordinary nodes' link (Mbit/s, up and down)"
		p.Y.Label.Text = "ms from publish to first delivery"
		p.X.Scale = plot.LogScale{}
		var ticks []plot.Tick
		var args []any
		for _, name := range names {
			for _, q := range []string{"p50", "p99"} {
				var xys plotter.XYs
				for _, l := range codecs[name] {
					bps, err := units.ParseBitsPerSec(l.Bandwidth)
					if err != nil || bps == 0 {
						continue
					}
					y := l.P50Ms[c]
					if q == "p99" {
						y = l.P99Ms[c]
					}
					xys = append(xys, plotter.XY{X: float64(bps) / 1e6, Y: y})
					if name == names[0] && q == "p50" {
						ticks = append(ticks, plot.Tick{Value: float64(bps) / 1e6, Label: l.Bandwidth})
					}
				}
				if len(xys) > 0 {
					args = append(args, name+" "+q, xys)
				}
			}
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.Add(plotter.NewGrid())
		if err := addSeries(p, args); err != nil {
			return files, err
		}
		p.Y.Min, p.Y.Max = 0, 1.15*maxY(args)
		p.Legend.Top = true
		for _, ext := range []string{".png", ".svg"} {
			path := filepath.Join(dir, "latency-"+c.String()+ext)
			if err := p.Save(18*vg.Centimeter, 11*vg.Centimeter, path); err != nil {
				return files, fmt.Errorf("chart %s: %w", path, err)
			}
			files = append(files, path)
		}
	}
	return files, nil
}
