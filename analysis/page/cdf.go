package page

import (
	"fmt"
	"strings"
)

// CDFStepPct is the step of the latency CDFs reports put in their JSON (cdf_ms: the latency
// at 0, 2, 4, … 100 % of deliveries; result.CDFStepPct).
const CDFStepPct = 2

// CDFCurve is one curve of a latency CDF chart: the distribution at Path in Src, an object
// with cdf_ms (and p50_ms, p90_ms, p99_ms where the report has them), drawn in Codec's colour.
type CDFCurve struct {
	Name, Codec string
	Src         *Source
	Path        string
}

// CDFPoints is the curve of the cdf_ms array under path: x each latency (bound to its
// element), y its rank, i × CDFStepPct percent; nil when the JSON holds no such array.
func (s *Source) CDFPoints(path string) []Point {
	v, ok := s.Lookup(join(path, "cdf_ms"))
	arr, _ := v.([]any)
	if !ok || len(arr) == 0 {
		return nil
	}
	pts := make([]Point, len(arr))
	for i := range arr {
		pts[i] = Point{X: s.Fig(fmt.Sprintf("%s.cdf_ms.%d", path, i), Ms1), Y: Const(float64(i*CDFStepPct), Pct)}
	}
	return pts
}

// LatencyCDF adds a delivery-latency CDF chart (x: latency on a log scale, y: % of
// deliveries, 0 to 100), one curve per CDFCurve that has a CDF in its JSON, in its codec's
// colour, with the curve's p50, p90 and p99 marked. It returns how many curves it drew;
// with none it adds a sentence saying why (none of the curves' JSON holds a CDF), never an
// empty chart.
func (s *Section) LatencyCDF(title, xlabel string, curves []CDFCurve, caption string) int {
	c := LineChart{Title: title, XLabel: xlabel, YLabel: "% of deliveries", YMax: 100, LogX: true}
	var missing []string
	for _, cu := range curves {
		pts := cu.Src.CDFPoints(cu.Path)
		if pts == nil {
			missing = append(missing, cu.Name)
			continue
		}
		si := len(c.Series)
		c.Series = append(c.Series, LineSeries{Name: cu.Name, Codec: cu.Codec, Points: pts})
		for _, q := range []string{"p50", "p90", "p99"} {
			if _, ok := cu.Src.Lookup(join(cu.Path, q+"_ms")); ok {
				c.Marks = append(c.Marks, Mark{Label: q, At: cu.Src.Fig(join(cu.Path, q+"_ms"), Ms), Series: si})
			}
		}
	}
	if len(c.Series) == 0 {
		s.Para(title + ": not drawn: the JSON of " + strings.Join(missing, ", ") + " holds no latency CDF (cdf_ms).")
		return 0
	}
	if len(missing) > 0 {
		caption += " No CDF in the JSON of " + strings.Join(missing, ", ") + "."
	}
	s.Lines(c, caption)
	return len(c.Series)
}
