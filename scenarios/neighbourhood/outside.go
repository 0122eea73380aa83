package neighbourhood

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamsim/streamsim/sim/node"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/periphery"
	"github.com/streamsim/streamsim/topology"
)

// The outside of the neighbourhood: each real peer's outside peers (periphery.Peers whose
// subscriptions are drawn from the outside population, outsidepop.go: they deliver the
// workload when the real peer meshes them, and press on the topics under pressure), and their
// churn. docs/neighbourhood.md.

// Parameters of the outside beside ParamGrafters.
const (
	ParamRegraft = "regraft" // mean further delay of an outside peer's GRAFT after a backoff
	ParamChurn   = "churn"   // mean session of an outside peer; off: none
)

// DefaultChurn is the mean session of an outside peer: an assumption between the lengths
// ProbeLab measured for the connections that last on an Ethereum testnet node (Hermes on
// Holesky, 3.5 h: 80 % dropped within seconds, 10 % lasted about 4 minutes, 10 % from 5
// minutes to 1.6 hours; ethresear.ch "Gossipsub Network Dynamicity through GRAFTs and
// PRUNEs", 2024). The short ones are refusals of a node that asks everyone for a slot; a
// mesh member is one of the connections that last.
const DefaultChurn = 30 * time.Minute

// MinChurn is the shortest mean session accepted: an outside peer that leaves before one
// PruneBackoff (60 s) never grafts again and is not what the model's pressure stands for.
const MinChurn = time.Minute

// parseOutside reads ParamRegraft and ParamChurn (a Go duration; churn also off or 0).
func parseOutside(regraftV, churnV string) (regraft, churn time.Duration, err error) {
	if v := strings.TrimSpace(regraftV); v != "" {
		if regraft, err = time.ParseDuration(v); err != nil {
			return 0, 0, fmt.Errorf("param %s: %q is not a duration (e.g. 0s, 30s)", ParamRegraft, regraftV)
		}
	}
	churn = DefaultChurn
	switch v := strings.TrimSpace(churnV); v {
	case "":
	case "off", "0":
		churn = 0
	default:
		if churn, err = time.ParseDuration(v); err != nil {
			return 0, 0, fmt.Errorf("param %s: %q is not off or a duration (e.g. 30m)", ParamChurn, churnV)
		}
	}
	return regraft, churn, CheckOutside(regraft, churn)
}

// CheckOutside refuses bad outside parameters, naming them.
func CheckOutside(regraft, churn time.Duration) error {
	if regraft < 0 {
		return fmt.Errorf("param %s: %v: want a non-negative duration (0: graft again as the backoff ends)", ParamRegraft, regraft)
	}
	if churn != 0 && churn < MinChurn {
		return fmt.Errorf("param %s: %v: want off or a mean session of at least %v (a peer gone before one prune backoff never grafts again)", ParamChurn, churn, MinChurn)
	}
	return nil
}

// outsideConfig is the periphery configuration of outside peer j of real peer i: its
// drawn topics, pubsub's
// timings dilated, the re-graft delay, and a seed of its own. The peers started with the run
// spread their first GRAFTs over one backoff (so peers started together are not pruned
// together and back in a wave); a peer that churn brings in (joined) grafts at once, as a
// newly connected node below Dlo does.
func (r *run) outsideConfig(i, j int, joined bool, serial uint64) periphery.Config {
	cfg := r.cfg
	spec, _ := topology.ClientProfile("spec")
	dil := node.Dilate(spec, cfg.TimeScale)
	topics := r.plan.Peers[i].Outside[j].Topics
	h := sha256.New()
	var b [24]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(cfg.Seed))
	binary.LittleEndian.PutUint64(b[8:16], uint64(i))
	binary.LittleEndian.PutUint64(b[16:], serial)
	h.Write(b[:])
	return periphery.Config{Topics: topics, Heartbeat: dil.Heartbeat, PruneBackoff: dil.PruneBackoff, MaxRPC: node.MaxMessageBytes,
		Pressure: cfg.Population.Presses, FirstGraft: dil.PruneBackoff * time.Duration(btoi(!joined)),
		Regraft: time.Duration(float64(cfg.Regraft) / cfg.TimeScale), Seed: binary.LittleEndian.Uint64(h.Sum(nil))}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// outsidePeer is one slot of a real peer's outside, replaced by a new peer (a new identity,
