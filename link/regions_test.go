package link

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// interopEdges is gossipsub-interop's edge list (network_graph.py) as (from, to, ms),
// transcribed in its own order, independently of the matrix in DefaultRegions.
var interopEdges = []struct {
	from, to string
	ms       int
}{
	{"australia", "australia", 2}, {"australia", "east_asia", 110}, {"australia", "europe", 165},
	{"australia", "na_west", 110}, {"australia", "na_east", 150}, {"australia", "south_america", 190},
	{"australia", "south_africa", 220}, {"australia", "west_asia", 180},
	{"east_asia", "australia", 110}, {"east_asia", "east_asia", 4}, {"east_asia", "europe", 125},
	{"east_asia", "na_west", 100}, {"east_asia", "na_east", 140}, {"east_asia", "south_america", 175},
	{"east_asia", "south_africa", 175}, {"east_asia", "west_asia", 110},
	{"europe", "australia", 165}, {"europe", "east_asia", 125}, {"europe", "europe", 2},
	{"europe", "na_west", 110}, {"europe", "na_east", 70}, {"europe", "south_america", 140},
	{"europe", "south_africa", 95}, {"europe", "west_asia", 60},
	{"na_west", "australia", 110}, {"na_west", "east_asia", 100}, {"na_west", "europe", 110},
	{"na_west", "na_west", 2}, {"na_west", "na_east", 60}, {"na_west", "south_america", 100},
	{"na_west", "south_africa", 160}, {"na_west", "west_asia", 150},
	{"na_east", "australia", 150}, {"na_east", "east_asia", 140}, {"na_east", "europe", 70},
	{"na_east", "na_west", 60}, {"na_east", "na_east", 2}, {"na_east", "south_america", 100},
	{"na_east", "south_africa", 130}, {"na_east", "west_asia", 110},
	{"south_america", "australia", 190}, {"south_america", "east_asia", 175}, {"south_america", "europe", 140},
	{"south_america", "na_west", 100}, {"south_america", "na_east", 100}, {"south_america", "south_america", 7},
	{"south_america", "south_africa", 195}, {"south_america", "west_asia", 145},
	{"south_africa", "australia", 220}, {"south_africa", "east_asia", 175}, {"south_africa", "europe", 95},
	{"south_africa", "na_west", 160}, {"south_africa", "na_east", 130}, {"south_africa", "south_america", 190},
	{"south_africa", "south_africa", 7}, {"south_africa", "west_asia", 110},
	{"west_asia", "australia", 180}, {"west_asia", "east_asia", 110}, {"west_asia", "europe", 60},
	{"west_asia", "na_west", 150}, {"west_asia", "na_east", 110}, {"west_asia", "south_america", 145},
	{"west_asia", "south_africa", 110}, {"west_asia", "west_asia", 5},
}

func TestDefaultRegionsMatchInterop(t *testing.T) {
	r := DefaultRegions()
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(interopEdges) != len(r.Regions)*len(r.Regions) {
		t.Fatalf("%d edges for %d regions", len(interopEdges), len(r.Regions))
	}
	var lo, hi time.Duration = time.Hour, 0
	for _, e := range interopEdges {
		got, err := r.Latency(e.from, e.to)
		if err != nil {
			t.Fatal(err)
		}
		if got != time.Duration(e.ms)*time.Millisecond {
			t.Errorf("%s→%s: %v, gossipsub-interop has %d ms", e.from, e.to, got, e.ms)
		}
		lo, hi = min(lo, got), max(hi, got)
	}
	if lo != 2*time.Millisecond || hi != 220*time.Millisecond {
		t.Errorf("latencies span %v–%v, want 2–220 ms", lo, hi)
	}
	weights := map[string]float64{"australia": 290, "europe": 5599, "east_asia": 1059, "west_asia": 161,
		"na_east": 2894, "na_west": 1240, "south_africa": 47, "south_america": 36}
	for _, reg := range r.Regions {
		if weights[reg.Name] != reg.Weight {
			t.Errorf("region %s weight %v, gossipsub-interop has %v", reg.Name, reg.Weight, weights[reg.Name])
		}
	}
}

