// Package payloadstat measures the content of execution payloads: transaction types, where
// the bytes and the zero bytes of a transaction sit (calldata, access list, blob hashes,
// authorizations, the rest of the envelope with its signature), calldata words by kind, how
// often recipients, selectors, words and addresses repeat within a block and across blocks,
// and raw/Snappy. It decodes transactions with go-ethereum and knows nothing of the workload's
// generator, so real payloads (testdata, LoadMainnet) and synthetic ones are measured by the
// same code.
package payloadstat

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/attestantio/go-eth2-client/spec/deneb"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rlp"
	"github.com/golang/snappy"
)

// Stats are the figures over a sequence of payloads, in block order.
type Stats struct {
	Blocks, Txs int
	TypeShare   [5]float64 // % of transactions of type 0…4

	MeanTx            float64 // bytes
	CalldataPerTx     float64 // bytes
	WordsPerTx        float64 // 32-byte calldata words after the selector
	ByteShare         Parts   // % of transaction bytes in each part
	ZeroShare         Parts   // % zero bytes within each part
	ZeroShareAll      float64 // % zero bytes in transactions
	WordKind          Words   // % of calldata words by kind
	ToSeenBlock       float64 // % of transactions whose recipient appeared earlier in the same block
	ToSeenEarlier     float64 // % … in an earlier block only (needs consecutive payloads)
	SelectorSeenBlock float64 // % of calls whose selector appeared earlier in the same block
	SelectorSeenEarly float64
	WordRepeatBlock   float64 // % of non-zero calldata words seen earlier in the same block
	WordRepeatEarly   float64 // % … in an earlier block only
	AddrRepeatBlock   float64 // % of addresses (recipients and address words) seen earlier in the block
	// AddrWordRepeatBlock is the % of address words whose address appeared earlier in the
	// block, as a recipient or an address word (AddrRepeatBlock without the recipients).
	AddrWordRepeatBlock float64
	// TxsPerBlock is the median number of transactions of a payload; TxSize the transactions'
	// bytes at the 10th, 25th, 50th, 75th and 90th percentiles.
	TxsPerBlock float64
	TxSize      [5]float64
	// Kind is the share of transactions by what they call: nothing (no calldata: plain
	// transfers), an ERC-20 token's transfer, approve or transferFrom (by selector, with 2
	// or 3 words of arguments), or anything else.
	Kind Kinds
	// OtherWords are the calldata words of the "other" calls at the same percentiles.
	OtherWords [5]float64
	// LegacyByKind is the % of legacy (type-0) transactions among each kind.
	LegacyByKind Kinds
	// WordRepeatGap and ToRepeatGap are the medians, over repeats within a block, of how far
	// back the previous occurrence is: in calldata words, and in transactions.
	WordRepeatGap, ToRepeatGap float64
	// WordRepeatFar is the % of repeated words whose previous occurrence in the block is
	// more than 256 words (8 KiB of calldata) back.
	WordRepeatFar float64
	// WordRepeatRun is the % of repeated words whose next word repeats the word that followed
	// the previous occurrence: repeats that come in runs (the same arguments again) rather
	// than one word at a time.
	WordRepeatRun float64
	// RepeatOccurrence splits the non-zero words repeated within their block by how many
	// times the word occurred in the block before: the % that are its 2nd occurrence, its
	// 3rd–5th, its 6th or later (a few words used many times, or many words used twice).
	RepeatOccurrence [3]float64
	// RepeatKind is the share of each kind among repeated (non-zero) words.
	RepeatKind        Words
	WideZeroShare     float64 // % zero bytes within the wide words (fewer than 12 leading zeros)
	WideZeroRun       float64 // % of wide words holding a run of ≥ 8 zero bytes
	PayloadRawSnappy  float64 // median over payloads of SSZ ÷ Snappy
	TxsRawSnappy      float64 // median over payloads of the transactions' bytes ÷ their Snappy
	CalldataRawSnappy float64 // all calldata of a payload concatenated, median
}

