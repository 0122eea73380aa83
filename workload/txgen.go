package workload

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
)

// Transaction kinds of the execution payload mix (blob transactions are added per block from
// the block's blobs, not drawn from the mix).
type txKind uint8

const (
	txTransfer txKind = iota // ETH transfer to an account, no calldata
	txERC20                  // token transfer / approve / transferFrom
	txSwap                   // router call: amounts, recipient, deadline, a path of tokens
	txCall                   // any other contract call, ABI words of mixed kinds
	txBlob                   // EIP-4844 blob transaction (hashes only, as in a block)
)

// kindMix is the cumulative share of each kind by count among non-blob transactions. It and
// the populations below are calibrated to the content statistics of docs/inputs.md §8 (share of
// recipients and selectors seen before, words per transaction); docs/workload-content.md
// gives the derivation.
var kindMix = []kindShare{
	{txTransfer, 0.26}, {txERC20, 0.50}, {txSwap, 0.64}, {txCall, 1},
}

// Envelope type mix of non-blob transactions (docs/workload-content.md cites the sources):
// legacy 20.6 % and access-list 0.2 % as in the 14 mainnet blocks of docs/inputs.md §8,
// EIP-7702 set-code 0.2 % (BundleBear: 144 658 set-code transactions in the first ~7 weeks
// after Pectra, ≈ 0.4 per block of ≈ 200), the rest EIP-1559.
const (
	legacyShare     = 0.206
	accessListShare = 0.002
	setCodeShare    = 0.002
)

// Well-known mainnet contracts hold the top ranks of their populations.
var (
	knownTokens = []common.Address{
		common.HexToAddress("0xdAC17F958D2ee523a2206206994597C13D831ec7"), // USDT
		common.HexToAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"), // USDC
		common.HexToAddress("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"), // WETH
		common.HexToAddress("0x6B175474E89094C44Da98b954EedeAC495271d0F"), // DAI
		common.HexToAddress("0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599"), // WBTC
		common.HexToAddress("0x514910771AF9Ca656af840dff83E8264EcF986CA"), // LINK
	}
	knownRouters = []common.Address{
		common.HexToAddress("0x66a9893cC07D91D95644AEDD05D03f95e1dBA8Af"), // Uniswap universal router v4
		common.HexToAddress("0x3fC91A3afd70395Cd496C647d5a6CC9D4B2b7FAD"), // Uniswap universal router
		common.HexToAddress("0x1111111254EEB25477B68fb85Ed929f73A960582"), // 1inch v5
		common.HexToAddress("0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D"), // Uniswap v2 router
		common.HexToAddress("0xE592427A0AEce92De3Edee1F18E0157C05861564"), // Uniswap v3 router
	}
	blobInbox = []common.Address{
		common.HexToAddress("0xFF00000000000000000000000000000000008453"), // Base batch inbox
		common.HexToAddress("0xFF00000000000000000000000000000000000010"), // OP mainnet batch inbox
		common.HexToAddress("0x41dDf7fC14a579E0F3f2D698e14c76d9d486B9F7"), // Scroll rollup
		common.HexToAddress("0x1c479675ad559DC151F6Ec7ed3FbF8ceE79582B6"), // Arbitrum sequencer inbox
		common.HexToAddress("0xd19d4B5d358258f05D7B411E21A1460D11B0876F"), // Linea
	}
	selTransfer     = [4]byte{0xa9, 0x05, 0x9c, 0xbb}
	selApprove      = [4]byte{0x09, 0x5e, 0xa7, 0xb3}
	selTransferFrom = [4]byte{0x23, 0xb8, 0x72, 0xdd}
	selBlobCommit   = [4]byte{0x3e, 0x5a, 0xa0, 0x82}
)

// Popularity shapes. Each population is Zipf–Mandelbrot, P(rank k) ∝ (v+k)^-s for k < n,
// plus a share of draws that are fresh (never-seen) values. Mainnet's contract popularity is
// heavy-tailed (a few tokens and routers take a large share, a long tail is called once);
// the exponents were chosen so that the share of recipients and selectors seen in an earlier
// block matches docs/inputs.md §8, not to reach any compression figure. Issue 38 refitted the
// fresh share of accounts and the contracts' exponent on era 2023-09, whose blocks carry the
// sample's rollup batches (docs/workload-content.md).
var (
	eoaShape      = shape{s: 1.2, v: 20, n: 2_000_000, fresh: 0.15}
	tokenShape    = shape{s: 1.25, v: 2, n: 50_000}
	routerShape   = shape{s: 1.6, v: 1, n: 2_000}
	contractShape = shape{s: 1.4, v: 4, n: 1_000_000, fresh: 0.05}
	// selectorShape is the popularity of a contract's own functions (rank 0 = its most
	// called); commonSelShape of the selectors many contracts share (multicall, execute, …).
	selectorShape  = shape{s: 1.8, v: 1, n: 24}
	commonSelShape = shape{s: 1.4, v: 1, n: 4_000}
	// constShape ranks the small ABI constants: head offsets 0x20·k, lengths, flags.
	constShape = shape{s: 1.5, v: 1, n: 512}
)

// Words of a generic call: a lognormal count (median per content model, σ and cap below)
// of word kinds drawn from the model's mix.
const (
	callWordsSigma = 1.1
	callWordsMax   = 1000
	// commonSelectorShare of calls use a selector many contracts share.
	commonSelectorShare = 0.7
)

type wordKind uint8

const (
	wZero   wordKind = iota
	wConst           // small ABI constants: offsets 0x20·k, lengths, flags
	wMax             // 2^256−1 (unlimited approvals, sentinels)
	wAddr            // an address, left-padded
	wAmount          // a token amount of the model's significant bytes
	wBig             // 9–16 significant bytes: 18-decimal amounts, prices, liquidity
	wID              // 3–4 significant bytes: deadlines, nonces, token ids, block numbers
	wRandom          // 32 random bytes: hashes, signatures, proofs, packed data
)

type kindShare struct {
	kind  txKind
	cumul float64
}

// envelopeMix is the share of legacy (type 0), access-list (type 1) and set-code (type 4)
// envelopes among transactions; the rest are EIP-1559 (type 2).
type envelopeMix struct{ legacy, accessList, setCode float64 }

// recordLayout is how many generic calls are arrays of records: share[0] of the calls of
// minWords–127 argument words and share[1] of those of ≥ 128 (none if minWords is zero);
// stride2 of them have records of two words (else one); a field's value comes from the
// call's pool of 1…poolMax values with probability pool.
type recordLayout struct {
	minWords              int
	share                 [2]float64
	stride2, column, stay float64
	poolMax               int
	// columnKinds[b], when set, are the kinds (cumulative) of the columns of calls of
	// minWords–127 words (b 0) and of ≥ 128 (b 1); nil draws them from the model's word mix.
	columnKinds [2][]wordShare
	// span, when set, is how many records a field keeps its kind and pool (then both are
	// drawn anew); zero keeps them for the whole call.
	span int
	// fieldKinds[b], when set, are the kinds of the fields that are not columns, as
	// columnKinds; nil draws them from the model's word mix.
	fieldKinds [2][]wordShare
	// steady keeps the numbers of a field that is not a column to the size (significant
	// bytes) of its first one, for the call or its span.
	steady bool
	// shiftWide of the wide words of the fields that are not columns are an inner call's
	// words read on the outer call's grid (the last 4 bytes of one word of the model's mix and
	// the first 28 of another), the others random (hashes, signatures).
	shiftWide float64
	// outer keeps records to the call's own words: records are drawn before an inner call
	// (nested) is, a records call carries none, and an inner call is no array of records.
	outer bool
}

