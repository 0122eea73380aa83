package workload

import (
	"fmt"
	"math"
	"slices"

	"github.com/OffchainLabs/go-bitfield"
	"github.com/attestantio/go-eth2-client/spec/altair"
	"github.com/attestantio/go-eth2-client/spec/electra"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/golang/snappy"

	"github.com/streamsim/streamsim/gossip"
)

// ContentWindow is the number of consecutive blocks over which "seen in an earlier block"
// is counted: the 14 consecutive mainnet blocks of the sample. The seen-sets start empty at every
// window, as they did for that sample.
const ContentWindow = 14

// ContentStats measures what a stream compressor can find in the workload's content: in
// blocks, how much of each transaction was already seen (recipients, selectors, 32-byte
// calldata words) in the same block or an earlier one; in aggregates and sync committee
// contributions, how many propagate and how many bits they share. Feed it every message
// of a run with Add; it decodes the SSZ, so it works on any chain sample in gossip form.
type ContentStats struct {
	Blocks, Txs                  int64
	PayloadBytes, TxBytes, Zeros int64
	Words                        int64 // whole 32-byte words of calldata after the selector
	// Recipients: To counts transactions with a recipient; ToEarlier those whose recipient
	// appeared in an earlier block of the window, ToSeen those seen earlier in the window
	// including earlier in the same block.
	To, ToEarlier, ToSeen int64
	// Calls (calldata of at least 4 bytes) and their selectors, counted like recipients.
	Calls, SelEarlier, SelSeen int64
	// WordsWithin repeat a word seen earlier in the same block; WordsAcross only one seen in
	// an earlier block of the window.
	WordsWithin, WordsAcross int64
	Types                    [5]int64 // transactions by EIP-2718 type 0..4
	snappyPerRaw             []float64
	wireBytes                []float64 // Snappy-encoded blocks

	// Aggregates: messages, the committees × slots they cover, bits set of bits, and the
	// mean Jaccard overlap of pairs of aggregates of one committee and AttestationData.
	Aggregates, AggCommitteeSlots int64
	AggBitsSet, AggBits           int64
	aggOverlap                    mean
	// Contributions, the same per sync subcommittee.
	Contributions, ContribSubnetSlots int64
	ContribBitsSet, ContribBits       int64
	contribOverlap                    mean

	Slots int64

	inWindow             int
	seenTo               map[common.Address]struct{}
	seenSel              map[[4]byte]struct{}
	seenWord             map[[32]byte]struct{}
	committees           int
	blockTo              map[common.Address]struct{}
	blockSel             map[[4]byte]struct{}
	blockWord            map[[32]byte]struct{}
	aggGroups, conGroups map[[40]byte][]bitfield.Bitfield
}

type mean struct {
	sum float64
	n   int64
}

func (m *mean) add(v float64) { m.sum += v; m.n++ }
func (m mean) value() float64 {
	if m.n == 0 {
		return 0
	}
	return m.sum / float64(m.n)
}

