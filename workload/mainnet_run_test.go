package workload

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/attestantio/go-eth2-client/spec/deneb"
	"github.com/golang/snappy"

	"github.com/streamsim/streamsim/workload/payloadstat"
)

// runFigures are the figures of a run of consecutive payloads that the stream codecs see.
type runFigures struct {
	blocks, txs      int
	payloadKB        float64 // mean payload SSZ, kB
	rawPerSnappy     float64 // payload SSZ ÷ Snappy, median over payloads
	zeroShare        float64 // zero bytes in transactions, %
	single           float64 // one payload alone in a snappy-stream 64 KiB better stream ÷ Snappy, median
	better, zstd     float64 // windows of ContentWindow payloads in one stream ÷ per-message Snappy, mean over windows
	windows          int
	betterAll, zstdA float64 // the whole run in one stream
}

func measureRun(t testing.TB, pls [][]byte) runFigures {
	t.Helper()
	f := runFigures{blocks: len(pls)}
	var ratios []float64
	var size, zeros, txBytes int64
	for _, pl := range pls {
		var p deneb.ExecutionPayload
		if err := p.UnmarshalSSZ(pl); err != nil {
			t.Fatal(err)
		}
		size += int64(len(pl))
		ratios = append(ratios, float64(len(pl))/float64(len(snappy.Encode(nil, pl))))
		for _, tx := range p.Transactions {
			f.txs++
			txBytes += int64(len(tx))
			zeros += int64(bytes.Count(tx, []byte{0}))
		}
	}
	slices.Sort(ratios)
	f.rawPerSnappy = ratios[len(ratios)/2]
	f.payloadKB = float64(size) / float64(len(pls)) / 1000
	f.zeroShare = 100 * float64(zeros) / float64(txBytes)
	f.single = singleRatios(t, "snappy-stream:64KiB:better", pls)
	for k := 0; k+ContentWindow <= len(pls); k += ContentWindow {
		f.better += streamRatio(t, "snappy-stream:64KiB:better", pls[k:k+ContentWindow])
		f.zstd += streamRatio(t, "zstd:3:2MiB", pls[k:k+ContentWindow])
		f.windows++
	}
	f.better /= float64(f.windows)
	f.zstd /= float64(f.windows)
	f.betterAll = streamRatio(t, "snappy-stream:64KiB:better", pls)
	f.zstdA = streamRatio(t, "zstd:3:2MiB", pls)
	return f
}

func (f runFigures) String() string { return fmtRun(f) }

// mainnetRun is the longest run of consecutive real payloads: the 28 of testdata (blocks
// 24 364 071–098, 1 Feb 2026), or, with STREAMSIM_MAINNET_DIR set to a directory importmainnet
// wrote, that directory's longest run.
func mainnetRun(t testing.TB) []payloadstat.Sample {
	t.Helper()
	var ss []payloadstat.Sample
	var err error
	if dir := os.Getenv("STREAMSIM_MAINNET_DIR"); dir != "" {
		ss, err = payloadstat.LoadDir(dir)
	} else {
		ss, err = payloadstat.LoadMainnet()
	}
	if err != nil {
		t.Fatal(err)
	}
	return payloadstat.LongestRun(ss)
}