type wordShare struct {
	kind  wordKind
	cumul float64
}

// contentModel is what an ordinary (non-batch, non-blob) transaction carries: how many
// calldata words and of what kinds, how often a block's transactions repeat a recipient,
// its arguments or single words, and how often an access list comes along. An era names its
// model (Era.Content); docs/workload-content.md gives the statistics each was fitted to.
type contentModel struct {
	name            string
	callWordsMedian float64     // generic calls: lognormal median of the word count
	wordMix         []wordShare // generic words by kind, cumulative
	amountBytes     [2]int      // token amounts: significant bytes min, max
	// sameBlockShare of transactions call again a recipient of an earlier transaction of
	// the block (bots and bursts); of these, repeatArgsShare repeat the arguments too but
	// for one or two words.
	sameBlockShare, repeatArgsShare float64
	// reuseShare of the non-zero generic words (and swap amounts) repeat a word already used
	// in the block: the same pool, amount, price or deadline in several transactions.
	// reuseOf, when set, replaces it by a share per kind of word, the copy of the same kind.
	reuseShare float64
	reuseOf    [8]float64
	// accessListShare of EIP-1559 transactions carry an access list; smallKeyShare of its
	// storage keys are small slot numbers (mostly zero bytes).
	accessListShare, smallKeyShare float64
	// againGap and reuseGap, when set, make those repeats near: the earlier transaction or
	// word is 1 + ⌊(gap−1)·E⌋ back, E exponential with mean 1 (see recent); zero draws
	// uniformly over the block.
	againGap, reuseGap float64
	// nestedShare of generic calls carry an inner call as ABI bytes; packedPathShare of
	// swaps carry their token path packed (Uniswap v3).
	nestedShare, packedPathShare float64
	// earlierShare of the non-zero generic words (and swap amounts) not repeated from the
	// block repeat a word of one of the earlierBlocks previous blocks (drawn uniformly): the
	// same pools, prices, amounts and accounts from block to block (bots, oracles, routers).
	earlierShare  float64
	earlierBlocks int
	// templateShare of the swaps and other calls not calling again a recipient of the block
	// repeat a call of one of the earlierBlocks previous blocks (drawn uniformly): its
	// recipient and its calldata, with templateRedraw of its words drawn anew (at least one):
	// a bot's, an oracle's or a keeper's call, block after block.
	templateShare, templateRedraw float64
	// records lays generic calls out as arrays of records (see txSource.records).
	records recordLayout

	// The fields below are set by model 2026 (and, for the populations of accounts and
	// contracts and the envelope's numbers, model 2025); left zero, the package-wide figures
	// the earlier models share apply (kindMix, callWordsSigma, the envelope shares, the
	// populations' shapes, one access-list entry, sameBlockShare's repeats).
	//
	// kinds is the mix of kinds (cumulative) of the transactions that do not continue a run.
	kinds []kindShare
	// runShare[k] of the transactions that follow one of kind k continue it: the same kind and
	// recipient (a sender's or a bot's consecutive transactions); a continued token call gets
	// new arguments, other calls repeat theirs but for one or two words (repeatArgsShare).
	runShare [4]float64
	// callSigma is the σ of a generic call's lognormal word count.
	callSigma float64
	// envelopes[k] are kind k's envelope types.
	envelopes *[4]envelopeMix
	// listShare[k] of kind k's EIP-1559 transactions carry an access list, of 1 + ⌊listAddrs·E⌋
	// addresses (the recipient first) with 0…2·listKeys storage keys each.
	listShare           [4]float64
	listAddrs, listKeys float64
	// eoa, token and contract replace the populations' shapes; anyToken and anyEOA are the
	// shares of tokens and accounts among generic address words (the rest contracts).
	eoa, token, contract *shape
	anyToken, anyEOA     float64
	// tokenZero and tokenMid of token calls' amounts are zero or of 9–16 significant bytes.
	tokenZero, tokenMid float64
	// tokenReuse of token calls' other amounts copy an amount of the block (with reuseOf).
	tokenReuse float64
	// tipBytes and valueBytes are the significant bytes of the priority fee and of a
	// transfer's value (uniform in the range); feeCapSlack the fee cap over the base fee
	// (base fee × (1 + slack·U) + tip); nonceBits the senders' first nonces (log-uniform
	// below 2^nonceBits).
	tipBytes, valueBytes [2]int
	feeCapSlack          float64
	nonceBits            int
}

// content2023 is the model refitted on era 2023-09 to the 14 consecutive mainnet payloads
// 18 090 205–218 (their rollup batches are added by the era, not by the model).
var content2023 = contentModel{
	name:            "2023",
	callWordsMedian: 22,
	wordMix: []wordShare{
		{wZero, 0.08}, {wConst, 0.14}, {wMax, 0.145}, {wAddr, 0.275}, {wAmount, 0.535}, {wID, 0.945}, {wRandom, 1},
	},
	amountBytes:     [2]int{3, 7},
	sameBlockShare:  0.14,
	repeatArgsShare: 0.85,
	accessListShare: 1.0 / 25,
}

// content2025 is the model fitted to the real mainnet payloads of 2025 held in
// workload/payloadstat/testdata (blocks 22 162 263, 22 431 083–084, 22 869 878), measured by
// payloadstat: their zero bytes sit in ABI padding around nested calls and packed paths
// rather than inside numbers, 46 % of their non-zero words repeat within the block a median
// 21 words after the previous copy, and a recipient called again was called a median one
// transaction before (docs/workload-content.md gives the figures and the fit).
var content2025 = contentModel{
	name:            "2025",
	callWordsMedian: 18,
	wordMix: []wordShare{
		{wZero, 0.11}, {wConst, 0.20}, {wMax, 0.205}, {wAddr, 0.51}, {wAmount, 0.70}, {wBig, 0.73}, {wID, 0.93}, {wRandom, 1},
	},
	amountBytes:     [2]int{3, 8},
	sameBlockShare:  0.22,
	repeatArgsShare: 0.85,
	reuseShare:      0.40,
	accessListShare: 0.28,
	smallKeyShare:   0.35,
	againGap:        1.3,
	reuseGap:        12,
	nestedShare:     0.4,
	packedPathShare: 0.5,
	// Fitted to the 100 consecutive payloads of 1 Feb 2026 (the 2025 sample has no run of
	// consecutive blocks): calls repeated from earlier blocks, the envelope's numbers, the
	// populations of accounts and contracts (see content2026).
	templateShare:  0.3,
	templateRedraw: 0.15,
	earlierBlocks:  ContentWindow,
	eoa:            &shape{s: 1.2, v: 30, n: 2_000_000, fresh: 0.2},
	contract:       &shape{s: 1.4, v: 15, n: 1_000_000, fresh: 0.05},
	tipBytes:       [2]int{1, 4},
	valueBytes:     [2]int{4, 8},
	feeCapSlack:    0.5,
	nonceBits:      12,
}

