package workload

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/big"
	"math/rand/v2"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
)

// Transaction kinds of the execution payload mix.
type txKind uint8

const (
	txLegacyTransfer txKind = iota
	txTransfer              // EIP-1559 ETH transfer
	txERC20                 // token transfer / approve
	txSwap                  // router call with a path and deadline
	txContract              // other contract call with ABI-shaped arguments
	txSetCode               // EIP-7702 set-code with one authorization
	txBlob                  // EIP-4844 blob transaction (hashes only, as in a block)
)

// txMix is the cumulative share of each non-blob kind by count, close to mainnet's mix of
// transfers, token calls and DEX traffic.
var txMix = []struct {
	kind  txKind
	cumul float64
}{
	{txLegacyTransfer, 0.03}, {txTransfer, 0.20}, {txERC20, 0.42}, {txSwap, 0.72}, {txContract, 0.985}, {txSetCode, 1},
}

// Well-known mainnet contracts, so calldata and recipients repeat across transactions as they do
// on mainnet.
var (
	tokens = []common.Address{
		common.HexToAddress("0xdAC17F958D2ee523a2206206994597C13D831ec7"), // USDT
		common.HexToAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"), // USDC
		common.HexToAddress("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"), // WETH
		common.HexToAddress("0x6B175474E89094C44Da98b954EedeAC495271d0F"), // DAI
		common.HexToAddress("0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599"), // WBTC
		common.HexToAddress("0x514910771AF9Ca656af840dff83E8264EcF986CA"), // LINK
	}
	routers = []common.Address{
		common.HexToAddress("0x66a9893cC07D91D95644AEDD05D03f95e1dBA8Af"), // Uniswap universal router v4
		common.HexToAddress("0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D"), // Uniswap v2 router
		common.HexToAddress("0x1111111254EEB25477B68fb85Ed929f73A960582"), // 1inch v5
		common.HexToAddress("0xE592427A0AEce92De3Edee1F18E0157C05861564"), // Uniswap v3 router
	}
	blobInbox = []common.Address{
		common.HexToAddress("0xFF00000000000000000000000000000000008453"), // Base batch inbox
		common.HexToAddress("0xFF00000000000000000000000000000000000010"), // OP mainnet batch inbox
		common.HexToAddress("0x41dDf7fC14a579E0F3f2D698e14c76d9d486B9F7"), // Scroll rollup
	}
	selTransfer     = []byte{0xa9, 0x05, 0x9c, 0xbb}
	selApprove      = []byte{0x09, 0x5e, 0xa7, 0xb3}
	selSwapV2       = []byte{0x38, 0xed, 0x17, 0x39}
	selExecute      = []byte{0x35, 0x93, 0x56, 0x4c}
	selExactInput   = []byte{0x41, 0x4b, 0xf3, 0x89}
	selMulticall    = []byte{0xac, 0x96, 0x50, 0xd8}
	selBlobCommit   = []byte{0x3e, 0x5a, 0xa0, 0x82}
	contractSelects = [][]byte{{0x12, 0xaa, 0x3c, 0xaf}, {0x2e, 0x1a, 0x7d, 0x4d}, {0xd0, 0xe3, 0x0d, 0xb0}, {0x1c, 0xff, 0x79, 0xcd}, {0xb6, 0xb5, 0x5f, 0x25}}
)

const numSenders = 192

// txSource builds and signs transactions with go-ethereum. Senders are a fixed set of keys
// derived from the seed, each with its own nonce; recent transactions are kept so a share of
// new ones can be near-repeats of them.
type txSource struct {
	rng     *rand.Rand
	fill    func([]byte)
	signer  types.Signer
	chainID *uint256.Int
	keys    []*ecdsa.PrivateKey
	addrs   []common.Address
	nonces  []uint64
	eoas    []common.Address // recipients that recur
	recent  []txTemplate
	next    int
}

