package link

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Region is a place nodes live in; Weight is its share of nodes in Assign.
type Region struct {
	Name   string
	Weight float64
}

// Regions is a latency model: the regions and the one-way latency from each to each.
// OneWay[i][j] is the delay of a byte sent by a node in Regions[i] to a node in Regions[j];
// it need not equal OneWay[j][i] (gossipsub-interop's matrix is not quite symmetric).
type Regions struct {
	Regions []Region
	OneWay  [][]time.Duration
}

// Class is a kind of node by its access link; Weight is its share of nodes in Assign.
type Class struct {
	Name           string
	UpBitsPerSec   int64
	DownBitsPerSec int64
	Weight         float64
}

// DefaultRegions is the network model of libp2p's gossipsub-interop Shadow simulations
// (github.com/libp2p/test-plans, gossipsub-interop/network_graph.py, the `locations` and
// `edges` tables, read at commit 00f6cbdf): eight regions weighted by their share of nodes,
// one-way latencies of 2–220 ms between them. Shadow applies an edge's latency once per
// packet, so these are one-way figures. The table is directed there too
// (south_america→south_africa 195 ms, south_africa→south_america 190 ms) and kept as is.
func DefaultRegions() Regions {
	names := []Region{
		{"australia", 290},
		{"europe", 5599},
		{"east_asia", 1059},
		{"west_asia", 161},
		{"na_east", 2894},
		{"na_west", 1240},
		{"south_africa", 47},
		{"south_america", 36},
	}
	// Rows: from; columns: to, in the order of names. Milliseconds.
	ms := [][]int{
		//  aus  eur  eas  was  nae  naw  saf  sam
		{2, 165, 110, 180, 150, 110, 220, 190}, // australia
		{165, 2, 125, 60, 70, 110, 95, 140},    // europe
		{110, 125, 4, 110, 140, 100, 175, 175}, // east_asia
		{180, 60, 110, 5, 110, 150, 110, 145},  // west_asia
		{150, 70, 140, 110, 2, 60, 130, 100},   // na_east
		{110, 110, 100, 150, 60, 2, 160, 100},  // na_west
		{220, 95, 175, 110, 130, 160, 7, 190},  // south_africa
		{190, 140, 175, 145, 100, 100, 195, 7}, // south_america
	}
	r := Regions{Regions: names, OneWay: make([][]time.Duration, len(ms))}
	for i, row := range ms {
		r.OneWay[i] = make([]time.Duration, len(row))
		for j, v := range row {
			r.OneWay[i][j] = time.Duration(v) * time.Millisecond
		}
	}
	return r
}

// DefaultClasses are gossipsub-interop's node types (network_graph.py, `node_types`):
// supernodes with 1024 Mbit/s up and down, weight 20, and full nodes with 50 Mbit/s,
// weight 80. Shadow's "Mbit" is 10^6 bits.
func DefaultClasses() []Class {
	return []Class{
		{Name: "supernode", UpBitsPerSec: 1024e6, DownBitsPerSec: 1024e6, Weight: 20},
		{Name: "fullnode", UpBitsPerSec: 50e6, DownBitsPerSec: 50e6, Weight: 80},
	}
}

// Validate checks that the matrix is square over the regions, names are unique and
// non-empty, latencies are non-negative and weights non-negative with a positive sum.
func (r Regions) Validate() error {
	if len(r.Regions) == 0 {
		return fmt.Errorf("regions: none given")
	}
	if len(r.OneWay) != len(r.Regions) {
		return fmt.Errorf("regions: latency matrix has %d rows for %d regions", len(r.OneWay), len(r.Regions))
	}
	seen := map[string]bool{}
	var sum float64
	for i, reg := range r.Regions {
		if reg.Name == "" || len(reg.Name) > 255 {
			return fmt.Errorf("regions: region %d: name must be 1–255 bytes, have %q", i, reg.Name)
		}
		if seen[reg.Name] {
			return fmt.Errorf("regions: region %q listed twice", reg.Name)
		}
		seen[reg.Name] = true
		if !(reg.Weight >= 0) {
			return fmt.Errorf("regions: region %q: weight %v is not ≥ 0", reg.Name, reg.Weight)
		}
		sum += reg.Weight
		if len(r.OneWay[i]) != len(r.Regions) {
			return fmt.Errorf("regions: latency row %q has %d entries for %d regions", reg.Name, len(r.OneWay[i]), len(r.Regions))
		}
		for j, d := range r.OneWay[i] {
			if d < 0 {
				return fmt.Errorf("regions: latency %s→%s is negative (%v)", reg.Name, r.Regions[j].Name, d)
			}
		}
	}
	if !(sum > 0) {
		return fmt.Errorf("regions: weights sum to %v; at least one must be positive", sum)
	}
	return nil
}

// Index returns the position of the named region, or an error listing the known ones.
func (r Regions) Index(name string) (int, error) {
	for i, reg := range r.Regions {
		if reg.Name == name {
			return i, nil
		}
	}
	return -1, fmt.Errorf("unknown region %q (known: %s)", name, strings.Join(r.Names(), ", "))
}

// Names lists the region names in order.
func (r Regions) Names() []string {
	out := make([]string, len(r.Regions))
	for i, reg := range r.Regions {
		out[i] = reg.Name
	}
	return out
}

