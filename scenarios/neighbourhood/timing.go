package neighbourhood

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
)

// What the run says about its own timing and health, beside the calibration: the observed
// node's delivery latency (simulated time from a message's publication on mainnet to its
// delivery at the observed node, validation included), how late the periphery made its
// scheduled deliveries, the observed node's mesh sizes slot by slot, what pubsub dropped, and
// whether the process had the CPU to keep up. All in simulated time unless they say wall.

// observer collects the timing figures while the run is measuring.
type observer struct {
	mu      sync.Mutex
	start   time.Time // wall time of slot 0's start
	scale   float64
	pending map[string]pending
	latency [gossip.NumCategories][]float64 // simulated ms
	lagN    int64
	lags    []float64 // wall lag of every lagEvery-th scheduled delivery, ms
	mesh    []map[gossip.Category]float64
	rss     []int64 // resident bytes of the process, once per measured slot
}

type pending struct {
	at  time.Duration // publication, simulated, from slot 0
	cat gossip.Category
}

// lagEvery samples the periphery's lag (a full-form run makes ~10⁵ deliveries per
// simulated second).
const lagEvery = 64

func newObserver(scale float64) *observer {
	return &observer{scale: scale, pending: map[string]pending{}}
}

// expect registers a measured message of the observed node's topics.
func (o *observer) expect(id string, at time.Duration, c gossip.Category) {
	o.mu.Lock()
	o.pending[id] = pending{at, c}
	o.mu.Unlock()
}

// begin marks the wall time of slot 0.
func (o *observer) begin(t time.Time) {
	o.mu.Lock()
	o.start = t
	o.mu.Unlock()
}

// deliver is the observed node's delivery of message id (pubsub's tracer).
func (o *observer) deliver(id string) {
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	p, ok := o.pending[id]
	if !ok {
		return
	}
	delete(o.pending, id)
	sim := time.Duration(float64(now.Sub(o.start)) * o.scale)
	o.latency[p.cat] = append(o.latency[p.cat], float64(sim-p.at)/float64(time.Millisecond))
}

// lag records one scheduled delivery's lateness (wall).
func (o *observer) lag(d time.Duration) {
	o.lagN++
	if o.lagN%lagEvery == 0 {
		o.lags = append(o.lags, float64(d)/float64(time.Millisecond))
	}
}

// sampleMesh records the observed node's mesh size per topic category (mean over the
// category's topics: the attestation subnets, the columns), once per measured slot.
func (o *observer) sampleMesh(mesh map[string]int, topics []string) {
	sum, n := map[gossip.Category]float64{}, map[gossip.Category]int{}
	for _, t := range topics {
		c := gossip.TopicCategory(t)
		sum[c] += float64(mesh[t])
		n[c]++
	}
	s := map[gossip.Category]float64{}
	for c, v := range sum {
		s[c] = v / float64(n[c])
	}
	o.mesh = append(o.mesh, s)
	o.rss = append(o.rss, residentBytes())
}

// residentBytes is the process's resident set (/proc/self/statm), 0 where unknown.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// Timing is the run's timing and health figures.
type Timing struct {
	// Latency per category: p50 and p99 in simulated ms, over measured messages.
	Latency map[string]LatencyLine `json:"latency"`
	// LagP50Ms, LagP99Ms and MaxLagMs: how late the periphery made its deliveries, in
	// simulated ms (wall lag × time scale).
	LagP50Ms float64 `json:"lag_p50_ms"`
	LagP99Ms float64 `json:"lag_p99_ms"`
	MaxLagMs float64 `json:"lag_max_ms"`
	// Mesh is the observed node's mesh size per category over the measured slots (mean over
	// the category's topics each slot), and MeshSlots the per-slot series.
	Mesh      map[string]Spread             `json:"mesh"`
	MeshSlots []map[gossip.Category]float64 `json:"mesh_by_slot"`
	// Drops: RPCs, messages and rejections pubsub lost at the observed node, and RPCs the real
	// peers dropped on their way to it (their queue to it was full), in the measured slots.
	ObservedDrops   int64 `json:"observed_drops"`
	DropsToObserved int64 `json:"drops_to_observed"`
	// Utilization is process CPU over the measured phase as a share of the machine's cores;
	// Saturated when at or above result.SaturationShare.
	// RSSBySlot is the process's resident memory at the start of each measured slot, and
	// PeakRSSBytes its maximum (Go returns freed pages lazily, so this is what the machine
	// had to hold).
	RSSBySlot    []int64 `json:"rss_bytes_by_slot"`
	PeakRSSBytes int64   `json:"peak_rss_bytes"`
	Utilization  float64 `json:"cpu_utilization"`
	Saturated    bool    `json:"saturated"`
}

