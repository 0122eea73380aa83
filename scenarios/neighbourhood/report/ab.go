package report

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"text/tabwriter"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/scenarios/neighbourhood"
)

func init() {
	analysis.RegisterKind(analysis.Kind{Name: neighbourhood.ReportKind,
		Load:    func(dir string) (analysis.Report, error) { return Load(dir) },
		Compare: compare,
		// Several runs of one form, not an A/B: the calibration over seeds (report.go).
		WriteRuns: writeRuns,
		Section:   section,
	})
}

// AB is the live A/B on the observed node's links: runs of the same seeds (population and
// workload) on different codecs. Per codec and category of the observed node's inbound
// traffic it gives the wire bytes as a percentage of the same run's raw bytes (what plain
// would have put on the wire for exactly this traffic) and of the plain run's wire bytes of
// the same seed (gossip's own randomness is not seeded, so the two runs' traffic differs by
// a few percent), each as the mean and range over seeds; the total at the recording's mix
// weights each category's wire/raw by the recording's MiB/h (docs/inputs.md §1), so a
// calibration form's four subnets do not set the mix. CPU is the whole process's (every
// node, both ends of every compressed link) per simulated minute.
type AB struct {
	Runs []ABRun `json:"runs"`
	Rows []ABRow `json:"rows"`
	// LatencyDiff is each codec's delivery latency at the observed node minus plain's in the
	// same seed, per category.
	LatencyDiff []LatencyDiff `json:"latency_diff"`
	analysis.Verdict
}

// LatencyDiff is one codec and category: the codec run's delivery latency percentiles at the
// observed node minus the plain run's of the same seed (simulated ms), mean and range over
// seeds. Only runs that passed their checks, with a plain run of the same seed that passed
// its, count; Saturated and Late are set when any of those runs (or its plain run) had the
// process saturated or the periphery behind its schedule (the runs' flags), timing that shapes
// latency.
type LatencyDiff struct {
	Codec     string          `json:"codec"`
	Category  string          `json:"category"`
	Seeds     int             `json:"seeds"`
	P50       analysis.Spread `json:"p50_ms"`
	P99       analysis.Spread `json:"p99_ms"`
	Saturated bool            `json:"saturated"`
	Late      bool            `json:"late"`
}

// ABRun is one run of the comparison.
type ABRun struct {
	analysis.ABRun
	Complete  bool                              `json:"complete"`
	In        map[string]neighbourhood.WireLine `json:"in"`
	CPUPerMin float64                           `json:"cpu_s_per_simulated_minute"`
	// WallPerMin and PeakRSSBytes: the run's wall seconds per simulated minute and its peak
	// memory, beside CPUPerMin (neighbourhood.Summary's).
	WallPerMin   float64  `json:"wall_s_per_simulated_minute"`
	PeakRSSBytes int64    `json:"peak_rss_bytes"`
	MaxLagMs     float64  `json:"max_lag_ms"`
	Copies       *float64 `json:"attestation_copies"` // null: not measured
	Dir          string   `json:"dir"`
	// Latency is the run's delivery latency at the observed node per category (its
	// figures.timing.latency); OK whether it passed its checks; Saturated and Late whether it
	// was flagged so.
	Latency   map[string]neighbourhood.LatencyLine `json:"latency"`
	OK        bool                                 `json:"ok"`
	Saturated bool                                 `json:"saturated"`
	Late      bool                                 `json:"late"`
}

// ABRow is one codec and category over the seeds.
type ABRow struct {
	Codec    string `json:"codec"`
	Category string `json:"category"` // a category, "total", or "total at recording's mix"
	Seeds    int    `json:"seeds"`
	// OfRaw: wire as a percentage of the same run's raw bytes; OfPlain: of the plain run's
	// wire bytes, same seed (absent without a plain run).
	OfRaw   analysis.Spread  `json:"wire_of_raw_pct"`
	OfPlain *analysis.Spread `json:"wire_of_plain_run_pct,omitempty"`
	// CPU is process CPU relative to the plain run of the same seed (percent), on the
	// "total" row.
	CPU *analysis.Spread `json:"cpu_of_plain_run_pct,omitempty"`
}

// MixLabel is the row of the total weighted by the recording's per-category volumes.
const MixLabel = "total at recording's mix"

