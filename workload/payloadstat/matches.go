package payloadstat

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/attestantio/go-eth2-client/spec/deneb"
	"github.com/ethereum/go-ethereum/core/types"
)

// Matches says where the redundancy of consecutive payloads' transactions is: how far back
// the earlier copy of a repeated byte string sits. It parses the transactions of the payloads,
// concatenated in block order, greedily: at each position the longest earlier match of at
// least MatchMin bytes within MatchWindow (the nearest of equal length, among the
// MatchCandidates most recent positions sharing its first 6 bytes) is taken, else one byte is
// a literal. This is no encoder (no hash-table collisions, no skipping over incompressible
// bytes): it measures the source, not a codec. Matches made only of zero bytes (ABI padding)
// are counted apart, since every parse finds them nearby.
type Matches struct {
	// Bytes is the transactions' bytes parsed; Zero the % of them covered by all-zero
	// matches; Literal the % in no match.
	Bytes         int64
	Zero, Literal float64
	// Near is the % of the bytes covered by non-zero matches whose copy sits in the same
	// block, by distance: < 1 KiB, 1–8 KiB, 8–64 KiB, ≥ 64 KiB; Earlier in an earlier block:
	// < 64 KiB back, 64 KiB–MatchWindow.
	Near    [4]float64
	Earlier [2]float64
	// Length is the median length of the non-zero matches, bytes.
	Length float64
	// Split is the % of all bytes by the kind of transaction they belong to (plain
	// transfers, token calls, other calls, as Kinds), by part (calldata, the rest) and by how
	// they are covered: literal, a match in the same block (zero matches included), a match
	// in an earlier block.
	Split [3][2][3]float64
	// ByLength is the % of all bytes covered by non-zero matches in the same block ([0]) and
	// in an earlier block ([1]), by the match's length: 8–31, 32–63, 64–255, ≥ 256 bytes.
	ByLength [2][4]float64
	// CrossChunk is the % of all bytes covered by non-zero matches in the same block whose
	// copy sits in an earlier 64 KiB piece of the payload (positions counted in the payload's
	// SSZ): what a compressor that cuts a message into 64 KiB blocks, as Snappy's encoder
	// does, cannot reach.
	CrossChunk float64
	// Short is the % of all bytes covered by non-zero matches in the same block shorter than
	// 64 bytes (a word or two, not a run of arguments), by distance: < 1 KiB, 1–8 KiB, ≥ 8 KiB.
	Short [3]float64
}

// Match parser settings.
const (
	MatchMin        = 8
	MatchWindow     = 2 << 20
	MatchCandidates = 64
)

// String is the figures on one line.
func (m Matches) String() string {
	var sp string
	for k, name := range []string{"transfers", "token calls", "other calls"} {
		for p, part := range []string{"calldata", "rest"} {
			v := m.Split[k][p]
			if v[0]+v[1]+v[2] > 0 {
				sp += fmt.Sprintf("; %s %s %.1f/%.1f/%.1f", name, part, v[0], v[1], v[2])
			}
		}
	}
	return fmt.Sprintf("%s (literal/in block/earlier %% of all bytes%s); by length 8–31/32–63/64–255/≥ 256 B: in the block %.1f/%.1f/%.1f/%.1f, earlier %.1f/%.1f/%.1f/%.1f %%",
		m.summary(), sp, m.ByLength[0][0], m.ByLength[0][1], m.ByLength[0][2], m.ByLength[0][3], m.ByLength[1][0], m.ByLength[1][1], m.ByLength[1][2], m.ByLength[1][3])
}

func (m Matches) summary() string {
	return fmt.Sprintf("short in-block matches < 1 KiB / 1–8 KiB / ≥ 8 KiB back %.1f/%.1f/%.1f %%; in-block matches across 64 KiB pieces %.1f %%; %d B: literal %.1f %%, zero matches %.1f %%; non-zero matches in the block < 1 KiB %.1f, 1–8 KiB %.1f, 8–64 KiB %.1f, ≥ 64 KiB %.1f %%; in an earlier block < 64 KiB %.1f, ≥ 64 KiB %.1f %%; median length %.0f B",
		m.Short[0], m.Short[1], m.Short[2], m.CrossChunk, m.Bytes, m.Literal, m.Zero, m.Near[0], m.Near[1], m.Near[2], m.Near[3], m.Earlier[0], m.Earlier[1], m.Length)
}

