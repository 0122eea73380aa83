package workload

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/attestantio/go-eth2-client/spec/deneb"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/golang/snappy"

	"github.com/streamsim/streamsim/codec/snappystream"
	"github.com/streamsim/streamsim/workload/payloadstat"
)

func TestProbe38(t *testing.T) {
	dir := os.Getenv("STREAMSIM_PROBE")
	if dir == "" {
		t.Skip()
	}
	show := func(name string, pls [][]byte) {
		st, err := payloadstat.Measure(pls)
		if err != nil {
			t.Fatal(err)
		}
		m, err := payloadstat.MeasureMatches(pls)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s", name, fmtStats(st))
		nz := 100 - st.WordKind.Zero
		rate := func(rk, wk float64) float64 { return rk * st.WordRepeatBlock / (100 * wk / nz) }
		t.Logf("%s repeated in block by kind: address %.1f small %.1f mid %.1f wide %.1f %% (share of repeats %.1f/%.1f/%.1f/%.1f)", name,
			rate(st.RepeatKind.Address, st.WordKind.Address), rate(st.RepeatKind.Small, st.WordKind.Small), rate(st.RepeatKind.Mid, st.WordKind.Mid), rate(st.RepeatKind.Wide, st.WordKind.Wide),
			st.RepeatKind.Address, st.RepeatKind.Small, st.RepeatKind.Mid, st.RepeatKind.Wide)
		t.Logf("%s matches: %s", name, m)
		t.Logf("%s multiplicity: %s", name, multiplicity(t, pls))
	}
	if dir != "synthetic" {
		ss, err := payloadstat.LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		run := payloadstat.LongestRun(ss)
		var real [][]byte
		for _, s := range run {
			real = append(real, s.SSZ)
		}
		show("real 42", real[:42])
		r25, err := payloadstat.Mainnet2025()
		if err != nil {
			t.Fatal(err)
		}
		show("real 2025", r25)
		for i, p := range r25 {
			m, _ := payloadstat.MeasureMatches([][]byte{p})
			t.Logf("real 2025 #%d: %s; better alone %.3f", i, m, streamRatio(t, "snappy-stream:64KiB:better", [][]byte{p}))
		}
	}
	m := applyEnv()
	era := "2026-05"
	if m.name == "2026" {
		era = "2026-02"
	}
	seed := int64(1)
	if os.Getenv("P_SEED") == "2" {
		seed = 2
	}
	pls := eraPayloads(t, era, seed, 42)
	show(era, pls)
	if os.Getenv("P_RATIOS") != "" {
		t.Logf("%s ratios: %s", era, measureRun(t, pls))
	}
}

func TestProbe38Codec(t *testing.T) {
	if os.Getenv("STREAMSIM_PROBE") == "" {
		t.Skip()
	}
	ss, _ := payloadstat.LoadMainnet()
	run := payloadstat.LongestRun(ss)
	var real [][]byte
	for _, s := range run[:14] {
		real = append(real, s.SSZ)
	}
	syn := eraPayloads(t, "2026-05", 1, 14)
	for _, c := range []struct {
		name string
		pls  [][]byte
	}{{"real", real}, {"2026-05", syn}} {
		t.Logf("%s: alone fast %.4f better %.4f; 14 fast %.4f better %.4f", c.name,
			singleRatios(t, "snappy-stream:64KiB:fast", c.pls), singleRatios(t, "snappy-stream:64KiB:better", c.pls),
			streamRatio(t, "snappy-stream:64KiB:fast", c.pls), streamRatio(t, "snappy-stream:64KiB:better", c.pls))
		// Payloads cut to 60 KiB: no Snappy chunk boundary inside.
		var cut [][]byte
		for _, p := range c.pls {
			cut = append(cut, p[:min(len(p), 60<<10)])
		}
		t.Logf("%s 60 KiB heads: alone fast %.4f better %.4f", c.name, singleRatios(t, "snappy-stream:64KiB:fast", cut), singleRatios(t, "snappy-stream:64KiB:better", cut))
	}
}

