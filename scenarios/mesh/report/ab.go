package report

import (
	"cmp"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/streamsim/streamsim/analysis"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/units"
)

// ABReport compares mesh runs of the same seeds (same topology and workload) on different
// codecs: each codec's wire bytes relative to plain's in the same seed's run, per category,
// for the observed node's inbound traffic and for all nodes' inbound traffic, as the mean and
// the range over seeds (gossipsub's own randomness is not seeded, so runs differ).
type ABReport struct {
	Runs []ABRunResult `json:"runs"`
	Rows []ABRow       `json:"rows"`
	// Latency is delivery latency per bandwidth and codec (means over seeds).
	Latency []ABLatency `json:"latency"`
	// LatencyDiff is each codec's latency minus plain's in the same seed and link setting,
	// per category, with its spread over seeds.
	LatencyDiff []ABLatencyDiff `json:"latency_diff"`
	analysis.Verdict
}

// ABLatencyDiff is one link setting, codec and category: the codec's delivery latency
// percentiles minus plain's in the same seed's run (ms), mean and range over seeds. Only
// runs that completed, with a plain baseline that completed, count; Saturated is set when
// any of those runs (or its baseline) had the machine saturated.
type ABLatencyDiff struct {
	Bandwidth string          `json:"bandwidth,omitempty"`
	Codec     string          `json:"codec"`
	Category  gossip.Category `json:"category"`
	Seeds     int             `json:"seeds"`
	P50       analysis.Spread `json:"p50_ms"`
	P99       analysis.Spread `json:"p99_ms"`
	Saturated bool            `json:"saturated"`
}

// ABLatency is one bandwidth and codec: delivery latency per category, the mean over seeds of
// each run's percentile, with the machine's state next to it.
type ABLatency struct {
	Bandwidth  string                      `json:"bandwidth,omitempty"`
	Codec      string                      `json:"codec"`
	Seeds      int                         `json:"seeds"`
	P50Ms      map[gossip.Category]float64 `json:"p50_ms"`
	P99Ms      map[gossip.Category]float64 `json:"p99_ms"`
	T95Ms      map[gossip.Category]float64 `json:"t95_p50_ms"`
	Clock      string                      `json:"clock"`          // the runs' clock; virtual has no CPU windows
	CPUShare   float64                     `json:"cpu_share"`      // mean process CPU share
	PeakShare  float64                     `json:"peak_cpu_share"` // busiest window over the runs
	SchedP99Ms float64                     `json:"sched_p99_ms"`   // worst run's scheduling delay p99
	Saturated  bool                        `json:"saturated"`
}

// ABRunResult is one run's totals.
type ABRunResult struct {
	analysis.ABRun
	OK             bool                      `json:"ok"`
	Clock          string                    `json:"clock"`               // real or virtual
	Transport      string                    `json:"transport,omitempty"` // what the nodes' hosts ran on
	ObservedInWire map[gossip.Category]int64 `json:"observed_in_wire"`
	AllInWire      map[gossip.Category]int64 `json:"all_in_wire"`
	// ObservedInRaw and AllInRaw are the same bytes before stream compression.
	ObservedInRaw map[gossip.Category]int64   `json:"observed_in_raw"`
	AllInRaw      map[gossip.Category]int64   `json:"all_in_raw"`
	Copies        map[gossip.Category]float64 `json:"copies_observed"`
	LatencyP50Ms  map[gossip.Category]float64 `json:"latency_p50_ms"`
	LatencyP99Ms  map[gossip.Category]float64 `json:"latency_p99_ms"`
	LatencyT95Ms  map[gossip.Category]float64 `json:"latency_t95_p50_ms"`
	CPUShare      float64                     `json:"cpu_share"`
	PeakShare     float64                     `json:"peak_cpu_share"`
	SchedP99Ms    float64                     `json:"sched_p99_ms"`
	Saturated     bool                        `json:"saturated"`
	// What a simulated minute of the run cost (Report's), and its peak memory.
	CPUPerSimMinute  float64 `json:"cpu_s_per_simulated_minute,omitempty"`
	WallPerSimMinute float64 `json:"wall_s_per_simulated_minute,omitempty"`
	PeakRSSBytes     int64   `json:"peak_rss_bytes,omitempty"`
}

