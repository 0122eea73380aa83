package workload

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/holiman/uint256"

	"github.com/streamsim/streamsim/gossip"
)

func contentOf(t testing.TB, p Params, slots int) *ContentStats {
	t.Helper()
	g, err := NewGenerator(p)
	if err != nil {
		t.Fatal(err)
	}
	var c ContentStats
	for range slots {
		msgs, err := g.NextSlot()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Add(msgs); err != nil {
			t.Fatal(err)
		}
	}
	return &c
}

// TestContentStatistics holds every content statistic within ±10 % of its target (or the
// figure's absolute floor for shares under a few per cent) for two seeds. The block
// statistics of the 2023 mainnet sample are checked on era 2023-09, which carries that
// era's rollup batches in calldata as the sample does; the figures of 2026 (blob
// transactions, raw/Snappy, sizes on the wire) on the default era. Block statistics and
// contributions over four 14-block windows, aggregates over 32 mainnet-sized slots. A
// figure not held names why (Conflict) or is listed in notHeld with its reason.
func TestContentStatistics(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 240 slots")
	}
	t.Parallel() // CPU-bound: beside the package's other statistical tests, on both cores
	// Figures of 2026 that era 2023-09 cannot have, and the reverse.
	// (Sizes on the wire need more blocks than 56: TestMainnetBlocks holds them.)
	only2026 := map[string]bool{"type-3 transactions": true, "raw/Snappy per block (median)": true}
	wire := map[string]bool{"block on the wire, p50": true, "block on the wire, p99": true}
	// notHeld: figures outside ±10 % on era 2023-09, with the measured value in the test log.
	notHeld := map[string]string{
		"words repeated only across blocks": "the populations give ≈ 3 % against the sample's 4.1 %; raising them overshoots the recipients seen earlier",
		"to seen before (incl. same block)": "popular recipients recur within a block of ≈ 155 transactions more than in the sample (≈ 58 % against 52.3 %); fewer calls again to a recipient of the block do not lower it",
	}
	for _, seed := range []int64{1, 2} {
		sample := smallParams()
		sample.Seed = seed
		sample.BlockProbability = 1
		if err := sample.ApplyEra("2023-09"); err != nil {
			t.Fatal(err)
		}
		blocks2023 := contentOf(t, sample, 4*ContentWindow)
		now := smallParams()
		now.Seed = seed
		now.BlockProbability = 1
		now.Validators = DefaultParams().Validators / 4 // committees of 122: a consensus part nearer mainnet's
		blocks2026 := contentOf(t, now, 4*ContentWindow)
		full := DefaultParams()
		full.Seed = seed
		aggs := contentOf(t, full, 32) // 16 slots leave ±12 % of noise in the aggregate count
		for _, f := range blocks2023.Figures() {
			if f.Category == gossip.Aggregate || only2026[f.Name] || wire[f.Name] {
				continue
			}
			if why, ok := notHeld[f.Name]; ok && !f.Within() {
				t.Logf("seed %d: %s %.2f (target %.2f) not held: %s", seed, f.Name, f.Value, f.Target, why)
				continue
			}
			checkFigure(t, seed, f)
		}
		for _, f := range blocks2026.Figures() {
			if only2026[f.Name] || strings.HasPrefix(f.Name, "type-") {
				checkFigure(t, seed, f)
			}
		}
		for _, f := range aggs.Figures() {
			if f.Category == gossip.Aggregate {
				checkFigure(t, seed, f)
			}
		}
		// What the subset rule leaves shares nearly all its bits (independent draws at
		// 95 % density would share ~90 %).
		for _, f := range append(aggs.Figures(), blocks2026.Figures()...) {
			if f.Target == 0 && f.Unit == "%" && f.Value < 95 {
				t.Errorf("seed %d: %s %.1f %%, want ≥ 95 %%", seed, f.Name, f.Value)
			}
		}
	}
}

func checkFigure(t *testing.T, seed int64, f ContentFigure) {
	t.Helper()
	switch {
	case f.Conflict != "" && !f.Within():
		t.Logf("seed %d: %s %.2f (target %.2f) not held: %s", seed, f.Name, f.Value, f.Target, f.Conflict)
	case !f.Within():
		t.Errorf("seed %d: %s %.2f, want %.2f ± %.0f %%", seed, f.Name, f.Value, f.Target, 100*f.Tolerance)
	}
}