// elements parses a Snappy block into per-byte coverage: 0 literal, else the copy's offset.
func elements(t *testing.T, blk []byte) (off []int, copies int) {
	n, k := binary.Uvarint(blk)
	blk = blk[k:]
	off = make([]int, 0, n)
	for len(blk) > 0 {
		tag := blk[0]
		switch tag & 3 {
		case 0:
			l := int(tag >> 2)
			h := 1
			if l >= 60 {
				nb := l - 59
				l = 0
				for i := 0; i < nb; i++ {
					l |= int(blk[1+i]) << (8 * i)
				}
				h += nb
			}
			l++
			for range l {
				off = append(off, 0)
			}
			blk = blk[h+l:]
		case 1:
			l := 4 + int((tag>>2)&7)
			o := int(tag&0xe0)<<3 | int(blk[1])
			for range l {
				off = append(off, o)
			}
			blk = blk[2:]
			copies++
		case 2:
			l := 1 + int(tag>>2)
			o := int(blk[1]) | int(blk[2])<<8
			for range l {
				off = append(off, o)
			}
			blk = blk[3:]
			copies++
		case 3:
			l := 1 + int(tag>>2)
			o := int(blk[1]) | int(blk[2])<<8 | int(blk[3])<<16 | int(blk[4])<<24
			for range l {
				off = append(off, o)
			}
			blk = blk[5:]
			copies++
		}
	}
	if uint64(len(off)) != n {
		t.Fatalf("parsed %d of %d", len(off), n)
	}
	return off, copies
}

func TestProbe38Diff(t *testing.T) {
	if os.Getenv("STREAMSIM_PROBE") == "" {
		t.Skip()
	}
	ss, _ := payloadstat.LoadMainnet()
	run := payloadstat.LongestRun(ss)
	var real [][]byte
	for _, s := range run[:14] {
		real = append(real, s.SSZ)
	}
	era := "2026-05"
	if applyEnv().name == "2026" {
		era = "2026-02"
	}
	syn := eraPayloads(t, era, 1, 14)
	for _, c := range []struct {
		name string
		pls  [][]byte
	}{{"real", real}, {"2026-05", syn}} {
		var total, snLit, btLit, btOnly, snOnly, snCopies, btCopies, snBytes, btBytes int
		var byDist [5]int
		var byCls [8]int
		for _, p := range c.pls {
			cls := classify(t, p)
			var snOff []int
			for k := 0; k < len(p); k += 65536 {
				enc := snappy.Encode(nil, p[k:min(len(p), k+65536)])
				o, n := elements(t, enc)
				snOff = append(snOff, o...)
				snCopies += n
			}
			snBytes += len(snappy.Encode(nil, p))
			enc := snappystream.NewEncoder(64<<10, snappystream.Better).Encode(nil, p)
			btBytes += len(enc)
			btOff, n := elements(t, enc)
			btCopies += n
			total += len(p)
			for i := range p {
				if snOff[i] == 0 {
					snLit++
				}
				if btOff[i] == 0 {
					btLit++
				}
				if snOff[i] == 0 && btOff[i] != 0 {
					btOnly++
					byCls[cls[i]]++
					d := btOff[i]
					k := 4
					switch {
					case d < 1<<10:
						k = 0
					case d < 8<<10:
						k = 1
					case d < 64<<10:
						k = 2
					case i%65536 < d%65536 || d >= 65536:
						k = 3
					}
					byDist[k]++
				}
				if snOff[i] != 0 && btOff[i] == 0 {
					snOnly++
				}
			}
		}
		pc := func(v int) float64 { return 100 * float64(v) / float64(total) }
		t.Logf("%s: %d B, snappy %d B (%d copies, literal %.1f %%), better %d B (%d copies, literal %.1f %%); better copies where snappy has literals %.1f %% (< 1 KiB %.1f, 1–8 KiB %.1f, 8–64 KiB %.1f, ≥ 64 KiB %.1f, other %.1f), the reverse %.1f %%",
			c.name, total, snBytes, snCopies, pc(snLit), btBytes, btCopies, pc(btLit), pc(btOnly), pc(byDist[0]), pc(byDist[1]), pc(byDist[2]), pc(byDist[3]), pc(byDist[4]), pc(snOnly))
		t.Logf("%s better-only by class: outside txs %.2f, envelope %.2f, selector %.2f, zero word %.2f, address %.2f, small %.2f, mid %.2f, wide %.2f", c.name,
			pc(byCls[0]), pc(byCls[1]), pc(byCls[2]), pc(byCls[3]), pc(byCls[4]), pc(byCls[5]), pc(byCls[6]), pc(byCls[7]))
	}
}