// the same kind and subscriptions) when it churns.
type outsidePeer struct {
	real  int
	index int // in the real node's boundary
}

// churn replaces outside peers until the run ends: sessions are exponential with mean
// cfg.Churn (simulated time), so over all N outside peers departures are a Poisson process of
// rate N/Churn; each departure closes the peer's host (its link to the real node goes) and
// a new peer with a new identity takes the slot, connects and starts grafting.
func (r *run) churn(slots []outsidePeer) {
	if r.cfg.Churn <= 0 || len(slots) == 0 {
		return
	}
	rng := rand.New(rand.NewPCG(uint64(r.cfg.Seed), 0xc0ffee))
	mean := float64(r.cfg.Churn) / r.cfg.TimeScale / float64(len(slots))
	serial := uint64(1 << 32)
	for {
		select {
		case <-time.After(time.Duration(rng.ExpFloat64() * mean)):
		case <-r.ctx.Done():
			return
		}
		s := slots[rng.IntN(len(slots))]
		serial++
		if err := r.replace(s, serial); err != nil && r.ctx.Err() == nil {
			r.cfg.Log.Warn("churn: replacing an outside peer failed", "peer", s.real, "err", err)
			r.churnErrors.Add(1)
		}
	}
}

// replace puts a new outside peer in slot s and closes the old one.
func (r *run) replace(s outsidePeer, serial uint64) error {
	rn := r.reals[s.real]
	h, err := r.net.Host(r.place.boundary)
	if err != nil {
		return err
	}
	r.closeMu.Lock()
	r.closers = append(r.closers, func() { h.Close() })
	r.closeMu.Unlock()
	bp, err := periphery.New(h.Host, r.outsideConfig(s.real, s.index, true, serial))
	if err != nil {
		return err
	}
	if err := rn.node.Host().Connect(r.ctx, h.AddrInfo()); err != nil {
		return err
	}
	time.Sleep(50 * time.Millisecond) // the real node's stream to it opens
	if err := bp.Start(r.ctx, rn.node.ID()); err != nil {
		return err
	}
	rn.mu.Lock()
	old := rn.boundary[s.index]
	rn.boundary[s.index] = bp
	rn.retired = append(rn.retired, old.Stats())
	rn.mu.Unlock()
	r.churned.Add(1)
	return old.Host().Close()
}

// outsideSlots lists every outside peer of the run.
func (r *run) outsideSlots() []outsidePeer {
	var out []outsidePeer
	for i, rn := range r.reals {
		for j := range rn.boundary {
			out = append(out, outsidePeer{real: i, index: j})
		}
	}
	return out
}

// meshShare follows, at one real peer, whether the observed node is in its mesh, per topic
// (pubsub's Graft and Prune trace events are the peer's own mesh changes), and adds up the
// time it is.
type meshShare struct {
	observed peer.ID
	mu       sync.Mutex
	since    map[string]time.Time // in the mesh since; absent: out
	total    map[string]time.Duration
}

func newMeshShare(observed peer.ID) *meshShare {
	return &meshShare{observed: observed, since: map[string]time.Time{}, total: map[string]time.Duration{}}
}

// inMesh is the time the observed node has spent in the peer's mesh of each topic up to now.
func (m *meshShare) inMesh(now time.Time) map[string]time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]time.Duration, len(m.total)+len(m.since))
	for t, d := range m.total {
		out[t] = d
	}
	for t, s := range m.since {
		out[t] += now.Sub(s)
	}
	return out
}

