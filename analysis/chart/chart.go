// Package chart draws the line charts of streamsim's reports (PNG and SVG, with gonum/plot):
// the helpers every report's charts share, so that series look the same in every figure.
package chart

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Width and Height are every chart's size.
var (
	Width  = 18 * vg.Centimeter
	Height = 11 * vg.Centimeter
)

// AddSeries adds (name, XYs) pairs as lines with points, in plotutil's colors, dashes and
// shapes; a series named "total" is drawn black and thicker.
func AddSeries(p *plot.Plot, args []any) error {
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

// MaxY is the largest y of the series in an AddSeries argument list.
func MaxY(args []any) float64 {
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

// FileSafe maps a label to a file name part: letters, digits, '-' and '_' are kept, the rest
// become '-'.
func FileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, s)
}

// Save writes p as dir/name.png and dir/name.svg and returns the files written.
func Save(p *plot.Plot, dir, name string) ([]string, error) {
	var files []string
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(dir, name+ext)
		if err := p.Save(Width, Height, path); err != nil {
			return files, fmt.Errorf("chart %s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}
