package payloadstat

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/attestantio/go-eth2-client/spec/bellatrix"
	"github.com/attestantio/go-eth2-client/spec/capella"
	"github.com/attestantio/go-eth2-client/spec/deneb"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
)

// TestLoadMainnet: the real payloads decode, their block numbers are their names and their
// transaction counts the ones the sources give; the 28 payloads of 1 Feb 2026 are one run of
// consecutive blocks, the 2025 pair another, the rest single blocks.
func TestLoadMainnet(t *testing.T) {
	ss, err := LoadMainnet()
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]int{19426587: 37, 22162263: 142, 22431083: 139, 22431084: 95, 22869878: 301}
	var runTxs int
	for i, s := range ss {
		var p deneb.ExecutionPayload
		if err := p.UnmarshalSSZ(s.SSZ); err != nil {
			t.Fatalf("%d: %v", s.Number, err)
		}
		if n, ok := want[s.Number]; ok && (p.BlockNumber != s.Number || len(p.Transactions) != n) {
			t.Errorf("%d: payload of block %d with %d transactions, want %d", s.Number, p.BlockNumber, len(p.Transactions), n)
		}
		if s.Number >= 24_364_071 {
			runTxs += len(p.Transactions)
		}
		if i > 0 && ss[i-1].Number >= s.Number {
			t.Errorf("samples out of order: %d after %d", s.Number, ss[i-1].Number)
		}
		t.Logf("%d: %s, %d transactions, %d B", s.Number, s.Time.Format(time.DateTime), len(p.Transactions), len(s.SSZ))
	}
	if len(ss) != len(want)+28 {
		t.Fatalf("%d samples, want %d", len(ss), len(want)+28)
	}
	var lens []int
	for _, r := range Runs(ss) {
		lens = append(lens, len(r))
	}
	if !slices.Equal(lens, []int{1, 1, 2, 1, 28}) {
		t.Errorf("runs of consecutive payloads %v, want [1 1 2 1 28]", lens)
	}
	run := LongestRun(ss)
	if run[0].Number != 24_364_071 || run[0].Time != time.Date(2026, 2, 1, 19, 21, 59, 0, time.UTC) || runTxs != 10_288 {
		t.Errorf("run from %d at %s with %d transactions, want 24 364 071 at 2026-02-01 19:21:59 with 10 288", run[0].Number, run[0].Time, runTxs)
	}
	for i := 1; i < len(run); i++ {
		if d := run[i].Time.Sub(run[i-1].Time); d != 12*time.Second {
			t.Errorf("block %d %v after the previous one, want one slot (12 s)", run[i].Number, d)
		}
	}
	r25, err := Mainnet2025()
	if err != nil || len(r25) != 4 {
		t.Fatalf("Mainnet2025: %d payloads, %v; want 4", len(r25), err)
	}
}

func word(v []byte) []byte {
	w := make([]byte, 32)
	copy(w[32-len(v):], v)
	return w
}

