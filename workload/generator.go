package workload

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/OffchainLabs/go-bitfield"
	"github.com/attestantio/go-eth2-client/spec/altair"
	"github.com/attestantio/go-eth2-client/spec/electra"
	"github.com/attestantio/go-eth2-client/spec/phase0"
	"github.com/golang/snappy"

	"github.com/streamsim/streamsim/gossip"
)

// Message is one gossip message of the network-wide schedule.
type Message struct {
	// Slot is the generated slot it belongs to, counted from 0 (the chain slot in its
	// contents is Params.FirstSlot + Slot).
	Slot uint64
	// At is the send time: the unscaled offset from the start of generated slot 0.
	At       time.Duration
	Category gossip.Category
	// Topic is the full gossip topic.
	Topic string
	// Data is the gossip payload: the SSZ encoding in the Snappy block format.
	Data []byte
	// SSZBytes is the length of the SSZ encoding before Snappy.
	SSZBytes int
}

// Generator produces the schedule slot by slot. It is not safe for concurrent use.
type Generator struct {
	p      Params
	rng    *rand.Rand
	bytes  *rand.ChaCha8
	slot   uint64 // next generated slot, from 0
	topics topicNames

	committeeSizes []int
	syncMembers    [syncCommitteeSize]phase0.ValidatorIndex

	head       phase0.Root // root of the latest block
	checkpoint map[phase0.Epoch]phase0.Root
	recentData [][]*phase0.AttestationData // the AttestationData values of recent slots, newest last

	chain *chainState

	sszBuf []byte
	msgs   []Message

	// skipColumns leaves out the data column sidecars (block-only samples in tests).
	skipColumns bool
}

type topicNames struct {
	block, aggregate, contribution string
	attestation                    [gossip.AttestationSubnets]string
	sync                           [gossip.SyncCommitteeSubnets]string
	column                         [gossip.DataColumnSubnets]string
}

// NewGenerator validates p and returns a generator positioned at slot 0.
func NewGenerator(p Params) (*Generator, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("workload params: %w", err)
	}
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], uint64(p.Seed))
	copy(seed[8:], "streamsim workload")
	cc := rand.NewChaCha8(seed)
	g := &Generator{
		p:          p,
		rng:        rand.New(cc),
		bytes:      cc,
		checkpoint: map[phase0.Epoch]phase0.Root{},
	}
	g.topics.block = gossip.Topic(p.ForkDigest, gossip.TopicBeaconBlock)
	g.topics.aggregate = gossip.Topic(p.ForkDigest, gossip.TopicAggregateAndProof)
	g.topics.contribution = gossip.Topic(p.ForkDigest, gossip.TopicContribution)
	for i := range g.topics.attestation {
		g.topics.attestation[i] = gossip.Topic(p.ForkDigest, gossip.AttestationTopic(i))
	}
	for i := range g.topics.sync {
		g.topics.sync[i] = gossip.Topic(p.ForkDigest, gossip.SyncCommitteeTopic(i))
	}
	for i := range g.topics.column {
		g.topics.column[i] = gossip.Topic(p.ForkDigest, gossip.DataColumnTopic(i))
	}
	// compute_committee splits the slot's members into contiguous ranges.
	members, count := p.committeeMembers(), p.committeesPerSlot()
	for c := range count {
		g.committeeSizes = append(g.committeeSizes, members*(c+1)/count-members*c/count)
	}
	for i := range g.syncMembers {
		g.syncMembers[i] = g.validator()
	}
	g.head = g.root()
	chain, err := newChainState(g)
	if err != nil {
		return nil, err
	}
	g.chain = chain
	// The votes of the slot before the first, for the first block to include.
	if p.FirstSlot > 0 {
		prev := phase0.Slot(p.FirstSlot - 1)
		datas, _ := g.attestationData(prev, phase0.Epoch(uint64(prev)/slotsPerEpoch), g.head)
		g.recentData = append(g.recentData, datas)
	}
	return g, nil
}

// Params returns the generator's parameters.
func (g *Generator) Params() Params { return g.p }

// Next returns the next slot's messages, network-wide on every topic, sorted by At. The
// slice and the payloads belong to the caller. It panics only if a generated message fails
// to encode, which would be a bug (Params are validated by NewGenerator); NextSlot returns
// that as an error instead.
func (g *Generator) Next() []Message {
	msgs, err := g.NextSlot()
	if err != nil {
		panic(err)
	}
	return msgs
}

