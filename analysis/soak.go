package analysis

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/streamsim/streamsim/result"
)

// The soak check: a node's resources stay flat after warm-up. Warm-up is the longer of the
// first quarter of the run's samples (param sample_slots) and the node's seen-message TTL
// (the longest of the nodes sharing its OS process, whose heap they share)
// plus two minutes: pubsub remembers every message id for the TTL (two epochs in every client
// profile, scaled by the time scale) and sweeps expired ids once a minute of real time
// (go-libp2p-pubsub timecache), so its seen caches hold up to TTL + 1 minute of ids, a size
// first reached at the sweep after TTL + 1 minute; a map keeps its largest size. The samples after warm-up are split in thirds; the mean
// of the last third (late) is compared with the mean of the first (early), and the run
// passes when, for every node,
//
//	live heap       late ≤ 1.10 × early + 16 MiB
//	goroutines      late ≤ early + 10
//	gossip streams  late ≤ early + 2
//	libp2p streams  late ≤ early + 4
//
// A leak of a fixed amount per message, per slot or per stream grows linearly and puts the
// late mean well above the early one; garbage collection timing, the workload's bursts and
// one reconnect do not. Runs with fewer than SoakMinSamples samples after warm-up are too
// short to tell and are not judged.
const SoakMinSamples = 12

// seenSweep is go-libp2p-pubsub's timecache sweep period (real time).
const seenSweep = time.Minute

// SoakRule states the check in one line, for reports.
const SoakRule = "after warm-up (the longer of a quarter of the samples and the seen-message TTL plus two minutes), mean of the last third ≤ mean of the first third × (1 + tolerance) + allowance: " +
	"live heap 10 % + 16 MiB, goroutines 0 % + 10, gossip streams 0 % + 2, libp2p streams 0 % + 4"

// trendLimits are the rule's tolerance and allowance per metric.
var trendLimits = []struct {
	metric    string
	tolerance float64
	allowance float64
	value     func(s result.Sample) float64
}{
	{"heap_live_bytes", 0.10, 16 << 20, func(s result.Sample) float64 { return float64(s.HeapLiveBytes) }},
	{"goroutines", 0, 10, func(s result.Sample) float64 { return float64(s.Goroutines) }},
	{"gossip_streams", 0, 2, func(s result.Sample) float64 { return float64(s.GossipStreams) }},
	{"streams", 0, 4, func(s result.Sample) float64 { return float64(s.Streams) }},
}

// SoakReport is the soak check over a run's nodes: per metric, the node closest to its limit.
type SoakReport struct {
	Rule    string       `json:"rule"`
	Samples int          `json:"samples"`  // fewest samples of a node
	WarmupS float64      `json:"warmup_s"` // the longest warm-up of a node
	Judged  bool         `json:"judged"`   // enough samples after warm-up to tell
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
	Early  float64 `json:"early_mean"`
	Late   float64 `json:"late_mean"`
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
	r.Judged = true
	// Nodes in one OS process share its heap, so each is judged after the longest warm-up
	// among them: a node with a short seen TTL would otherwise compare the process's heap
	// while its neighbours' caches still fill (a 48-node mesh with one Lodestar node read as
	// growing for that reason).
	type proc struct {
		host string
		pid  int
	}
	procWarm := map[proc]int64{}
	procOf := func(n *result.NodeSummary) (proc, bool) {
		if n.Process == nil || n.Process.PID == 0 {
			return proc{}, false
		}
		return proc{n.Process.Host, n.Process.PID}, true
	}
	ownWarm := func(n *result.NodeSummary) int64 {
		return max(n.Samples[len(n.Samples)/4].AtNs, n.SeenTTLNs+2*int64(seenSweep))
	}
	for _, n := range sampled {
		if p, ok := procOf(n); ok {
			procWarm[p] = max(procWarm[p], ownWarm(n))
		}
	}
	after := map[*result.NodeSummary][]result.Sample{}
	for _, n := range sampled {
		warm := ownWarm(n)
		if p, ok := procOf(n); ok {
			warm = procWarm[p]
		}
		r.WarmupS = max(r.WarmupS, float64(warm)/1e9)
		i := 0
		for i < len(n.Samples) && n.Samples[i].AtNs < warm {
			i++
		}
		after[n] = n.Samples[i:]
		r.Judged = r.Judged && len(after[n]) >= SoakMinSamples
	}
	if !r.Judged {
		return r
	}
	for _, lim := range trendLimits {
		var worst *TrendCheck
		for _, n := range sampled {
			early, late := thirdMeans(after[n], lim.value)
			c := TrendCheck{Metric: lim.metric, Node: fmt.Sprintf("%s/%d", n.Group, n.Instance), Early: early, Late: late,
				Limit: early*(1+lim.tolerance) + lim.allowance}
			c.OK = c.Late <= c.Limit
			if worst == nil || c.Late-c.Limit > worst.Late-worst.Limit {
				worst = &c
			}
		}
		r.Checks = append(r.Checks, *worst)
		r.OK = r.OK && worst.OK
	}
	return r
}

// thirdMeans returns the means of the first and the last third of the samples.
func thirdMeans(s []result.Sample, v func(result.Sample) float64) (early, late float64) {
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
	return mean(0, n/3), mean(n-n/3, n)
}

// WriteSoak prints the soak check.
func WriteSoak(w io.Writer, r *SoakReport) error {
	if r == nil {
		return nil
	}
	if !r.Judged {
		fmt.Fprintf(w, "\nsoak: %d samples per node, fewer than %d after warm-up (%.0f s): too short to judge a trend; Go memory %.0f → %.0f MiB\n",
			r.Samples, SoakMinSamples, r.WarmupS, r.GoMemFirstMiB, r.GoMemLastMiB)
		return nil
	}
	fmt.Fprintf(w, "\nsoak: %d samples per node, warm-up %.0f s; rule: %s\n", r.Samples, r.WarmupS, r.Rule)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "metric\tnode (closest to its limit)\tearly mean\tlate mean\tlimit\tverdict\t")
	for _, c := range r.Checks {
		scale, unit := 1.0, ""
		if c.Metric == "heap_live_bytes" {
			scale, unit = 1<<20, " MiB"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f%s\t%.1f%s\t%.1f%s\t%s\t\n", c.Metric, c.Node, c.Early/scale, unit, c.Late/scale, unit, c.Limit/scale, unit, flatVerdict(c.OK))
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