// MeasureMatches parses the payloads' transactions (see Matches).
func MeasureMatches(payloads [][]byte) (Matches, error) {
	var m Matches
	var buf []byte
	var label []uint8    // per byte: kind·2 + (0 calldata, 1 the rest)
	var blockStart []int // start of each block in buf
	var sszAt []int      // per block: SSZ position of the block's first transaction byte
	for i, ssz := range payloads {
		var p deneb.ExecutionPayload
		if err := p.UnmarshalSSZ(ssz); err != nil {
			return m, fmt.Errorf("payload %d: %w", i, err)
		}
		blockStart = append(blockStart, len(buf))
		sszAt = append(sszAt, len(ssz)-txsTail(&p))
		for j, raw := range p.Transactions {
			var tx types.Transaction
			if err := tx.UnmarshalBinary(raw); err != nil {
				return m, fmt.Errorf("payload %d tx %d: %w", i, j, err)
			}
			d := tx.Data()
			kind := uint8(2)
			switch {
			case len(d) == 0:
				kind = 0
			case (len(d) == 4+64 || len(d) == 4+96) && tokenSelectors[[4]byte(d[:4])]:
				kind = 1
			}
			at := len(buf)
			buf = append(buf, raw...)
			for range raw {
				label = append(label, 2*kind+1)
			}
			if k := bytes.Index(raw, d); len(d) > 0 && k >= 0 {
				for x := range d {
					label[at+k+x] = 2 * kind
				}
			}
		}
	}
	const hashBits = 20
	head := make([]int32, 1<<hashBits)
	for i := range head {
		head[i] = -1
	}
	prev := make([]int32, len(buf))
	key := func(i int) uint32 {
		v := uint64(buf[i]) | uint64(buf[i+1])<<8 | uint64(buf[i+2])<<16 | uint64(buf[i+3])<<24 | uint64(buf[i+4])<<32 | uint64(buf[i+5])<<40
		return uint32((v * 0x9E3779B97F4A7C15) >> (64 - hashBits))
	}
	insert := func(i int) {
		if i+6 <= len(buf) {
			h := key(i)
			prev[i] = head[h]
			head[h] = int32(i)
		}
	}
	var zero, lit, cross int64
	var short [3]int64
	var near [4]int64
	var earlier [2]int64
	var lengths []float64
	var split [3][2][3]int64
	var byLen [2][4]int64
	cover := func(i, n, how int) {
		for k := i; k < i+n; k++ {
			split[label[k]/2][label[k]%2][how]++
		}
	}
	blk := 0
	for i := 0; i < len(buf); {
		for blk+1 < len(blockStart) && blockStart[blk+1] <= i {
			blk++
		}
		best, bestAt := 0, -1
		if i+6 <= len(buf) {
			c := head[key(i)]
			for n := 0; n < MatchCandidates && c >= 0 && i-int(c) <= MatchWindow; n++ {
				l := 0
				for i+l < len(buf) && buf[int(c)+l] == buf[i+l] {
					l++
				}
				if l > best {
					best, bestAt = l, int(c)
				}
				c = prev[c]
			}
		}
		if best < MatchMin {
			lit++
			cover(i, 1, 0)
			insert(i)
			i++
			continue
		}
		allZero := true
		for _, b := range buf[i : i+best] {
			if b != 0 {
				allZero = false
				break
			}
		}
		d := i - bestAt
		if allZero || bestAt >= blockStart[blk] {
			cover(i, best, 1)
		} else {
			cover(i, best, 2)
		}
		switch {
		case allZero:
			zero += int64(best)
		case bestAt >= blockStart[blk]:
			if base := sszAt[blk] - blockStart[blk]; (base+bestAt)>>16 < (base+i)>>16 {
				cross += int64(best)
			}
			if best < 64 {
				switch {
				case d < 1<<10:
					short[0] += int64(best)
				case d < 8<<10:
					short[1] += int64(best)
				default:
					short[2] += int64(best)
				}
			}
			k := 3
			switch {
			case d < 1<<10:
				k = 0
			case d < 8<<10:
				k = 1
			case d < 64<<10:
				k = 2
			}
			near[k] += int64(best)
		case d < 64<<10:
			earlier[0] += int64(best)
		default:
			earlier[1] += int64(best)
		}
		if !allZero {
			lengths = append(lengths, float64(best))
			w := 0
			if bestAt < blockStart[blk] {
				w = 1
			}
			l := 3
			switch {
			case best < 32:
				l = 0
			case best < 64:
				l = 1
			case best < 256:
				l = 2
			}
			byLen[w][l] += int64(best)
		}
		for k := range best {
			insert(i + k)
		}
		i += best
	}
	m.Bytes = int64(len(buf))
	if m.Bytes == 0 {
		return m, fmt.Errorf("no transactions in %d payloads", len(payloads))
	}
	pct := func(v int64) float64 { return 100 * float64(v) / float64(m.Bytes) }
	m.Zero, m.Literal, m.CrossChunk = pct(zero), pct(lit), pct(cross)
	for k := range near {
		m.Near[k] = pct(near[k])
	}
	for k := range short {
		m.Short[k] = pct(short[k])
	}
	for k := range earlier {
		m.Earlier[k] = pct(earlier[k])
	}
	for a := range split {
		for b := range split[a] {
			for c := range split[a][b] {
				m.Split[a][b][c] = pct(split[a][b][c])
			}
		}
	}
	for a := range byLen {
		for b := range byLen[a] {
			m.ByLength[a][b] = pct(byLen[a][b])
		}
	}
	if len(lengths) > 0 {
		slices.Sort(lengths)
		m.Length = lengths[len(lengths)/2]
	}
	return m, nil
}

// txsTail is the SSZ bytes of the payload from its first transaction's bytes on: the
// transactions with their offsets' tail, and the withdrawals.
func txsTail(p *deneb.ExecutionPayload) int {
	n := 0
	for _, tx := range p.Transactions {
		n += len(tx)
	}
	return n + 44*len(p.Withdrawals)
}