func TestRegionsValidate(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		r    Regions
		want string
	}{
		{"empty", Regions{}, "none given"},
		{"short matrix", Regions{Regions: []Region{{"x", 1}, {"y", 1}}, OneWay: [][]time.Duration{{ms, ms}}}, "1 rows for 2 regions"},
		{"ragged row", Regions{Regions: []Region{{"x", 1}, {"y", 1}}, OneWay: [][]time.Duration{{ms, ms}, {ms}}}, `row "y" has 1 entries`},
		{"duplicate", Regions{Regions: []Region{{"x", 1}, {"x", 1}}, OneWay: [][]time.Duration{{ms, ms}, {ms, ms}}}, "listed twice"},
		{"negative latency", Regions{Regions: []Region{{"x", 1}}, OneWay: [][]time.Duration{{-ms}}}, "negative"},
		{"no weight", Regions{Regions: []Region{{"x", 0}}, OneWay: [][]time.Duration{{ms}}}, "weights sum to 0"},
		{"NaN weight", Regions{Regions: []Region{{"x", math.NaN()}}, OneWay: [][]time.Duration{{ms}}}, "weight NaN"},
		{"empty name", Regions{Regions: []Region{{"", 1}}, OneWay: [][]time.Duration{{ms}}}, "name must be"},
	} {
		err := tc.r.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestAssign(t *testing.T) {
	r, cl := DefaultRegions(), DefaultClasses()
	a, err := Assign(7, 20000, r, cl)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Assign(7, 20000, r, cl)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave different shapes")
	}
	c, _ := Assign(8, 20000, r, cl)
	if reflect.DeepEqual(a, c) {
		t.Fatal("seeds 7 and 8 gave the same shapes")
	}
	prefix, _ := Assign(7, 10, r, cl)
	if !reflect.DeepEqual(prefix, a[:10]) {
		t.Error("the first 10 of 20000 differ from an assignment of 10: n must not change earlier nodes")
	}
	regions, classes := map[string]int{}, map[string]int{}
	for _, s := range a {
		if err := s.Validate(r); err != nil {
			t.Fatal(err)
		}
		regions[s.Region]++
		classes[s.Class]++
		want := map[string]int64{"supernode": 1024e6, "fullnode": 50e6}[s.Class]
		if s.UpBitsPerSec != want || s.DownBitsPerSec != want {
			t.Fatalf("%v: rates do not match class %s", s, s.Class)
		}
	}
	var total float64
	for _, reg := range r.Regions {
		total += reg.Weight
	}
	// Shares within 4 standard deviations of the binomial: fails by chance about once in 10^4.
	share := func(what string, got int, p float64) {
		sd := math.Sqrt(float64(len(a)) * p * (1 - p))
		if math.Abs(float64(got)-p*float64(len(a))) > 4*sd+1 {
			t.Errorf("%s: %d of %d nodes, want %.0f ± %.0f", what, got, len(a), p*float64(len(a)), 4*sd)
		}
	}
	for _, reg := range r.Regions {
		share("region "+reg.Name, regions[reg.Name], reg.Weight/total)
	}
	share("supernodes", classes["supernode"], 0.2)

	if _, err := Assign(1, -1, r, cl); err == nil || !strings.Contains(err.Error(), "n = -1") {
		t.Errorf("negative n: %v", err)
	}
	if _, err := Assign(1, 3, r, []Class{{Name: "x", UpBitsPerSec: -1, Weight: 1}}); err == nil || !strings.Contains(err.Error(), "≥ 0 bits/s") {
		t.Errorf("negative class rate: %v", err)
	}
	if _, err := Assign(1, 3, r, nil); err == nil || !strings.Contains(err.Error(), "classes: none given") {
		t.Errorf("no classes: %v", err)
	}
}

func TestLinkShape(t *testing.T) {
	r := DefaultRegions()
	ls, err := Shape{Region: "south_america", UpBitsPerSec: 50e6, DownBitsPerSec: 50e6}.LinkShape(r)
	if err != nil {
		t.Fatal(err)
	}
	if ls.Bandwidth != 50e6 {
		t.Errorf("Bandwidth %d, want 50e6 (bits/s, as the sidecar reads it)", ls.Bandwidth)
	}
	// The mean from south_america over the interop weights, summed from the edge list.
	weights := map[string]float64{}
	for _, reg := range r.Regions {
		weights[reg.Name] = reg.Weight
	}
	var sum, wsum float64
	for _, e := range interopEdges {
		if e.from == "south_america" {
			sum += weights[e.to] * float64(e.ms)
			wsum += weights[e.to]
		}
	}
	want := time.Duration(sum / wsum * float64(time.Millisecond))
	if d := ls.Latency - want; d < -time.Microsecond || d > time.Microsecond {
		t.Errorf("Latency %v, want %v", ls.Latency, want)
	}
	if _, err := (Shape{Region: "mars"}).LinkShape(r); err == nil || !strings.Contains(err.Error(), `unknown region "mars"`) {
		t.Errorf("unknown region: %v", err)
	}
	if _, err := (Shape{Region: "europe", UpBitsPerSec: -1}).LinkShape(r); err == nil || !strings.Contains(err.Error(), "UpBitsPerSec") {
		t.Errorf("negative rate: %v", err)
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	if _, err := New(Shape{Region: "mars"}, DefaultRegions()); err == nil || !strings.Contains(err.Error(), "known: australia") {
		t.Errorf("unknown region: %v", err)
	}
	if _, err := New(Shape{Region: "europe"}, DefaultRegions(), WithSendBuffer(0)); err == nil || !strings.Contains(err.Error(), "send buffer") {
		t.Errorf("zero send buffer: %v", err)
	}
}