// txTemplate is what a near-repeat keeps of a transaction: who sent what to whom.
type txTemplate struct {
	sender int
	kind   txKind
	to     common.Address
	data   []byte
	value  *uint256.Int
	gas    uint64
}

func newTxSource(rng *rand.Rand, fill func([]byte)) (*txSource, error) {
	s := &txSource{
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
		s.addrs = append(s.addrs, crypto.PubkeyToAddress(k.PublicKey))
		s.nonces = append(s.nonces, uint64(rng.IntN(5000)))
	}
	s.eoas = make([]common.Address, 512)
	for i := range s.eoas {
		fill(s.eoas[i][:])
	}
	return s, nil
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

// amountWord appends a token amount: a random value with token-like magnitude (6 or 18
// decimals), so its leading bytes are zero as on mainnet.
func (s *txSource) amountWord(dst []byte) []byte {
	var w [32]byte
	n := 3 + s.rng.IntN(9) // significant bytes
	s.fill(w[32-n:])
	return append(dst, w[:]...)
}

func (s *txSource) recipient() common.Address {
	if s.rng.IntN(6) == 0 {
		var a common.Address
		s.fill(a[:])
		return a
	}
	return s.eoas[s.rng.IntN(len(s.eoas))]
}

func (s *txSource) calldata(kind txKind) (to common.Address, data []byte, value *uint256.Int, gas uint64) {
	value = uint256.NewInt(0)
	switch kind {
	case txLegacyTransfer, txTransfer:
		to = s.recipient()
		value = uint256.NewInt(s.rng.Uint64N(5e18))
		gas = 21000
	case txERC20:
		to = tokens[s.rng.IntN(len(tokens))]
		sel := selTransfer
		if s.rng.IntN(5) == 0 {
			sel = selApprove
		}
		data = append(data, sel...)
		data = addrWord(data, s.recipient())
		data = s.amountWord(data)
		gas = 45000 + s.rng.Uint64N(20000)
	case txSwap:
		to = routers[s.rng.IntN(len(routers))]
		switch s.rng.IntN(3) {
		case 0: // swapExactTokensForTokens(amountIn, amountOutMin, path, to, deadline)
			data = append(data, selSwapV2...)
			data = s.amountWord(data)
			data = s.amountWord(data)
			data = word(data, 0xa0)
			data = addrWord(data, s.recipient())
			data = word(data, 1_770_000_000+s.rng.Uint64N(1_000_000))
			hops := 2 + s.rng.IntN(2)
			data = word(data, uint64(hops))
			for range hops {
				data = addrWord(data, tokens[s.rng.IntN(len(tokens))])
			}
		case 1: // execute(commands, inputs, deadline): universal router with encoded inputs
			data = append(data, selExecute...)
			data = word(data, 0x60)
			data = word(data, 0xa0)
			data = word(data, 1_770_000_000+s.rng.Uint64N(1_000_000))
			ncmd := 2 + s.rng.IntN(4)
			data = word(data, uint64(ncmd))
			var cmds [32]byte
			for k := range ncmd {
				cmds[k] = byte(s.rng.IntN(0x20))
			}
			data = append(data, cmds[:]...)
			data = word(data, uint64(ncmd))
			for k := range ncmd {
				data = word(data, uint64(0x20*ncmd+k*0x160))
			}
			for range ncmd {
				data = word(data, 0x140)
				data = addrWord(data, s.recipient())
				data = s.amountWord(data)
				data = s.amountWord(data)
				data = word(data, 0xa0)
				data = word(data, uint64(s.rng.IntN(2)))
				data = word(data, 0x2b)
				path := make([]byte, 64)
				copy(path, tokens[s.rng.IntN(len(tokens))][:])
				path[22] = 0x01
				path[22], path[21] = 0x0b, 0xb8 // fee tier
				copy(path[23:], tokens[s.rng.IntN(len(tokens))][:])
				data = append(data, path...)
			}
		default: // exactInput / multicall with a packed path
			data = append(data, selExactInput...)
			if s.rng.IntN(2) == 0 {
				data = append(data[:0], selMulticall...)
				data = word(data, 1_770_000_000+s.rng.Uint64N(1_000_000))
			}
			data = word(data, 0x20)
			data = word(data, 0xa0)
			data = addrWord(data, s.recipient())
			data = s.amountWord(data)
			data = s.amountWord(data)
			data = word(data, 0x42)
			path := make([]byte, 96)
			copy(path, tokens[s.rng.IntN(len(tokens))][:])
			path[21], path[22] = 0x01, 0xf4
			copy(path[23:], tokens[s.rng.IntN(len(tokens))][:])
			path[43], path[44] = 0x0b, 0xb8
			copy(path[46:], tokens[s.rng.IntN(len(tokens))][:])
			data = append(data, path...)
		}
		gas = 120000 + s.rng.Uint64N(200000)
		if s.rng.IntN(4) == 0 {
			value = uint256.NewInt(s.rng.Uint64N(2e18))
		}
	case txContract:
		to = s.eoas[s.rng.IntN(64)] // a few hot contracts
		if s.rng.IntN(4) == 0 {
			s.fill(to[:])
		}
		data = append(data, contractSelects[s.rng.IntN(len(contractSelects))]...)
		words := 4 + s.rng.IntN(36)
		if s.rng.IntN(12) == 0 {
			words = 40 + s.rng.IntN(120) // batch calls: arrays of ids, amounts and addresses
		}
		for range words {
			switch u := s.rng.IntN(20); {
			case u < 5:
				data = addrWord(data, s.recipient())
			case u < 9:
				data = s.amountWord(data)
			case u < 16:
				data = word(data, s.rng.Uint64N(1<<16))
			case u < 19:
				data = word(data, 0)
			default:
				var w [32]byte
				s.fill(w[:]) // hashes, packed data
				data = append(data, w[:]...)
			}
		}
		gas = 60000 + s.rng.Uint64N(400000)
	case txSetCode:
		to = s.addrs[s.rng.IntN(len(s.addrs))]
		data = append(data, selMulticall...)
		data = word(data, 0x20)
		data = word(data, 1)
		data = addrWord(data, tokens[s.rng.IntN(len(tokens))])
		data = s.amountWord(data)
		gas = 80000 + s.rng.Uint64N(100000)
	}
	return to, data, value, gas
}

// fees returns tip and fee cap around a base fee.
func (s *txSource) fees(baseFee uint64) (*uint256.Int, *uint256.Int) {
	tip := uint64(1e7) * (1 + s.rng.Uint64N(300))
	return uint256.NewInt(tip), uint256.NewInt(2*baseFee + tip)
}

// sign builds the go-ethereum transaction of a template and signs it with the sender's key.
func (s *txSource) sign(t txTemplate, baseFee uint64, blobHashes []common.Hash) ([]byte, error) {
	nonce := s.nonces[t.sender]
	s.nonces[t.sender]++
	tip, feeCap := s.fees(baseFee)
	var data types.TxData
	switch t.kind {
	case txLegacyTransfer:
		data = &types.LegacyTx{Nonce: nonce, GasPrice: feeCap.ToBig(), Gas: t.gas, To: &t.to, Value: t.value.ToBig(), Data: t.data}
	case txSetCode:
		k := s.rng.IntN(len(s.keys))
		auth, err := types.SignSetCode(s.keys[k], types.SetCodeAuthorization{
			ChainID: *s.chainID, Address: routers[s.rng.IntN(len(routers))], Nonce: s.nonces[k],
		})
		if err != nil {
			return nil, fmt.Errorf("sign authorization: %w", err)
		}
		data = &types.SetCodeTx{ChainID: s.chainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: t.gas,
			To: t.to, Value: t.value, Data: t.data, AuthList: []types.SetCodeAuthorization{auth}}
	case txBlob:
		data = &types.BlobTx{ChainID: s.chainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: t.gas,
			To: t.to, Value: t.value, Data: t.data, BlobFeeCap: uint256.NewInt(1e9 + s.rng.Uint64N(1e10)), BlobHashes: blobHashes}
	default:
		var al types.AccessList
		if t.kind == txSwap && s.rng.IntN(4) == 0 {
			keys := make([]common.Hash, 1+s.rng.IntN(3))
			for k := range keys {
				s.fill(keys[k][:])
			}
			al = types.AccessList{{Address: tokens[s.rng.IntN(len(tokens))], StorageKeys: keys}}
		}
		data = &types.DynamicFeeTx{ChainID: s.chainID.ToBig(), Nonce: nonce, GasTipCap: tip.ToBig(), GasFeeCap: feeCap.ToBig(),
			Gas: t.gas, To: &t.to, Value: t.value.ToBig(), Data: t.data, AccessList: al}
	}
	tx, err := types.SignNewTx(s.keys[t.sender], s.signer, data)
	if err != nil {
		return nil, fmt.Errorf("sign transaction: %w", err)
	}
	b, err := tx.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("encode transaction: %w", err)
	}
	return b, nil
}