// content2026 is content2025 refitted to the statistics of the 100 consecutive mainnet
// payloads 24 364 071–170 (1 Feb 2026, gas limit 60 M; the first 28 are in
// workload/payloadstat/testdata), measured by payloadstat: words of 9–16 significant bytes
// (18-decimal amounts, prices) are 12 % of calldata words (model 2025: 3 %); 39 % of the
// transactions are plain transfers and 37 % ERC-20 token calls, so the other calls (24 %) are
// large (a median 12 words, 105 at the 90th percentile); legacy envelopes are 20 % of
// transfers, 10 % of token calls and 6 % of other calls (12.8 % in all), and access lists are
// rare (5 % of other calls) but long (10 addresses); a transaction continues the previous
// one's run (same kind and recipient) in 10 % of transfers, 46 % of token calls and 13 % of
// other calls; addresses recur within the block less (41 % seen earlier in it) and words of
// earlier blocks more (20 % of the non-zero words first used in a block over the first 42).
// docs/workload-content.md gives the figures and the fit.
var content2026 = func() contentModel {
	m := content2025
	m.name = "2026"
	m.wordMix = []wordShare{
		{wZero, 0.14}, {wConst, 0.23}, {wMax, 0.235}, {wAddr, 0.47}, {wAmount, 0.61}, {wBig, 0.78}, {wID, 0.93}, {wRandom, 1},
	}
	// Words of earlier blocks come in calls repeated from them (templateShare, from
	// content2025's fit), not one word at a time.
	m.templateShare, m.templateRedraw = 0.27, 0.15
	// Kinds drawn afresh ∝ share × (1 − run share), so that with the runs transfers, token
	// calls, swaps and other calls are 39, 37, 4 and 20 % of the transactions.
	m.kinds = []kindShare{{txTransfer, 0.464}, {txERC20, 0.730}, {txSwap, 0.770}, {txCall, 1}}
	m.runShare = [4]float64{txTransfer: 0.10, txERC20: 0.46, txSwap: 0.13, txCall: 0.13}
	m.callWordsMedian, m.callSigma = 14, 1.8
	// In-block copies by kind of word (reuseShare only switches them on), near: 1 + ⌊5·E⌋
	// words of the kind back; token amounts copy one in 15 %.
	m.reuseOf = [8]float64{wAddr: 0.08, wAmount: 0.55, wBig: 0.7, wID: 0.55, wMax: 0.5, wRandom: 0.15}
	m.reuseGap = 6
	m.tokenReuse = 0.15
	m.envelopes = &[4]envelopeMix{
		txTransfer: {legacy: 0.196, accessList: 0.001, setCode: 0.001},
		txERC20:    {legacy: 0.101},
		txSwap:     {legacy: 0.057, accessList: 0.004, setCode: 0.015},
		txCall:     {legacy: 0.057, accessList: 0.004, setCode: 0.015},
	}
	m.listShare = [4]float64{txSwap: 0.055, txCall: 0.055}
	m.listAddrs, m.listKeys, m.smallKeyShare = 9, 4.4, 0.46
	m.eoa = &shape{s: 1.2, v: 30, n: 2_000_000, fresh: 0.2}
	m.token = &shape{s: 1.6, v: 1, n: 50_000}
	m.contract = &shape{s: 1.4, v: 15, n: 1_000_000, fresh: 0.05}
	m.anyToken, m.anyEOA = 0.15, 0.80
	m.tokenZero, m.tokenMid = 0.11, 0.10
	m.tipBytes, m.valueBytes, m.feeCapSlack, m.nonceBits = [2]int{1, 4}, [2]int{4, 8}, 0.5, 12
	return m
}()

// records2026 lays out generic calls as arrays of records, fitted to the 100 consecutive
// mainnet payloads 24 364 071–170 (payloadstat.MeasureInCall, MeasureColumns and Measure):
// there 29 % of the calldata's zero-padding runs recur in their own call less than 1 KiB
// back, 14.9 % exactly two words back and 2.1 % one word back (records of two words and of
// one: 0.88 of the strided ones of two), 1.7 % four words back. The calls are on the outer
// call's grid, never inside an inner call (of the real words that repeat the word one or two
// back in calls of ≥ 128 words, 1.7 % read as wide words, as an inner call's would): 50 % of
// the generic calls of 32–127 words and all those of ≥ 128 are records, drawn before the
// inner call is, and carry none. 35 % of a record's fields are columns of a pool of 1–3 values, the value the
// previous record's with probability 0.7; a column's kind is drawn from the kinds of the real
// repeated words (run100Columns: small numbers and addresses), the other fields' kinds so
// that all the fields come out as the real long calls' words (run100LongCalls; 35 % is the
// most columns for which that holds). A field keeps its kind and pool for 12 records, then
// draws both anew, so that no single long call carries a block's word mix; a number field
// that is not a column keeps the size of its first number (amounts of one token). 70 % of the
// wide words of those fields are an inner call's words read on the outer grid, the rest
// random, for the real wide words' 41.6 % of zero bytes. That puts era 2026-02's recurrence
// one, two and four words back at 2.6, 13.1 and 0.9 % (4 seeds of 42 payloads); the 8 % of
// the real runs that recur at distances other than whole words (ABI heads of dynamic
// arguments) are not modelled.
var records2026 = recordLayout{
	minWords: 32, share: [2]float64{0.5, 1}, outer: true,
	stride2: 0.88, column: 0.35, stay: 0.7, poolMax: 3, span: 12, steady: true,
	columnKinds: [2][]wordShare{kindsOf(run100Columns[0]), kindsOf(run100Columns[1])},
	fieldKinds: [2][]wordShare{
		kindsOf(without(run100LongCalls[0], run100Columns[0], 0.35)),
		kindsOf(without(run100LongCalls[1], run100Columns[1], 0.35)),
	},
	shiftWide: 0.7,
}

// run100Columns are the kinds of the 100 payloads' non-zero calldata words that repeat the
// word one or two back, in calls of 32–127 and of ≥ 128 words (payloadstat.MeasureColumns),
// % zero / address / small / mid / wide.
var run100Columns = [2][5]float64{{0, 38.6, 47.4, 0.7, 13.3}, {0, 21.3, 77.0, 0.1, 1.7}}

// run100LongCalls are the kinds of all the 100 payloads' calldata words in calls of 32–127
// and of ≥ 128 words (payloadstat.MeasureColumns), as run100Columns.
var run100LongCalls = [2][5]float64{{11.5, 14.5, 26.3, 3.7, 44.0}, {8.8, 12.6, 27.4, 19.7, 31.5}}

// without is the split of the words a record's other fields draw so that, beside a column
// share c of fields drawn from col, all the fields come out as all: (all − c·col) / (1 − c),
// kind by kind, clipped at zero.
func without(all, col [5]float64, c float64) [5]float64 {
	for k := range all {
		all[k] = max(0, (all[k]-c*col[k])/(1-c))
	}
	return all
}

// run100SmallBytes splits the small words of the 100 payloads that repeat the word two back
// in calls of ≥ 32 words by significant bytes: 1–2 (constants, flags), 3–4 (ids), 5–8
// (amounts), %.
var run100SmallBytes = [3]float64{16.8, 37.9, 45.2}

// kindsOf turns a split of words by kind (% zero, address, small, mid, wide) into the word
// kinds a generator draws (cumulative): small words as constants, ids and amounts by
// run100SmallBytes, mid as wBig, wide as wRandom.
func kindsOf(v [5]float64) []wordShare {
	sb := run100SmallBytes
	sbt := sb[0] + sb[1] + sb[2]
	parts := []struct {
		k wordKind
		x float64
	}{
		{wZero, v[0]}, {wConst, v[2] * sb[0] / sbt}, {wAddr, v[1]}, {wAmount, v[2] * sb[2] / sbt},
		{wBig, v[3]}, {wID, v[2] * sb[1] / sbt}, {wRandom, v[4]},
	}
	var tot, cum float64
	for _, p := range parts {
		tot += p.x
	}
	var out []wordShare
	for _, p := range parts {
		if p.x == 0 {
			continue
		}
		cum += p.x / tot
		out = append(out, wordShare{p.k, cum})
	}
	out[len(out)-1].cumul = 1
	return out
}