func applyEnv() *contentModel {
	m := &content2025
	if os.Getenv("P_MODEL") == "2026" {
		m = &content2026
	}
	f := func(name string, p *float64) {
		if v := os.Getenv(name); v != "" {
			x, _ := strconv.ParseFloat(v, 64)
			*p = x
		}
	}
	f("P_TEMPLATE", &m.templateShare)
	f("P_REDRAW", &m.templateRedraw)
	f("P_REUSE", &m.reuseShare)
	f("P_REUSEGAP", &m.reuseGap)
	f("P_SAME", &m.sameBlockShare)
	f("P_REPEATARGS", &m.repeatArgsShare)
	f("P_EARLIER", &m.earlierShare)
	f("P_NESTED", &m.nestedShare)
	if os.Getenv("P_POP") != "" {
		m.eoa, m.contract = content2026.eoa, content2026.contract
		if os.Getenv("P_POP") == "2" {
			m.token = content2026.token
			m.anyToken, m.anyEOA = content2026.anyToken, content2026.anyEOA
		}
	}
	if v := os.Getenv("P_MIX"); v != "" {
		var c [8]float64
		fmt.Sscanf(v, "%g,%g,%g,%g,%g,%g,%g,%g", &c[0], &c[1], &c[2], &c[3], &c[4], &c[5], &c[6], &c[7])
		m.wordMix = []wordShare{{wZero, c[0]}, {wConst, c[1]}, {wMax, c[2]}, {wAddr, c[3]}, {wAmount, c[4]}, {wBig, c[5]}, {wID, c[6]}, {wRandom, c[7]}}
	}
	if v := os.Getenv("P_KREUSE"); v != "" {
		var a, am, b, id, mx, r float64
		fmt.Sscanf(v, "%g,%g,%g,%g,%g,%g", &a, &am, &b, &id, &mx, &r)
		m.reuseOf = [8]float64{wAddr: a, wAmount: am, wBig: b, wID: id, wMax: mx, wRandom: r}
	}
	f("P_ALIST", &m.accessListShare)
	f("P_PACKED", &m.packedPathShare)
	if os.Getenv("P_ENV") != "" {
		m.tipBytes, m.valueBytes, m.feeCapSlack, m.nonceBits = content2026.tipBytes, content2026.valueBytes, content2026.feeCapSlack, content2026.nonceBits
	}
	if os.Getenv("P_REUSEOF") != "" {
		m.reuseOf = content2026.reuseOf
		m.reuseGap = content2026.reuseGap
	}
	if v := os.Getenv("P_BLOCKS"); v != "" {
		m.earlierBlocks, _ = strconv.Atoi(v)
	}
	return m
}

// classify labels each payload byte: 0 outside transactions, 1 envelope, 2 selector (and
// calldata off the word grid's tail), 3 zero word, 4 address, 5 small, 6 mid, 7 wide.
func classify(t *testing.T, ssz []byte) []uint8 {
	var p deneb.ExecutionPayload
	if err := p.UnmarshalSSZ(ssz); err != nil {
		t.Fatal(err)
	}
	cls := make([]uint8, len(ssz))
	cur := 0
	for _, raw := range p.Transactions {
		k := bytes.Index(ssz[cur:], raw)
		if k < 0 {
			t.Fatal("tx not found")
		}
		at := cur + k
		cur = at + len(raw)
		for i := range raw {
			cls[at+i] = 1
		}
		var tx types.Transaction
		if err := tx.UnmarshalBinary(raw); err != nil {
			t.Fatal(err)
		}
		d := tx.Data()
		if len(d) == 0 {
			continue
		}
		o := bytes.Index(raw, d)
		if o < 0 {
			continue
		}
		base := at + o
		for i := range d {
			cls[base+i] = 2
		}
		for w := 4; w+32 <= len(d); w += 32 {
			lead := 0
			for lead < 32 && d[w+lead] == 0 {
				lead++
			}
			c := uint8(7)
			switch {
			case lead == 32:
				c = 3
			case lead >= 24:
				c = 5
			case lead >= 16:
				c = 6
			case lead >= 12:
				c = 4
			}
			for i := range 32 {
				cls[base+w+i] = c
			}
		}
	}
	return cls
}