func compare(runs []analysis.ABRun, reports []analysis.Report) (analysis.Report, error) {
	ab := &AB{Verdict: analysis.Verdict{Optimized: true, Checks: analysis.Checks{OK: true}}}
	for i, rep := range reports {
		r, ok := rep.(*Report)
		if !ok {
			return nil, fmt.Errorf("run %d: not a neighbourhood report", i)
		}
		ab.TakeBuild(r.Build, r.Optimized)
		run := ABRun{ABRun: runs[i], Complete: r.Figures.Complete, In: map[string]neighbourhood.WireLine{}, MaxLagMs: r.Figures.MaxLagMs, Dir: r.Dir,
			Latency: r.Figures.Timing.Latency, OK: r.OK}
		for _, fl := range r.Flags {
			run.Saturated = run.Saturated || fl.Kind == analysis.FlagSaturated
			run.Late = run.Late || fl.Kind == analysis.FlagLate
		}
		f := r.Figures
		run.CPUPerMin, run.WallPerMin, run.PeakRSSBytes = f.CPUPerSimMin, f.WallPerSimMin, f.Timing.PeakRSSBytes
		if run.CPUPerMin == 0 && f.SimulatedS > 0 { // a summary written before the cost figures
			run.CPUPerMin = f.CPUS / (f.SimulatedS / 60)
		}
		for _, c := range r.Figures.Categories {
			if c.Category == gossip.Attestation.String() {
				run.Copies = c.Copies
			}
		}
		for _, l := range r.Figures.Wire {
			if l.Direction == "in" {
				run.In[l.Category] = l
			}
		}
		if !r.OK {
			ab.Problem("run seed %d, %s failed its checks: %v", runs[i].Seed, runs[i].Codec, r.Problems)
		}
		ab.Runs = append(ab.Runs, run)
	}
	plain := map[int64]*ABRun{}
	for i := range ab.Runs {
		if ab.Runs[i].Codec == "plain" {
			plain[ab.Runs[i].Seed] = &ab.Runs[i]
		}
	}
	type key struct{ codec, cat string }
	ofRaw, ofPlain, cpu := map[key][]float64{}, map[key][]float64{}, map[key][]float64{}
	cats := append(categoryNames(), "total")
	for _, r := range ab.Runs {
		if !r.Complete {
			continue // an incomplete run compares nothing
		}
		base := plain[r.Seed]
		for _, c := range cats {
			l, ok := r.In[c]
			if !ok || l.RawBytes == 0 {
				continue
			}
			ofRaw[key{r.Codec, c}] = append(ofRaw[key{r.Codec, c}], l.RelativePct)
			if base != nil && base.Complete && base.In[c].WireBytes > 0 {
				v, _ := result.PercentOf(float64(l.WireBytes), float64(base.In[c].WireBytes))
				ofPlain[key{r.Codec, c}] = append(ofPlain[key{r.Codec, c}], v)
			}
		}
		if v, ok := atRecordingMix(r.In); ok {
			ofRaw[key{r.Codec, MixLabel}] = append(ofRaw[key{r.Codec, MixLabel}], v)
		}
		if base != nil && base.Complete && base.CPUPerMin > 0 {
			v, _ := result.PercentOf(r.CPUPerMin, base.CPUPerMin)
			cpu[key{r.Codec, "total"}] = append(cpu[key{r.Codec, "total"}], v)
		}
	}
	order := map[string]int{}
	for i, c := range append(cats, MixLabel) {
		order[c] = i
	}
	for k, vs := range ofRaw {
		if k.codec == "plain" {
			continue // 100 % by definition; the runs table shows plain's volumes
		}
		row := ABRow{Codec: k.codec, Category: k.cat, Seeds: len(vs), OfRaw: analysis.SpreadOf(vs)}
		if p := ofPlain[k]; len(p) > 0 {
			s := analysis.SpreadOf(p)
			row.OfPlain = &s
		}
		if c := cpu[k]; len(c) > 0 {
			s := analysis.SpreadOf(c)
			row.CPU = &s
		}
		ab.Rows = append(ab.Rows, row)
	}
	sort.Slice(ab.Rows, func(i, j int) bool {
		a, b := ab.Rows[i], ab.Rows[j]
		if a.Codec != b.Codec {
			return codecOrder(ab.Runs, a.Codec) < codecOrder(ab.Runs, b.Codec)
		}
		return order[a.Category] < order[b.Category]
	})
	ab.LatencyDiff = latencyDiff(ab.Runs)
	if len(plain) == 0 {
		ab.Note("no plain run: wire is compared with each run's own raw bytes only")
	}
	return ab, nil
}