func (m *meshShare) Graft(p peer.ID, topic string) {
	if p != m.observed {
		return
	}
	m.mu.Lock()
	if _, ok := m.since[topic]; !ok {
		m.since[topic] = time.Now()
	}
	m.mu.Unlock()
}

func (m *meshShare) Prune(p peer.ID, topic string) {
	if p != m.observed {
		return
	}
	m.mu.Lock()
	m.out(topic, time.Now())
	m.mu.Unlock()
}

func (m *meshShare) RemovePeer(p peer.ID) {
	if p != m.observed {
		return
	}
	m.mu.Lock()
	now := time.Now()
	for t := range m.since {
		m.out(t, now)
	}
	m.mu.Unlock()
}

func (m *meshShare) out(topic string, now time.Time) {
	if s, ok := m.since[topic]; ok {
		m.total[topic] += now.Sub(s)
		delete(m.since, topic)
	}
}

func (*meshShare) AddPeer(peer.ID, protocol.ID)                         {}
func (*meshShare) OnNewOutboundStream(peer.ID, protocol.ID)             {}
func (*meshShare) OnClosedOutboundStream(peer.ID)                       {}
func (*meshShare) Join(string)                                          {}
func (*meshShare) Leave(string)                                         {}
func (*meshShare) ValidateMessage(*pubsub.Message)                      {}
func (*meshShare) DeliverMessage(*pubsub.Message)                       {}
func (*meshShare) RejectMessage(*pubsub.Message, string)                {}
func (*meshShare) DuplicateMessage(*pubsub.Message)                     {}
func (*meshShare) ThrottlePeer(peer.ID)                                 {}
func (*meshShare) RecvRPC(*pubsub.RPC)                                  {}
func (*meshShare) SendRPC(*pubsub.RPC, peer.ID)                         {}
func (*meshShare) SendRPCCompleted(*pubsub.RPC, peer.ID, time.Duration) {}
func (*meshShare) DropRPC(*pubsub.RPC, peer.ID)                         {}
func (*meshShare) UndeliverableMessage(*pubsub.Message)                 {}

// MeshShare is, per topic category, how much of the measured time the observed node spent in
// its peers' meshes: Share is the mean over (peer, topic) pairs of the observed node's topics
// (the share of time it is in one subscribed peer's mesh), Meshes the mean over topics of
// the number of peers whose mesh holds it (the copies a small message can come with).
type MeshShare struct {
	Category string  `json:"category"`
	Share    float64 `json:"share"`
	Meshes   float64 `json:"meshes"`
	Pairs    int     `json:"pairs"`
}

// meshShares turns the in-mesh times at the warm-up's end (before) and at the end (after),
// per real peer and topic, into MeshShare per category of the observed node's topics.
func meshShares(plan *NeighbourhoodPlan, before, after []map[string]time.Duration, measured time.Duration) []MeshShare {
	if measured <= 0 {
		return nil
	}
	type acc struct {
		share  float64
		pairs  int
		topics map[string]bool
	}
	by := map[gossip.Category]*acc{}
	for _, t := range plan.ObservedTopics {
		c := gossip.TopicCategory(t)
		a := by[c]
		if a == nil {
			a = &acc{topics: map[string]bool{}}
			by[c] = a
		}
		a.topics[t] = true
		for _, i := range plan.Subscribers[t] {
			a.share += float64(after[i][t]-before[i][t]) / float64(measured)
			a.pairs++
		}
	}
	var out []MeshShare
	for c, a := range by {
		if a.pairs == 0 {
			continue
		}
		out = append(out, MeshShare{Category: c.String(), Share: a.share / float64(a.pairs), Meshes: a.share / float64(len(a.topics)), Pairs: a.pairs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Category < out[j].Category })
	return out
}

// outsideCounters are the run's churn counters.
type outsideCounters struct {
	churned, churnErrors atomic.Int64
}