// NextSlot is Next with encoding errors returned.
func (g *Generator) NextSlot() ([]Message, error) {
	i := g.slot
	g.slot++
	slot := phase0.Slot(g.p.FirstSlot + i)
	start := time.Duration(i) * SlotDuration
	g.msgs = make([]Message, 0, int(g.p.AttestationsPerSlot()*1.05)+1024)

	parent := g.head
	// A block, when there is one, is proposed at 1.5–2.5 s and becomes the head.
	if g.rng.Float64() < g.p.BlockProbability {
		at := start + 1500*time.Millisecond + time.Duration(g.rng.Int64N(int64(time.Second)))
		if err := g.block(i, slot, at); err != nil {
			return nil, fmt.Errorf("slot %d: %w", slot, err)
		}
	}
	epoch := phase0.Epoch(uint64(slot) / slotsPerEpoch)
	if uint64(slot)%slotsPerEpoch == 0 || g.checkpoint[epoch] == (phase0.Root{}) {
		g.checkpoint[epoch] = g.head
		delete(g.checkpoint, epoch-3)
	}
	datas, shares := g.attestationData(slot, epoch, parent)
	g.recentData = append(g.recentData, datas)
	if len(g.recentData) > 8 {
		g.recentData = g.recentData[1:]
	}
	if err := g.attestations(i, slot, start, datas, shares); err != nil {
		return nil, fmt.Errorf("slot %d: %w", slot, err)
	}
	if err := g.syncCommittee(i, slot, start); err != nil {
		return nil, fmt.Errorf("slot %d: %w", slot, err)
	}
	msgs := g.msgs
	g.msgs = nil
	// pdqsort is deterministic for a given input; equal times are rare (ns resolution).
	slices.SortFunc(msgs, func(a, b Message) int { return cmp.Compare(a.At, b.At) })
	return msgs, nil
}

// attestationData returns the slot's distinct AttestationData values and the cumulative
// share of attesters voting for each: usually one head vote, on some slots a second value
// (the parent, from attesters that missed the block), rarely a third.
func (g *Generator) attestationData(slot phase0.Slot, epoch phase0.Epoch, parent phase0.Root) ([]*phase0.AttestationData, []float64) {
	source := phase0.Epoch(0)
	if epoch > 0 {
		source = epoch - 1
	}
	mk := func(root phase0.Root) *phase0.AttestationData {
		return &phase0.AttestationData{
			Slot:            slot,
			Index:           0, // Electra: the committee index lives in committee_bits
			BeaconBlockRoot: root,
			Source:          &phase0.Checkpoint{Epoch: source, Root: g.checkpointRoot(source)},
			Target:          &phase0.Checkpoint{Epoch: epoch, Root: g.checkpointRoot(epoch)},
		}
	}
	datas := []*phase0.AttestationData{mk(g.head)}
	shares := []float64{1}
	if g.p.SecondDataProbability > 0 && g.rng.Float64() < g.p.SecondDataProbability {
		minority := (1 - g.p.HeadVoteShare) / g.p.SecondDataProbability
		alt := parent
		if alt == g.head {
			alt = g.root() // no block this slot: a minority saw a fork block
		}
		datas = append(datas, mk(alt))
		shares = []float64{1 - minority, 1}
		if g.rng.Float64() < g.p.ThirdDataProbability {
			datas = append(datas, mk(g.root()))
			shares = []float64{1 - minority, 1 - minority/10, 1}
		}
	}
	return datas, shares
}

func (g *Generator) checkpointRoot(e phase0.Epoch) phase0.Root {
	r, ok := g.checkpoint[e]
	if !ok {
		r = g.root()
		g.checkpoint[e] = r
	}
	return r
}

func pick(rng *rand.Rand, shares []float64) int {
	if len(shares) == 1 {
		return 0
	}
	u := rng.Float64()
	for i, s := range shares {
		if u < s {
			return i
		}
	}
	return len(shares) - 1
}

// delay draws a gossip publication delay: the sum of two exponentials of the given mean
// each, capped so a message never leaves its slot.
func (g *Generator) delay(mean time.Duration, base time.Duration) time.Duration {
	d := time.Duration((g.rng.ExpFloat64() + g.rng.ExpFloat64()) / 2 * float64(mean))
	return min(base+d, SlotDuration-time.Millisecond)
}

