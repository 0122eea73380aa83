package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/result"
)

// LiveCheckKind is the report of a hub-leaves run: the proposal's live check, one column per
// leaf (the scenario's ReportKind).
const LiveCheckKind = result.LiveCheckKind

func init() {
	analysis.RegisterKind(analysis.Kind{
		Name:      LiveCheckKind,
		Load:      func(dir string) (analysis.Report, error) { return LoadRun(dir) },
		WriteRuns: writeLiveRuns,
		Section:   liveSection,
	})
}

// writeLiveRuns prints one row per run and compressed leaf: what a sweep composition's runs
// changed (the codec) against the run's plain leaf.
func writeLiveRuns(w io.Writer, labels []string, reps []analysis.Report) error {
	reports := make([]*RunReport, len(reps))
	for i, r := range reps {
		rr, ok := r.(*RunReport)
		if !ok {
			return fmt.Errorf("run %s: not a %s report", labels[i], LiveCheckKind)
		}
		reports[i] = rr
	}
	first := reports[0]
	fmt.Fprintf(w, "hub-leaves: %d runs, profile %s, payload %s, %d slots at %g× real time\n\n",
		len(reports), first.Profile, first.Payload, first.Schedule.Slots, first.Schedule.TimeScale)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tcodec\tplain wire\tcodec wire\tvs plain\thub encode ns/byte\tleaf decode ns/byte\thub codec state\tparity\tresult\t")
	var builds []string
	all := analysis.NewVerdict()
	for i, r := range reports {
		var plain *LeafReport
		for j := range r.Leaves {
			if r.Leaves[j].Codec == "plain" {
				plain = &r.Leaves[j]
				break
			}
		}
		rows := 0
		for _, j := range r.ShownLeaves() {
			l := &r.Leaves[j]
			if l == plain {
				continue
			}
			rows++
			plainWire := "-"
			if plain != nil {
				plainWire = fmt.Sprintf("%.2f MB", float64(plain.WireBytes)/1e6)
			}
			rel := "-"
			if l.RelativeToPlain != nil {
				rel = fmt.Sprintf("%.1f %%", *l.RelativeToPlain)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f MB\t%s\t%.2f\t%.2f\t%.0f KiB\t%s\t%s\t\n",
				labels[i], l.Codec, plainWire, float64(l.WireBytes)/1e6, rel,
				l.CPU.HubEncode.NsPerByte, l.CPU.Decode.NsPerByte, float64(l.CPU.HubEncode.StateBytes)/1024,
				r.leafParity(l), analysis.OKFail(r.OK))
		}
		if rows == 0 {
			fmt.Fprintf(tw, "%s\t(no compressed leaf)\t\t\t\t\t\t\t%s\t%s\t\n", labels[i], analysis.OKFail(r.Parity.OK), analysis.OKFail(r.OK))
		}
		if !slices.Contains(builds, r.Build) {
			builds = append(builds, r.Build)
		}
		all.TakeBuild(r.Build, r.Optimized)
		for _, p := range r.Problems {
			all.Problem("%s: %s", labels[i], p)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nbuild: %s\n", strings.Join(builds, ", "))
	all.NoteBuild()
	return all.WriteFooter(w)
}

// leafParity is a leaf's parity verdict in one cell.
func (r *RunReport) leafParity(l *LeafReport) string {
	for _, p := range r.Parity.Leaves {
		if p.Group == l.Group && p.Instance == l.Instance {
			return analysis.OKFail(p.OK)
		}
	}
	return "?"
}