// withRecords returns m with its generic calls laid out as records2026 and, for a model with
// in-block copies by kind (model 2026), the shares its records change refitted to the 100
// payloads' statistics: no copies of address words (the columns repeat addresses: addresses
// seen earlier in the block 47 % for era 2026-02, the 100 40.6 %), calls repeated from
// earlier blocks 0.32 (words first in a block that an earlier one used 18–19 %, the 100 20.1 %).
func withRecords(m contentModel) contentModel {
	m.records = records2026
	if m.reuseOf != ([8]float64{}) {
		m.reuseOf[wAddr] = 0
		m.templateShare = 0.32
	}
	return m
}

// contentModels are the known models by name; recordModels the models with records
// (withRecords), for the eras that lay long calls out as records (Era.Records).
var (
	contentModels = map[string]*contentModel{content2023.name: &content2023, content2025.name: &content2025, content2026.name: &content2026}
	content2025r  = withRecords(content2025)
	content2026r  = withRecords(content2026)
	recordModels  = map[string]*contentModel{content2025.name: &content2025r, content2026.name: &content2026r}
)

type shape struct {
	s, v  float64
	n     uint64
	fresh float64
}

// population draws addresses (or selectors) by rank from a shape; rank r's value is the
// known value r, else derived from the salt, the tag and r.
type population struct {
	shape
	z     *rand.Zipf
	tag   byte
	known []common.Address
}

func newPopulation(rng *rand.Rand, sh shape, tag byte, known []common.Address) *population {
	return &population{shape: sh, z: rand.NewZipf(rng, sh.s, sh.v, sh.n-1), tag: tag, known: known}
}

const numSenders = 192

// txSource builds and signs transactions with go-ethereum. Senders are a fixed set of keys
// derived from the seed, each with its own nonce (senders are not in a transaction's bytes;
// only their signatures are).
type txSource struct {
	rng     *rand.Rand
	fill    func([]byte)
	signer  types.Signer
	chainID *uint256.Int
	keys    []*ecdsa.PrivateKey
	nonces  []uint64
	salt    [16]byte

	eoas, tokens, routers, contracts *population
	selectors, commonSels, consts    *rand.Zipf
	model                            *contentModel
	words                            float64       // log median of a generic call's words
	inBlock                          []target      // recipients of the current block's transactions
	blockWords                       [][32]byte    // non-zero generic words of the current block
	pastWords                        [][][32]byte  // blockWords of the model's earlierBlocks previous blocks
	pastCalls                        [][]target    // swaps and other calls of those blocks (models with templates)
	kindWords                        [8][][32]byte // blockWords by kind (models with reuseOf)
	// rec is the random stream of the records layout (see recordsCall); nil for models without it.
	rec *recStream
}

// recStream is a random stream of its own, with the draws of the populations and constants
// bound to it, for the calls laid out as records: the transactions' other draws come from
// the main stream as they would without records, so that switching the layout on changes the
// words of those calls and nothing else (not which transactions, calls or lengths a block
// holds).
type recStream struct {
	rng                              *rand.Rand
	fill                             func([]byte)
	eoas, tokens, routers, contracts *rand.Zipf
	consts                           *rand.Zipf
}

// target is a recipient with its kind and popularity rank (which fixes its selectors).
type target struct {
	kind txKind
	to   common.Address
	rank uint64
	data []byte
}

// startBlock forgets the previous block's recipients and words (keeping the words, or the
// swaps and other calls, for the model's earlierBlocks blocks when it repeats words or calls
// across blocks).
func (s *txSource) startBlock() {
	if n := s.model.earlierBlocks; n > 0 && s.model.templateShare > 0 && len(s.inBlock) > 0 {
		var calls []target
		for _, t := range s.inBlock {
			if (t.kind == txCall || t.kind == txSwap) && len(t.data) >= 4+32 {
				calls = append(calls, t)
			}
		}
		if len(s.pastCalls) == n {
			s.pastCalls = append(s.pastCalls[:0], s.pastCalls[1:]...)
		}
		s.pastCalls = append(s.pastCalls, calls)
	}
	s.inBlock = s.inBlock[:0]
	if n := s.model.earlierBlocks; n > 0 && s.model.earlierShare > 0 && len(s.blockWords) > 0 {
		if len(s.pastWords) == n {
			recycled := s.pastWords[0][:0]
			s.pastWords = append(s.pastWords[:0], s.pastWords[1:]...)
			s.pastWords = append(s.pastWords, append(recycled, s.blockWords...))
		} else {
			s.pastWords = append(s.pastWords, append([][32]byte(nil), s.blockWords...))
		}
	}
	s.blockWords = s.blockWords[:0]
	for k := range s.kindWords {
		s.kindWords[k] = s.kindWords[k][:0]
	}
}

func newTxSource(rng *rand.Rand, fill func([]byte), model *contentModel) (*txSource, error) {
	s := &txSource{
		model:   model,
		rng:     rng,
		fill:    fill,
		signer:  types.NewPragueSigner(big.NewInt(mainnetChainID)),
		chainID: uint256.NewInt(mainnetChainID),
	}
	for len(s.keys) < numSenders {
		var d [32]byte
		fill(d[:])
		k, err := crypto.ToECDSA(d[:])
		if err != nil {
			continue // outside the curve order: draw again
		}
		s.keys = append(s.keys, k)
		if model.nonceBits > 0 {
			s.nonces = append(s.nonces, uint64(math.Exp2(float64(model.nonceBits)*rng.Float64())))
			continue
		}
		s.nonces = append(s.nonces, uint64(rng.IntN(5000)))
	}
	fill(s.salt[:])
	or := func(sh *shape, def shape) shape {
		if sh != nil {
			return *sh
		}
		return def
	}
	s.eoas = newPopulation(rng, or(model.eoa, eoaShape), 'e', nil)
	s.tokens = newPopulation(rng, or(model.token, tokenShape), 't', knownTokens)
	s.routers = newPopulation(rng, routerShape, 'r', knownRouters)
	s.contracts = newPopulation(rng, or(model.contract, contractShape), 'c', nil)
	s.selectors = rand.NewZipf(rng, selectorShape.s, selectorShape.v, selectorShape.n-1)
	s.commonSels = rand.NewZipf(rng, commonSelShape.s, commonSelShape.v, commonSelShape.n-1)
	s.consts = rand.NewZipf(rng, constShape.s, constShape.v, constShape.n-1)
	s.words = math.Log(model.callWordsMedian)
	if model.records.minWords > 0 {
		seed := s.derive('R', 0, 0) // from the salt: no draw of the main stream
		rng := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:16])))
		cc := rand.NewChaCha8(s.derive('R', 1, 0))
		zipf := func(p *population) *rand.Zipf { return rand.NewZipf(rng, p.s, p.v, p.n-1) }
		s.rec = &recStream{rng: rng, fill: func(b []byte) { _, _ = cc.Read(b) },
			eoas: zipf(s.eoas), tokens: zipf(s.tokens), routers: zipf(s.routers), contracts: zipf(s.contracts),
			consts: rand.NewZipf(rng, constShape.s, constShape.v, constShape.n-1)}
	}
	return s, nil
}

