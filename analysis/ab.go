package analysis

import "math"

// ABRun names one run of an A/B comparison (Kind.Compare): what it varies.
type ABRun struct {
	Seed  int64  `json:"seed"`
	Codec string `json:"codec"`
	// Bandwidth is the ordinary nodes' link rate when links were shaped ("" unshaped).
	Bandwidth string `json:"bandwidth,omitempty"`
}

// Spread is a mean with its range.
type Spread struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// SpreadOf is the mean, minimum and maximum of vs (over seeds).
func SpreadOf(vs []float64) Spread {
	s := Spread{Min: math.Inf(1), Max: math.Inf(-1)}
	for _, v := range vs {
		s.Mean += v / float64(len(vs))
		s.Min, s.Max = math.Min(s.Min, v), math.Max(s.Max, v)
	}
	return s
}
