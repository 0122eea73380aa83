package report

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/streamsim/streamsim/analysis/chart"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/units"
)

// WriteLatencyCharts draws, per category (attestation, block), delivery latency against the
// ordinary nodes' link rate: p50 and p99 per codec. Runs without shaped links are left out.
func (ab *ABReport) WriteCharts(dir string) ([]string, error) {
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
		if err := chart.AddSeries(p, args); err != nil {
			return files, err
		}
		p.Y.Min, p.Y.Max = 0, 1.15*chart.MaxY(args)
		p.Legend.Top = true
		written, err := chart.Save(p, dir, "latency-"+c.String())
		files = append(files, written...)
		if err != nil {
			return files, err
		}
	}
	return files, nil
}