func (g *Generator) attestations(i uint64, slot phase0.Slot, start time.Duration, datas []*phase0.AttestationData, shares []float64) error {
	committeesSinceEpoch := int(uint64(slot)%slotsPerEpoch) * len(g.committeeSizes)
	att := &electra.SingleAttestation{}
	for c, size := range g.committeeSizes {
		subnet := (committeesSinceEpoch + c) % gossip.AttestationSubnets
		for range size {
			if g.rng.Float64() >= g.p.Participation {
				continue
			}
			att.CommitteeIndex = phase0.CommitteeIndex(c)
			att.AttesterIndex = g.validator()
			att.Data = datas[pick(g.rng, shares)]
			g.fill(att.Signature[:])
			buf, err := att.MarshalSSZTo(g.sszBuf[:0])
			if err != nil {
				return fmt.Errorf("single attestation: %w", err)
			}
			g.sszBuf = buf
			g.emit(i, start+g.delay(300*time.Millisecond, 4*time.Second), gossip.Attestation, g.topics.attestation[subnet], buf)
		}
	}
	// Aggregates: the committee's aggregators (is_aggregator) publish at ~8 s; the subset
	// rule decides which of them propagate.
	for c, size := range g.committeeSizes {
		for _, a := range g.aggregation(size, shares, targetAggregatorsPerCommittee, g.p.AggregatorCompleteShare, 250*time.Millisecond) {
			agg := &electra.SignedAggregateAndProof{
				Message: &electra.AggregateAndProof{
					AggregatorIndex: g.validator(),
					Aggregate: &electra.Attestation{
						AggregationBits: a.bits,
						Data:            datas[a.data],
						CommitteeBits:   bitfield.NewBitvector64(),
					},
				},
			}
			agg.Message.Aggregate.CommitteeBits.SetBitAt(uint64(c), true)
			g.fill(agg.Message.Aggregate.Signature[:])
			g.fill(agg.Message.SelectionProof[:])
			g.fill(agg.Signature[:])
			buf, err := agg.MarshalSSZTo(g.sszBuf[:0])
			if err != nil {
				return fmt.Errorf("aggregate: %w", err)
			}
			g.sszBuf = buf
			g.emit(i, start+8*time.Second+a.delay, gossip.Aggregate, g.topics.aggregate, buf)
		}
	}
	return nil
}

func (g *Generator) syncCommittee(i uint64, slot phase0.Slot, start time.Duration) error {
	// SyncMessages distinct members, chosen by a partial Fisher–Yates shuffle of positions.
	var pos [syncCommitteeSize]uint16
	for k := range pos {
		pos[k] = uint16(k)
	}
	msg := &altair.SyncCommitteeMessage{Slot: slot, BeaconBlockRoot: g.head}
	for k := range g.p.SyncMessages {
		j := k + g.rng.IntN(syncCommitteeSize-k)
		pos[k], pos[j] = pos[j], pos[k]
		msg.ValidatorIndex = g.syncMembers[pos[k]]
		g.fill(msg.Signature[:])
		buf, err := msg.MarshalSSZTo(g.sszBuf[:0])
		if err != nil {
			return fmt.Errorf("sync committee message: %w", err)
		}
		g.sszBuf = buf
		g.emit(i, start+g.delay(300*time.Millisecond, 4*time.Second), gossip.SyncCommittee, g.topics.sync[int(pos[k])/syncSubcommitteeSize], buf)
	}
	// Contributions: each subcommittee's aggregators (is_sync_committee_aggregator) publish
	// at ~8 s; the subset rule decides which propagate.
	for sub := range gossip.SyncCommitteeSubnets {
		for _, a := range g.aggregation(syncSubcommitteeSize, []float64{1}, targetAggregatorsPerSyncSubcommittee, g.p.SyncAggregatorCompleteShare, 250*time.Millisecond) {
			bits := bitfield.NewBitvector128()
			for _, b := range a.bits.BitIndices() {
				bits.SetBitAt(uint64(b), true)
			}
			c := &altair.SignedContributionAndProof{
				Message: &altair.ContributionAndProof{
					AggregatorIndex: g.syncMembers[sub*syncSubcommitteeSize+g.rng.IntN(syncSubcommitteeSize)],
					Contribution: &altair.SyncCommitteeContribution{
						Slot:              slot,
						BeaconBlockRoot:   g.head,
						SubcommitteeIndex: uint64(sub),
						AggregationBits:   bits,
					},
				},
			}
			g.fill(c.Message.Contribution.Signature[:])
			g.fill(c.Message.SelectionProof[:])
			g.fill(c.Signature[:])
			buf, err := c.MarshalSSZTo(g.sszBuf[:0])
			if err != nil {
				return fmt.Errorf("contribution: %w", err)
			}
			g.sszBuf = buf
			g.emit(i, start+8*time.Second+a.delay, gossip.SyncCommittee, g.topics.contribution, buf)
		}
	}
	return nil
}

