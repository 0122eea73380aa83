package bench

import (
	"fmt"
	"slices"
	"time"

	"github.com/streamsim/streamsim/codec/snappystream"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
)

// CategoryRow is one snappy-stream level on the frames of one category of a trace: what
// the level gains (bytes relative to the frames sent plain) and costs (encode time).
type CategoryRow struct {
	Level      string  `json:"level"`
	Payload    string  `json:"payload"` // payload mode of the frames: ssz_snappy or ssz
	Category   string  `json:"category"`
	Frames     int     `json:"frames"`
	RawBytes   int     `json:"raw_bytes"`
	WireBytes  int     `json:"wire_bytes"`
	Relative   float64 `json:"relative"` // wire as a percentage of raw (result.PercentOf)
	EncodeNsB  float64 `json:"encode_ns_per_byte"`
	EncodeMBps float64 `json:"encode_mb_per_s"`
}

// Categories runs snappy-stream at both levels (64 KiB window) over a whole all-subnets
// trace of slots and attributes each frame's wire bytes and encode time to its category.
// Each frame's Encode call is timed, less the cost of the clock reads themselves (wallClockCost:
// on a VM's kvm-clock a pair costs 100–400 ns, as much as encoding an attestation frame).
func Categories(seed int64, slots, rounds int) ([]CategoryRow, error) {
	var rows []CategoryRow
	clock := wallClockCost()
	for _, ssz := range []bool{false, true} {
		tr, err := Trace(seed, slots, "", ssz)
		if err != nil {
			return nil, err
		}
		mode := "ssz_snappy"
		if ssz {
			mode = "ssz"
		}
		cats := make([]gossip.Category, len(tr.Msgs))
		for i, f := range tr.Msgs {
			parts, err := gossip.SplitFrame(f)
			if err != nil {
				return nil, fmt.Errorf("trace frame %d: %w", i, err)
			}
			cats[i] = parts.Dominant()
		}
		for _, level := range []snappystream.Level{snappystream.Fast, snappystream.Better} {
			enc := snappystream.NewEncoder(snappystream.DefaultWindowBytes, level)
			var raw, wire [gossip.NumCategories]int
			var frames [gossip.NumCategories]int
			var best [gossip.NumCategories]time.Duration
			var buf []byte
			for r := 0; r < max(1, rounds); r++ {
				enc.Reset()
				var spent [gossip.NumCategories]time.Duration
				for i, f := range tr.Msgs {
					start := time.Now()
					buf = enc.Encode(buf[:0], f)
					spent[cats[i]] += max(0, time.Since(start)-clock)
					if r == 0 {
						c := cats[i]
						raw[c] += len(f)
						wire[c] += len(buf)
						frames[c]++
					}
				}
				for c := range spent {
					if r == 0 || spent[c] < best[c] {
						best[c] = spent[c]
					}
				}
			}
			for c := gossip.Category(0); c < gossip.NumCategories; c++ {
				if frames[c] == 0 {
					continue
				}
				ns := float64(best[c].Nanoseconds())
				rows = append(rows, CategoryRow{
					Level: level.String(), Payload: mode, Category: c.String(), Frames: frames[c],
					RawBytes: raw[c], WireBytes: wire[c], Relative: percentOf(wire[c], raw[c]),
					EncodeNsB: ns / float64(raw[c]), EncodeMBps: float64(raw[c]) / ns * 1e3,
				})
			}
		}
	}
	return rows, nil
}

// percentOf is wire as a percentage of raw, the convention of every relative figure.
func percentOf(wire, raw int) float64 {
	v, _ := result.PercentOf(float64(wire), float64(raw))
	return v
}

// wallClockCost is what timing a call with time.Now and time.Since adds to it: the median of
// empty pairs.
func wallClockCost() time.Duration {
	d := make([]time.Duration, 101)
	for i := range d {
		start := time.Now()
		d[i] = time.Since(start)
	}
	slices.Sort(d)
	return d[len(d)/2]
}
