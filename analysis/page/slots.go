package page

import (
	"fmt"
	"strings"
)

// SlotCurve is one line of a bytes-per-slot chart: the by_slot array at Path in Src
// (analysis.SlotBytes: slot, in and out per category), direction Dir ("in" or "out"), in
// Codec's colour (Variant: a second series of the same codec, drawn lighter).
type SlotCurve struct {
	Name, Codec, Variant string
	Src                  *Source
	Path, Dir            string
}

// BytesPerSlot adds one line chart per category (in the order given) of wire bytes per
// interval between a node's samples (one slot at the default period), one line per curve,
// each point bound to its wire_bytes figure, x at the interval's end in slots. A category
// no curve has is left out, one at 0 bytes throughout is a sentence saying so; with no curve
// holding a series it adds a sentence saying why.
// It returns the charts drawn.
func (s *Section) BytesPerSlot(title string, curves []SlotCurve, categories []string, caption string) int {
	var have []SlotCurve
	var missing []string
	for _, cu := range curves {
		if v, ok := cu.Src.Lookup(cu.Path); ok {
			if arr, _ := v.([]any); len(arr) > 0 {
				have = append(have, cu)
				continue
			}
		}
		missing = append(missing, cu.Name)
	}
	if len(have) == 0 {
		s.Para(title + ": not drawn: the JSON of " + strings.Join(missing, ", ") + " holds no per-slot series (by_slot; a run from before its samples held byte totals).")
		return 0
	}
	drawn := 0
	for _, cat := range categories {
		c := LineChart{Title: title + ": " + cat, XLabel: "slots since the measured phase started (each point: the interval ending there)", YLabel: "MB per interval", BindY: true}
		for _, cu := range have {
			v, _ := cu.Src.Lookup(cu.Path)
			n := len(v.([]any))
			se := LineSeries{Name: cu.Name, Codec: cu.Codec, Variant: cu.Variant}
			for i := 0; i < n; i++ {
				b := fmt.Sprintf("%s.%d.", cu.Path, i)
				y := cu.Src.Fig(b+cu.Dir+"."+cat+".wire_bytes", MB)
				if y.Found {
					se.Points = append(se.Points, Point{X: cu.Src.Fig(b+"slot", Ratio), Y: y})
				}
			}
			if len(se.Points) > 0 {
				c.Series = append(c.Series, se)
			}
		}
		if len(c.Series) == 0 {
			continue
		}
		nonzero := false
		for _, se := range c.Series {
			for _, pt := range se.Points {
				nonzero = nonzero || pt.Y.Value != 0
			}
		}
		if !nonzero {
			s.Para(c.Title + ": not drawn: 0 bytes in every interval of every line.")
			continue
		}
		cp := caption
		if len(missing) > 0 {
			cp += " No per-slot series in the JSON of " + strings.Join(missing, ", ") + "."
		}
		s.Lines(c, cp)
		drawn++
	}
	return drawn
}