// run100 are the figures of all 100 payloads of the run (24 364 071–170), measured by
// scripts/mainnet-run.sh (payloadstat.Measure and measureRun): content model 2026 was fitted to
// them. Statistics that grow with the number of earlier blocks are those of the run's first 42,
// as many as the synthetic sample.
var run100 = struct {
	legacy, transfer, token, other       float64 // % of transactions
	meanTx, wordsPerTx, rest             float64 // B; words; % of bytes outside calldata and access lists
	zeros                                float64
	words                                payloadstat.Words
	wordsInBlock, addrInBlock, toInBlock float64
	earlier42, toEarlier42               float64 // first in the block but seen earlier; recipients seen only earlier
	matchBlock42, matchEarlier42         float64 // % of bytes in non-zero matches within the block, in an earlier block
	better, zstd                         float64 // 14-payload windows, mean of 7
	// Zero-padding runs that recur in their call one and two words back, and the share of
	// the runs in calls of ≥ 128 words that recur in their call (payloadstat.MeasureInCall).
	inCall1w, inCall2w, inCallLong float64
}{
	legacy: 12.79, transfer: 39.06, token: 37.42, other: 23.53,
	meanTx: 556.6, wordsPerTx: 13.10, rest: 20.07, zeros: 50.63,
	words:        payloadstat.Words{Zero: 9.80, Address: 16.04, Small: 29.38, Mid: 12.38, Wide: 32.40},
	wordsInBlock: 42.41, addrInBlock: 40.60, toInBlock: 44.07,
	earlier42: 20.10, toEarlier42: 26.86, matchBlock42: 34.53, matchEarlier42: 34.23,
	better: 0.9283, zstd: 0.7490,
	inCall1w: 2.1, inCall2w: 14.9, inCallLong: 43.8,
}