// derive returns 32 bytes fixed by the source's salt, a tag and two numbers: the value of
// a population rank, a contract's selector.
func (s *txSource) derive(tag byte, a, b uint64) [32]byte {
	var in [33]byte
	copy(in[:16], s.salt[:])
	in[16] = tag
	binary.LittleEndian.PutUint64(in[17:], a)
	binary.LittleEndian.PutUint64(in[25:], b)
	return sha256.Sum256(in[:])
}

// addr draws an address: fresh, a known one or the rank's derived one.
func (s *txSource) addr(p *population) (a common.Address, rank uint64) {
	if p.fresh > 0 && s.rng.Float64() < p.fresh {
		s.fill(a[:])
		return a, math.MaxUint64
	}
	rank = p.z.Uint64()
	if rank < uint64(len(p.known)) {
		return p.known[rank], rank
	}
	h := s.derive(p.tag, rank, 0)
	copy(a[:], h[:20])
	return a, rank
}

// selector returns a call's function selector: one of the contract's own (its rank fixes
// them; fresh contracts get fresh ones) or, for 30 % of calls, a selector many contracts
// share.
func (s *txSource) selector(tag byte, rank uint64) [4]byte {
	var sel [4]byte
	var h [32]byte
	switch {
	case s.rng.Float64() < commonSelectorShare:
		h = s.derive('s', s.commonSels.Uint64(), 0)
	case rank == math.MaxUint64:
		s.fill(sel[:])
		return sel
	default:
		h = s.derive(tag, rank, 1+s.selectors.Uint64())
	}
	copy(sel[:], h[:4])
	return sel
}

// word appends a 32-byte ABI word holding v.
func word(dst []byte, v uint64) []byte {
	var w [32]byte
	binary.BigEndian.PutUint64(w[24:], v)
	return append(dst, w[:]...)
}

func addrWord(dst []byte, a common.Address) []byte {
	var w [32]byte
	copy(w[12:], a[:])
	return append(dst, w[:]...)
}

// amountWord appends a token amount: random with token-like magnitude (6 or 18 decimals),
// so its leading bytes are zero as on mainnet.
func (s *txSource) amountWord(dst []byte) []byte {
	var w [32]byte
	lo, hi := s.model.amountBytes[0], s.model.amountBytes[1]
	n := lo + s.rng.IntN(hi-lo+1) // significant bytes
	s.fill(w[32-n:])
	return append(dst, w[:]...)
}

// reusedWord appends, with the model's reuse share, a non-zero word already used in the
// block, else with its earlier share one used in an earlier block, and reports whether it did.
//
// With the model's reuseOf, the share depends on the kind of word being drawn, and the copy
// is of a word of the same kind.
func (s *txSource) reusedWord(dst *[]byte, kind wordKind) bool {
	if s.model.reuseShare == 0 {
		return false
	}
	if s.model.reuseOf != ([8]float64{}) {
		if ws := s.kindWords[kind]; len(ws) > 0 && s.rng.Float64() < s.model.reuseOf[kind] {
			w := ws[s.recent(len(ws), s.model.reuseGap)]
			*dst = append(*dst, w[:]...)
			return true
		}
	} else if len(s.blockWords) > 0 && s.rng.Float64() < s.model.reuseShare {
		w := s.blockWords[s.recent(len(s.blockWords), s.model.reuseGap)]
		*dst = append(*dst, w[:]...)
		return true
	}
	if s.model.earlierShare == 0 || len(s.pastWords) == 0 || s.rng.Float64() >= s.model.earlierShare {
		return false
	}
	past := s.pastWords[s.rng.IntN(len(s.pastWords))]
	w := past[s.rng.IntN(len(past))]
	*dst = append(*dst, w[:]...)
	return true
}

// recent returns an index into n earlier items: uniform if gap is zero, else 1 + ⌊(gap−1)·E⌋
// back (1 = the latest), E exponential with mean 1: about gap − ½ back on average for a large
// gap; at 1.3 the latest item in 96 % of draws.
func (s *txSource) recent(n int, gap float64) int {
	if gap == 0 {
		return s.rng.IntN(n)
	}
	back := 1 + int(s.rng.ExpFloat64()*(gap-1))
	return n - min(back, n)
}

// remember records the word just appended to dst, of the kind, as one of the block's words.
func (s *txSource) remember(dst []byte, kind wordKind) {
	if s.model.reuseShare == 0 {
		return
	}
	s.blockWords = append(s.blockWords, [32]byte(dst[len(dst)-32:]))
	if s.model.reuseOf != ([8]float64{}) {
		s.kindWords[kind] = append(s.kindWords[kind], [32]byte(dst[len(dst)-32:]))
	}
}

// idWord appends a mid-sized number that rarely repeats: a deadline, nonce, token id,
// block number or price.
func (s *txSource) idWord(dst []byte) []byte {
	var w [32]byte
	n := 3 + s.rng.IntN(2)
	s.fill(w[32-n:])
	return append(dst, w[:]...)
}

// constWord appends one of the small ABI constants, by popularity: offsets 0x20·k first,
// then small counts and flags.
func (s *txSource) constWord(dst []byte) []byte {
	k := s.consts.Uint64()
	v := 0x20 * (k/2 + 1)
	if k%2 == 1 {
		v = k/2 + 1
	}
	return word(dst, v)
}

func (s *txSource) anyAddress() common.Address {
	var a common.Address
	tok, eoa := 0.35, 0.45
	if s.model.anyToken+s.model.anyEOA > 0 {
		tok, eoa = s.model.anyToken, s.model.anyEOA
	}
	switch u := s.rng.Float64(); {
	case u < tok:
		a, _ = s.addr(s.tokens)
	case u < tok+eoa:
		a, _ = s.addr(s.eoas)
	default:
		a, _ = s.addr(s.contracts)
	}
	return a
}

func (s *txSource) genericWords(dst []byte, n int) []byte {
	for range n {
		dst = s.genericWord(dst, s.wordKind())
	}
	return dst
}

// wordKind draws a generic word's kind from the model's mix.
func (s *txSource) wordKind() wordKind {
	u := s.rng.Float64()
	for _, m := range s.model.wordMix {
		if u < m.cumul {
			return m.kind
		}
	}
	return wRandom
}

// callArgs appends a generic call's n argument words: laid out as an array of records with
// the model's share for its length (records, unless its layout keeps records to the outer
// call), else as independent generic words.
func (s *txSource) callArgs(dst []byte, n int) []byte {
	if !s.model.records.outer && s.recordsCall(n) {
		return s.recordsArgs(dst, n, false)
	}
	return s.genericWords(dst, n)
}

// recordsCall draws whether a call of n argument words is an array of records, with the
// model's share for its length (no draw when the share is zero).
func (s *txSource) recordsCall(n int) bool {
	r := s.model.records
	share := 0.0
	switch {
	case r.minWords == 0 || n < r.minWords:
	case n >= 128:
		share = r.share[1]
	default:
		share = r.share[0]
	}
	return share > 0 && s.rec.rng.Float64() < share
}

