package neighbourhood

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
)

// The observed node's traffic on its links as measured, per category and direction: raw
// (the frames pubsub wrote or read, what plain /meshsub/1.2.0 puts on the wire) and wire
// (after the stream codec; equal to raw on plain links). Unlike the calibration table, these
// are not scaled to 64 subnets: they are what the observed node's streams carried.

// WireLine is one category and direction of the observed node's traffic.
type WireLine struct {
	Category  string  `json:"category"`
	Direction string  `json:"direction"`
	RawBytes  int64   `json:"raw_bytes"`
	WireBytes int64   `json:"wire_bytes"`
	RawMiBh   float64 `json:"raw_mib_per_hour"`
	WireMiBh  float64 `json:"wire_mib_per_hour"`
	// RelativePct is wire as a percentage of raw (100 on plain links).
	RelativePct float64 `json:"relative_pct"`
}

// Wire lists the observed node's traffic per category (and "total") in and out.
func (r *Report) Wire() []WireLine {
	perHour := 3600 / r.Simulated.Seconds() / (1 << 20)
	var lines []WireLine
	for _, dir := range []struct {
		name string
		m    map[gossip.Category]result.CategoryBytes
	}{{"in", r.In}, {"out", r.Out}} {
		var total result.CategoryBytes
		add := func(name string, b result.CategoryBytes) {
			l := WireLine{Category: name, Direction: dir.name, RawBytes: b.RawBytes, WireBytes: b.WireBytes,
				RawMiBh: float64(b.RawBytes) * perHour, WireMiBh: float64(b.WireBytes) * perHour}
			l.RelativePct, _ = result.PercentOf(float64(b.WireBytes), float64(b.RawBytes))
			lines = append(lines, l)
		}
		for _, c := range orderedCategories() {
			b := dir.m[c]
			if b.RawBytes == 0 && b.WireBytes == 0 {
				continue
			}
			add(c.String(), b)
			total.RawBytes += b.RawBytes
			total.WireBytes += b.WireBytes
		}
		add("total", total)
	}
	return lines
}

// printWire prints Wire as a table.
func (r *Report) printWire(w io.Writer) {
	fmt.Fprintf(w, "\nthe observed node's links on %s, as measured (not scaled to 64 subnets):\n", r.Config.Codec)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "direction\tcategory\traw MiB/h\twire MiB/h\twire/raw\t")
	for _, l := range r.Wire() {
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%.1f %%\t\n", l.Direction, l.Category, l.RawMiBh, l.WireMiBh, l.RelativePct)
	}
	tw.Flush()
}