// TestConsecutiveMainnet measures the run of consecutive real 2026 payloads and the payloads
// of eras 2026-02 and 2026-05 by the same code: payload raw/Snappy, zero bytes in
// transactions, and windows of 14 consecutive payloads in one stream (snappy-stream 64 KiB
// better, zstd 3 with a 2 MiB window) over their per-message Snappy bytes. The real figures
// are held to what the committed run gives; both eras' cross-block statistics and streams, and
// era 2026-02's content statistics, to the 100 payloads' (run100).
func TestConsecutiveMainnet(t *testing.T) {
	t.Parallel()
	run := mainnetRun(t)
	var real [][]byte
	for _, s := range run {
		real = append(real, s.SSZ)
	}
	rf := measureRun(t, real)
	t.Logf("real %d–%d (%s): %s", run[0].Number, run[len(run)-1].Number, run[0].Time.Format("2006-01-02 15:04"), rf)
	want, err := payloadstat.Measure(real)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("real: %s", fmtStats(want))
	if m, err := payloadstat.MeasureMatches(real); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("real, matches: %s", m)
	}
	t.Logf("real, zero runs: %s", payloadstat.MeasureZeroRuns(real))
	if c, err := payloadstat.MeasureInCall(real); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("real, in-call padding: %s", c)
	}
	if c, err := payloadstat.MeasureColumns(real); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("real, columns: %s", c)
	}
	if os.Getenv("STREAMSIM_MAINNET_DIR") != "" && len(real) > 42 {
		first, err := payloadstat.Measure(real[:42])
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("real, first 42: first in block seen earlier %.2f %%, recipients seen earlier only %.2f %%, repeats that are a 2nd / 3rd–5th / 6th+ occurrence %.1f / %.1f / %.1f %%",
			first.WordRepeatEarly, first.ToSeenEarlier, first.RepeatOccurrence[0], first.RepeatOccurrence[1], first.RepeatOccurrence[2])
		m, err := payloadstat.MeasureMatches(real[:42])
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("real, first 42, matches: %s; non-zero matches in the block %.2f %%, in an earlier block %.2f %%", m, sumOf(m.ByLength[0][:]), sumOf(m.ByLength[1][:]))
	}
	if os.Getenv("STREAMSIM_MAINNET_DIR") == "" {
		// The committed run: its bytes and the codecs fix these figures.
		if run[0].Number != 24_364_071 || len(run) != 28 || rf.txs != 10_288 {
			t.Fatalf("run from %d of %d payloads with %d transactions, want 24 364 071, 28, 10 288", run[0].Number, len(run), rf.txs)
		}
		near := func(what string, got, want, tol float64) {
			if math.Abs(got-want) > tol {
				t.Errorf("real run: %s %.4f, measured %.4f ± %.3f", what, got, want, tol)
			}
		}
		near("payload raw/Snappy (median)", rf.rawPerSnappy, 2.066, 0.005)
		near("zero bytes in transactions (%)", rf.zeroShare, 47.47, 0.05)
		near("one payload in a better stream", rf.single, 0.951, 0.002)
		near("14 payloads in a better 64 KiB stream", rf.better, 0.9283, 0.002)
		near("14 payloads in a zstd 3 2 MiB stream", rf.zstd, 0.7868, 0.002)
		// Consecutive payloads share more than one payload holds: a stream gains over the
		// payload alone, zstd's 2 MiB window (many blocks back) more than Snappy's 64 KiB.
		if rf.better >= rf.single || rf.zstdA >= rf.zstd || rf.zstd >= rf.better-0.1 {
			t.Errorf("real run: one payload %.3f, windows better %.3f zstd %.3f, whole run zstd %.3f", rf.single, rf.better, rf.zstd, rf.zstdA)
		}
	}
	if testing.Short() {
		return
	}
	// The synthetic eras against the real run (with STREAMSIM_MAINNET_DIR, logged, not held).
	// Both content models repeat calls of earlier blocks, fitted to where the 100's repeated
	// bytes sit (payloadstat.MeasureMatches over their first 42): held, with the words first
	// used in a block that an earlier one used, within ±8 points. zstd over 14 payloads is then
	// within 3 points of the 100's. snappy-stream better is not quite: one synthetic payload
	// alone is more redundant to it than a real one (0.92–0.93 against the real 0.95), and the
	// 14-payload streams come out 2.8–3.1 points under the 100's; the test holds that gap
	// within 3.5 points so that a change widening it is seen.
	for _, era := range []string{"2026-02", "2026-05"} {
		for _, seed := range []int64{1, 2} {
			pls := eraPayloads(t, era, seed, 3*ContentWindow)
			sf := measureRun(t, pls)
			t.Logf("%s seed %d: %s", era, seed, sf)
			got, err := payloadstat.Measure(pls)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s seed %d: %s", era, seed, fmtStats(got))
			m, err := payloadstat.MeasureMatches(pls)
			if err != nil {
				t.Fatal(err)
			}
			inBlock, earlier := sumOf(m.ByLength[0][:]), sumOf(m.ByLength[1][:])
			t.Logf("%s seed %d, matches: %s; non-zero matches in the block %.2f %%, in an earlier block %.2f %%", era, seed, m, inBlock, earlier)
			t.Logf("%s seed %d, zero runs: %s", era, seed, payloadstat.MeasureZeroRuns(pls))
			inCall, err := payloadstat.MeasureInCall(pls)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s seed %d, in-call padding: %s", era, seed, inCall)
			cols, err := payloadstat.MeasureColumns(pls)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s seed %d, columns: %s", era, seed, cols)
			if os.Getenv("STREAMSIM_MAINNET_DIR") != "" {
				continue
			}
			points := func(name string, g, w, tol float64) {
				if math.Abs(g-w) > tol {
					t.Errorf("%s seed %d: %s %.1f, real %.1f ± %.0f", era, seed, name, g, w, tol)
				}
			}
			w := run100
			points("words first in the block seen in an earlier one (%)", got.WordRepeatEarly, w.earlier42, 8)
			points("bytes in non-zero matches within the block (%)", inBlock, w.matchBlock42, 8)
			points("bytes in matches in an earlier block (%)", earlier, w.matchEarlier42, 8)
			if era == "2026-02" {
				// Its content model was fitted to the statistics of the 100: held with
				// TestPayloadsAsMainnet's tolerances (shares ±5 points, repeat shares ±8,
				// sizes ±20 %), the transaction kinds and the legacy share ±3 points.
				points("legacy transactions (%)", got.TypeShare[0], w.legacy, 3)
				points("plain transfers (%)", got.Kind.Transfer, w.transfer, 3)
				points("token calls (%)", got.Kind.Token, w.token, 3)
				points("other calls (%)", got.Kind.Other, w.other, 3)
				points("bytes outside calldata and access lists (%)", got.ByteShare.Rest, w.rest, 5)
				points("zero bytes in transactions (%)", got.ZeroShareAll, w.zeros, 5)
				points("zero words (%)", got.WordKind.Zero, w.words.Zero, 5)
				points("address words (%)", got.WordKind.Address, w.words.Address, 5)
				points("small words (%)", got.WordKind.Small, w.words.Small, 5)
				points("mid words (%)", got.WordKind.Mid, w.words.Mid, 5)
				points("wide words (%)", got.WordKind.Wide, w.words.Wide, 5)
				points("words repeated in the block (%)", got.WordRepeatBlock, w.wordsInBlock, 8)
				points("addresses seen earlier in the block (%)", got.AddrRepeatBlock, w.addrInBlock, 8)
				points("recipients seen earlier in the block (%)", got.ToSeenBlock, w.toInBlock, 8)
				points("recipients seen in an earlier block only (%)", got.ToSeenEarlier, w.toEarlier42, 8)
				rel := func(name string, g, w float64) {
					if g < 0.8*w || g > 1.2*w {
						t.Errorf("%s seed %d: %s %.1f, real %.1f ± 20 %%", era, seed, name, g, w)
					}
				}
				rel("mean transaction (B)", got.MeanTx, w.meanTx)
				rel("calldata words per transaction", got.WordsPerTx, w.wordsPerTx)
			}
			if d := sf.zstd - w.zstd; math.Abs(d) > 0.03 {
				t.Errorf("%s seed %d: 14 payloads in a zstd 2 MiB stream %.3f, real %.3f ± 0.03", era, seed, sf.zstd, w.zstd)
			}
			if d := sf.better - w.better; math.Abs(d) > 0.035 {
				t.Errorf("%s seed %d: 14 payloads in a better 64 KiB stream %.3f, real %.3f ± 0.035", era, seed, sf.better, w.better)
			}
		}
	}
}