// recordsArgs appends n argument words laid out as records, drawn from the records stream.
// The main stream first draws the n generic words the call would carry without records, and
// they are dropped (with the block's memory of them), so that it goes on as without records.
func (s *txSource) recordsArgs(dst []byte, n int, nest bool) []byte {
	nb := len(s.blockWords)
	var nk [8]int
	for k := range s.kindWords {
		nk[k] = len(s.kindWords[k])
	}
	if nest && n >= 4 && s.rng.Float64() < s.model.nestedShare {
		s.nested(nil, n)
	} else {
		s.genericWords(nil, n)
	}
	s.blockWords = s.blockWords[:nb]
	for k := range s.kindWords {
		s.kindWords[k] = s.kindWords[k][:nk[k]]
	}
	r := s.rec
	rng, fill := s.rng, s.fill
	zs := [4]*rand.Zipf{s.eoas.z, s.tokens.z, s.routers.z, s.contracts.z}
	consts := s.consts
	s.rng, s.fill, s.consts = r.rng, r.fill, r.consts
	s.eoas.z, s.tokens.z, s.routers.z, s.contracts.z = r.eoas, r.tokens, r.routers, r.contracts
	dst = s.records(dst, n)
	s.rng, s.fill, s.consts = rng, fill, consts
	s.eoas.z, s.tokens.z, s.routers.z, s.contracts.z = zs[0], zs[1], zs[2], zs[3]
	return dst
}

// records appends n words laid out as an ABI array of records: 0–2 head words, the array's
// offset and length, then records of stride 2 words (the model's stride2 share) or 1, each
// field of a kind drawn for the call; a field's value is, with the model's pool share, one
// of a small pool of 1…poolMax values drawn for the call (a column of the same few tokens,
// recipients, flags or tickers), else a word drawn anew. Words that do not fill a record
// are generic.
func (s *txSource) records(dst []byte, n int) []byte {
	r := s.model.records
	long := 0
	if n >= 128 {
		long = 1
	}
	stride := 1
	if s.rng.Float64() < r.stride2 {
		stride = 2
	}
	head := min(s.rng.IntN(3), n)
	dst = s.genericWords(dst, head)
	n -= head
	if n < 2+stride {
		return s.genericWords(dst, n)
	}
	count := (n - 2) / stride
	dst = word(dst, uint64(32*(head+1)))
	dst = word(dst, uint64(count))
	var kinds [2]wordKind
	var pools [2][][32]byte
	var last, sig [2]int
	for i := range count {
		if i == 0 || (r.span > 0 && i%r.span == 0) {
			// A field's kind and pool, for the call or for the next span records.
			for f := range stride {
				pools[f] = nil
				if s.rng.Float64() >= r.column {
					kinds[f] = s.kindFrom(r.fieldKinds[long]) // a field of words drawn anew
					sig[f] = 0
					continue
				}
				kinds[f] = s.kindFrom(r.columnKinds[long])
				for range 1 + s.rng.IntN(r.poolMax) {
					w := s.genericWord(nil, kinds[f])
					pools[f] = append(pools[f], [32]byte(w))
				}
				last[f] = s.rng.IntN(len(pools[f]))
			}
		}
		for f := range stride {
			p := pools[f]
			if p == nil {
				if k := kinds[f]; r.steady && sig[f] > 0 && (k == wAmount || k == wBig || k == wID) {
					// A number of the field's size: amounts of one token, ids of one range.
					var w [32]byte
					s.fill(w[32-sig[f]:])
					w[32-sig[f]] |= 1
					dst = append(dst, w[:]...)
					s.remember(dst, k)
					continue
				}
				if kinds[f] == wRandom && s.rng.Float64() < r.shiftWide {
					a := s.genericWord(nil, s.wordKind())
					b := s.genericWord(nil, s.wordKind())
					dst = append(append(dst, a[28:]...), b[:28]...)
					continue
				}
				dst = s.genericWord(dst, kinds[f])
				lead := 0
				for lead < 32 && dst[len(dst)-32+lead] == 0 {
					lead++
				}
				sig[f] = 32 - lead
				continue
			}
			if s.rng.Float64() >= r.stay {
				last[f] = s.rng.IntN(len(p))
			}
			dst = append(dst, p[last[f]][:]...)
		}
	}
	return s.genericWords(dst, n-2-count*stride)
}

// kindFrom draws a word kind from mix (cumulative), or from the model's word mix if mix is nil.
func (s *txSource) kindFrom(mix []wordShare) wordKind {
	if mix == nil {
		return s.wordKind()
	}
	u := s.rng.Float64()
	for _, m := range mix {
		if u < m.cumul {
			return m.kind
		}
	}
	return mix[len(mix)-1].kind
}

// genericWord appends a word of the kind: zero, a constant, a copy of a word of the block
// (or an earlier block) with the model's reuse shares, else one drawn anew and remembered.
func (s *txSource) genericWord(dst []byte, k wordKind) []byte {
	if k == wZero {
		return word(dst, 0)
	}
	if k == wConst {
		return s.constWord(dst) // constants repeat by their popularity already
	}
	if s.reusedWord(&dst, k) {
		return dst
	}
	switch k {
	case wMax:
		dst = append(dst, maxWord()...)
	case wAddr:
		dst = addrWord(dst, s.anyAddress())
	case wAmount:
		dst = s.amountWord(dst)
	case wBig:
		var w [32]byte
		s.fill(w[32-(9+s.rng.IntN(8)):])
		dst = append(dst, w[:]...)
	case wID:
		dst = s.idWord(dst)
	default:
		var w [32]byte
		s.fill(w[:]) // hashes, signatures, proofs, packed data
		dst = append(dst, w[:]...)
	}
	s.remember(dst, k)
	return dst
}

// calldata draws a transaction of the kind; a non-nil again repeats an earlier recipient.
func (s *txSource) calldata(kind txKind, again *target) (to common.Address, data []byte, value *uint256.Int, gas uint64) {
	value = uint256.NewInt(0)
	pick := func(p *population) (common.Address, uint64) {
		if again != nil {
			return again.to, again.rank
		}
		return s.addr(p)
	}
	var rank uint64
	defer func() { s.inBlock = append(s.inBlock, target{kind, to, rank, data}) }()
	if again != nil && len(again.data) >= 4+32 && (s.model.runShare == [4]float64{} || kind != txERC20) && s.rng.Float64() < s.model.repeatArgsShare {
		// The same call again with most of its arguments: a bot's or an exchange's
		// batch of similar calls.
		to, rank, gas = again.to, again.rank, 60000+s.rng.Uint64N(200000)
		data = s.redraw(again.data)
		return to, data, value, gas
	}
	if again == nil && (kind == txCall || kind == txSwap) && len(s.pastCalls) > 0 && s.rng.Float64() < s.model.templateShare {
		if past := s.pastCalls[s.rng.IntN(len(s.pastCalls))]; len(past) > 0 {
			t := past[s.rng.IntN(len(past))]
			to, rank, gas = t.to, t.rank, 60000+s.rng.Uint64N(200000)
			data = s.redrawShare(t.data, s.model.templateRedraw)
			return to, data, value, gas
		}
	}
	switch kind {
	case txTransfer:
		to, rank = pick(s.eoas)
		if b := s.model.valueBytes; b[1] > 0 {
			var v [8]byte
			n := b[0] + s.rng.IntN(b[1]-b[0]+1)
			s.fill(v[8-n:])
			v[8-n] |= 1
			value = uint256.NewInt(binary.BigEndian.Uint64(v[:]))
		} else {
			value = uint256.NewInt(s.rng.Uint64N(5e18))
		}
		gas = 21000
	case txERC20:
		to, rank = pick(s.tokens)
		recipient, _ := s.addr(s.eoas)
		switch u := s.rng.Float64(); {
		case u < 0.8:
			data = append(data, selTransfer[:]...)
			data = addrWord(data, recipient)
			data = s.tokenAmount(data)
		case u < 0.92:
			data = append(data, selApprove[:]...)
			spender, _ := s.addr(s.routers)
			data = addrWord(data, spender)
			if s.rng.IntN(2) == 0 {
				data = append(data, maxWord()...) // unlimited approval
			} else {
				data = s.tokenAmount(data)
			}
		default:
			from, _ := s.addr(s.eoas)
			data = append(data, selTransferFrom[:]...)
			data = addrWord(data, from)
			data = addrWord(data, recipient)
			data = s.tokenAmount(data)
		}
		gas = 45000 + s.rng.Uint64N(20000)
	case txSwap:
		to, rank = pick(s.routers)
		sel := s.selector('R', rank)
		data = append(data, sel[:]...)
		// Head: offsets, amounts, recipient, deadline; tail: a path of 2–4 tokens with fee
		// tiers, packed in words.
		data = s.constWord(data)
		for range 2 {
			if !s.reusedWord(&data, wAmount) {
				data = s.amountWord(data)
				s.remember(data, wAmount)
			}
		}
		recipient, _ := s.addr(s.eoas)
		data = addrWord(data, recipient)
		data = s.idWord(data)
		hops := 2 + s.rng.IntN(3)
		if s.rng.Float64() < s.model.packedPathShare {
			data = s.packedPath(data, hops)
		} else {
			data = word(data, uint64(hops))
			for range hops {
				t, _ := s.addr(s.tokens)
				data = addrWord(data, t)
			}
		}
		data = s.genericWords(data, s.rng.IntN(14))
		gas = 120000 + s.rng.Uint64N(200000)
		if s.rng.IntN(4) == 0 {
			value = uint256.NewInt(s.rng.Uint64N(2e18))
		}
	case txCall:
		to, rank = pick(s.contracts)
		sel := s.selector('C', rank)
		data = append(data, sel[:]...)
		sigma := callWordsSigma
		if s.model.callSigma > 0 {
			sigma = s.model.callSigma
		}
		n := min(int(math.Exp(s.words+sigma*s.rng.NormFloat64())), callWordsMax)
		switch {
		case s.model.records.outer && s.recordsCall(n):
			data = s.recordsArgs(data, n, true)
		case n >= 4 && s.rng.Float64() < s.model.nestedShare:
			data = s.nested(data, n)
		default:
			data = s.callArgs(data, n)
		}
		gas = 60000 + s.rng.Uint64N(400000) + 40*uint64(len(data))
	}
	return to, data, value, gas
}

