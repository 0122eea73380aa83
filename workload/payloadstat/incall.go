package payloadstat

import (
	"fmt"

	"github.com/attestantio/go-eth2-client/spec/deneb"
	"github.com/ethereum/go-ethereum/core/types"
)

// InCall describes the zero-padding runs of calldata that recur inside their own call: a run
// of at least 16 zero bytes whose preceding byte and length occurred less than 1 KiB earlier
// in the same transaction's calldata. Columns of repeated values in a call laid out as an
// array of records (an address and an amount, a flag and an address) give such runs at the
// record's stride: 32 B (records of one word) or 64 B (two words).
type InCall struct {
	// Runs counts the runs of at least 16 zero bytes inside calldata.
	Runs int64
	// Recur is the share of the runs that recur in their call (%); At[k] those whose earlier
	// counterpart is exactly 32·(k+1) bytes back (one to eight words), AtOther the rest of
	// them (% of all runs).
	Recur   float64
	At      [8]float64
	AtOther float64
	// ByLen splits by the call's length in words (< 32, 32–127, ≥ 128): the share of all runs
	// in such calls, and the share of those that recur (%).
	RunShare, RecurIn [3]float64
	// LongWords is the share of calldata words that sit in calls of ≥ 128 words (%).
	LongWords float64
}

func (c InCall) String() string {
	return fmt.Sprintf("%d runs ≥ 16 B in calldata, %.1f %% recur in their call < 1 KiB back (1 / 2 / 3 / 4 / 5 / 6 / 7 / 8 words back: %.1f / %.1f / %.1f / %.1f / %.1f / %.1f / %.1f / %.1f %%, else %.1f %%); in calls of < 32 / 32–127 / ≥ 128 words: %.1f / %.1f / %.1f %% of the runs, of which %.1f / %.1f / %.1f %% recur; words in calls ≥ 128 words %.1f %%",
		c.Runs, c.Recur, c.At[0], c.At[1], c.At[2], c.At[3], c.At[4], c.At[5], c.At[6], c.At[7], c.AtOther, c.RunShare[0], c.RunShare[1], c.RunShare[2], c.RecurIn[0], c.RecurIn[1], c.RecurIn[2], c.LongWords)
}

// MeasureInCall measures the in-call recurrence of zero-padding runs (see InCall) over the
// transactions of the payloads.
func MeasureInCall(payloads [][]byte) (InCall, error) {
	var c InCall
	var recur int64
	var at [9]int64
	var runs, rec [3]int64
	var words, longWords int64
	err := eachCalldata(payloads, func(d []byte) {
		if len(d) < 4 {
			return
		}
		n := (len(d) - 4) / 32
		words += int64(n)
		b := 0
		switch {
		case n >= 128:
			b = 2
			longWords += int64(n)
		case n >= 32:
			b = 1
		}
		r, rc, a := callRuns(d)
		runs[b] += r
		rec[b] += rc
		recur += rc
		for k := range at {
			at[k] += a[k]
		}
	})
	if err != nil {
		return c, err
	}
	c.Runs = runs[0] + runs[1] + runs[2]
	pct := func(a, b int64) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	c.Recur = pct(recur, c.Runs)
	for k := range c.At {
		c.At[k] = pct(at[k], c.Runs)
	}
	c.AtOther = pct(at[8], c.Runs)
	for k := range runs {
		c.RunShare[k] = pct(runs[k], c.Runs)
		c.RecurIn[k] = pct(rec[k], runs[k])
	}
	c.LongWords = pct(longWords, words)
	return c, nil
}

// callRuns counts one calldata's runs of ≥ 16 zero bytes (after its first byte), those whose
// preceding byte and length occurred < 1 KiB earlier in it, and those by distance: exactly
// 32·(k+1) bytes back for k < 8, else at[8].
func callRuns(d []byte) (runs, recur int64, at [9]int64) {
	last := map[[2]int]int{}
	eachZeroRun(d, func(i, n int) {
		if n >= 16 && i > 0 {
			runs++
			key := [2]int{int(d[i-1]), n}
			if prev, ok := last[key]; ok && i-prev < 1<<10 {
				recur++
				if d := i - prev; d%32 == 0 && d <= 256 {
					at[d/32-1]++
				} else {
					at[8]++
				}
			}
			last[key] = i
		}
	})
	return runs, recur, at
}

// eachCalldata calls f with the calldata of every transaction of the payloads, in order; a
// payload or transaction that does not decode is an error naming it.
func eachCalldata(payloads [][]byte, f func(d []byte)) error {
	for i, ssz := range payloads {
		var p deneb.ExecutionPayload
		if err := p.UnmarshalSSZ(ssz); err != nil {
			return fmt.Errorf("payload %d: %w", i, err)
		}
		for j, raw := range p.Transactions {
			var tx types.Transaction
			if err := tx.UnmarshalBinary(raw); err != nil {
				return fmt.Errorf("payload %d tx %d: %w", i, j, err)
			}
			f(tx.Data())
		}
	}
	return nil
}
