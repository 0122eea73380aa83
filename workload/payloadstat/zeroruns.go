package payloadstat

import "fmt"

// ZeroRuns describes the runs of zero bytes of payloads (their SSZ, as a message carries it):
// in calldata a run of 12 or more zero bytes is a word's left padding, often joined to the
// trailing zeros before it, and the byte before the run is the last byte of the value before
// (an offset, a count, an address, an amount). Whether that value tail and the run's length
// come back nearby says whether the words and their layout recur close together (the same
// ABI heads, the same arguments) or each padding run sits after a value of its own.
type ZeroRuns struct {
	Bytes int64
	// PerKB is the number of zero runs of at least 12 bytes per 1 000 bytes of payload, and
	// MeanLen their mean length in bytes.
	PerKB, MeanLen float64
	// Recur splits the runs of at least 16 bytes by where the previous run with the same
	// preceding byte and the same length sits, in bytes back within the payload: < 1 KiB,
	// 1–8 KiB, 8–64 KiB, and none within 64 KiB (%).
	Recur [4]float64
}

func (z ZeroRuns) String() string {
	return fmt.Sprintf("%d B: %.2f zero runs ≥ 12 B per KB, mean %.1f B; runs ≥ 16 B whose preceding byte and length recur < 1 KiB / 1–8 KiB / 8–64 KiB back / not within 64 KiB: %.1f / %.1f / %.1f / %.1f %%",
		z.Bytes, z.PerKB, z.MeanLen, z.Recur[0], z.Recur[1], z.Recur[2], z.Recur[3])
}

// MeasureZeroRuns measures the zero runs of each payload (see ZeroRuns); a run's earlier
// counterpart is looked for within its own payload only.
func MeasureZeroRuns(payloads [][]byte) ZeroRuns {
	var z ZeroRuns
	var runs, runBytes, long int64
	var recur [4]int64
	for _, p := range payloads {
		z.Bytes += int64(len(p))
		last := map[[2]int]int{}
		eachZeroRun(p, func(i, n int) {
			if n >= 12 {
				runs++
				runBytes += int64(n)
			}
			if n >= 16 && i > 0 {
				long++
				key := [2]int{int(p[i-1]), n}
				k := 3
				if at, ok := last[key]; ok {
					switch d := i - at; {
					case d < 1<<10:
						k = 0
					case d < 8<<10:
						k = 1
					case d < 64<<10:
						k = 2
					}
				}
				recur[k]++
				last[key] = i
			}
		})
	}
	if z.Bytes > 0 {
		z.PerKB = 1000 * float64(runs) / float64(z.Bytes)
	}
	if runs > 0 {
		z.MeanLen = float64(runBytes) / float64(runs)
	}
	for k := range recur {
		if long > 0 {
			z.Recur[k] = 100 * float64(recur[k]) / float64(long)
		}
	}
	return z
}

// eachZeroRun calls f with the start and length of each maximal run of zero bytes in d, in order.
func eachZeroRun(d []byte, f func(start, n int)) {
	for i := 0; i < len(d); {
		if d[i] != 0 {
			i++
			continue
		}
		j := i
		for j < len(d) && d[j] == 0 {
			j++
		}
		f(i, j-i)
		i = j
	}
}