// latencyDiff compares each run's latency percentiles with the plain run's of the same seed
// (analysis.LatencyDiffs), per codec and category; a category counts where both runs
// delivered messages of it.
func latencyDiff(runs []ABRun) []LatencyDiff {
	plain := map[int64]int{}
	for i, r := range runs {
		if r.Codec == "plain" {
			plain[r.Seed] = i
		}
	}
	lr := make([]analysis.LatencyRun[string], len(runs))
	for i, r := range runs {
		b, ok := plain[r.Seed]
		if !ok {
			b = -1
		}
		l := analysis.LatencyRun[string]{Codec: r.Codec, OK: r.OK, Saturated: r.Saturated, Late: r.Late, Base: b, P50: map[string]float64{}, P99: map[string]float64{}}
		for c, v := range r.Latency {
			if v.Messages > 0 {
				l.P50[c], l.P99[c] = v.P50Ms, v.P99Ms
			}
		}
		lr[i] = l
	}
	type key struct{ codec, cat string }
	var out []LatencyDiff
	for _, d := range analysis.LatencyDiffs(lr, categoryNames(), func(i int, c string) key { return key{runs[i].Codec, c} }) {
		out = append(out, LatencyDiff{Codec: d.Key.codec, Category: d.Key.cat, Seeds: d.Seeds, P50: d.P50, P99: d.P99, Saturated: d.Saturated, Late: d.Late})
	}
	cats := categoryNames()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Codec != b.Codec {
			return codecOrder(runs, a.Codec) < codecOrder(runs, b.Codec)
		}
		return slices.Index(cats, a.Category) < slices.Index(cats, b.Category)
	})
	return out
}

// atRecordingMix is the total wire/raw with each category weighted by the recording's
// inbound MiB/h, false unless every recorded category was measured.
func atRecordingMix(in map[string]neighbourhood.WireLine) (float64, bool) {
	var num, den float64
	// In category order: a sum over a map's order differs in its last bits from run to run.
	for _, c := range gossip.Categories() {
		mibh, recorded := neighbourhood.Recording.MiBh[c]
		if !recorded {
			continue
		}
		l, ok := in[c.String()]
		if !ok || l.RawBytes == 0 {
			return 0, false
		}
		num += mibh * l.RelativePct
		den += mibh
	}
	return num / den, den > 0
}

func categoryNames() []string {
	var out []string
	for _, c := range []gossip.Category{gossip.Attestation, gossip.Aggregate, gossip.Block, gossip.DataColumn, gossip.SyncCommittee, gossip.Control} {
		out = append(out, c.String())
	}
	return out
}

// codecOrder keeps the codecs in the order of the runs (the --codecs order).
func codecOrder(runs []ABRun, codec string) int {
	for i, r := range runs {
		if r.Codec == codec {
			return i
		}
	}
	return len(runs)
}

// WriteJSON writes the comparison as one JSON object.
func (ab *AB) WriteJSON(w io.Writer) error { return analysis.WriteJSON(w, ab) }

// WriteTable prints the runs, then the rows.
func (ab *AB) WriteTable(w io.Writer) error {
	fmt.Fprintln(w, "neighbourhood A/B on the observed node's links: runs")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "seed\tcodec\tcomplete\tin raw MiB/h\tin wire MiB/h\tattestation copies\tCPU s per sim. minute\twall s per sim. minute\tpeak memory\tmax lag\t")
	for _, r := range ab.Runs {
		t := r.In["total"]
		copies := "not measured"
		if r.Copies != nil {
			copies = fmt.Sprintf("%.2f", *r.Copies)
		}
		fmt.Fprintf(tw, "%d\t%s\t%v\t%.0f\t%.0f\t%s\t%.1f\t%.1f\t%.2f GiB\t%.0f ms\t\n", r.Seed, r.Codec, r.Complete, t.RawMiBh, t.WireMiBh, copies, r.CPUPerMin, r.WallPerMin, float64(r.PeakRSSBytes)/(1<<30), r.MaxLagMs)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nthe observed node's inbound wire bytes, mean [min–max] over seeds: of the same run's raw bytes, and of the plain run's wire bytes (same seed)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "codec\tcategory\tseeds\twire/raw\twire/plain run\tCPU/plain run\t")
	sp := func(s *analysis.Spread) string {
		if s == nil {
			return "–"
		}
		return fmt.Sprintf("%.1f %% [%.1f–%.1f]", s.Mean, s.Min, s.Max)
	}
	for _, r := range ab.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t\n", r.Codec, r.Category, r.Seeds, sp(&r.OfRaw), sp(r.OfPlain), sp(r.CPU))
	}
	tw.Flush()
	if len(ab.LatencyDiff) > 0 {
		fmt.Fprintln(w, "\ndelivery latency at the observed node, codec minus plain in the same seed (simulated ms), mean [min, max] over seeds")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "codec\tcategory\tseeds\tp50\tp99\tsaturated\tlate\t")
		for _, d := range ab.LatencyDiff {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%+.1f [%+.1f, %+.1f]\t%+.1f [%+.1f, %+.1f]\t%v\t%v\t\n", d.Codec, d.Category, d.Seeds,
				d.P50.Mean, d.P50.Min, d.P50.Max, d.P99.Mean, d.P99.Min, d.P99.Max, d.Saturated, d.Late)
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	return ab.WriteFooter(w)
}
