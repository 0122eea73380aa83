package neighbourhood

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/streamsim/streamsim/gossip"

	"github.com/streamsim/streamsim/sim/node"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/workload"
)

// ParamScoring is whether the observed node and its real peers score their peers: ScoringClient
// (gossipsub v1.1 peer scoring with each node's client's Ethereum parameters, node.ClientScoring,
// computed for the run's validator count) or ScoringOff (no node scores: a peer over Dhi prunes
// at random).
const (
	ParamScoring  = "scoring"
	ScoringClient = "client"
	ScoringOff    = "off"
)

// ParseScoring reads ParamScoring; "" is ScoringOff.
func ParseScoring(v string) (string, error) {
	switch t := strings.TrimSpace(v); t {
	case "", ScoringOff:
		return ScoringOff, nil
	case ScoringClient:
		return t, nil
	}
	return "", fmt.Errorf("param %s: %q is not a scoring rule (allowed: %s, %s)", ParamScoring, v, ScoringClient, ScoringOff)
}

// CheckScoring refuses, before anything starts, a scoring rule a run cannot keep: at a time
// scale that takes a client's decay interval below pubsub's 1 s.
func CheckScoring(rule string, validators int, scale float64) error {
	if rule != ScoringClient {
		return nil
	}
	for _, cl := range node.ScoringClients {
		s, err := node.ClientScoring(cl, validators)
		if err != nil {
			return fmt.Errorf("param %s: %w", ParamScoring, err)
		}
		if _, err := s.Dilate(scale); err != nil {
			return fmt.Errorf("param %s: %w", ParamScoring, err)
		}
	}
	return nil
}

// nodeScoring is a node's scoring options under rule: none when off or when its client sets
// no scoring (the spec's profile).
func nodeScoring(rule string, cl topology.Client, validators int, inspect pubsub.ExtendedPeerScoreInspectFn) ([]node.Option, error) {
	if rule != ScoringClient || cl.Name == "spec" {
		return nil, nil
	}
	s, err := node.ClientScoring(cl.Name, validators)
	if err != nil {
		return nil, fmt.Errorf("param %s: %w", ParamScoring, err)
	}
	opts := []node.Option{node.WithScoring(s)}
	if inspect != nil {
		opts = append(opts, node.WithScoreInspect(inspect, workload.SlotDuration))
	}
	return opts, nil
}

// scoringLabel is the report's words for ParamScoring.
func scoringLabel(rule string) string {
	if rule == ScoringClient {
		return fmt.Sprintf("every real node scores its peers with its client's parameters (param %s; IP colocation off, application score 0)", ParamScoring)
	}
	return fmt.Sprintf("no node scores its peers: a peer over Dhi prunes at random (param %s %s)", ParamScoring, ScoringOff)
}

// scoreWatch reads every real peer's scores once a slot during the measured slots: how the
// observed node scores at its peers against their outside peers, and whether any outside peer
// was scored down in a way mainnet peers would not be (negative, below the gossip threshold,
// behaviour penalties).
type scoreWatch struct {
	measuring *atomic.Bool
	obs       peer.ID
	gossip    float64 // the lowest gossip threshold of the clients (every client's: −4000)

	mu sync.Mutex
	v  ScoringView
	// sums for the means
	obsSum, outSum   float64
	obsN, outN       int64
	aboveSum         float64 // per snapshot with the observed node: share of outside peers scoring above it
	aboveN           int64
	outsidePositive  int64
	observedPositive int64
}

// ScoringView is what the real peers' scores looked like over the measured slots (one
// snapshot per real peer and slot).
type ScoringView struct {
	Snapshots int64 `json:"snapshots"`
	// ObservedScore and OutsideScore are the mean score the real peers gave the observed node
	// and their outside peers; ObservedBelowShare the mean share of a peer's outside peers
	// that scored above the observed node.
	ObservedScore      float64 `json:"observed_score_mean"`
	OutsideScore       float64 `json:"outside_score_mean"`
	ObservedBelowShare float64 `json:"outside_share_scoring_above_observed"`
	// ObservedPositive and OutsidePositive are the shares of scores above 0.
	ObservedPositive float64 `json:"observed_positive_share"`
	OutsidePositive  float64 `json:"outside_positive_share"`
	// Outside peers' scores (observations) below 0 and below the gossip threshold, with a
	// behaviour penalty, and the largest penalty counter seen.
	OutsideNegative     int64   `json:"outside_negative"`
	OutsideBelowGossip  int64   `json:"outside_below_gossip_threshold"`
	OutsideBehaviour    int64   `json:"outside_with_behaviour_penalty"`
	MaxOutsideBehaviour float64 `json:"max_outside_behaviour_penalty"`
	ObservedNegative    int64   `json:"observed_negative"`
	ObservedBehaviour   int64   `json:"observed_with_behaviour_penalty"`
}

