package workload

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/attestantio/go-eth2-client/spec/capella"
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

func (f runFigures) String() string {
	return fmtRun(f)
}

// withoutWithdrawals re-encodes payloads with an empty withdrawal list, as the source of the
// real run gives them.
func withoutWithdrawals(t testing.TB, pls [][]byte) [][]byte {
	t.Helper()
	var out [][]byte
	for _, pl := range pls {
		var p deneb.ExecutionPayload
		if err := p.UnmarshalSSZ(pl); err != nil {
			t.Fatal(err)
		}
		p.Withdrawals = []*capella.Withdrawal{}
		b, err := p.MarshalSSZ()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

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

// TestConsecutiveMainnet measures the run of consecutive real 2026 payloads and era 2026-05's
// payloads by the same code: payload raw/Snappy, zero bytes in transactions, and windows of
// 14 consecutive payloads in one stream (snappy-stream 64 KiB better, zstd 3 with a 2 MiB
// window) over their per-message Snappy bytes. The real figures are held to what the
// committed run gives.
func TestConsecutiveMainnet(t *testing.T) {
	run := mainnetRun(t)
	var real [][]byte
	for _, s := range run {
		real = append(real, s.SSZ)
	}
	rf := measureRun(t, real)
	t.Logf("real %d–%d (%s): %s", run[0].Number, run[len(run)-1].Number, run[0].Time.Format("2006-01-02 15:04"), rf)
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
	for _, seed := range []int64{1, 2} {
		p := DefaultParams()
		p.Seed = seed
		if err := p.ApplyEra("2026-05"); err != nil {
			t.Fatal(err)
		}
		pls := payloads(t, blockSample(t, p, 3*ContentWindow))
		sf := measureRun(t, pls)
		t.Logf("2026-05 seed %d: %s", seed, sf)
		nf := measureRun(t, withoutWithdrawals(t, pls))
		t.Logf("2026-05 seed %d without withdrawals: %s", seed, nf)
	}
}

func fmtRun(f runFigures) string {
	return fmt.Sprintf("%d payloads, %d txs (%.0f per block), %.1f kB per payload, raw/Snappy %.3f, zeros %.2f %%, one payload better %.4f; %d windows of %d: better %.4f zstd %.4f; whole run: better %.4f zstd %.4f",
		f.blocks, f.txs, float64(f.txs)/float64(f.blocks), f.payloadKB, f.rawPerSnappy, f.zeroShare, f.single, f.windows, ContentWindow, f.better, f.zstd, f.betterAll, f.zstdA)
}
