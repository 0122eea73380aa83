package node

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/streamsim/streamsim/gossip"
)

// Validation delay. A consensus client forwards a gossip message only after validating it
// (signatures, KZG proofs, the spec's gossip conditions), and pubsub forwards only what its
// validator pipeline accepted. The delay matters for the shape of gossip: the longer a node
// validates, the more copies arrive meanwhile (go-libp2p-pubsub counts them as duplicates and
// still forwards to every mesh peer but the sender) and the later its IHAVE lists the id.
// Here each node's validator for a topic waits a delay drawn for (seed, node, message) from
// the category's range, divided by the time scale, then accepts. Messages the node publishes
// itself are not delayed (their checks happened before publishing).
//
// Default ranges (ParamValidationDelay), per category:
//
//   - attestation 5–50 ms, sync_committee 5–50 ms: single BLS signatures are verified in
//     batches that wait for more signatures first. Prysm's batch verifier flushes every 50 ms
//     (beacon-chain/sync/batch_verifier.go: signatureVerificationInterval = 50 ms,
//     verifierLimit 50 signatures); Nimbus accumulates for 10 ms or 72 signatures
//     (beacon_chain/gossip_processing/batch_validation.nim: BatchAttAccumTime 10 ms,
//     BatchedCryptoSize 72). The range spans the two, plus a batch verification of a few ms
//     (docs/inputs.md §9's experiment used 5–40 ms).
//   - aggregate 5–20 ms: three signatures (selection proof, aggregator, the aggregate over
//     ~488 keys), batched like attestations. (unverified: no client figure read here.)
//   - block 20–100 ms: proposer signature and the gossip conditions before forwarding
//     (clients forward before the full state transition and execution). (unverified)
//   - data_column 10–40 ms: KZG cell proofs of the column's B cells in one batch, Nimbus
//     accumulating columns 10 ms (BatchKzgAccumTime) before a batch. (the verification's
//     cost unverified)
//
// These are inputs of the model, not calibrated to any result; a run can set them.

// DelayRange is a uniform range of real (mainnet) time.
type DelayRange struct{ Min, Max time.Duration }

// ValidationDelays maps a category to its delay range; categories absent are not delayed.
type ValidationDelays map[gossip.Category]DelayRange

// String is the parseable form, categories in report order.
func (v ValidationDelays) String() string {
	if len(v) == 0 {
		return "off"
	}
	var parts []string
	for _, c := range gossip.Categories() {
		if r, ok := v[c]; ok {
			parts = append(parts, fmt.Sprintf("%s:%v-%v", c, r.Min, r.Max))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// validationSeed is what draws a node's delays: the run's seed and the node's position.
type validationSeed struct {
	seed int64
	node int
}

// delay is the validation delay of message id at this node, in real (mainnet) time:
// uniform in r, drawn from SHA-256 of (seed, node, id), so a seed fixes every delay.
func (s validationSeed) delay(r DelayRange, id string) time.Duration {
	if r.Max == r.Min {
		return r.Min
	}
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(s.seed))
	binary.LittleEndian.PutUint64(b[8:], uint64(s.node))
	h := sha256.New()
	h.Write(b[:])
	h.Write([]byte(id))
	u := float64(binary.LittleEndian.Uint64(h.Sum(nil)[:8])>>11) / (1 << 53)
	return r.Min + time.Duration(u*float64(r.Max-r.Min))
}

// WithValidationDelay makes the node validate every message of a delayed category for a
// seeded delay (WithNodeSeed) before pubsub forwards it.
func WithValidationDelay(delays ValidationDelays) Option {
	return func(c *config) error {
		for cat, r := range delays {
			if r.Min < 0 || r.Max < r.Min {
				return fmt.Errorf("validation delay of %s: range %v-%v must be non-negative and ordered", cat, r.Min, r.Max)
			}
		}
		c.validation = delays
		return nil
	}
}

// WithNodeSeed sets the seed of the node's own draws (validation delays): the run's seed and
// the node's position in the run. Without it every node draws as position 0 of seed 0.
func WithNodeSeed(seed int64, node int) Option {
	return func(c *config) error { c.nodeSeed = validationSeed{seed, node}; return nil }
}

// validatorConcurrency is the per-topic bound on validations in flight: far above what the
// delays need (mainnet's ~31 attestations/s per subnet × 50 ms ≈ 2), so pubsub never
// throttles a message for want of a validation slot.
const validatorConcurrency = 4096

// registerValidator installs the topic's delaying validator, when its category is delayed.
func (n *Node) registerValidator(topic string) error {
	r, ok := n.cfg.validation[gossip.TopicCategory(topic)]
	if !ok || r.Max == 0 {
		return nil
	}
	self := n.host.ID()
	seed := n.cfg.nodeSeed
	scale := n.cfg.timeScale
	v := func(ctx context.Context, from peer.ID, m *pubsub.Message) pubsub.ValidationResult {
		if from == self {
			return pubsub.ValidationAccept
		}
		id := m.ID
		if id == "" {
			id = gossip.PubsubMsgID(m.Message)
		}
		d := time.Duration(float64(seed.delay(r, id)) / scale)
		if d <= 0 {
			return pubsub.ValidationAccept
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return pubsub.ValidationAccept
		case <-ctx.Done():
			return pubsub.ValidationIgnore
		}
	}
	if err := n.ps.RegisterTopicValidator(topic, v, pubsub.WithValidatorConcurrency(validatorConcurrency)); err != nil {
		return fmt.Errorf("validator of %s: %w", topic, err)
	}
	return nil
}