// fmtStats is the payloadstat figures the content models are fitted to, on one line.
func fmtStats(s payloadstat.Stats) string {
	return fmt.Sprintf("types %.1f/%.1f/%.1f/%.1f/%.1f %%; transfers/token calls/other %.1f/%.1f/%.1f %% (legacy among them %.1f/%.1f/%.1f %%); "+
		"%.0f txs per block of %.0f B (p10/p25/p50/p75/p90 %v B), %.1f words per tx (other calls %v); bytes calldata/access lists/rest %.1f/%.1f/%.1f %%; "+
		"zeros %.1f %%; words zero/addr/small/mid/wide %.1f/%.1f/%.1f/%.1f/%.1f %%; seen earlier in the block: words %.1f %%, addresses %.1f %% (address words %.1f %%), recipients %.1f %%; "+
		"first in the block seen in an earlier one %.1f %%, recipients seen only earlier %.1f %%; selectors seen earlier in the block %.1f %%, only in an earlier block %.1f %%; "+
		"repeated words' previous copy %.0f words back (median), %.1f %% beyond 256, in runs %.1f %%, a 2nd / 3rd–5th / 6th+ occurrence %.1f / %.1f / %.1f %%; recipients %.0f transactions back; payload raw/Snappy %.2f",
		s.TypeShare[0], s.TypeShare[1], s.TypeShare[2], s.TypeShare[3], s.TypeShare[4], s.Kind.Transfer, s.Kind.Token, s.Kind.Other,
		s.LegacyByKind.Transfer, s.LegacyByKind.Token, s.LegacyByKind.Other, s.TxsPerBlock, s.MeanTx, s.TxSize, s.WordsPerTx, s.OtherWords,
		s.ByteShare.Calldata, s.ByteShare.AccessList, s.ByteShare.Rest, s.ZeroShareAll,
		s.WordKind.Zero, s.WordKind.Address, s.WordKind.Small, s.WordKind.Mid, s.WordKind.Wide, s.WordRepeatBlock, s.AddrRepeatBlock, s.AddrWordRepeatBlock, s.ToSeenBlock,
		s.WordRepeatEarly, s.ToSeenEarlier, s.SelectorSeenBlock, s.SelectorSeenEarly,
		s.WordRepeatGap, s.WordRepeatFar, s.WordRepeatRun, s.RepeatOccurrence[0], s.RepeatOccurrence[1], s.RepeatOccurrence[2], s.ToRepeatGap, s.PayloadRawSnappy)
}

func sumOf(v []float64) (s float64) {
	for _, x := range v {
		s += x
	}
	return s
}