// Parts splits a transaction's bytes.
type Parts struct {
	Calldata, AccessList, BlobHashes, Auth, Rest float64
}

// Words are calldata words by their leading zero bytes: all zero; 12–15 (an address, or a
// number of 17–20 bytes); 24–31 (a small number, ≤ 8 significant bytes); 16–23 (a mid-sized
// number of 9–16 bytes: 18-decimal amounts, prices); fewer than 12 (hashes, signatures,
// packed data, negative numbers).
type Words struct {
	Zero, Address, Small, Mid, Wide float64
}

// Kinds splits transactions by what they call.
type Kinds struct {
	Transfer, Token, Other float64
}

// ERC-20 selectors: transfer, approve, transferFrom.
var tokenSelectors = map[[4]byte]bool{{0xa9, 0x05, 0x9c, 0xbb}: true, {0x09, 0x5e, 0xa7, 0xb3}: true, {0x23, 0xb8, 0x72, 0xdd}: true}

type counter struct{ n, d int64 }

func (c *counter) add(hit bool) {
	c.d++
	if hit {
		c.n++
	}
}
func (c counter) pct() float64 {
	if c.d == 0 {
		return 0
	}
	return 100 * float64(c.n) / float64(c.d)
}

// Measure decodes each payload (SSZ of a Deneb or Electra ExecutionPayload, the same layout)
// and returns its statistics. Payloads are taken as consecutive: "earlier" means an earlier
// payload of the slice.
func Measure(payloads [][]byte) (Stats, error) {
	var s Stats
	var bytesAll, zerosAll int64
	var part, zero [5]int64 // calldata, access list, blob hashes, auth, rest
	var types_ [5]int64
	var calldata, words int64
	var wkind [5]int64
	var wideZeros, wideRun int64
	var wordGaps, toGaps []float64
	var runs counter
	var repKind [5]int64
	var reps int64
	var occ [3]int64 // repeats that are a word's 2nd, 3rd–5th, 6th+ occurrence in its block
	var toBlock, toEarly, selBlock, selEarly, wordBlock, wordEarly, addrBlock, addrWordBlock counter
	var sizes, otherWords, perBlock []float64
	var kinds, legacy [3]int64
	seenTo := map[common.Address]bool{}
	seenSel := map[[4]byte]bool{}
	seenWord := map[[32]byte]bool{}
	var pr, tr, cr []float64
	for i, ssz := range payloads {
		var p deneb.ExecutionPayload
		if err := p.UnmarshalSSZ(ssz); err != nil {
			return s, fmt.Errorf("payload %d: %w", i, err)
		}
		pr = append(pr, float64(len(ssz))/float64(len(snappy.Encode(nil, ssz))))
		var txcat, cdcat []byte
		blkTo := map[common.Address]bool{}
		lastWord := map[[32]byte]int64{}
		lastTo := map[common.Address]int{}
		var wordPos int64
		var grid [][32]byte // the block's calldata words in order (position wordPos-1)
		var prevAt []int64  // for each word of grid: the position of its previous occurrence, or -1
		blkSel := map[[4]byte]bool{}
		blkWord := map[[32]byte]bool{}
		blkCount := map[[32]byte]int{}
		blkAddr := map[common.Address]bool{}
		perBlock = append(perBlock, float64(len(p.Transactions)))
		for j, raw := range p.Transactions {
			var tx types.Transaction
			if err := tx.UnmarshalBinary(raw); err != nil {
				return s, fmt.Errorf("payload %d tx %d: %w", i, j, err)
			}
			s.Txs++
			sizes = append(sizes, float64(len(raw)))
			kind := 2
			switch d := tx.Data(); {
			case len(d) == 0:
				kind = 0
			case (len(d) == 4+64 || len(d) == 4+96) && tokenSelectors[[4]byte(d[:4])]:
				kind = 1
			case len(d) >= 4:
				otherWords = append(otherWords, float64((len(d)-4)/32))
			}
			kinds[kind]++
			if tx.Type() == types.LegacyTxType {
				legacy[kind]++
			}
			txcat = append(txcat, raw...)
			if t := tx.Type(); t < 5 {
				types_[t]++
			}
			n := int64(len(raw))
			z := int64(bytes.Count(raw, []byte{0}))
			bytesAll += n
			zerosAll += z
			data := tx.Data()
			cdcat = append(cdcat, data...)
			var al, bh, au []byte
			if len(tx.AccessList()) > 0 {
				al, _ = rlp.EncodeToBytes(tx.AccessList())
			}
			for _, h := range tx.BlobHashes() {
				bh = append(bh, h[:]...)
			}
			if auths := tx.SetCodeAuthorizations(); len(auths) > 0 {
				au, _ = rlp.EncodeToBytes(auths)
			}
			pieces := [][]byte{data, al, bh, au}
			rest, restZ := n, z
			for k, b := range pieces {
				bz := int64(bytes.Count(b, []byte{0}))
				part[k] += int64(len(b))
				zero[k] += bz
				rest -= int64(len(b))
				restZ -= bz
			}
			part[4] += rest
			zero[4] += restZ
			calldata += int64(len(data))

			if to := tx.To(); to != nil {
				if k, ok := lastTo[*to]; ok {
					toGaps = append(toGaps, float64(j-k))
				}
				lastTo[*to] = j
				toBlock.add(blkTo[*to])
				if !blkTo[*to] {
					toEarly.add(seenTo[*to])
				} else {
					toEarly.add(false)
				}
				blkTo[*to] = true
				addrBlock.add(blkAddr[*to])
				blkAddr[*to] = true
			}
			if len(data) >= 4 {
				var sel [4]byte
				copy(sel[:], data)
				selBlock.add(blkSel[sel])
				selEarly.add(!blkSel[sel] && seenSel[sel])
				blkSel[sel] = true
				for w := 4; w+32 <= len(data); w += 32 {
					var word [32]byte
					copy(word[:], data[w:w+32])
					words++
					lead := 0
					for lead < 32 && word[lead] == 0 {
						lead++
					}
					switch {
					case lead == 32:
						wkind[0]++
						continue
					case lead >= 24:
						wkind[2]++
					case lead >= 16:
						wkind[3]++
					case lead >= 12:
						wkind[1]++
						a := common.BytesToAddress(word[12:])
						addrBlock.add(blkAddr[a])
						addrWordBlock.add(blkAddr[a])
						blkAddr[a] = true
					default:
						wkind[4]++
						wideZeros += int64(bytes.Count(word[:], []byte{0}))
						if bytes.Contains(word[:], make([]byte, 8)) {
							wideRun++
						}
					}
					wordPos++
					at := int64(-1)
					if k, ok := lastWord[word]; ok {
						wordGaps = append(wordGaps, float64(wordPos-k))
						at = k
					}
					lastWord[word] = wordPos
					grid = append(grid, word)
					prevAt = append(prevAt, at)
					switch c := blkCount[word]; {
					case c >= 5:
						occ[2]++
					case c >= 2:
						occ[1]++
					case c == 1:
						occ[0]++
					}
					blkCount[word]++
					if blkWord[word] {
						reps++
						switch {
						case lead >= 24:
							repKind[2]++
						case lead >= 16:
							repKind[3]++
						case lead >= 12:
							repKind[1]++
						default:
							repKind[4]++
						}
					}
					wordBlock.add(blkWord[word])
					wordEarly.add(!blkWord[word] && seenWord[word])
					blkWord[word] = true
				}
			}
		}
		for k := 0; k+1 < len(grid); k++ {
			if at := prevAt[k]; at >= 0 {
				runs.add(int(at) < len(grid) && grid[at] == grid[k+1])
			}
		}
		if len(txcat) > 0 {
			tr = append(tr, float64(len(txcat))/float64(len(snappy.Encode(nil, txcat))))
		}
		if len(cdcat) > 0 {
			cr = append(cr, float64(len(cdcat))/float64(len(snappy.Encode(nil, cdcat))))
		}
		for a := range blkTo {
			seenTo[a] = true
		}
		for k := range blkSel {
			seenSel[k] = true
		}
		for k := range blkWord {
			seenWord[k] = true
		}
	}
	s.Blocks = len(payloads)
	if s.Txs == 0 {
		return s, fmt.Errorf("no transactions in %d payloads", len(payloads))
	}
	for t := range types_ {
		s.TypeShare[t] = 100 * float64(types_[t]) / float64(s.Txs)
	}
	s.MeanTx = float64(bytesAll) / float64(s.Txs)
	s.CalldataPerTx = float64(calldata) / float64(s.Txs)
	s.WordsPerTx = float64(words) / float64(s.Txs)
	pct := func(a, b int64) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	s.ByteShare = Parts{pct(part[0], bytesAll), pct(part[1], bytesAll), pct(part[2], bytesAll), pct(part[3], bytesAll), pct(part[4], bytesAll)}
	s.ZeroShare = Parts{pct(zero[0], part[0]), pct(zero[1], part[1]), pct(zero[2], part[2]), pct(zero[3], part[3]), pct(zero[4], part[4])}
	s.ZeroShareAll = pct(zerosAll, bytesAll)
	s.WordKind = Words{pct(wkind[0], words), pct(wkind[1], words), pct(wkind[2], words), pct(wkind[3], words), pct(wkind[4], words)}
	s.ToSeenBlock, s.ToSeenEarlier = toBlock.pct(), toEarly.pct()
	s.SelectorSeenBlock, s.SelectorSeenEarly = selBlock.pct(), selEarly.pct()
	s.WordRepeatBlock, s.WordRepeatEarly = wordBlock.pct(), wordEarly.pct()
	s.AddrRepeatBlock, s.AddrWordRepeatBlock = addrBlock.pct(), addrWordBlock.pct()
	s.TxsPerBlock = median(perBlock)
	s.TxSize, s.OtherWords = quantiles(sizes), quantiles(otherWords)
	s.Kind = Kinds{pct(kinds[0], int64(s.Txs)), pct(kinds[1], int64(s.Txs)), pct(kinds[2], int64(s.Txs))}
	s.LegacyByKind = Kinds{pct(legacy[0], kinds[0]), pct(legacy[1], kinds[1]), pct(legacy[2], kinds[2])}
	s.WordRepeatGap, s.ToRepeatGap = median(wordGaps), median(toGaps)
	s.WordRepeatRun = runs.pct()
	s.RepeatOccurrence = [3]float64{pct(occ[0], reps), pct(occ[1], reps), pct(occ[2], reps)}
	s.RepeatKind = Words{0, pct(repKind[1], reps), pct(repKind[2], reps), pct(repKind[3], reps), pct(repKind[4], reps)}
	far := 0
	for _, g := range wordGaps {
		if g > 256 {
			far++
		}
	}
	if len(wordGaps) > 0 {
		s.WordRepeatFar = 100 * float64(far) / float64(len(wordGaps))
	}
	if wkind[4] > 0 {
		s.WideZeroShare = 100 * float64(wideZeros) / float64(32*wkind[4])
		s.WideZeroRun = 100 * float64(wideRun) / float64(wkind[4])
	}
	s.PayloadRawSnappy, s.TxsRawSnappy, s.CalldataRawSnappy = median(pr), median(tr), median(cr)
	return s, nil
}

// quantiles are v's 10th, 25th, 50th, 75th and 90th percentiles (nearest rank).
func quantiles(v []float64) (q [5]float64) {
	if len(v) == 0 {
		return q
	}
	slices.Sort(v)
	for k, f := range []float64{0.10, 0.25, 0.50, 0.75, 0.90} {
		q[k] = v[min(len(v)-1, int(f*float64(len(v))))]
	}
	return q
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}
