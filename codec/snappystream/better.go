package snappystream

// match is a candidate copy: src[start:end] equals the stream at table coordinate c.
type match struct {
	start, end, c int
}

// gain is the number of bytes the copy saves over carrying its bytes as literals.
func (e *Encoder) gain(m match) int {
	if m.end <= m.start {
		return 0
	}
	offset := e.cur + m.start - m.c
	n := m.end - m.start
	if n < 4 || (offset > 65535 && n < minFarMatch) {
		return 0
	}
	return n - copyCost(offset, n)
}

// matchFrom extends a candidate c for position s forwards and backwards (not before
// nextEmit). It returns a zero match if c is unusable.
func (e *Encoder) matchFrom(c int, src []byte, s, nextEmit int) match {
	if !e.valid(c, s) {
		return match{}
	}
	n := e.matchLen(c, src, s)
	if n < 4 {
		return match{}
	}
	m := match{start: s, end: s + n, c: c}
	for m.start > nextEmit && e.valid(m.c-1, m.start-1) && e.byteAt(m.c-1, src) == src[m.start-1] {
		m.start--
		m.c--
	}
	return m
}

// bestAt looks up position s in both tables, indexes it, and returns the better match.
func (e *Encoder) bestAt(src []byte, s, nextEmit int) (match, int) {
	x := load64(src, s)
	hl := hash8(x, longTableBits)
	hs := hash6(x, shortTableBits)
	cl, cs := int(e.table[hl]), int(e.short[hs])
	e.table[hl] = int32(e.cur + s)
	e.short[hs] = int32(e.cur + s)
	best := e.matchFrom(cl, src, s, nextEmit)
	bg := e.gain(best)
	if cs != cl {
		if m := e.matchFrom(cs, src, s, nextEmit); e.gain(m) > bg {
			best, bg = m, e.gain(m)
		}
	}
	return best, bg
}

// encodeBetter searches both tables at every position it visits, tries the next
// position before committing (lazy matching), and re-probes the long table just before
// the end of each match: in interleaved traffic the longest match (the same topic, the
// same committee) often differs from the most recent one only after a shared prefix.
func (e *Encoder) encodeBetter(dst, src []byte) (d int) {
	cur := e.cur
	sLimit := len(src) - 8
	nextEmit := 0
	s := 0
	for s <= sLimit {
		m, g := e.bestAt(src, s, nextEmit)
		if g <= 0 {
			// Skip ahead slowly over bytes that do not match (signatures, cells).
			s += 1 + (s-nextEmit)>>7
			continue
		}
		if s+1 <= sLimit {
			if m2, g2 := e.bestAt(src, s+1, nextEmit); g2 > g {
				m, g = m2, g2
			}
		}
		// Probe across the end of the match for one that reaches further. If it starts
		// inside the current match, the current one is cut short where it begins.
		for iter := 0; iter < 4; iter++ {
			improved := false
			for k := 1; k <= 6; k++ {
				p := m.end - k
				if p <= m.start || p > sLimit {
					continue
				}
				c := int(e.table[hash8(load64(src, p), longTableBits)])
				if c == m.c+(p-m.start) {
					continue
				}
				m2 := e.matchFrom(c, src, p, nextEmit)
				if m2.end <= m.end {
					continue
				}
				g2 := e.gain(m2)
				head := match{start: m.start, end: m2.start, c: m.c}
				gh := 0
				if m2.start > m.start {
					gh = e.gain(head) // 0 if too short: those bytes become literals
				}
				if gh+g2 <= g {
					continue
				}
				if m2.start > m.start {
					if gh > 0 {
						d += emitLiteral(dst[d:], src[nextEmit:head.start])
						d += emitCopy(dst[d:], cur+head.start-head.c, head.end-head.start)
						e.indexMatch(src, head, sLimit)
						nextEmit = head.end
					}
					// else: the bytes of head stay literal
				}
				m, g, improved = m2, g2, true
				break
			}
			if !improved || m.end > sLimit {
				break
			}
		}
		d += emitLiteral(dst[d:], src[nextEmit:m.start])
		d += emitCopy(dst[d:], cur+m.start-m.c, m.end-m.start)
		e.indexMatch(src, m, sLimit)
		s = m.end
		nextEmit = s
	}
	d += emitLiteral(dst[d:], src[nextEmit:])
	return d
}

// indexMatch indexes a match's positions for later blocks: every position in the long
// table, the short table only near its end.
func (e *Encoder) indexMatch(src []byte, m match, sLimit int) {
	cur := e.cur
	for p := m.start + 1; p < m.end && p <= sLimit; p++ {
		e.table[hash8(load64(src, p), longTableBits)] = int32(cur + p)
	}
	for p := max(m.start+1, m.end-2); p < m.end && p <= sLimit; p++ {
		e.short[hash6(load64(src, p), shortTableBits)] = int32(cur + p)
	}
}