// Add decodes one slot's messages and counts their content. Messages of other categories
// are ignored; a payload that does not decode is an error.
func (c *ContentStats) Add(msgs []Message) error {
	c.Slots++
	c.aggGroups = map[[40]byte][]bitfield.Bitfield{}
	c.conGroups = map[[40]byte][]bitfield.Bitfield{}
	aggSizes, conSubs := map[byte]uint64{}, map[byte]bool{}
	for i := range msgs {
		m := &msgs[i]
		if m.Category != gossip.Block && m.Category != gossip.Aggregate && m.Category != gossip.SyncCommittee {
			continue
		}
		ssz, err := snappy.Decode(nil, m.Data)
		if err != nil {
			return fmt.Errorf("content stats: %s: snappy: %w", m.Topic, err)
		}
		switch m.Category {
		case gossip.Block:
			if err := c.addBlock(ssz, len(m.Data)); err != nil {
				return err
			}
		case gossip.Aggregate:
			var a electra.SignedAggregateAndProof
			if err := a.UnmarshalSSZ(ssz); err != nil {
				return fmt.Errorf("content stats: aggregate: %w", err)
			}
			agg := a.Message.Aggregate
			root, err := agg.Data.HashTreeRoot()
			if err != nil {
				return fmt.Errorf("content stats: aggregate data: %w", err)
			}
			var key [40]byte
			copy(key[:32], root[:])
			for _, idx := range agg.CommitteeBits.BitIndices() {
				key[32] = byte(idx)
				c.committees = max(c.committees, idx+1)
			}
			c.Aggregates++
			aggSizes[key[32]] = agg.AggregationBits.Len()
			c.aggGroups[key] = append(c.aggGroups[key], agg.AggregationBits)
		case gossip.SyncCommittee:
			var sc altair.SignedContributionAndProof
			if len(ssz) != sc.SizeSSZ() {
				continue // a SyncCommitteeMessage
			}
			if err := sc.UnmarshalSSZ(ssz); err != nil {
				return fmt.Errorf("content stats: contribution: %w", err)
			}
			con := sc.Message.Contribution
			var key [40]byte
			copy(key[:32], con.BeaconBlockRoot[:])
			key[32] = byte(con.SubcommitteeIndex)
			c.Contributions++
			conSubs[key[32]] = true
			c.conGroups[key] = append(c.conGroups[key], con.AggregationBits)
		}
	}
	c.AggCommitteeSlots += int64(c.committees)
	c.ContribSubnetSlots += gossip.SyncCommitteeSubnets
	for _, n := range aggSizes {
		c.AggBits += int64(n)
	}
	for range conSubs {
		c.ContribBits += syncSubcommitteeSize
	}
	c.AggBitsSet += unionBits(c.aggGroups)
	c.ContribBitsSet += unionBits(c.conGroups)
	overlaps(c.aggGroups, &c.aggOverlap)
	overlaps(c.conGroups, &c.contribOverlap)
	return nil
}

// unionBits returns the set bits of the union of each committee's aggregates over all
// AttestationData values (key byte 32 is the committee), and adds the committee sizes to bits.
func unionBits(groups map[[40]byte][]bitfield.Bitfield) (set int64) {
	unions := map[byte][]byte{}
	for k, g := range groups {
		for _, b := range g {
			u := unions[k[32]]
			bs := b.Bytes()
			if u == nil {
				u = make([]byte, len(bs))
			}
			for i := range min(len(u), len(bs)) {
				u[i] |= bs[i]
			}
			unions[k[32]] = u
		}
	}
	for _, u := range unions {
		for _, x := range u {
			set += int64(popcount(x))
		}
	}
	return set
}

// overlaps adds |a∩b|/|a∪b| of every pair within each group.
func overlaps(groups map[[40]byte][]bitfield.Bitfield, m *mean) {
	for _, g := range groups {
		for i := range g {
			for j := range i {
				a, b := g[i].Bytes(), g[j].Bytes()
				var and, or int
				for k := range min(len(a), len(b)) {
					and += popcount(a[k] & b[k])
					or += popcount(a[k] | b[k])
				}
				if or > 0 {
					m.add(float64(and) / float64(or))
				}
			}
		}
	}
}

func popcount(b byte) int {
	n := 0
	for ; b != 0; b &= b - 1 {
		n++
	}
	return n
}