// nested appends n words of arguments that carry an inner call as ABI bytes (multicall,
// execute, a wallet's or a bundler's call): 0–2 head words, the offset and the length of the
// bytes, then the inner call (a contract's selector and its words) padded with zeros to a
// word. The inner words sit 4 bytes off the outer word grid, as on mainnet.
func (s *txSource) nested(dst []byte, n int) []byte {
	head := s.rng.IntN(3)
	dst = s.genericWords(dst, head)
	dst = word(dst, uint64(32*(head+1)))
	_, rank := s.addr(s.contracts)
	sel := s.selector('C', rank)
	inner := append([]byte(nil), sel[:]...)
	if s.model.records.outer {
		inner = s.genericWords(inner, n-head-3)
	} else {
		inner = s.callArgs(inner, n-head-3)
	}
	dst = word(dst, uint64(len(inner)))
	dst = append(dst, inner...)
	return append(dst, make([]byte, 31-(len(inner)+31)%32)...)
}

// swapFees are Uniswap v3's fee tiers (hundredths of a basis point).
var swapFees = []uint32{100, 500, 3000, 10000}

// packedPath appends a Uniswap v3 path as ABI bytes: its length, then token (20 bytes) ‖
// fee (3 bytes) ‖ token … packed, padded with zeros to a word.
func (s *txSource) packedPath(dst []byte, hops int) []byte {
	var path []byte
	for h := range hops {
		if h > 0 {
			f := swapFees[s.rng.IntN(len(swapFees))]
			path = append(path, byte(f>>16), byte(f>>8), byte(f))
		}
		t, _ := s.addr(s.tokens)
		path = append(path, t[:]...)
	}
	dst = word(dst, uint64(len(path)))
	dst = append(dst, path...)
	return append(dst, make([]byte, 31-(len(path)+31)%32)...)
}

// tokenAmount appends a token call's amount: with the model's shares zero (zero-value
// transfers, approvals reset) or of 9–16 significant bytes (18-decimal amounts), else as
// amountWord.
func (s *txSource) tokenAmount(dst []byte) []byte {
	if s.model.tokenZero+s.model.tokenMid == 0 {
		return s.amountWord(dst)
	}
	switch u := s.rng.Float64(); {
	case u < s.model.tokenZero:
		return word(dst, 0)
	case u < s.model.tokenZero+s.model.tokenMid:
		var w [32]byte
		s.fill(w[32-(9+s.rng.IntN(8)):])
		return append(dst, w[:]...)
	}
	if ws := s.kindWords[wAmount]; len(ws) > 0 && s.rng.Float64() < s.model.tokenReuse {
		w := ws[s.recent(len(ws), s.model.reuseGap)]
		return append(dst, w[:]...)
	}
	dst = s.amountWord(dst)
	s.remember(dst, wAmount)
	return dst
}

// redraw copies calldata and draws one or two of its words anew (amounts, ids).
func (s *txSource) redraw(data []byte) []byte {
	out := append([]byte(nil), data...)
	words := (len(out) - 4) / 32
	for range 1 + s.rng.IntN(2) {
		k := 4 + 32*s.rng.IntN(words)
		copy(out[k:k+32], s.amountWord(nil))
	}
	return out
}

// redrawShare copies calldata and draws anew each of its words with probability share, at
// least one: the new word has as many significant bytes as the old one (a new amount, id,
// address or hash in the same argument), a zero word stays zero.
func (s *txSource) redrawShare(data []byte, share float64) []byte {
	out := append([]byte(nil), data...)
	words := (len(out) - 4) / 32
	first := s.rng.IntN(words)
	for w := range words {
		if w != first && s.rng.Float64() >= share {
			continue
		}
		k := 4 + 32*w
		lead := 0
		for lead < 32 && out[k+lead] == 0 {
			lead++
		}
		if lead < 32 {
			s.fill(out[k+lead : k+32])
			out[k+lead] |= 1
		}
	}
	return out
}

func maxWord() []byte {
	var w [32]byte
	for i := range w {
		w[i] = 0xff
	}
	return w[:]
}

// fees returns tip and fee cap around a base fee.
func (s *txSource) fees(baseFee uint64) (*uint256.Int, *uint256.Int) {
	if b := s.model.tipBytes; b[1] > 0 {
		var v [8]byte
		n := b[0] + s.rng.IntN(b[1]-b[0]+1)
		s.fill(v[8-n:])
		v[8-n] |= 1
		tip := binary.BigEndian.Uint64(v[:])
		return uint256.NewInt(tip), uint256.NewInt(baseFee + uint64(float64(baseFee)*s.model.feeCapSlack*s.rng.Float64()) + tip)
	}
	tip := uint64(1e7) * (1 + s.rng.Uint64N(300))
	return uint256.NewInt(tip), uint256.NewInt(2*baseFee + tip)
}

// sign builds the go-ethereum transaction of type typ and signs it with the sender's key.
func (s *txSource) sign(typ uint8, sender int, to common.Address, data []byte, value *uint256.Int, gas, baseFee uint64, blobHashes []common.Hash) ([]byte, error) {
	return s.signList(typ, sender, to, data, value, gas, baseFee, blobHashes, s.model.accessListShare)
}