// multiplicity: among non-zero calldata words repeated within their block, the % that are
// the word's 2nd occurrence, 3rd–5th, 6th+; and of repeated words, the % whose previous copy
// is > 8 KiB (256 words) back while the word occurred ≥ 3 times before.
func multiplicity(t *testing.T, pls [][]byte) string {
	var second, few, many, reps int
	var byKind [4][3]int
	for _, ssz := range pls {
		var p deneb.ExecutionPayload
		if err := p.UnmarshalSSZ(ssz); err != nil {
			t.Fatal(err)
		}
		count := map[[32]byte]int{}
		for _, raw := range p.Transactions {
			var tx types.Transaction
			if err := tx.UnmarshalBinary(raw); err != nil {
				t.Fatal(err)
			}
			d := tx.Data()
			for w := 4; w+32 <= len(d); w += 32 {
				word := [32]byte(d[w : w+32])
				if word == ([32]byte{}) {
					continue
				}
				c := count[word]
				count[word] = c + 1
				lead := 0
				for lead < 32 && word[lead] == 0 {
					lead++
				}
				k := 3
				switch {
				case lead >= 24:
					k = 1
				case lead >= 16:
					k = 2
				case lead >= 12:
					k = 0
				}
				if c > 0 {
					byKind[k][min(2, map[bool]int{true: 0, false: 1}[c == 1]+map[bool]int{true: 1, false: 0}[c >= 5])]++
				}
				switch {
				case c == 0:
					continue
				case c == 1:
					second++
				case c < 5:
					few++
				default:
					many++
				}
				reps++
			}
		}
	}
	pc := func(v int) float64 { return 100 * float64(v) / float64(reps) }
	return fmt.Sprintf("repeats that are the 2nd occurrence %.1f %%, 3rd–5th %.1f %%, 6th+ %.1f %%; by kind address/small/mid/wide 2nd %.1f/%.1f/%.1f/%.1f 3rd-5th %.1f/%.1f/%.1f/%.1f 6th+ %.1f/%.1f/%.1f/%.1f", pc(second), pc(few), pc(many),
		pc(byKind[0][0]), pc(byKind[1][0]), pc(byKind[2][0]), pc(byKind[3][0]), pc(byKind[0][1]), pc(byKind[1][1]), pc(byKind[2][1]), pc(byKind[3][1]), pc(byKind[0][2]), pc(byKind[1][2]), pc(byKind[2][2]), pc(byKind[3][2]))
}

func TestProbe38Blocks(t *testing.T) {
	if os.Getenv("STREAMSIM_PROBE") == "" {
		t.Skip()
	}
	applyEnv()
	for _, seed := range []int64{1, 2} {
		p := DefaultParams()
		p.Seed = seed
		f := measureBlocks(t, blockSample(t, p, 250))
		t.Logf("seed %d: wire p50 %.0f p99 %.0f B, raw/Snappy %.3f (payload %.3f), zeros %.1f %%", seed, f.wireP50, f.wireP99, f.rawPerSnappy, f.payloadRawPerSnappy, f.zeroShare)
	}
}

func TestProbe38Sizes(t *testing.T) {
	if os.Getenv("STREAMSIM_PROBE") == "" {
		t.Skip()
	}
	applyEnv()
	n := 1000
	for _, seed := range []int64{1, 2} {
		p := DefaultParams()
		p.Seed = seed
		if v := os.Getenv("P_SIGMA"); v != "" {
			x, _ := strconv.ParseFloat(v, 64)
			p.BlockSigma = x
		}
		f := measureBlocks(t, blockSample(t, p, n))
		t.Logf("seed %d, %d blocks: wire p50 %.0f p99 %.0f B, raw/Snappy %.3f (payload %.3f)", seed, n, f.wireP50, f.wireP99, f.rawPerSnappy, f.payloadRawPerSnappy)
	}
}
