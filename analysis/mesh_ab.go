package analysis

import (
	"fmt"
	"io"
	"math"
	"sort"
	"text/tabwriter"

	"github.com/streamsim/streamsim/gossip"
)

// ABRun names one run of a mesh A/B comparison.
type ABRun struct {
	Seed  int64  `json:"seed"`
	Codec string `json:"codec"`
}

// ABReport compares mesh runs of the same seeds (same topology and workload) on different
// codecs: each codec's wire bytes relative to plain's in the same seed's run, per category,
// for the observed node's inbound traffic and for all nodes' inbound traffic, as the mean and
// the range over seeds (gossipsub's own randomness is not seeded, so runs differ).
type ABReport struct {
	Runs []ABRunResult `json:"runs"`
	Rows []ABRow       `json:"rows"`
	OK   bool          `json:"ok"`
}

// ABRunResult is one run's totals.
type ABRunResult struct {
	ABRun
	OK             bool                        `json:"ok"`
	ObservedInWire map[gossip.Category]int64   `json:"observed_in_wire"`
	AllInWire      map[gossip.Category]int64   `json:"all_in_wire"`
	Copies         map[gossip.Category]float64 `json:"copies_observed"`
	LatencyP50Ms   map[gossip.Category]float64 `json:"latency_p50_ms"`
	LatencyP99Ms   map[gossip.Category]float64 `json:"latency_p99_ms"`
	CPUShare       float64                     `json:"cpu_share"`
}

// ABRow is one codec, scope and category: wire bytes relative to plain (percent) over seeds.
type ABRow struct {
	Codec    string          `json:"codec"`
	Scope    string          `json:"scope"` // "observed in" or "all nodes in"
	Category string          `json:"category"`
	Seeds    int             `json:"seeds"`
	Mean     float64         `json:"mean_pct"`
	Min      float64         `json:"min_pct"`
	Max      float64         `json:"max_pct"`
	cat      gossip.Category // "total" rows use Other's slot
}

// MeshAB builds the comparison; runs and reports are parallel.
func MeshAB(runs []ABRun, reports []*MeshReport) *ABReport {
	ab := &ABReport{OK: true}
	plain := map[int64]*ABRunResult{}
	for i, r := range reports {
		res := ABRunResult{ABRun: runs[i], OK: r.OK, ObservedInWire: map[gossip.Category]int64{}, AllInWire: map[gossip.Category]int64{},
			Copies: r.Copies, LatencyP50Ms: map[gossip.Category]float64{}, LatencyP99Ms: map[gossip.Category]float64{}}
		ab.OK = ab.OK && r.OK
		for c, b := range r.Observed.In {
			res.ObservedInWire[c] = b.WireBytes
		}
		for _, k := range r.Kinds {
			for c, b := range k.In {
				res.AllInWire[c] += b.WireBytes
			}
		}
		for c, l := range r.Latency {
			res.LatencyP50Ms[c], res.LatencyP99Ms[c] = l.P50Ms, l.P99Ms
		}
		if r.Process != nil {
			res.CPUShare = r.Process.Utilization
		}
		ab.Runs = append(ab.Runs, res)
	}
	for i := range ab.Runs {
		if ab.Runs[i].Codec == "plain" {
			plain[ab.Runs[i].Seed] = &ab.Runs[i]
		}
	}
	type key struct {
		codec, scope, cat string
	}
	rel := map[key][]float64{}
	for _, r := range ab.Runs {
		p := plain[r.Seed]
		if p == nil || r.Codec == "plain" {
			continue
		}
		for _, scope := range []string{"observed in", "all nodes in"} {
			got, base := r.ObservedInWire, p.ObservedInWire
			if scope == "all nodes in" {
				got, base = r.AllInWire, p.AllInWire
			}
			var tg, tb int64
			for _, c := range gossip.Categories() {
				if base[c] == 0 {
					continue
				}
				tg += got[c]
				tb += base[c]
				rel[key{r.Codec, scope, c.String()}] = append(rel[key{r.Codec, scope, c.String()}], 100*float64(got[c])/float64(base[c]))
			}
			if tb > 0 {
				rel[key{r.Codec, scope, "total"}] = append(rel[key{r.Codec, scope, "total"}], 100*float64(tg)/float64(tb))
			}
		}
	}
	for k, vs := range rel {
		row := ABRow{Codec: k.codec, Scope: k.scope, Category: k.cat, Seeds: len(vs), Min: math.Inf(1), Max: math.Inf(-1)}
		for _, v := range vs {
			row.Mean += v / float64(len(vs))
			row.Min, row.Max = math.Min(row.Min, v), math.Max(row.Max, v)
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
		if a.Codec != b.Codec {
			return a.Codec < b.Codec
		}
		if a.Scope != b.Scope {
			return a.Scope > b.Scope
		}
		return a.cat < b.cat
	})
	return ab
}

// WriteMeshABTable prints the comparison.
func WriteMeshABTable(w io.Writer, ab *ABReport) error {
	fmt.Fprintf(w, "mesh A/B: %d runs; wire bytes relative to plain in the same seed's run (mean, range over seeds)\n\n", len(ab.Runs))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "codec\tscope\tcategory\tseeds\tmean\tmin\tmax\t")
	for _, r := range ab.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1f %%\t%.1f %%\t%.1f %%\t\n", r.Codec, r.Scope, r.Category, r.Seeds, r.Mean, r.Min, r.Max)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nruns")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "seed\tcodec\tobserved in (wire)\tall in (wire)\tatt p50 ms\tatt p99 ms\tblock p50 ms\tCPU\tok\t")
	for _, r := range ab.Runs {
		var o, a int64
		for _, v := range r.ObservedInWire {
			o += v
		}
		for _, v := range r.AllInWire {
			a += v
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.1f\t%.1f\t%.1f\t%.0f %%\t%v\t\n", r.Seed, r.Codec, mb(o), mb(a),
			r.LatencyP50Ms[gossip.Attestation], r.LatencyP99Ms[gossip.Attestation], r.LatencyP50Ms[gossip.Block], 100*r.CPUShare, r.OK)
	}
	return tw.Flush()
}
