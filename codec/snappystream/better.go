package snappystream

// encodeBetter is a greedy LZ77 over the window that, unlike Snappy (and fast), looks at
// every position: no skip-ahead over bytes that do not match, so it finds the matches
// Snappy's heuristic jumps over in already-compressed or random-looking data (Snappy
// payloads inside RPCs, signatures next to repeated fields). At each position it probes
// a long (8-byte hash) and a short (4-byte hash) table and keeps the candidate that saves
// more bytes; a short match is compared with the one starting at the next position
// (lazy matching). Positions inside a match are indexed sparsely. The block is win[bs:].
func (e *Encoder) encodeBetter(dst, win []byte, bs int) (d int) {
	longShift, shortShift := 64-e.longBits, uint(64-shortTableBits)
	long, short := e.long, e.short
	lo := bs - e.win.histLen(bs)
	sLimit := len(win) - 8
	nextEmit := bs
	s := bs
	// best returns the better candidate for position s (indexing s), as start, offset,
	// length and gain; length 0 if none.
	best := func(s int) (c, length, gain int) {
		x := load64(win, s)
		hl, tl := hash8(x, longShift)
		hs, ts := hash6(x, shortShift)
		vl, vs := long[hl], short[hs]
		long[hl], short[hs] = e.entry(s, tl), e.entry(s, ts)
		if cl := e.candidate(vl, tl, lo, s); cl >= 0 {
			if n := matchLen(win, cl, s, x); n >= 4 {
				if g := matchGain(s-cl, n); g > 0 {
					c, length, gain = cl, n, g
				}
			}
		}
		if cs := e.candidate(vs, ts, lo, s); cs >= 0 && (cs != c || length == 0) {
			if n := matchLen(win, cs, s, x); n >= 4 {
				if g := matchGain(s-cs, n); g > gain {
					c, length, gain = cs, n, g
				}
			}
		}
		return c, length, gain
	}
	for s <= sLimit {
		c, length, gain := best(s)
		if gain <= 0 {
			s++
			continue
		}
		// Lazy matching: a short match may hide a better one that starts a byte later.
		if length < 32 && s+1 <= sLimit {
			if c2, l2, g2 := best(s + 1); g2 > gain+1 {
				s, c, length = s+1, c2, l2
			}
		}
		for s > nextEmit && c > lo && win[c-1] == win[s-1] {
			s--
			c--
			length++
		}
		// Re-probe the long table just before the end of the match for one that reaches
		// further: in interleaved traffic the longest match (the same topic, the same
		// committee) often differs from the most recent one only after a shared prefix.
		// If it starts inside the current match, the current one is cut short there.
		for k := 1; k <= 6; k++ {
			p := s + length - k
			if p <= s || p > sLimit {
				continue
			}
			h, _ := hash8(load64(win, p), longShift)
			c2 := e.at(long[h], p)
			if c2 == c+(p-s) || c2 < lo || c2 >= p {
				continue
			}
			n2 := commonPrefix(win[c2:], win[p:])
			if p+n2 <= s+length {
				continue
			}
			s2 := p
			for s2 > s && c2 > lo && win[c2-1] == win[s2-1] {
				s2--
				c2--
				n2++
			}
			head := matchGain(s-c, s2-s)
			if head+matchGain(s2-c2, n2) <= matchGain(s-c, length) {
				continue
			}
			if s2 > s {
				if head > 0 {
					d += emitLiteral(dst[d:], win[nextEmit:s])
					d += emitCopy(dst[d:], s-c, s2-s)
					nextEmit = s2
				} // else the head's bytes stay literal
			}
			s, c, length = s2, c2, n2
			k = 0 // probe again before the new end
		}
		d += emitLiteral(dst[d:], win[nextEmit:s])
		d += emitCopy(dst[d:], s-c, length)
		end := s + length
		// Index inside the match: every position of a short one, every third of a long
		// one, and the last two (the next block's match often continues from there).
		step := 1
		if length > 32 {
			step = 3
		}
		for p := s + 1; p < end-2 && p <= sLimit; p += step {
			h, t := hash8(load64(win, p), longShift)
			long[h] = e.entry(p, t)
		}
		for p := max(s+1, end-2); p < end && p <= sLimit; p++ {
			x := load64(win, p)
			h, t := hash8(x, longShift)
			long[h] = e.entry(p, t)
			h, t = hash6(x, shortShift)
			short[h] = e.entry(p, t)
		}
		s = end
		nextEmit = s
	}
	d += emitLiteral(dst[d:], win[nextEmit:])
	return d
}

// matchGain is the number of bytes a copy of length bytes at offset saves over carrying
// them as literals; 0 or less if it does not pay.
func matchGain(offset, length int) int {
	if length < 4 || (offset > 65535 && length < minFarMatch) {
		return 0
	}
	return length - copyCost(offset, length)
}