// ABRow is one codec, scope and category: wire bytes relative to plain (percent) over seeds,
// and relative to the same run's raw bytes.
type ABRow struct {
	Bandwidth string  `json:"bandwidth,omitempty"`
	Codec     string  `json:"codec"`
	Scope     string  `json:"scope"` // "observed in" or "all nodes in"
	Category  string  `json:"category"`
	Seeds     int     `json:"seeds"`
	Mean      float64 `json:"mean_pct"`
	Min       float64 `json:"min_pct"`
	Max       float64 `json:"max_pct"`
	// OfRaw is the codec run's wire bytes as a percentage of its own raw bytes (before
	// stream compression), over the same seeds: unlike Mean it does not move with the
	// traffic difference between the codec's run and plain's. Absent when a run of the row
	// recorded no raw bytes.
	OfRaw *analysis.Spread `json:"wire_of_raw_pct,omitempty"`
	cat   gossip.Category  // "total" rows use Other's slot
}

// abBaseline names the plain run a codec's run is compared with: the same seed (topology
// and workload) and link setting.
type abBaseline struct {
	seed int64
	bw   string
}

// plainBaselines indexes the plain runs by seed and link setting.
func plainBaselines(runs []ABRunResult) map[abBaseline]*ABRunResult {
	plain := map[abBaseline]*ABRunResult{}
	for i := range runs {
		if runs[i].Codec == "plain" {
			plain[abBaseline{runs[i].Seed, runs[i].Bandwidth}] = &runs[i]
		}
	}
	return plain
}

// MeshAB builds the comparison; runs and reports are parallel.
func MeshAB(runs []analysis.ABRun, reports []*MeshReport) *ABReport {
	ab := &ABReport{Verdict: analysis.NewVerdict()}
	for i, r := range reports {
		ab.TakeBuild(r.Build, r.Optimized)
		res := ABRunResult{ABRun: runs[i], OK: r.OK, Clock: r.Clock, Transport: r.Transport, ObservedInWire: map[gossip.Category]int64{}, AllInWire: map[gossip.Category]int64{},
			ObservedInRaw: map[gossip.Category]int64{}, AllInRaw: map[gossip.Category]int64{},
			Copies: r.Copies, LatencyP50Ms: map[gossip.Category]float64{}, LatencyP99Ms: map[gossip.Category]float64{},
			LatencyT95Ms: map[gossip.Category]float64{}}
		if !r.OK {
			ab.Problem("run seed %d, %s, links %s failed its checks: %s", runs[i].Seed, runs[i].Codec, linksLabel(runs[i].Bandwidth), strings.Join(r.Problems, "; "))
		}
		for c, b := range r.Observed.In {
			res.ObservedInWire[c], res.ObservedInRaw[c] = b.WireBytes, b.RawBytes
		}
		for _, k := range r.Kinds {
			for c, b := range k.In {
				res.AllInWire[c] += b.WireBytes
				res.AllInRaw[c] += b.RawBytes
			}
		}
		for c, l := range r.Latency {
			res.LatencyP50Ms[c], res.LatencyP99Ms[c], res.LatencyT95Ms[c] = l.P50Ms, l.P99Ms, l.T95P50Ms
		}
		if r.Process != nil {
			res.CPUShare, res.PeakShare, res.Saturated = r.Process.Utilization, r.Process.PeakUtilization, r.Process.Saturated()
			res.SchedP99Ms = r.Process.SchedP99Ms
			res.PeakRSSBytes = r.Process.MaxRSSBytes
		}
		res.CPUPerSimMinute, res.WallPerSimMinute = r.CPUPerSimMinute, r.WallPerSimMinute
		ab.Runs = append(ab.Runs, res)
	}
	plain := plainBaselines(ab.Runs)
	type key struct {
		bw, codec, scope, cat string
	}
	rel, ofRaw := map[key][]float64{}, map[key][]float64{}
	for _, r := range ab.Runs {
		p := plain[abBaseline{r.Seed, r.Bandwidth}]
		if p == nil || r.Codec == "plain" || !r.OK || !p.OK {
			continue // a failed run (or its baseline) compares nothing
		}
		for _, scope := range []string{"observed in", "all nodes in"} {
			got, base, raw := r.ObservedInWire, p.ObservedInWire, r.ObservedInRaw
			if scope == "all nodes in" {
				got, base, raw = r.AllInWire, p.AllInWire, r.AllInRaw
			}
			var tg, tb, tr int64
			for _, c := range gossip.Categories() {
				if base[c] == 0 {
					continue
				}
				tg += got[c]
				tb += base[c]
				tr += raw[c]
				k := key{r.Bandwidth, r.Codec, scope, c.String()}
				rel[k] = append(rel[k], 100*float64(got[c])/float64(base[c]))
				if raw[c] > 0 {
					ofRaw[k] = append(ofRaw[k], 100*float64(got[c])/float64(raw[c]))
				}
			}
			if tb > 0 {
				k := key{r.Bandwidth, r.Codec, scope, "total"}
				rel[k] = append(rel[k], 100*float64(tg)/float64(tb))
				if tr > 0 {
					ofRaw[k] = append(ofRaw[k], 100*float64(tg)/float64(tr))
				}
			}
		}
	}
	for k, vs := range rel {
		sp := analysis.SpreadOf(vs)
		row := ABRow{Bandwidth: k.bw, Codec: k.codec, Scope: k.scope, Category: k.cat, Seeds: len(vs), Mean: sp.Mean, Min: sp.Min, Max: sp.Max}
		if vs := ofRaw[k]; len(vs) == len(rel[k]) {
			o := analysis.SpreadOf(vs)
			row.OfRaw = &o
		}
		if c, err := gossip.ParseCategory(k.cat); err == nil {
			row.cat = c
		} else {
			row.cat = gossip.NumCategories
		}
		ab.Rows = append(ab.Rows, row)
	}
	sort.Slice(ab.Rows, func(i, j int) bool {
		a, b := ab.Rows[i], ab.Rows[j]
		if a.Bandwidth != b.Bandwidth {
			return bandwidthLess(a.Bandwidth, b.Bandwidth)
		}
		if a.Codec != b.Codec {
			return a.Codec < b.Codec
		}
		if a.Scope != b.Scope {
			return a.Scope > b.Scope
		}
		return a.cat < b.cat
	})
	ab.Latency = abLatency(ab.Runs)
	ab.LatencyDiff = abLatencyDiff(ab.Runs)
	ab.NoteBuild()
	return ab
}