// TestContentStatsCounts checks the counting on a hand-made pair of blocks.
func TestContentStatsCounts(t *testing.T) {
	src, err := newTxSource(randFor(1), fillFor(1), &content2025)
	if err != nil {
		t.Fatal(err)
	}
	a, b := common.Address{1}, common.Address{2}
	w := func(v byte) []byte { x := make([]byte, 32); x[31] = v; return x }
	sel := []byte{1, 2, 3, 4}
	call := func(to common.Address, words ...[]byte) []byte {
		data := append([]byte(nil), sel...)
		for _, x := range words {
			data = append(data, x...)
		}
		raw, err := src.sign(types.DynamicFeeTxType, 0, to, data, uint256.NewInt(0), 50000, 1e9, nil)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	var c ContentStats
	// Block 1: a(w1, w2), a(w1): one recipient and selector repeat in the block, one word.
	// Block 2: b(w2, w3): the selector and w2 were seen in block 1, b was not.
	for _, txs := range [][][]byte{{call(a, w(1), w(2)), call(a, w(1))}, {call(b, w(2), w(3))}} {
		blk := emptyBlock()
		for _, raw := range txs {
			blk.Message.Body.ExecutionPayload.Transactions = append(blk.Message.Body.ExecutionPayload.Transactions, raw)
		}
		ssz, err := blk.MarshalSSZ()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.addBlock(ssz, len(ssz)/2); err != nil {
			t.Fatal(err)
		}
	}
	got := [...]int64{c.Txs, c.To, c.ToEarlier, c.ToSeen, c.Calls, c.SelEarlier, c.SelSeen, c.Words, c.WordsWithin, c.WordsAcross, c.Types[2]}
	want := [...]int64{3, 3, 0, 1, 3, 1, 2, 5, 1, 1, 3}
	if got != want {
		t.Fatalf("counts %v, want %v", got, want)
	}
}

// TestEveryTxType signs and decodes one transaction of each type the mix uses.
func TestEveryTxType(t *testing.T) {
	src, err := newTxSource(randFor(2), fillFor(2), &content2025)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []uint8{types.LegacyTxType, types.AccessListTxType, types.DynamicFeeTxType, types.BlobTxType, types.SetCodeTxType} {
		var hashes []common.Hash
		if typ == types.BlobTxType {
			hashes = []common.Hash{versionedHash(make([]byte, 48))}
		}
		raw, err := src.sign(typ, 1, common.Address{9}, []byte{1, 2, 3, 4}, uint256.NewInt(0), 50000, 1e9, hashes)
		if err != nil {
			t.Fatal(err)
		}
		var tx types.Transaction
		if err := tx.UnmarshalBinary(raw); err != nil || tx.Type() != typ {
			t.Fatalf("type %d: %v, decoded type %d", typ, err, tx.Type())
		}
		if _, err := types.Sender(types.NewPragueSigner(bigOne()), &tx); err != nil {
			t.Fatalf("type %d sender: %v", typ, err)
		}
	}
}

func randFor(seed uint64) *rand.Rand { return rand.New(rand.NewChaCha8([32]byte{byte(seed)})) }

func fillFor(seed uint64) func([]byte) {
	cc := rand.NewChaCha8([32]byte{byte(seed), 1})
	return func(b []byte) { _, _ = cc.Read(b) }
}

// TestRecords lays out calls as arrays of records: the head (its offset and count words),
// the length, columns of one value when every field is a column that stays, and the same
// bytes from the same seed.
func TestRecords(t *testing.T) {
	m := content2026
	m.records = recordLayout{minWords: 32, share: [2]float64{1, 1}, stride2: 1, column: 1, stay: 1, poolMax: 1}
	src, err := newTxSource(randFor(3), fillFor(3), &m)
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		n := 32 + src.rng.IntN(300)
		d := src.callArgs(nil, n)
		if len(d) != 32*n {
			t.Fatalf("%d words, want %d", len(d)/32, n)
		}
		// Head 0–2 words, then the offset 32·(head+1) and the count of two-word records.
		head := -1
		for h := range 3 {
			off := d[32*h : 32*h+32]
			if new(uint256.Int).SetBytes(off).Uint64() == uint64(32*(h+1)) && new(uint256.Int).SetBytes(d[32*h+32:32*h+64]).Uint64() == uint64((n-h-2)/2) {
				head = h
				break
			}
		}
		if head < 0 {
			t.Fatalf("%d words: no offset and count word in the first four", n)
		}
		recs := d[32*(head+2):]
		count := (n - head - 2) / 2
		for i := 1; i < count; i++ {
			if !bytes.Equal(recs[64*i:64*i+64], recs[:64]) {
				t.Fatalf("%d words: record %d differs from record 0 with every field a column that stays", n, i)
			}
		}
	}
	// Below minWords, generic words; the fitted layout from one seed gives the same bytes.
	if d := src.callArgs(nil, 31); len(d) != 31*32 {
		t.Fatalf("31 words: %d bytes", len(d))
	}
	gen := func() []byte {
		s, err := newTxSource(randFor(4), fillFor(4), &content2026r)
		if err != nil {
			t.Fatal(err)
		}
		var out []byte
		for range 20 {
			out = s.records(out, 200)
		}
		return out
	}
	if a, b := gen(), gen(); !bytes.Equal(a, b) {
		t.Fatal("the same seed gave other records")
	}
}

// TestRecordsOwnStream: the records layout draws from a random stream of its own, so that
// switching it on (model 2025 with and without records, the same seed) leaves every
// transaction's recipient and calldata length as they were. Words change from the first call
// laid out as records on (later calls copy its words, and the bytes drawn after it differ).
func TestRecordsOwnStream(t *testing.T) {
	gen := func(m *contentModel) []*types.Transaction {
		s, err := newTxSource(randFor(5), fillFor(5), m)
		if err != nil {
			t.Fatal(err)
		}
		var out []*types.Transaction
		for range 600 {
			raw, err := s.tx(7)
			if err != nil {
				t.Fatal(err)
			}
			var tx types.Transaction
			if err := tx.UnmarshalBinary(raw); err != nil {
				t.Fatal(err)
			}
			out = append(out, &tx)
		}
		return out
	}
	plain, rec := gen(&content2025), gen(&content2025r)
	changed := 0
	for i := range plain {
		a, b := plain[i], rec[i]
		if *a.To() != *b.To() || len(a.Data()) != len(b.Data()) {
			t.Fatalf("tx %d: to %x, %d B of calldata; with records %x, %d B", i, *a.To(), len(a.Data()), *b.To(), len(b.Data()))
		}
		if !bytes.Equal(a.Data(), b.Data()) {
			if n := (len(a.Data()) - 4) / 32; changed == 0 && n < records2026.minWords {
				t.Errorf("tx %d: the first call that changed has %d words", i, n)
			}
			changed++
		}
	}
	if changed == 0 {
		t.Error("no call laid out as records in 600 transactions")
	}
	t.Logf("%d of %d calls changed", changed, len(plain))
}