// signList is sign with the share of EIP-1559 transactions that carry an access list.
func (s *txSource) signList(typ uint8, sender int, to common.Address, data []byte, value *uint256.Int, gas, baseFee uint64, blobHashes []common.Hash, listShare float64) ([]byte, error) {
	nonce := s.nonces[sender]
	s.nonces[sender]++
	tip, feeCap := s.fees(baseFee)
	var txd types.TxData
	switch typ {
	case types.LegacyTxType:
		txd = &types.LegacyTx{Nonce: nonce, GasPrice: feeCap.ToBig(), Gas: gas, To: &to, Value: value.ToBig(), Data: data}
	case types.AccessListTxType:
		txd = &types.AccessListTx{ChainID: s.chainID.ToBig(), Nonce: nonce, GasPrice: feeCap.ToBig(), Gas: gas, To: &to,
			Value: value.ToBig(), Data: data, AccessList: s.accessList(to)}
	case types.SetCodeTxType:
		k := s.rng.IntN(len(s.keys))
		delegate, _ := s.addr(s.contracts)
		auth, err := types.SignSetCode(s.keys[k], types.SetCodeAuthorization{
			ChainID: *s.chainID, Address: delegate, Nonce: s.nonces[k],
		})
		if err != nil {
			return nil, fmt.Errorf("sign authorization: %w", err)
		}
		txd = &types.SetCodeTx{ChainID: s.chainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: gas,
			To: to, Value: value, Data: data, AuthList: []types.SetCodeAuthorization{auth}}
	case types.BlobTxType:
		txd = &types.BlobTx{ChainID: s.chainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: gas,
			To: to, Value: value, Data: data, BlobFeeCap: uint256.NewInt(1e9 + s.rng.Uint64N(1e10)), BlobHashes: blobHashes}
	default:
		var al types.AccessList
		if s.rng.Float64() < listShare {
			al = s.accessList(to)
		}
		txd = &types.DynamicFeeTx{ChainID: s.chainID.ToBig(), Nonce: nonce, GasTipCap: tip.ToBig(), GasFeeCap: feeCap.ToBig(),
			Gas: gas, To: &to, Value: value.ToBig(), Data: data, AccessList: al}
	}
	tx, err := types.SignNewTx(s.keys[sender], s.signer, txd)
	if err != nil {
		return nil, fmt.Errorf("sign transaction: %w", err)
	}
	b, err := tx.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("encode transaction: %w", err)
	}
	return b, nil
}

// accessList is the called contract with 1–3 storage slots, or, with the model's listAddrs,
// the called contract and 1 + ⌊listAddrs·E⌋ − 1 other addresses with 0…2·listKeys slots each.
func (s *txSource) accessList(to common.Address) types.AccessList {
	if s.model.listAddrs > 0 {
		n := min(1+int(s.model.listAddrs*s.rng.ExpFloat64()), 64)
		al := make(types.AccessList, n)
		for i := range al {
			al[i].Address = to
			if i > 0 {
				al[i].Address = s.anyAddress()
			}
			al[i].StorageKeys = s.storageKeys(s.rng.IntN(int(2*s.model.listKeys) + 1))
		}
		return al
	}
	return types.AccessList{{Address: to, StorageKeys: s.storageKeys(1 + s.rng.IntN(3))}}
}

// storageKeys draws n storage keys: low slot numbers (the model's smallKeyShare) or hashes.
func (s *txSource) storageKeys(n int) []common.Hash {
	keys := make([]common.Hash, n)
	for k := range keys {
		if s.rng.Float64() < s.model.smallKeyShare {
			keys[k][31] = byte(s.rng.IntN(16)) // a low storage slot
			continue
		}
		s.fill(keys[k][:])
	}
	return keys
}

// tx returns one signed transaction of the regular mix.
func (s *txSource) tx(baseFee uint64) ([]byte, error) {
	if s.model.kinds != nil {
		return s.txRuns(baseFee)
	}
	var again *target
	u := s.rng.Float64()
	kind := txCall
	for _, m := range kindMix {
		if u < m.cumul {
			kind = m.kind
			break
		}
	}
	if len(s.inBlock) > 0 && s.rng.Float64() < s.model.sameBlockShare {
		t := s.inBlock[s.recent(len(s.inBlock), s.model.againGap)]
		again, kind = &t, t.kind
	}
	to, data, value, gas := s.calldata(kind, again)
	typ := uint8(types.DynamicFeeTxType)
	switch v := s.rng.Float64(); {
	case v < legacyShare:
		typ = types.LegacyTxType
	case v < legacyShare+accessListShare:
		typ = types.AccessListTxType
	case v < legacyShare+accessListShare+setCodeShare:
		typ = types.SetCodeTxType
	}
	return s.sign(typ, s.rng.IntN(len(s.keys)), to, data, value, gas, baseFee, nil)
}

// txRuns is tx for a model with runs (model 2026): a transaction continues the previous one's
// run with the runShare of its kind, else draws a kind from the model's mix; the envelope
// type and the access list follow the kind.
func (s *txSource) txRuns(baseFee uint64) ([]byte, error) {
	var again *target
	kind := txCall
	if n := len(s.inBlock); n > 0 && s.rng.Float64() < s.model.runShare[s.inBlock[n-1].kind] {
		t := s.inBlock[n-1]
		again, kind = &t, t.kind
	} else {
		u := s.rng.Float64()
		for _, m := range s.model.kinds {
			if u < m.cumul {
				kind = m.kind
				break
			}
		}
	}
	to, data, value, gas := s.calldata(kind, again)
	env := s.model.envelopes[kind]
	typ := uint8(types.DynamicFeeTxType)
	switch v := s.rng.Float64(); {
	case v < env.legacy:
		typ = types.LegacyTxType
	case v < env.legacy+env.accessList:
		typ = types.AccessListTxType
	case v < env.legacy+env.accessList+env.setCode:
		typ = types.SetCodeTxType
	}
	return s.signList(typ, s.rng.IntN(len(s.keys)), to, data, value, gas, baseFee, nil, s.model.listShare[kind])
}

// blobTx returns a signed blob transaction carrying the versioned hashes of commitments.
func (s *txSource) blobTx(baseFee uint64, hashes []common.Hash) ([]byte, error) {
	to := blobInbox[s.rng.IntN(len(blobInbox))]
	var data []byte
	if s.rng.IntN(2) == 0 {
		data = append(data, selBlobCommit[:]...)
		data = s.idWord(data)
		data = word(data, 0x40)
		data = word(data, 32)
		var w [32]byte
		s.fill(w[:])
		data = append(data, w[:]...)
	}
	return s.sign(types.BlobTxType, s.rng.IntN(len(s.keys)), to, data, uint256.NewInt(0), 21000+s.rng.Uint64N(100000), baseFee, hashes)
}

// batchTx returns a rollup batch posted as calldata: n bytes of compressed (random) data
// to a batch inbox.
func (s *txSource) batchTx(baseFee uint64, n int) ([]byte, error) {
	data := make([]byte, n)
	s.fill(data)
	to := blobInbox[s.rng.IntN(len(blobInbox))]
	return s.sign(types.DynamicFeeTxType, s.rng.IntN(len(s.keys)), to, data, uint256.NewInt(0), 21000+16*uint64(n), baseFee, nil)
}

// versionedHash is kzg_to_versioned_hash: 0x01 ‖ sha256(commitment)[1:].
func versionedHash(commitment []byte) common.Hash {
	h := sha256.Sum256(commitment)
	h[0] = 0x01
	return h
}