func newScoreWatch(measuring *atomic.Bool) *scoreWatch {
	return &scoreWatch{measuring: measuring, gossip: -4000}
}

// inspect is a real peer's score inspector.
func (w *scoreWatch) inspect(m map[peer.ID]*pubsub.PeerScoreSnapshot) {
	if !w.measuring.Load() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.v.Snapshots++
	obs, haveObs := m[w.obs]
	above, outside := 0, 0
	for p, s := range m {
		if p == w.obs {
			w.obsSum += s.Score
			w.obsN++
			if s.Score > 0 {
				w.observedPositive++
			}
			if s.Score < 0 {
				w.v.ObservedNegative++
			}
			if s.BehaviourPenalty > 0 {
				w.v.ObservedBehaviour++
			}
			continue
		}
		outside++
		w.outSum += s.Score
		w.outN++
		if s.Score > 0 {
			w.outsidePositive++
		}
		if s.Score < 0 {
			w.v.OutsideNegative++
		}
		if s.Score < w.gossip {
			w.v.OutsideBelowGossip++
		}
		if s.BehaviourPenalty > 0 {
			w.v.OutsideBehaviour++
			w.v.MaxOutsideBehaviour = max(w.v.MaxOutsideBehaviour, s.BehaviourPenalty)
		}
		if haveObs && s.Score > obs.Score {
			above++
		}
	}
	if haveObs && outside > 0 {
		w.aboveSum += float64(above) / float64(outside)
		w.aboveN++
	}
}

// view is the watch's summary.
func (w *scoreWatch) view() *ScoringView {
	w.mu.Lock()
	defer w.mu.Unlock()
	v := w.v
	if w.obsN > 0 {
		v.ObservedScore = w.obsSum / float64(w.obsN)
		v.ObservedPositive = float64(w.observedPositive) / float64(w.obsN)
	}
	if w.outN > 0 {
		v.OutsideScore = w.outSum / float64(w.outN)
		v.OutsidePositive = float64(w.outsidePositive) / float64(w.outN)
	}
	if w.aboveN > 0 {
		v.ObservedBelowShare = w.aboveSum / float64(w.aboveN)
	}
	return &v
}

// firstDeliveries counts, at every real peer over the measured slots, the messages of the
// observed node's topics it delivered and those whose first copy came from the observed node
// (pubsub's ReceivedFrom): first deliveries are what P2 credits, so this says how often the
// observed node earns it, with or without scoring.
type firstDeliveries struct {
	measuring *atomic.Bool
	obs       peer.ID
	topics    map[string]bool
	delivered [gossip.NumCategories]atomic.Int64
	fromObs   [gossip.NumCategories]atomic.Int64
}

func (f *firstDeliveries) DeliverMessage(m *pubsub.Message) {
	if !f.measuring.Load() || !f.topics[m.GetTopic()] {
		return
	}
	c := gossip.TopicCategory(m.GetTopic())
	f.delivered[c].Add(1)
	if m.ReceivedFrom == f.obs {
		f.fromObs[c].Add(1)
	}
}

// shares is, per category with deliveries, the share first delivered by the observed node.
func (f *firstDeliveries) shares() map[string]float64 {
	out := map[string]float64{}
	for c := range gossip.NumCategories {
		if d := f.delivered[c].Load(); d > 0 {
			out[c.String()] = float64(f.fromObs[c].Load()) / float64(d)
		}
	}
	return out
}

func (*firstDeliveries) AddPeer(peer.ID, protocol.ID)                         {}
func (*firstDeliveries) RemovePeer(peer.ID)                                   {}
func (*firstDeliveries) OnNewOutboundStream(peer.ID, protocol.ID)             {}
func (*firstDeliveries) OnClosedOutboundStream(peer.ID)                       {}
func (*firstDeliveries) Join(string)                                          {}
func (*firstDeliveries) Leave(string)                                         {}
func (*firstDeliveries) Graft(peer.ID, string)                                {}
func (*firstDeliveries) Prune(peer.ID, string)                                {}
func (*firstDeliveries) ValidateMessage(*pubsub.Message)                      {}
func (*firstDeliveries) RejectMessage(*pubsub.Message, string)                {}
func (*firstDeliveries) DuplicateMessage(*pubsub.Message)                     {}
func (*firstDeliveries) ThrottlePeer(peer.ID)                                 {}
func (*firstDeliveries) RecvRPC(*pubsub.RPC)                                  {}
func (*firstDeliveries) SendRPC(*pubsub.RPC, peer.ID)                         {}
func (*firstDeliveries) SendRPCCompleted(*pubsub.RPC, peer.ID, time.Duration) {}
func (*firstDeliveries) DropRPC(*pubsub.RPC, peer.ID)                         {}
func (*firstDeliveries) UndeliverableMessage(*pubsub.Message)                 {}
