package analysis

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/streamsim/streamsim/result"
)

// The soak check: a node's resources stay flat after warm-up. Over a run's samples (param
// sample_slots), the first quarter is warm-up; the mean of the last quarter (Q4) is compared
// with the mean of the second quarter (Q2), and the run passes when, for every node,
//
//	live heap       Q4 ≤ 1.25 × Q2 + 16 MiB
//	goroutines      Q4 ≤ 1.10 × Q2 + 20
//	gossip streams  Q4 ≤ Q2 + 2
//	libp2p streams  Q4 ≤ Q2 + 4
//
// A leak of a fixed amount per message, per slot or per stream grows linearly, and over a
// run of tens of samples puts Q4 far above Q2; garbage collection timing, the workload's
// bursts and one reconnect do not. Runs with fewer than SoakMinSamples samples are too
// short to tell and are not judged.
const SoakMinSamples = 16

// SoakRule states the check in one line, for reports.
const SoakRule = "after warm-up (first quarter of the samples), last-quarter mean ≤ second-quarter mean × (1 + tolerance) + allowance: " +
	"live heap 25 % + 16 MiB, goroutines 10 % + 20, gossip streams 0 % + 2, libp2p streams 0 % + 4"

// trendLimits are the rule's tolerance and allowance per metric.
var trendLimits = []struct {
	metric    string
	tolerance float64
	allowance float64
	value     func(s result.Sample) float64
}{
	{"heap_live_bytes", 0.25, 16 << 20, func(s result.Sample) float64 { return float64(s.HeapLiveBytes) }},
	{"goroutines", 0.10, 20, func(s result.Sample) float64 { return float64(s.Goroutines) }},
	{"gossip_streams", 0, 2, func(s result.Sample) float64 { return float64(s.GossipStreams) }},
	{"streams", 0, 4, func(s result.Sample) float64 { return float64(s.Streams) }},
}

// SoakReport is the soak check over a run's nodes: per metric, the node closest to its limit.
type SoakReport struct {
	Rule    string       `json:"rule"`
	Samples int          `json:"samples"` // fewest samples of a node
	Judged  bool         `json:"judged"`  // enough samples to tell
	Checks  []TrendCheck `json:"checks"`
	// Memory is the process's Go memory (all of it mapped) at the first and last sample of the
	// first node, MiB: reported, not judged (the runtime returns memory to the OS lazily).
	GoMemFirstMiB float64 `json:"go_mem_first_mib"`
	GoMemLastMiB  float64 `json:"go_mem_last_mib"`
	OK            bool    `json:"ok"`
}

// TrendCheck is one metric's check at one node.
type TrendCheck struct {
	Metric string  `json:"metric"`
	Node   string  `json:"node"`
	Q2     float64 `json:"q2_mean"`
	Q4     float64 `json:"q4_mean"`
	Limit  float64 `json:"limit"`
	OK     bool    `json:"ok"`
}

// BuildSoakReport checks every node's samples; nil when no node sampled.
func BuildSoakReport(nodes []*result.NodeSummary) *SoakReport {
	r := &SoakReport{Rule: SoakRule, OK: true, Samples: -1}
	var sampled []*result.NodeSummary
	for _, n := range nodes {
		if len(n.Samples) > 0 {
			sampled = append(sampled, n)
			if r.Samples < 0 || len(n.Samples) < r.Samples {
				r.Samples = len(n.Samples)
			}
		}
	}
	if len(sampled) == 0 {
		return nil
	}
	sort.SliceStable(sampled, func(i, j int) bool {
		if sampled[i].Group != sampled[j].Group {
			return sampled[i].Group < sampled[j].Group
		}
		return sampled[i].Instance < sampled[j].Instance
	})
	first := sampled[0].Samples
	r.GoMemFirstMiB = float64(first[0].GoMemBytes) / (1 << 20)
	r.GoMemLastMiB = float64(first[len(first)-1].GoMemBytes) / (1 << 20)
	r.Judged = r.Samples >= SoakMinSamples
	if !r.Judged {
		return r
	}
	for _, lim := range trendLimits {
		var worst *TrendCheck
		for _, n := range sampled {
			q2, q4 := quarterMeans(n.Samples, lim.value)
			c := TrendCheck{Metric: lim.metric, Node: fmt.Sprintf("%s/%d", n.Group, n.Instance), Q2: q2, Q4: q4,
				Limit: q2*(1+lim.tolerance) + lim.allowance}
			c.OK = c.Q4 <= c.Limit
			if worst == nil || c.Q4-c.Limit > worst.Q4-worst.Limit {
				worst = &c
			}
		}
		r.Checks = append(r.Checks, *worst)
		r.OK = r.OK && worst.OK
	}
	return r
}

// quarterMeans returns the means of the second and the last quarter of the samples.
func quarterMeans(s []result.Sample, v func(result.Sample) float64) (q2, q4 float64) {
	n := len(s)
	mean := func(from, to int) float64 {
		if to <= from {
			return 0
		}
		var sum float64
		for _, x := range s[from:to] {
			sum += v(x)
		}
		return sum / float64(to-from)
	}
	return mean(n/4, n/2), mean(n-n/4, n)
}

// WriteSoak prints the soak check.
func WriteSoak(w io.Writer, r *SoakReport) error {
	if r == nil {
		return nil
	}
	if !r.Judged {
		fmt.Fprintf(w, "\nsoak: %d samples per node, fewer than %d: too short to judge a trend; Go memory %.0f → %.0f MiB\n",
			r.Samples, SoakMinSamples, r.GoMemFirstMiB, r.GoMemLastMiB)
		return nil
	}
	fmt.Fprintf(w, "\nsoak: %d samples per node; rule: %s\n", r.Samples, r.Rule)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "metric\tnode (closest to its limit)\tQ2 mean\tQ4 mean\tlimit\tverdict\t")
	for _, c := range r.Checks {
		scale, unit := 1.0, ""
		if c.Metric == "heap_live_bytes" {
			scale, unit = 1<<20, " MiB"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f%s\t%.1f%s\t%.1f%s\t%s\t\n", c.Metric, c.Node, c.Q2/scale, unit, c.Q4/scale, unit, c.Limit/scale, unit, flatVerdict(c.OK))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "Go memory mapped (process): %.0f MiB at the first sample, %.0f MiB at the last\n", r.GoMemFirstMiB, r.GoMemLastMiB)
	return nil
}

func flatVerdict(ok bool) string {
	if ok {
		return "flat"
	}
	return "GROWING"
}