// emit Snappy-encodes ssz and queues the message.
func (g *Generator) emit(i uint64, at time.Duration, c gossip.Category, topic string, ssz []byte) {
	g.msgs = append(g.msgs, Message{
		Slot:     i,
		At:       at,
		Category: c,
		Topic:    topic,
		Data:     snappy.Encode(nil, ssz),
		SSZBytes: len(ssz),
	})
}

// validator draws a validator index.
func (g *Generator) validator() phase0.ValidatorIndex {
	return phase0.ValidatorIndex(g.rng.IntN(g.p.Validators))
}

func (g *Generator) root() phase0.Root {
	var r phase0.Root
	g.fill(r[:])
	return r
}

// fill fills b with random bytes (signatures, proofs, roots and cells are random on the wire).
func (g *Generator) fill(b []byte) { _, _ = g.bytes.Read(b) }

// aggregate is one aggregate (or contribution) that propagates: its bits over the committee,
// the index of its AttestationData and its publication delay after 8 s.
type aggregate struct {
	bits  bitfield.Bitlist
	data  int
	delay time.Duration
}

// aggregation models one committee's aggregation as the spec makes it. Every member is an
// aggregator with probability 1/max(1, size/target) (is_aggregator,
// TARGET_AGGREGATORS_PER_COMMITTEE = 16; for sync subcommittees
// TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE = 16 over 128). The committee's timely votes are
// its members' bits, each set with probability BitsSetShare, split between the slot's
// AttestationData values by shares. Each vote reaches the aggregators at its own time; an
// aggregator misses the latest AggregatorMissShare·x of them, x exponential with mean 1, or
// none with probability AggregatorCompleteShare, so what two aggregators hold is nested.
// Aggregates are published in delay order, and one propagates only when no earlier one for
// the same data holds a superset of its bits (the gossip rule "[IGNORE] … a non-strict
// superset has not already been seen"). Returned in publication order.
func (g *Generator) aggregation(size int, shares []float64, target int, complete float64, mean time.Duration) []aggregate {
	modulo := max(1, size/target)
	// Votes: data index (-1: none timely) and arrival rank (lateness).
	type vote struct {
		data int
		late float64
	}
	votes := make([]vote, size)
	for m := range votes {
		votes[m] = vote{data: -1}
		if g.rng.Float64() < g.p.BitsSetShare {
			votes[m] = vote{data: pick(g.rng, shares), late: g.rng.Float64()}
		}
	}
	var published []aggregate
	for range size {
		if g.rng.IntN(modulo) != 0 {
			continue
		}
		miss := 0.0
		if g.rng.Float64() >= complete {
			miss = g.p.AggregatorMissShare * g.rng.ExpFloat64()
		}
		d := pick(g.rng, shares)
		bl := bitfield.NewBitlist(uint64(size))
		for m, v := range votes {
			if v.data == d && v.late < 1-miss {
				bl.SetBitAt(uint64(m), true)
			}
		}
		published = append(published, aggregate{bits: bl, data: d, delay: g.delay(mean, 0)})
	}
	slices.SortStableFunc(published, func(a, b aggregate) int { return cmp.Compare(a.delay, b.delay) })
	var out []aggregate
	for _, a := range published {
		if a.bits.Count() == 0 {
			continue // an aggregator with nothing to aggregate publishes nothing
		}
		seen := false
		for _, o := range out {
			if o.data == a.data {
				if sup, err := o.bits.Contains(a.bits); err == nil && sup {
					seen = true
					break
				}
			}
		}
		if !seen {
			out = append(out, a)
		}
	}
	return out
}

// bitlist returns a Bitlist of n bits, each set with probability share.
func (g *Generator) bitlist(n int, share float64) bitfield.Bitlist {
	bl := bitfield.NewBitlist(uint64(n))
	for b := range uint64(n) {
		if g.rng.Float64() < share {
			bl.SetBitAt(b, true)
		}
	}
	return bl
}
