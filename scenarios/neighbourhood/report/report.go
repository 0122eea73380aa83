// Package report reads a neighbourhood run's outputs as a report kind of package analysis
// (kept apart from package neighbourhood so that the Testground plan, which runs the
// scenario, does not link the reports' charting).
package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/scenarios/neighbourhood"
)

// writeRuns prints several runs of one form (seeds) as the calibration table with the
// spread over them (neighbourhood.WriteCalibration).
func writeRuns(w io.Writer, labels []string, reps []analysis.Report) error {
	var sums []neighbourhood.Summary
	for i, r := range reps {
		nr, ok := r.(*Report)
		if !ok {
			return fmt.Errorf("run %s: not a neighbourhood report", labels[i])
		}
		sums = append(sums, nr.Figures)
	}
	return neighbourhood.WriteCalibration(w, labels, sums)
}

// Report is a neighbourhood run read back: the table its instance printed, its figures,
// and the verdict (delivery complete; each category outside ±25 % of the recording is a note,
// a calibration finding, not a failure).
type Report struct {
	Dir     string                `json:"dir"`
	Figures neighbourhood.Summary `json:"figures"`
	analysis.Verdict
	table   string
	payload string // what the compressed streams carried (the run's payload parameter)
}

// Load reads the run in dir (its one instance's outputs).
func Load(dir string) (*Report, error) {
	paths, err := result.FindSummaries(dir)
	if err != nil {
		return nil, err
	}
	if len(paths) != 1 {
		return nil, fmt.Errorf("%s: %d instance summaries, a neighbourhood run has one", dir, len(paths))
	}
	s, err := result.ReadSummary(paths[0])
	if err != nil {
		return nil, err
	}
	r := &Report{Dir: dir, Verdict: analysis.Verdict{Optimized: true, Checks: analysis.Checks{OK: true}}, payload: cmp.Or(s.Payload, gossip.PayloadSSZSnappy)}
	r.TakeBuild(s.Build, s.Optimized)
	if !s.Optimized {
		r.Note("%s", analysis.UnoptimizedNote(s.Build))
	}
	if s.Failure != nil {
		r.Problem("%s", s.Failure.Error())
	}
	out := filepath.Dir(paths[0])
	table, err := os.ReadFile(filepath.Join(out, neighbourhood.TableFile))
	if err != nil {
		if s.Failure == nil {
			r.Problem("no report: %v", err)
		}
		return r, nil
	}
	r.table = string(table)
	b, err := os.ReadFile(filepath.Join(out, neighbourhood.ReportFile))
	if err == nil {
		err = json.Unmarshal(b, &r.Figures)
	}
	if err != nil {
		r.Problem("figures: %v", err)
		return r, nil
	}
	if !r.Figures.Complete {
		r.Problem("delivery incomplete: the observed node missed messages of its topics")
	}
	t := r.Figures.Timing
	if t.ObservedDrops > 0 || t.DropsToObserved > 0 {
		r.Problem("pubsub dropped traffic in the measured slots: %d at the observed node, %d RPCs on the way to it (an outbound queue was full): the observed node's figures miss it", t.ObservedDrops, t.DropsToObserved)
	}
	if t.Saturated {
		r.Flag(analysis.FlagSaturated, "the process was saturated (CPU %.0f %% of the machine over the measured slots): in-process hops took longer than on an idle machine, so copies and IHAVE timing lean the way docs/neighbourhood.md describes", 100*t.Utilization)
	}
	if late := neighbourhood.IndependentArrival.First.Max; t.LagP99Ms > float64(late.Milliseconds())/4 {
		r.Flag(analysis.FlagLate, "the periphery fell behind its schedule: p99 %.0f ms, max %.0f ms simulated, against first copies spread over %v–%v; timing-shaped figures (copies, IHAVE) are not the model's", t.LagP99Ms, t.MaxLagMs, neighbourhood.IndependentArrival.First.Min, late)
	}
	for _, c := range r.Figures.Categories {
		if !c.Within {
			r.Flag(analysis.FlagCalibration, "calibration: %s %.0f MiB/h is %.0f %% of the recording's %.0f (outside ±25 %%)", c.Category, c.MiBh, c.VsRecording, c.RecordingMiBh)
		}
	}
	return r, nil
}

// SetDir labels the report with the run's name.
func (r *Report) SetDir(dir string) { r.Dir = dir }

// WriteJSON writes the report as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error { return analysis.WriteJSON(w, r) }

// WriteTable prints the instance's table, then the verdict.
func (r *Report) WriteTable(w io.Writer) error {
	if _, err := io.WriteString(w, r.table); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return r.WriteFooter(w)
}