func payload(t *testing.T, txs ...*types.Transaction) []byte {
	t.Helper()
	p := &deneb.ExecutionPayload{BaseFeePerGas: uint256.NewInt(7), ExtraData: []byte{}, Withdrawals: []*capella.Withdrawal{}}
	for _, tx := range txs {
		b, err := tx.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		p.Transactions = append(p.Transactions, bellatrix.Transaction(b))
	}
	b, err := p.MarshalSSZ()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMeasure counts a hand-made pair of payloads.
func TestMeasure(t *testing.T) {
	key, _ := crypto.HexToECDSA("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	signer := types.NewPragueSigner(common.Big1)
	a, c := common.Address{0xaa}, common.Address{0xcc}
	b := common.HexToAddress("0x1111111111111111111111111111111111111111")
	sel := []byte{1, 2, 3, 4}
	call := func(n uint64, to common.Address, amount byte) *types.Transaction {
		data := append(append(append([]byte(nil), sel...), word(b[:])...), word([]byte{amount})...)
		tx, err := types.SignNewTx(key, signer, &types.DynamicFeeTx{ChainID: common.Big1, Nonce: n, GasTipCap: common.Big1,
			GasFeeCap: common.Big2, Gas: 50000, To: &to, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	plain := func(n uint64, to common.Address) *types.Transaction {
		tx, err := types.SignNewTx(key, signer, &types.LegacyTx{Nonce: n, GasPrice: common.Big2, Gas: 21000, To: &to})
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	first := payload(t, call(0, a, 5), call(1, a, 7), plain(2, c))
	second := payload(t, plain(3, c))
	s, err := Measure([][]byte{first, second})
	if err != nil {
		t.Fatal(err)
	}
	near := func(name string, got, want float64) {
		if math.Abs(got-want) > 0.01 {
			t.Errorf("%s %.3f, want %.3f", name, got, want)
		}
	}
	if s.Blocks != 2 || s.Txs != 4 {
		t.Fatalf("%d blocks, %d transactions", s.Blocks, s.Txs)
	}
	near("type 0 share", s.TypeShare[0], 50)
	near("type 2 share", s.TypeShare[2], 50)
	near("words per tx", s.WordsPerTx, 1)                          // 4 words over 4 transactions
	near("calldata zero share", s.ZeroShare.Calldata, 100*43.0/68) // 12 + 31 zeros in 4 + 64 bytes
	near("address words", s.WordKind.Address, 50)
	near("small words", s.WordKind.Small, 50)
	near("to seen in the block", s.ToSeenBlock, 25)   // the second call to a
	near("to seen only earlier", s.ToSeenEarlier, 25) // c again in the second payload
	near("selector seen in the block", s.SelectorSeenBlock, 50)
	near("words repeated in the block", s.WordRepeatBlock, 25) // b's word again
	near("word repeat gap", s.WordRepeatGap, 2)
	near("to repeat gap", s.ToRepeatGap, 1)
	near("repeats in runs", s.WordRepeatRun, 0) // 5 then 7: the run breaks
	near("repeats that are a 2nd occurrence", s.RepeatOccurrence[0], 100)
	near("address words seen in the block", s.AddrWordRepeatBlock, 50)
	near("transactions per block (median)", s.TxsPerBlock, 3)
	near("plain transfers", s.Kind.Transfer, 50)
	near("token calls", s.Kind.Token, 0) // selector 01020304 is no ERC-20 one
	near("other calls", s.Kind.Other, 50)
	near("legacy among transfers", s.LegacyByKind.Transfer, 100)
	near("legacy among other calls", s.LegacyByKind.Other, 0)
	near("words of other calls (median)", s.OtherWords[2], 2)
	if s.TxSize[0] > s.TxSize[2] || s.TxSize[2] > s.TxSize[4] || s.TxSize[0] == 0 {
		t.Errorf("transaction sizes %v", s.TxSize)
	}
	if s.ByteShare.Calldata <= 0 || s.ByteShare.Rest <= 0 || s.ByteShare.AccessList != 0 {
		t.Errorf("byte shares %+v", s.ByteShare)
	}
	if _, err := Measure([][]byte{{1, 2, 3}}); err == nil {
		t.Error("a payload that is not SSZ: no error")
	}
}

// TestMeasureMatches parses payloads whose repeats are known: a call of 3 000 random bytes
// alone, then again in the next payload (an earlier-block match), then twice in one payload
// (a match within the block, 1–8 KiB back).
func TestMeasureMatches(t *testing.T) {
	key, _ := crypto.HexToECDSA("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	signer := types.NewPragueSigner(common.Big1)
	data := make([]byte, 3000)
	for i := range data {
		data[i] = byte(i*7919>>3) ^ byte(i*104729>>11) ^ byte(i)
	}
	to := common.Address{0xaa}
	tx, err := types.SignNewTx(key, signer, &types.DynamicFeeTx{ChainID: common.Big1, GasTipCap: common.Big1,
		GasFeeCap: common.Big2, Gas: 500000, To: &to, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	one := payload(t, tx)
	m, err := MeasureMatches([][]byte{one, one})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the same payload twice: %s", m)
	if m.Earlier[0] < 45 || m.Earlier[0] > 50 || m.Near[0]+m.Near[1]+m.Near[2]+m.Near[3] > 5 || m.Literal < 45 {
		t.Errorf("the same payload twice: %+v, want half the bytes an earlier-block match < 64 KiB back", m)
	}
	m, err = MeasureMatches([][]byte{payload(t, tx, tx)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("one payload with a transaction twice: %s", m)
	if m.Near[1] < 45 || m.Near[1] > 50 || m.Earlier[0]+m.Earlier[1] != 0 || m.ByLength[0][3] < 45 {
		t.Errorf("a transaction twice: %+v, want half the bytes an in-block match 1–8 KiB back, of ≥ 256 B", m)
	}
	if _, err := MeasureMatches([][]byte{{1, 2, 3}}); err == nil {
		t.Error("a payload that is not SSZ: no error")
	}
}

// TestMeasureZeroRuns: on a made payload, the runs of 12 zero bytes or more are counted and
// averaged, and a run of 16 or more is placed by the previous run with the same preceding
// byte and length.
func TestMeasureZeroRuns(t *testing.T) {
	zeros := func(n int) []byte { return make([]byte, n) }
	var p []byte
	p = append(p, 0x40)
	p = append(p, zeros(30)...) // first 0x40/30: none earlier
	p = append(p, 0x01, 0x02)
	p = append(p, zeros(12)...) // counted, too short to place
	p = append(p, 0x40)
	p = append(p, zeros(30)...) // 0x40/30 again, 45 B back: < 1 KiB
	p = append(p, 0x07)
	p = append(p, zeros(5)...) // not a run of 12
	for range 2000 {
		p = append(p, 0xff)
	}
	p = append(p, 0x40)
	p = append(p, zeros(30)...) // 0x40/30, 2 KiB back: 1–8 KiB
	p = append(p, 0x41)
	p = append(p, zeros(30)...) // other byte: none earlier
	p = append(p, 0x09)
	z := MeasureZeroRuns([][]byte{p})
	if z.Bytes != int64(len(p)) {
		t.Fatalf("bytes %d, want %d", z.Bytes, len(p))
	}
	if want := 1000 * 5 / float64(len(p)); math.Abs(z.PerKB-want) > 1e-9 {
		t.Errorf("runs per KB %.4f, want %.4f (5 runs)", z.PerKB, want)
	}
	if want := (4*30 + 12) / 5.0; math.Abs(z.MeanLen-want) > 1e-9 {
		t.Errorf("mean run %.2f, want %.2f", z.MeanLen, want)
	}
	if z.Recur != [4]float64{25, 25, 0, 50} {
		t.Errorf("recurrence %v, want [25 25 0 50]", z.Recur)
	}
	// The same payload twice: each is measured alone, so the figures hold.
	if z2 := MeasureZeroRuns([][]byte{p, p}); z2.Recur != z.Recur || math.Abs(z2.PerKB-z.PerKB) > 1e-9 {
		t.Errorf("two copies: %v, one: %v", z2, z)
	}
}

// TestMeasureInCall counts a hand-made call: an array of two-word records whose second field
// repeats one address, so each record's padding run recurs exactly two words back.
func TestMeasureInCall(t *testing.T) {
	key, _ := crypto.HexToECDSA("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	signer := types.NewPragueSigner(common.Big1)
	tok := common.HexToAddress("0x1111111111111111111111111111111111111111")
	data := []byte{1, 2, 3, 4}
	for i := range 200 {
		data = append(data, word([]byte{byte(i + 1), 0xee})...) // a field of its own each record
		data = append(data, word(tok[:])...)
	}
	tx := types.MustSignNewTx(key, signer, &types.DynamicFeeTx{ChainID: common.Big1, Nonce: 1, GasTipCap: common.Big1, GasFeeCap: common.Big2, Gas: 1e6, To: &tok, Value: common.Big0, Data: data})
	short := types.MustSignNewTx(key, signer, &types.DynamicFeeTx{ChainID: common.Big1, Nonce: 2, GasTipCap: common.Big1, GasFeeCap: common.Big2, Gas: 1e6, To: &tok, Value: common.Big0, Data: data[:4+64]})
	c, err := MeasureInCall([][]byte{payload(t, tx, short)})
	if err != nil {
		t.Fatal(err)
	}
	// Runs: each first field's padding (30 B; the address's 12 B are too short), 200 in the long
	// call and one in the short. The first follows the selector, the second is the first after
	// an address, the other 198 recur 64 B back.
	if c.Runs != 201 {
		t.Fatalf("runs %d, want 201 (%v)", c.Runs, c)
	}
	want := 100 * 198.0 / 201
	if math.Abs(c.Recur-want) > 1e-9 || math.Abs(c.At[1]-want) > 1e-9 || c.At[0] != 0 || c.AtOther != 0 {
		t.Errorf("recurrence %.3f, two words back %.3f, one %.3f, other %.3f; want %.3f, %.3f, 0, 0", c.Recur, c.At[1], c.At[0], c.AtOther, want, want)
	}
	if math.Abs(c.RunShare[2]-100*200.0/201) > 1e-9 || math.Abs(c.RecurIn[2]-100*198.0/200) > 1e-9 || c.RecurIn[0] != 0 {
		t.Errorf("by length: runs %v, recurring %v", c.RunShare, c.RecurIn)
	}
	if want := 100 * 400.0 / 402; math.Abs(c.LongWords-want) > 1e-9 {
		t.Errorf("words in long calls %.3f %%, want %.3f", c.LongWords, want)
	}
}

// TestMeasureColumns counts hand-made calls: an array of two-word records whose first field
// is a number of its own each record and whose second repeats one address (a column two
// words back), a one-word column of a small number, and a short call that is not counted.
func TestMeasureColumns(t *testing.T) {
	key, _ := crypto.HexToECDSA("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	signer := types.NewPragueSigner(common.Big1)
	tok := common.HexToAddress("0x1111111111111111111111111111111111111111")
	long := []byte{1, 2, 3, 4}
	for i := range 100 { // 200 words
		long = append(long, word([]byte{byte(i + 1), 0xee})...)
		long = append(long, word(tok[:])...)
	}
	mid := []byte{5, 6, 7, 8}
	for range 40 { // 40 words: one column of one small number
		mid = append(mid, word([]byte{7})...)
	}
	sign := func(n uint64, data []byte) *types.Transaction {
		return types.MustSignNewTx(key, signer, &types.DynamicFeeTx{ChainID: common.Big1, Nonce: n, GasTipCap: common.Big1, GasFeeCap: common.Big2, Gas: 1e6, To: &tok, Value: common.Big0, Data: data})
	}
	c, err := MeasureColumns([][]byte{payload(t, sign(1, long), sign(2, mid), sign(3, long[:4+64*10]))})
	if err != nil {
		t.Fatal(err)
	}
	if c.Words != [2]int64{40, 200} {
		t.Fatalf("words %v, want [40 200] (%v)", c.Words, c)
	}
	// Long call: the address repeats two back in records 2…100 (99 words); the numbers differ.
	// The 40-word call: words 2…40 repeat the word one back.
	near := func(what string, got, want float64) {
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s %.4f, want %.4f (%v)", what, got, want, c)
		}
	}
	near("≥ 128, two back", c.Repeat[1][1], 100*99.0/200)
	near("≥ 128, one back", c.Repeat[1][0], 0)
	near("32–127, one back", c.Repeat[0][0], 100*39.0/40)
	if c.Kind[1] != (Words{Address: 100}) || c.Kind[0] != (Words{Small: 100}) {
		t.Errorf("kinds of the repeats %+v / %+v, want all addresses / all small", c.Kind[0], c.Kind[1])
	}
	near("≥ 128, address words", c.All[1].Address, 50)
	near("≥ 128, small words", c.All[1].Small, 50)
	// Two selectors with repeats, one all small and one all addresses.
	if c.Selectors != 2 || c.PerSelector != (Words{Address: 50, Small: 50}) {
		t.Errorf("per selector %d: %+v", c.Selectors, c.PerSelector)
	}
	near("most used selector", c.TopSelector, 100*200.0/240)
}