func fmtRun(f runFigures) string {
	return fmt.Sprintf("%d payloads, %d txs (%.0f per block), %.1f kB per payload, raw/Snappy %.3f, zeros %.2f %%, one payload better %.4f; %d windows of %d: better %.4f zstd %.4f; whole run: better %.4f zstd %.4f",
		f.blocks, f.txs, float64(f.txs)/float64(f.blocks), f.payloadKB, f.rawPerSnappy, f.zeroShare, f.single, f.windows, ContentWindow, f.better, f.zstd, f.betterAll, f.zstdA)
}

// TestRecordsFit holds the records layout as fitted (withRecords, on models 2025 and 2026) to
// the 100 payloads' statistics, over era 2026-02 seeds 1–4 (42 payloads each, means): the
// padding runs recurring in their call two and one words back within 3 and 1.5 points of the
// 100's 14.9 and 2.1 %, words repeated in the block within 4 points of 42.4 %, words first in
// a block that an earlier one used within 4 of 20.1 %, zero bytes within 3 of 50.6 %, the
// words that repeat the word one or two back in calls of ≥ 128 words addresses and small
// numbers within 5 points of the 100's 98.3 % (payloadstat.MeasureColumns; the layout that
// drew a column's kind from the model's word mix gave 47 and 38 % for seeds 1 and 2); and the
// same seed gives the same payloads. Not parallel: it swaps the content models that the
// package's parallel tests (TestContentStatistics, TestConsecutiveMainnet, …) read, and a
// sequential test ends before any parallel one resumes.
func TestRecordsFit(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 4 × 42 payloads")
	}
	// No era lays its calls out as records yet (Era.Records); the fit is held on era
	// 2026-02's content with them. TestRecordsFit is not parallel, so the swap is its own.
	saved := contentModels
	defer func() { contentModels = saved }()
	contentModels = map[string]*contentModel{}
	for k, m := range saved {
		contentModels[k] = m
	}
	for k, m := range recordModels {
		contentModels[k] = m
	}
	var at1, at2, inBlock, early, zeros, colKinds float64
	seeds := []int64{1, 2, 3, 4}
	for _, seed := range seeds {
		pls := eraPayloads(t, "2026-02", seed, 3*ContentWindow)
		c, err := payloadstat.MeasureInCall(pls)
		if err != nil {
			t.Fatal(err)
		}
		st, err := payloadstat.Measure(pls)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := payloadstat.MeasureColumns(pls)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("seed %d: %s; words repeated in the block %.1f %%, first in the block seen earlier %.1f %%, zeros %.1f %%; columns: %s", seed, c, st.WordRepeatBlock, st.WordRepeatEarly, st.ZeroShareAll, cols)
		n := float64(len(seeds))
		colKinds += (cols.Kind[1].Address + cols.Kind[1].Small) / n
		at1, at2 = at1+c.At[0]/n, at2+c.At[1]/n
		inBlock, early, zeros = inBlock+st.WordRepeatBlock/n, early+st.WordRepeatEarly/n, zeros+st.ZeroShareAll/n
		if seed == 1 {
			if again := eraPayloads(t, "2026-02", seed, 2); !bytes.Equal(again[1], pls[1]) {
				t.Error("seed 1 gave other payloads the second time")
			}
		}
	}
	w := run100
	for _, c := range []struct {
		name           string
		got, want, tol float64
	}{
		{"padding recurring two words back (%)", at2, w.inCall2w, 3},
		{"padding recurring one word back (%)", at1, w.inCall1w, 1.5},
		{"words repeated in the block (%)", inBlock, w.wordsInBlock, 4},
		{"words first in the block seen in an earlier one (%)", early, w.earlier42, 4},
		{"zero bytes in transactions (%)", zeros, w.zeros, 3},
		{"words repeated one or two back that are addresses or small, calls ≥ 128 words (%)", colKinds, run100Columns[1][1] + run100Columns[1][2], 5},
	} {
		if math.Abs(c.got-c.want) > c.tol {
			t.Errorf("%s %.1f, real %.1f ± %.1f", c.name, c.got, c.want, c.tol)
		}
	}
}
