package replay

import (
	"fmt"
	"image/color"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/streamsim/streamsim/analysis/chart"
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
		if r.View != view || r.Payload != payload || r.Layout != LayoutOneStream {
			continue // the charts are today's layout
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

// WriteCharts writes, for each view, PNG and SVG charts: relative bytes against history size
// per category (one chart per payload mode) and encode and decode ns per byte against history
// size. It needs at least two snappy-stream fast window sizes and returns the files written.
func (rep *Report) WriteCharts(dir string) ([]string, error) {
	var files []string
	save := func(p *plot.Plot, name string) error {
		written, err := chart.Save(p, dir, name)
		files = append(files, written...)
		return err
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
			if err := chart.AddSeries(p, args); err != nil {
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
			p.Y.Min, p.Y.Max = 0, max(105, chart.MaxY(args)+5)
			p.Legend.Left = true
			if err := save(p, "relative-"+chart.FileSafe(v.View)+"-"+chart.FileSafe(payload)); err != nil {
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
		// plain's figures are today's per-message Snappy (plain.go): what the codecs replace
		// or, in payload mode ssz_snappy, add to.
		for i := range rep.Results {
			r := &rep.Results[i]
			if r.View == v.View && r.Config == "plain" && r.Layout == LayoutOneStream {
				lo, hi := float64(cpuPts[0].window), float64(cpuPts[len(cpuPts)-1].window)
				cpuArgs = append(cpuArgs, "plain encode+decode (today's per-message Snappy)",
					plotter.XYs{{X: lo, Y: r.EncodeCPUNsPerB + r.DecodeCPUNsPerB}, {X: hi, Y: r.EncodeCPUNsPerB + r.DecodeCPUNsPerB}})
			}
		}
		historyAxis(cpu, cpuPts)
		if err := chart.AddSeries(cpu, cpuArgs); err != nil {
			return files, err
		}
		// Legend at the top, above the series.
		cpu.Y.Min, cpu.Y.Max = 0, 1.6*chart.MaxY(cpuArgs)
		cpu.Legend.Top = true
		if err := save(cpu, "cpu-"+chart.FileSafe(v.View)); err != nil {
			return files, err
		}
	}
	return files, nil
}