func (c *ContentStats) addBlock(ssz []byte, snappyBytes int) error {
	var b electra.SignedBeaconBlock
	if err := b.UnmarshalSSZ(ssz); err != nil {
		return fmt.Errorf("content stats: block: %w", err)
	}
	if c.inWindow == 0 || c.inWindow == ContentWindow {
		c.inWindow = 0
		c.seenTo = map[common.Address]struct{}{}
		c.seenSel = map[[4]byte]struct{}{}
		c.seenWord = map[[32]byte]struct{}{}
	}
	c.inWindow++
	c.Blocks++
	c.snappyPerRaw = append(c.snappyPerRaw, float64(snappyBytes)/float64(len(ssz)))
	c.wireBytes = append(c.wireBytes, float64(snappyBytes))
	c.blockTo = map[common.Address]struct{}{}
	c.blockSel = map[[4]byte]struct{}{}
	c.blockWord = map[[32]byte]struct{}{}
	for i, raw := range b.Message.Body.ExecutionPayload.Transactions {
		var tx types.Transaction
		if err := tx.UnmarshalBinary(raw); err != nil {
			return fmt.Errorf("content stats: block %d tx %d: %w", b.Message.Slot, i, err)
		}
		c.Txs++
		c.TxBytes += int64(len(raw))
		c.PayloadBytes += int64(len(raw))
		for _, x := range raw {
			if x == 0 {
				c.Zeros++
			}
		}
		if t := tx.Type(); int(t) < len(c.Types) {
			c.Types[t]++
		}
		if to := tx.To(); to != nil {
			c.To++
			_, early := c.seenTo[*to]
			_, same := c.blockTo[*to]
			if early {
				c.ToEarlier++
			}
			if early || same {
				c.ToSeen++
			}
			c.blockTo[*to] = struct{}{}
		}
		data := tx.Data()
		if len(data) < 4 {
			continue
		}
		c.Calls++
		sel := [4]byte(data[:4])
		_, early := c.seenSel[sel]
		_, same := c.blockSel[sel]
		if early {
			c.SelEarlier++
		}
		if early || same {
			c.SelSeen++
		}
		c.blockSel[sel] = struct{}{}
		for k := 4; k+32 <= len(data); k += 32 {
			w := [32]byte(data[k : k+32])
			c.Words++
			if _, ok := c.blockWord[w]; ok {
				c.WordsWithin++
			} else if _, ok := c.seenWord[w]; ok {
				c.WordsAcross++
			}
			c.blockWord[w] = struct{}{}
		}
	}
	for a := range c.blockTo {
		c.seenTo[a] = struct{}{}
	}
	for s := range c.blockSel {
		c.seenSel[s] = struct{}{}
	}
	for w := range c.blockWord {
		c.seenWord[w] = struct{}{}
	}
	return nil
}

// ContentFigure is one statistic beside its target.
type ContentFigure struct {
	Category gossip.Category
	Name     string
	// Value and Target are in the unit of Unit ("%", "B", "per block", …). Target 0 means
	// no target (shown for information).
	Value, Target float64
	Unit          string
	// Source says where the target comes from.
	Source string
	// Tolerance is the allowed relative deviation (0.10); AbsTolerance an absolute floor in
	// Unit, for shares too small for a relative bound on a few thousand transactions.
	Tolerance, AbsTolerance float64
	// Conflict, when set, says why this target is not held (another target was kept).
	Conflict string
}

// Within reports whether the value is within tolerance of the target (true without target).
func (f ContentFigure) Within() bool {
	if f.Target == 0 {
		return true
	}
	return math.Abs(f.Value-f.Target) <= max(f.Tolerance*f.Target, f.AbsTolerance)
}

func pct(a, b int64) float64 { return 100 * ratio(a, b) }