// LatencyLine is one category's delivery latency at the observed node: its percentiles and
// its CDF (the latency at every result.CDFStepPct percent of messages, from the same sorted
// list; absent in runs from before it was recorded).
type LatencyLine struct {
	Messages int       `json:"messages"`
	P50Ms    float64   `json:"p50_ms"`
	P90Ms    float64   `json:"p90_ms"`
	P99Ms    float64   `json:"p99_ms"`
	CDFMs    []float64 `json:"cdf_ms,omitempty"`
}

// Spread is a mean with its range (the mesh sizes over slots).
type Spread struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// timing computes the figures; cpu and wall are the measured phase's.
func (o *observer) timing(maxLag time.Duration, cpu, wall time.Duration) Timing {
	o.mu.Lock()
	defer o.mu.Unlock()
	t := Timing{Latency: map[string]LatencyLine{}, Mesh: map[string]Spread{}, MeshSlots: o.mesh, RSSBySlot: o.rss}
	for _, v := range append(o.rss, residentBytes()) {
		t.PeakRSSBytes = max(t.PeakRSSBytes, v)
	}
	for c, vs := range o.latency {
		if len(vs) == 0 {
			continue
		}
		s := append([]float64(nil), vs...)
		sort.Float64s(s)
		t.Latency[gossip.Category(c).String()] = LatencyLine{Messages: len(s), P50Ms: result.Quantile(s, 0.5), P90Ms: result.Quantile(s, 0.9),
			P99Ms: result.Quantile(s, 0.99), CDFMs: result.LatencyCDF(s)}
	}
	lags := append([]float64(nil), o.lags...)
	sort.Float64s(lags)
	t.LagP50Ms, t.LagP99Ms = result.Quantile(lags, 0.5)*o.scale, result.Quantile(lags, 0.99)*o.scale
	t.MaxLagMs = float64(maxLag) / float64(time.Millisecond) * o.scale
	per := map[gossip.Category][]float64{}
	for _, s := range o.mesh {
		for c, v := range s {
			per[c] = append(per[c], v)
		}
	}
	for c, vs := range per {
		sp := Spread{Min: vs[0], Max: vs[0]}
		for _, v := range vs {
			sp.Mean += v / float64(len(vs))
			sp.Min, sp.Max = min(sp.Min, v), max(sp.Max, v)
		}
		t.Mesh[c.String()] = sp
	}
	if wall > 0 {
		t.Utilization = cpu.Seconds() / (wall.Seconds() * float64(runtime.GOMAXPROCS(0)))
		t.Saturated = t.Utilization >= result.SaturationShare
	}
	return t
}

// printTiming prints the timing figures.
func (r *Report) printTiming(w io.Writer) {
	t := r.Timing
	fmt.Fprintln(w, "\ndelivery latency at the observed node (simulated, from publication on mainnet; validation included):")
	for _, c := range orderedCategories() {
		if l, ok := t.Latency[c.String()]; ok {
			fmt.Fprintf(w, "  %s: p50 %.0f ms, p99 %.0f ms (%d messages)\n", c, l.P50Ms, l.P99Ms, l.Messages)
		}
	}
	var mesh []string
	for _, c := range orderedCategories() {
		if m, ok := t.Mesh[c.String()]; ok {
			mesh = append(mesh, fmt.Sprintf("%s %.1f [%.1f–%.1f]", c, m.Mean, m.Min, m.Max))
		}
	}
	fmt.Fprintf(w, "the observed node's mesh per topic, mean [min–max] over %d measured slots: %s\n", len(t.MeshSlots), strings.Join(mesh, ", "))
	fmt.Fprintf(w, "periphery lateness (simulated): p50 %.0f ms, p99 %.0f ms, max %.0f ms; pubsub drops at the observed node %d, on the way to it %d; CPU %.0f %% of %d cores over the measured slots, peak resident memory %.2f GiB",
		t.LagP50Ms, t.LagP99Ms, t.MaxLagMs, t.ObservedDrops, t.DropsToObserved, 100*t.Utilization, runtime.GOMAXPROCS(0), float64(t.PeakRSSBytes)/(1<<30))
	if t.Saturated {
		fmt.Fprint(w, " (saturated)")
	}
	fmt.Fprintln(w)
}