// abLatencyDiff compares each run's latency percentiles with plain's in the same seed and
// link setting (analysis.LatencyDiffs), per link setting, codec and category.
func abLatencyDiff(runs []ABRunResult) []ABLatencyDiff {
	base := map[abBaseline]int{}
	for i, r := range runs {
		if r.Codec == "plain" {
			base[abBaseline{r.Seed, r.Bandwidth}] = i
		}
	}
	lr := make([]analysis.LatencyRun[gossip.Category], len(runs))
	for i, r := range runs {
		b, ok := base[abBaseline{r.Seed, r.Bandwidth}]
		if !ok {
			b = -1
		}
		lr[i] = analysis.LatencyRun[gossip.Category]{Codec: r.Codec, OK: r.OK, Saturated: r.Saturated, Base: b, P50: r.LatencyP50Ms, P99: r.LatencyP99Ms}
	}
	type key struct {
		bw, codec string
		cat       gossip.Category
	}
	var out []ABLatencyDiff
	for _, d := range analysis.LatencyDiffs(lr, gossip.Categories(), func(i int, c gossip.Category) key { return key{runs[i].Bandwidth, runs[i].Codec, c} }) {
		out = append(out, ABLatencyDiff{Bandwidth: d.Key.bw, Codec: d.Key.codec, Category: d.Key.cat, Seeds: d.Seeds, P50: d.P50, P99: d.P99, Saturated: d.Saturated})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Bandwidth != out[j].Bandwidth {
			return bandwidthLess(out[i].Bandwidth, out[j].Bandwidth)
		}
		if out[i].Codec != out[j].Codec {
			return out[i].Codec < out[j].Codec
		}
		return out[i].Category < out[j].Category
	})
	return out
}

// abLatency averages each run's latency percentiles per bandwidth and codec.
func abLatency(runs []ABRunResult) []ABLatency {
	type key struct{ bw, codec string }
	groups := map[key][]ABRunResult{}
	var order []key
	for _, r := range runs {
		if !r.OK {
			continue
		}
		k := key{r.Bandwidth, r.Codec}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []ABLatency
	for _, k := range order {
		rs := groups[k]
		l := ABLatency{Bandwidth: k.bw, Codec: k.codec, Seeds: len(rs), Clock: rs[0].Clock,
			P50Ms: map[gossip.Category]float64{}, P99Ms: map[gossip.Category]float64{}, T95Ms: map[gossip.Category]float64{}}
		n := float64(len(rs))
		for _, r := range rs {
			for c, v := range r.LatencyP50Ms {
				l.P50Ms[c] += v / n
			}
			for c, v := range r.LatencyP99Ms {
				l.P99Ms[c] += v / n
			}
			for c, v := range r.LatencyT95Ms {
				l.T95Ms[c] += v / n
			}
			l.CPUShare += r.CPUShare / n
			l.PeakShare = max(l.PeakShare, r.PeakShare)
			l.SchedP99Ms = max(l.SchedP99Ms, r.SchedP99Ms)
			l.Saturated = l.Saturated || r.Saturated
		}
		out = append(out, l)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Bandwidth != out[j].Bandwidth {
			return bandwidthLess(out[i].Bandwidth, out[j].Bandwidth)
		}
		return out[i].Codec < out[j].Codec
	})
	return out
}