// tx returns one signed transaction of the regular mix, a near-repeat of a recent one with
// probability repeatShare.
func (s *txSource) tx(baseFee uint64, repeatShare float64) ([]byte, error) {
	var t txTemplate
	if len(s.recent) > 0 && s.rng.Float64() < repeatShare {
		// Same sender, recipient and calldata shape (bots and repeated calls), next nonce and
		// a changed amount.
		// Bots repeat within minutes: draw from the most recent templates.
		back := s.rng.IntN(min(len(s.recent), 128))
		t = s.recent[(s.next-1-back+2*len(s.recent))%len(s.recent)]
		t.data = append([]byte(nil), t.data...)
		if len(t.data) >= 68 {
			s.fill(t.data[len(t.data)-6:])
		}
		if !t.value.IsZero() {
			t.value = uint256.NewInt(s.rng.Uint64N(5e18))
		}
	} else {
		u := s.rng.Float64()
		kind := txContract
		for _, m := range txMix {
			if u < m.cumul {
				kind = m.kind
				break
			}
		}
		t.kind = kind
		t.sender = s.rng.IntN(len(s.keys))
		t.to, t.data, t.value, t.gas = s.calldata(kind)
		s.remember(t)
	}
	return s.sign(t, baseFee, nil)
}

// blobTx returns a signed blob transaction carrying the versioned hashes of commitments.
func (s *txSource) blobTx(baseFee uint64, hashes []common.Hash) ([]byte, error) {
	t := txTemplate{sender: s.rng.IntN(len(s.keys)), kind: txBlob, to: blobInbox[s.rng.IntN(len(blobInbox))],
		value: uint256.NewInt(0), gas: 21000 + s.rng.Uint64N(100000)}
	if s.rng.IntN(2) == 0 {
		t.data = append(t.data, selBlobCommit...)
		t.data = word(t.data, s.rng.Uint64N(1<<20))
		t.data = word(t.data, 0x40)
		t.data = word(t.data, 32)
		var w [32]byte
		s.fill(w[:])
		t.data = append(t.data, w[:]...)
	}
	return s.sign(t, baseFee, hashes)
}

func (s *txSource) remember(t txTemplate) {
	const keep = 512
	if len(s.recent) < keep {
		s.recent = append(s.recent, t)
		s.next = len(s.recent) % keep
		return
	}
	s.recent[s.next] = t
	s.next = (s.next + 1) % keep
}

// versionedHash is kzg_to_versioned_hash: 0x01 ‖ sha256(commitment)[1:].
func versionedHash(commitment []byte) common.Hash {
	h := sha256.Sum256(commitment)
	h[0] = 0x01
	return h
}