// Latency is the one-way delay from a node in region from to a node in region to.
func (r Regions) Latency(from, to string) (time.Duration, error) {
	i, err := r.Index(from)
	if err != nil {
		return 0, err
	}
	j, err := r.Index(to)
	if err != nil {
		return 0, err
	}
	return r.OneWay[i][j], nil
}

// Dilate returns the model at time scale scale (> 0): every latency divided by scale, as
// every other timing of a dilated run is, so that a latency modelled in simulated time
// takes 1/scale of it in wall time. The receiver is not changed.
func (r Regions) Dilate(scale float64) (Regions, error) {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return Regions{}, fmt.Errorf("regions: time scale %v: want a finite number > 0", scale)
	}
	out := Regions{Regions: slices.Clone(r.Regions), OneWay: make([][]time.Duration, len(r.OneWay))}
	for i, row := range r.OneWay {
		out.OneWay[i] = make([]time.Duration, len(row))
		for j, d := range row {
			out.OneWay[i][j] = time.Duration(float64(d)/scale + 0.5)
		}
	}
	return out, nil
}

// WithRegion returns the model with one more region, of weight 0 (Assign never draws it),
// at latency to itself and to and from every other region. A region of latency 0 stands
// for nodes whose links are modelled elsewhere.
func (r Regions) WithRegion(name string, latency time.Duration) (Regions, error) {
	if _, err := r.Index(name); err == nil {
		return Regions{}, fmt.Errorf("regions: region %q exists already", name)
	}
	out := Regions{Regions: append(slices.Clone(r.Regions), Region{Name: name}), OneWay: make([][]time.Duration, len(r.OneWay)+1)}
	for i, row := range r.OneWay {
		out.OneWay[i] = append(slices.Clone(row), latency)
	}
	last := make([]time.Duration, len(out.Regions))
	for j := range last {
		last[j] = latency
	}
	out.OneWay[len(r.OneWay)] = last
	return out, out.Validate()
}

// MeanLatency is the one-way latency from region from to a node drawn by region weight:
// what a sender in that region sees on average in a population made by Assign.
func (r Regions) MeanLatency(from string) (time.Duration, error) {
	i, err := r.Index(from)
	if err != nil {
		return 0, err
	}
	var sum, wsum float64
	for j, reg := range r.Regions {
		sum += reg.Weight * float64(r.OneWay[i][j])
		wsum += reg.Weight
	}
	return time.Duration(sum/wsum + 0.5), nil
}

// validateClasses checks names, rates and weights of a class list.
func validateClasses(classes []Class) error {
	if len(classes) == 0 {
		return fmt.Errorf("classes: none given")
	}
	seen := map[string]bool{}
	var sum float64
	for i, c := range classes {
		if c.Name == "" {
			return fmt.Errorf("classes: class %d has no name", i)
		}
		if seen[c.Name] {
			return fmt.Errorf("classes: class %q listed twice", c.Name)
		}
		seen[c.Name] = true
		if c.UpBitsPerSec < 0 || c.DownBitsPerSec < 0 {
			return fmt.Errorf("classes: class %q: rates must be ≥ 0 bits/s (0 = unlimited), have up %d, down %d",
				c.Name, c.UpBitsPerSec, c.DownBitsPerSec)
		}
		if !(c.Weight >= 0) {
			return fmt.Errorf("classes: class %q: weight %v is not ≥ 0", c.Name, c.Weight)
		}
		sum += c.Weight
	}
	if !(sum > 0) {
		return fmt.Errorf("classes: weights sum to %v; at least one must be positive", sum)
	}
	return nil
}

// Assign draws a region and a class for each of n nodes, independently and by weight, as
// gossipsub-interop does (random.choices per node), from a ChaCha8 source seeded by seed:
// the same seed, n, regions and classes give the same shapes, so every instance of a run
// can compute every node's shape from its sequence number alone.
func Assign(seed int64, n int, regions Regions, classes []Class) ([]Shape, error) {
	if n < 0 {
		return nil, fmt.Errorf("assign: n = %d nodes; must be ≥ 0", n)
	}
	if err := regions.Validate(); err != nil {
		return nil, fmt.Errorf("assign: %w", err)
	}
	if err := validateClasses(classes); err != nil {
		return nil, fmt.Errorf("assign: %w", err)
	}
	var key [32]byte
	copy(key[:], "streamsim/link.Assign")
	for i := 0; i < 8; i++ {
		key[24+i] = byte(uint64(seed) >> (8 * i))
	}
	rng := rand.New(rand.NewChaCha8(key))
	rw := make([]float64, len(regions.Regions))
	for i, r := range regions.Regions {
		rw[i] = r.Weight
	}
	cw := make([]float64, len(classes))
	for i, c := range classes {
		cw[i] = c.Weight
	}
	out := make([]Shape, n)
	for i := range out {
		reg := regions.Regions[pick(rng, rw)]
		cl := classes[pick(rng, cw)]
		out[i] = Shape{Region: reg.Name, Class: cl.Name, UpBitsPerSec: cl.UpBitsPerSec, DownBitsPerSec: cl.DownBitsPerSec}
	}
	return out, nil
}

// pick draws an index with probability proportional to its weight.
func pick(rng *rand.Rand, weights []float64) int {
	var sum float64
	for _, w := range weights {
		sum += w
	}
	x := rng.Float64() * sum
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	// Rounding left x at the end: the last index with weight.
	for i := len(weights) - 1; i >= 0; i-- {
		if weights[i] > 0 {
			return i
		}
	}
	return 0
}