// bandwidthLess orders link rates ("10Mbit" before "50Mbit" before "1Gbit"); "" (unshaped)
// last.
func bandwidthLess(a, b string) bool {
	va, ea := units.ParseBitsPerSec(a)
	vb, eb := units.ParseBitsPerSec(b)
	if ea != nil || eb != nil {
		return a < b
	}
	return va < vb
}

// WriteJSON writes the comparison as one indented JSON object.
func (ab *ABReport) WriteJSON(w io.Writer) error { return analysis.WriteJSON(w, ab) }

// WriteTable prints the comparison.
func (ab *ABReport) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "mesh A/B: %d runs; wire bytes relative to plain in the same seed's run (mean, range over seeds)\n", len(ab.Runs))
	clocks := map[string]bool{}
	for _, r := range ab.Runs {
		if c := r.Clock + " clock (" + cmp.Or(r.Transport, "tcp") + ")"; !clocks[c] {
			clocks[c] = true
			fmt.Fprintf(w, "ran on the %s", c)
			if r.Clock == "virtual" {
				fmt.Fprint(w, ": latency in simulated time; no CPU windows are sampled, so CPU peak, sched p99 and saturated read –")
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "links\tcodec\tscope\tcategory\tseeds\tmean\tmin\tmax\t")
	for _, r := range ab.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.1f %%\t%.1f %%\t%.1f %%\t\n", linksLabel(r.Bandwidth), r.Codec, r.Scope, r.Category, r.Seeds, r.Mean, r.Min, r.Max)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\ndelivery latency from publish (ms; mean over seeds of each run's percentile), with the machine's CPU")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "links\tcodec\tseeds\tatt p50\tatt p99\tatt t95\tagg p50\tblock p50\tblock p99\tcolumn p50\tCPU avg\tCPU peak\tsched p99\tsaturated\t")
	for _, l := range ab.Latency {
		peak, sched, saturated := fmt.Sprintf("%.0f %%", 100*l.PeakShare), fmt.Sprintf("%.1f ms", l.SchedP99Ms), fmt.Sprint(l.Saturated)
		if l.Clock == "virtual" {
			peak, sched, saturated = "–", "–", "–"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f %%\t%s\t%s\t%s\t\n", linksLabel(l.Bandwidth), l.Codec, l.Seeds,
			l.P50Ms[gossip.Attestation], l.P99Ms[gossip.Attestation], l.T95Ms[gossip.Attestation], l.P50Ms[gossip.Aggregate],
			l.P50Ms[gossip.Block], l.P99Ms[gossip.Block], l.P50Ms[gossip.DataColumn], 100*l.CPUShare, peak, sched, saturated)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nwhat a simulated minute cost, per run (the whole process: every node)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "links\tcodec\tseed\twall s\tCPU s\tpeak memory\t")
	for _, r := range ab.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.1f\t%s\t\n", linksLabel(r.Bandwidth), r.Codec, r.Seed, r.WallPerSimMinute, r.CPUPerSimMinute, analysis.MB(r.PeakRSSBytes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(ab.LatencyDiff) > 0 {
		fmt.Fprintln(w, "\ndelivery latency minus plain's in the same seed's run (ms; mean [min, max] over seeds)")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "links\tcodec\tcategory\tseeds\tp50\tp99\tsaturated\t")
		for _, d := range ab.LatencyDiff {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%+.0f [%+.0f, %+.0f]\t%+.0f [%+.0f, %+.0f]\t%v\t\n", linksLabel(d.Bandwidth), d.Codec, d.Category, d.Seeds,
				d.P50.Mean, d.P50.Min, d.P50.Max, d.P99.Mean, d.P99.Min, d.P99.Max, d.Saturated)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "\nruns")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "links\tseed\tcodec\tobserved in (wire)\tall in (wire)\tatt p50 ms\tatt p99 ms\tblock p50 ms\tCPU\tok\t")
	for _, r := range ab.Runs {
		var o, a int64
		for _, v := range r.ObservedInWire {
			o += v
		}
		for _, v := range r.AllInWire {
			a += v
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%.1f\t%.1f\t%.1f\t%.0f %%\t%v\t\n", linksLabel(r.Bandwidth), r.Seed, r.Codec, analysis.MB(o), analysis.MB(a),
			r.LatencyP50Ms[gossip.Attestation], r.LatencyP99Ms[gossip.Attestation], r.LatencyP50Ms[gossip.Block], 100*r.CPUShare, r.OK)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return ab.WriteFooter(w)
}

// linksLabel names a run's link setting: a rate, or unshaped (loopback TCP on the real clock,
// unshaped simulated links on the virtual one).
func linksLabel(bw string) string {
	if bw == "" {
		return "unshaped"
	}
	return bw
}
