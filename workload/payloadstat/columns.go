package payloadstat

import "fmt"

// Columns describes the columns of long calls: calldata words, on the call's word grid, equal
// to the word one or two back (a record's field that keeps its value from record to record in
// an array of records of one or two words: a token, a recipient, a flag), and of what kind
// they are, beside the kinds of all the words of such calls. Calls are split by length in
// words: 32–127 (index 0) and ≥ 128 (index 1).
type Columns struct {
	// Words counts the calldata words of the calls of each length.
	Words [2]int64
	// Repeat[b][s] is the % of the words of calls of length b that are non-zero and equal the
	// word s+1 back (one back first).
	Repeat [2][2]float64
	// Kind[b] splits the words that repeat the word one or two back by kind (% of them; their
	// Zero is always 0); All[b] splits all the words of those calls by kind (% of Words[b]).
	Kind, All [2]Words
	// PerSelector is Kind over both lengths with each selector's repeats weighted equally
	// (the mean of the selectors' own splits), so that a selector with many long calls does
	// not carry it; Selectors counts the selectors with repeats.
	PerSelector Words
	Selectors   int
	// TopSelector is the % of the words of calls of ≥ 32 words held by the calls of the most
	// used selector.
	TopSelector float64
}

func (c Columns) String() string {
	w := func(x Words) string {
		return fmt.Sprintf("%.1f/%.1f/%.1f/%.1f/%.1f", x.Zero, x.Address, x.Small, x.Mid, x.Wide)
	}
	return fmt.Sprintf("calls of 32–127 / ≥ 128 words: %d / %d words, kinds zero/addr/small/mid/wide %s / %s %%; non-zero words equal to the word 1 / 2 back %.2f / %.2f, %.2f / %.2f %%, their kinds %s / %s %%; per selector (%d) %s %%; the most used selector %.1f %% of the words",
		c.Words[0], c.Words[1], w(c.All[0]), w(c.All[1]), c.Repeat[0][0], c.Repeat[0][1], c.Repeat[1][0], c.Repeat[1][1], w(c.Kind[0]), w(c.Kind[1]), c.Selectors, w(c.PerSelector), c.TopSelector)
}

// wordKind classifies a word as Words does: 0 zero, 1 address-shaped, 2 small, 3 mid, 4 wide.
func wordKind(w []byte) int {
	lead := 0
	for lead < 32 && w[lead] == 0 {
		lead++
	}
	switch {
	case lead == 32:
		return 0
	case lead >= 24:
		return 2
	case lead >= 16:
		return 3
	case lead >= 12:
		return 1
	}
	return 4
}

func split(k [5]int64) Words {
	var n int64
	for _, v := range k {
		n += v
	}
	if n == 0 {
		return Words{}
	}
	p := func(v int64) float64 { return 100 * float64(v) / float64(n) }
	return Words{p(k[0]), p(k[1]), p(k[2]), p(k[3]), p(k[4])}
}

// MeasureColumns measures the columns of the long calls of the payloads' transactions (see
// Columns). Words are taken on the outer call's grid (after the selector), as Measure takes
// them: an inner call carried as ABI bytes sits 4 bytes off it, so its words are classified
// as Measure classifies them.
func MeasureColumns(payloads [][]byte) (Columns, error) {
	var c Columns
	var rep [2][2]int64
	var kind, all [2][5]int64
	bySel := map[[4]byte]*[6]int64{} // repeats by kind, and all words
	err := eachCalldata(payloads, func(d []byte) {
		n := (len(d) - 4) / 32
		if len(d) < 4 || n < 32 {
			return
		}
		b := 0
		if n >= 128 {
			b = 1
		}
		c.Words[b] += int64(n)
		sel := bySel[[4]byte(d[:4])]
		if sel == nil {
			sel = new([6]int64)
			bySel[[4]byte(d[:4])] = sel
		}
		sel[5] += int64(n)
		at := func(k int) string { return string(d[4+32*k : 4+32*k+32]) }
		for k := range n {
			kd := wordKind(d[4+32*k : 4+32*k+32])
			all[b][kd]++
			if kd == 0 {
				continue
			}
			for s := 1; s <= 2 && s <= k; s++ {
				if at(k) == at(k-s) {
					rep[b][s-1]++
					kind[b][kd]++
					sel[kd]++
					break
				}
			}
		}
	})
	if err != nil {
		return c, err
	}
	for b := range 2 {
		for s := range 2 {
			if c.Words[b] > 0 {
				c.Repeat[b][s] = 100 * float64(rep[b][s]) / float64(c.Words[b])
			}
		}
		c.Kind[b], c.All[b] = split(kind[b]), split(all[b])
	}
	var top int64
	var mean [5]float64
	for _, s := range bySel {
		top = max(top, s[5])
		r := split([5]int64(s[:5]))
		if r == (Words{}) {
			continue
		}
		c.Selectors++
		for k, v := range []float64{r.Zero, r.Address, r.Small, r.Mid, r.Wide} {
			mean[k] += v
		}
	}
	if c.Selectors > 0 {
		n := float64(c.Selectors)
		c.PerSelector = Words{mean[0] / n, mean[1] / n, mean[2] / n, mean[3] / n, mean[4] / n}
	}
	if w := c.Words[0] + c.Words[1]; w > 0 {
		c.TopSelector = 100 * float64(top) / float64(w)
	}
	return c, nil
}