// Figures returns every statistic with its target, per category.
func (c *ContentStats) Figures() []ContentFigure {
	// The sample's figures include its rollup batches in calldata: compare with era 2023-09.
	const sample = "mainnet blocks 18 090 205–218 (Sep 2023; compare --era 2023-09)"
	blockFig := func(name string, v, target float64, unit, source string) ContentFigure {
		return ContentFigure{Category: gossip.Block, Name: name, Value: v, Target: target, Unit: unit, Source: source, Tolerance: 0.10}
	}
	med := 0.0
	if n := len(c.snappyPerRaw); n > 0 {
		s := slices.Clone(c.snappyPerRaw)
		slices.Sort(s)
		med = s[n/2]
	}
	var rawPerSnappy float64
	if med > 0 {
		rawPerSnappy = 1 / med
	}
	var wireP50, wireP99 float64
	if n := len(c.wireBytes); n > 0 {
		w := slices.Clone(c.wireBytes)
		slices.Sort(w)
		wireP50, wireP99 = w[n/2], w[min(n-1, n*99/100)]
	}
	const sizes = "ethpandaops 2026-05 (50 318 blocks)"
	wireFig := func(name string, v, target float64) ContentFigure {
		return ContentFigure{Category: gossip.Block, Name: name, Value: v / 1000, Target: target / 1000, Unit: "kB", Source: sizes, Tolerance: 0.15}
	}
	typeShare := func(t int) float64 { return pct(c.Types[t], c.Txs) }
	figs := []ContentFigure{
		blockFig("transactions per block", ratio(c.Txs, c.Blocks), 0, "", "follows from the era's block sizes"),
		blockFig("mean transaction", ratio(c.TxBytes, c.Txs), 1074, "B", sample),
		blockFig("calldata words per transaction", ratio(c.Words, c.Txs), 29.2, "", sample),
		blockFig("to seen in an earlier block", pct(c.ToEarlier, c.To), 47.3, "%", sample),
		blockFig("to seen before (incl. same block)", pct(c.ToSeen, c.To), 52.3, "%", sample),
		blockFig("selector seen in an earlier block", pct(c.SelEarlier, c.Calls), 73.1, "%", sample),
		blockFig("selector seen before (incl. same block)", pct(c.SelSeen, c.Calls), 79.1, "%", sample),
		blockFig("calldata words repeated", pct(c.WordsWithin+c.WordsAcross, c.Words), 18.6, "%", sample),
		blockFig("words repeated within the block", pct(c.WordsWithin, c.Words), 14.5, "%", sample),
		blockFig("words repeated only across blocks", pct(c.WordsAcross, c.Words), 4.1, "%", sample),
		blockFig("zero bytes in transactions", pct(c.Zeros, c.TxBytes), 41.4, "%", sample),
		blockFig("raw/Snappy per block (median)", rawPerSnappy, 2.37, "", "the recording's blocks (2026)"),
		wireFig("block on the wire, p50", wireP50, 73_000),
		wireFig("block on the wire, p99", wireP99, 184_000),
	}
	for _, t := range []struct {
		typ    int
		target float64
		source string
	}{
		{0, 100 * legacyShare * (1 - blobTxTarget), sample},
		{1, 100 * accessListShare * (1 - blobTxTarget), sample},
		{2, 100 * (1 - legacyShare - accessListShare - setCodeShare) * (1 - blobTxTarget), "the rest"},
		{3, 100 * blobTxTarget, "ethresear.ch type-3 study (2025) at BPO2's blobs, ≈ 245 transactions per block, see docs"},
		{4, 100 * setCodeShare * (1 - blobTxTarget), "BundleBear set-code count (2025), see docs"},
	} {
		f := blockFig(fmt.Sprintf("type-%d transactions", t.typ), typeShare(t.typ), t.target, "%", t.source)
		f.AbsTolerance = 0.5
		figs = append(figs, f)
	}
	for i := range figs {
		if figs[i].Name == "zero bytes in transactions" {
			figs[i].Conflict = zeroBytesConflict
		}
	}
	figs = append(figs,
		ContentFigure{Category: gossip.Aggregate, Name: "aggregates propagated per committee", Value: ratio(c.Aggregates, c.AggCommitteeSlots),
			Target: 95.0 / 64, Source: "docs/inputs.md §4 (~95 per slot)", Tolerance: 0.10},
		ContentFigure{Category: gossip.Aggregate, Name: "committee votes in its aggregates", Value: pct(c.AggBitsSet, c.AggBits), Unit: "%",
			Target: 100 * DefaultParams().BitsSetShare, Source: "participation × head accuracy, see docs", Tolerance: 0.10},
		ContentFigure{Category: gossip.Aggregate, Name: "bits shared by two aggregates (Jaccard)", Value: 100 * c.aggOverlap.value(), Unit: "%",
			Source: "no published figure; the subset rule makes it near 100 %"},
		ContentFigure{Category: gossip.SyncCommittee, Name: "contributions propagated per subcommittee", Value: ratio(c.Contributions, c.ContribSubnetSlots),
			Target: 6.0 / 4, Source: "docs/inputs.md §4 (~6 per slot)", Tolerance: 0.10},
		ContentFigure{Category: gossip.SyncCommittee, Name: "subcommittee votes in its contributions", Value: pct(c.ContribBitsSet, c.ContribBits), Unit: "%",
			Target: 100 * DefaultParams().BitsSetShare, Source: "as aggregates", Tolerance: 0.10},
		ContentFigure{Category: gossip.SyncCommittee, Name: "bits shared by two contributions (Jaccard)", Value: 100 * c.contribOverlap.value(), Unit: "%",
			Source: "no published figure"},
	)
	return figs
}

// blobTxTarget is the expected share of blob (type-3) transactions: ≈ 3.2 per block of
// ≈ 245 transactions at BPO2's blobs; see docs/workload-content.md.
const blobTxTarget = 0.013

const zeroBytesConflict = "the sample's 41.4 % counts its rollup batches (≈ 37 % of its transaction bytes, random) that moved to blobs in 2024: " +
	"era 2023-09 puts them back and gives ≈ 40 %; 2025-26 blocks have none: real 2025 payloads carry 51.9 % zero bytes, " +
	"the 2025 content model ≈ 52-53 % (docs/workload-content.md)"
