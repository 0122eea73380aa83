package neighbourhood

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/peer"
	"google.golang.org/protobuf/proto"

	"github.com/streamsim/streamsim/gossip"
)

// The mechanism behind the observed node's control: how many eligible gossip
// targets each real peer picks its IHAVE receivers from, how often it picks the observed
// node, and how the ids it advertises recur on the observed node's inbound streams, by
// distance. Every neighbourhood run reports it.

// Distribution is a distribution's summary.
type Distribution struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	P10  float64 `json:"p10"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	Max  float64 `json:"max"`
}

// distributionOf summarises vs (nearest-rank percentiles); empty: zero.
func distributionOf(vs []float64) Distribution {
	if len(vs) == 0 {
		return Distribution{}
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	at := func(p float64) float64 { return s[max(0, min(len(s)-1, int(math.Ceil(p*float64(len(s))))-1))] }
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	return Distribution{N: len(s), Mean: sum / float64(len(s)), Min: s[0], P10: at(0.1), P50: at(0.5), P90: at(0.9), Max: s[len(s)-1]}
}

// MechanismKind is one topic kind of the observed node's topics.
type MechanismKind struct {
	Kind string `json:"kind"`
	// Eligible: the eligible gossip targets (subscribed peers not in its mesh) at each real
	// peer on each of its topics of this kind the observed node subscribes to, sampled at the
	// start of every measured slot.
	Eligible Distribution `json:"eligible_targets"`
	// IHaveShare: per (real peer, topic) pair, the share of the peer's heartbeats over the
	// measured slots in which it sent the observed node IHAVE on the topic.
	IHaveShare Distribution `json:"ihave_heartbeat_share"`
	// IHaveShareOut is IHaveShare over only the heartbeats the observed node spent outside the
	// peer's mesh of the topic (pairs where it was out at least a tenth of the time): q, less
	// the heartbeats without ids to advertise.
	IHaveShareOut Distribution `json:"ihave_heartbeat_share_out_of_mesh"`
}

// Mechanism is the run's IHAVE mechanism.
type Mechanism struct {
	Kinds []MechanismKind `json:"kinds"`
	// Recurrence is the IHAVE id recurrence on the observed node's inbound streams over the
	// measured slots (ids the warm-up carried count as earlier mentions).
	Recurrence gossip.IHaveRecurrence `json:"ihave_recurrence"`
	// RepeatShares[i] is Recurrence's share of mentions repeating one within
	// Recurrence.Distances[i] bytes.
	RepeatShares []float64 `json:"repeat_share_within"`
	// Expected is pubsub's rule at the run's inputs (ExpectedRepeat): the repeat share and
	// each client's q a real peer on an attestation subnet picks the observed node with.
	ExpectedRepeat float64            `json:"expected_repeat_share"`
	ExpectedQ      map[string]float64 `json:"expected_q"`
}

// mechanism collects the mechanism while the run goes on: the eligible samples (from the
// measure loop) and, from the observed node's received RPCs, the recurrence and the heartbeats
// with IHAVE per (peer, topic).
type mechanism struct {
	mu       sync.Mutex
	rec      *gossip.Recurrence
	eligible map[string][]float64 // topic kind → samples
	// heartbeats with IHAVE per (peer, topic), counted once per heartbeat interval of the
	// peer from the start of the measured slots.
	start     time.Time
	measuring bool
	heartbeat map[peer.ID]time.Duration
	last      map[pairKey]int64
	count     map[pairKey]int64
}

type pairKey struct {
	from  peer.ID
	topic string
}

func newMechanism() *mechanism {
	return &mechanism{rec: gossip.NewRecurrence(), eligible: map[string][]float64{}, heartbeat: map[peer.ID]time.Duration{},
		last: map[pairKey]int64{}, count: map[pairKey]int64{}}
}

// begin starts the measured slots: counts so far are the warm-up's.
func (m *mechanism) begin(now time.Time) {
	m.mu.Lock()
	m.rec.Reset()
	m.start, m.measuring = now, true
	m.mu.Unlock()
}

// recv accounts one RPC the observed node received (in stream order per peer).
func (m *mechanism) recv(rpc *pubsub.RPC) { m.recvFrom(rpc.From(), &rpc.RPC, time.Now()) }

func (m *mechanism) recvFrom(from peer.ID, rpc *pb.RPC, now time.Time) {
	size := int64(proto.Size(rpc))
	size += int64(len(protoVarint(uint64(size))))
	ihave := rpc.GetControl().GetIhave()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rec.Frame(string(from), size, func(yield func(string) bool) {
		for _, ih := range ihave {
			for _, id := range ih.GetMessageIDs() {
				if !yield(id) {
					return
				}
			}
		}
	})
	if !m.measuring || len(ihave) == 0 {
		return
	}
	hb := m.heartbeat[from]
	if hb <= 0 {
		return
	}
	beat := int64(now.Sub(m.start) / hb)
	for _, ih := range ihave {
		k := pairKey{from, ih.GetTopicID()}
		if last, ok := m.last[k]; ok && last == beat {
			continue
		}
		m.last[k] = beat
		m.count[k]++
	}
}

func protoVarint(v uint64) []byte {
	var b [10]byte
	n := 0
	for v >= 0x80 {
		b[n] = byte(v) | 0x80
		v >>= 7
		n++
	}
	b[n] = byte(v)
	return b[:n+1]
}

// sampleEligible records, for each real peer and each of its topics the observed node
// subscribes to, its eligible gossip targets: subscribed peers not in its mesh (no peer here
// is direct or scored below the gossip threshold).
func (r *run) sampleEligible() {
	obs := map[string]bool{}
	for _, t := range r.plan.ObservedTopics {
		obs[t] = true
	}
	m := r.mech
	for i, rn := range r.reals {
		mesh := rn.node.PubsubStats().MeshPeers
		for _, t := range r.plan.Peers[i].Topics {
			if !obs[t] {
				continue
			}
			e := len(rn.node.PubSub().ListPeers(t)) - mesh[t]
			m.mu.Lock()
			m.eligible[TopicKind(t)] = append(m.eligible[TopicKind(t)], float64(e))
			m.mu.Unlock()
		}
	}
}

// result turns the collected figures into the report's Mechanism over measured time.
// inMesh[i][t] is the time the observed node spent in real peer i's mesh of t over the
// measured time (nil: unknown).
func (m *mechanism) result(plan *NeighbourhoodPlan, names map[peer.ID]int, p NeighbourhoodParams, measured time.Duration, inMesh []map[string]time.Duration) Mechanism {
	m.mu.Lock()
	defer m.mu.Unlock()
	var res Mechanism
	res.Recurrence = m.rec.Sum()
	for _, d := range res.Recurrence.Distances {
		res.RepeatShares = append(res.RepeatShares, res.Recurrence.RepeatShare(d))
	}
	res.ExpectedRepeat, res.ExpectedQ = ExpectedRepeat(p, p.OutsideAllSubnets)
	shares, out := map[string][]float64{}, map[string][]float64{}
	byIndex := map[int]peer.ID{}
	for id, i := range names {
		byIndex[i] = id
	}
	obs := map[string]bool{}
	for _, t := range plan.ObservedTopics {
		obs[t] = true
	}
	for i, pr := range plan.Peers {
		id, ok := byIndex[i]
		hb := m.heartbeat[id]
		if !ok || hb <= 0 || measured <= 0 {
			continue
		}
		beats := float64(measured / hb)
		if beats < 1 {
			continue
		}
		for _, t := range pr.Topics {
			if !obs[t] {
				continue
			}
			n := float64(m.count[pairKey{id, t}])
			shares[TopicKind(t)] = append(shares[TopicKind(t)], math.Min(1, n/beats))
			if i < len(inMesh) && inMesh[i] != nil {
				outside := 1 - math.Min(1, float64(inMesh[i][t])/float64(measured))
				if outside >= 0.1 {
					out[TopicKind(t)] = append(out[TopicKind(t)], math.Min(1, n/(beats*outside)))
				}
			}
		}
	}
	for _, k := range TopicKinds {
		if len(m.eligible[k]) == 0 && len(shares[k]) == 0 {
			continue
		}
		res.Kinds = append(res.Kinds, MechanismKind{Kind: k, Eligible: distributionOf(m.eligible[k]), IHaveShare: distributionOf(shares[k]), IHaveShareOut: distributionOf(out[k])})
	}
	return res
}

// printMechanism writes the mechanism's section of the text report.
func (mc Mechanism) print(w io.Writer) {
	fmt.Fprintln(w, "\nIHAVE mechanism: per topic kind of the observed node's topics, eligible gossip targets at its real peers (sampled each measured slot) and the share of a peer's heartbeats in which it sent the observed node IHAVE on a topic (per peer and topic)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "topic kind\teligible mean\tp10\tp50\tp90\tIHAVE share mean\tp10\tp50\tp90\tpairs\tout of its mesh: mean\tp50\tpairs\t")
	for _, k := range mc.Kinds {
		e, s, o := k.Eligible, k.IHaveShare, k.IHaveShareOut
		fmt.Fprintf(tw, "%s\t%.1f\t%.0f\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t%.2f\t%.2f\t%d\t\n", k.Kind, e.Mean, e.P10, e.P50, e.P90, s.Mean, s.P10, s.P50, s.P90, s.N, o.Mean, o.P50, o.N)
	}
	tw.Flush()
	r := mc.Recurrence
	fmt.Fprintf(w, "IHAVE id recurrence on the observed node's inbound streams: %d mentions, repeating one the same stream carried", r.Mentions)
	for i, d := range r.Distances {
		fmt.Fprintf(w, " ≤ %s %.1f %%", distanceLabel(d), 100*float64(r.Within[i])/float64(max(r.Mentions, 1)))
	}
	fmt.Fprintf(w, "; pubsub's rule at these inputs expects %.1f %% (q per client on an attestation subnet:", 100*mc.ExpectedRepeat)
	for _, c := range sortedKeys(mc.ExpectedQ) {
		fmt.Fprintf(w, " %s %.2f", c, mc.ExpectedQ[c])
	}
	fmt.Fprintln(w, "); the recording implies ≈ 38 %")
}

func distanceLabel(d int64) string {
	if d >= 1<<20 {
		return fmt.Sprintf("%d MiB", d>>20)
	}
	return fmt.Sprintf("%d KiB", d>>10)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// writeMechanismSpread prints the mechanism over several runs: per topic kind the eligible
// targets' and the IHAVE heartbeat share's means, and the IHAVE id repeat share by distance,
// each as mean ± sd (min–max) over the runs.
func writeMechanismSpread(w io.Writer, runs []Summary) {
	fmt.Fprintln(w, "\nIHAVE mechanism over the runs, mean ± sd (min–max):")
	for _, k := range TopicKinds {
		var el, sh, so []float64
		for _, r := range runs {
			for _, mk := range r.Mechanism.Kinds {
				if mk.Kind == k {
					el, sh, so = append(el, mk.Eligible.Mean), append(sh, mk.IHaveShare.Mean), append(so, mk.IHaveShareOut.Mean)
				}
			}
		}
		if len(el) > 0 {
			fmt.Fprintf(w, "  %s: eligible gossip targets per peer and topic %s; share of heartbeats with IHAVE to the observed node %s (while out of the peer's mesh %s)\n",
				k, spreadOf(el).String("%.1f"), spreadOf(sh).String("%.2f"), spreadOf(so).String("%.2f"))
		}
	}
	fmt.Fprint(w, "  IHAVE id mentions repeating one the same stream carried:")
	for i, d := range gossip.RecurrenceDistances {
		var v []float64
		for _, r := range runs {
			if i < len(r.Mechanism.RepeatShares) {
				v = append(v, 100*r.Mechanism.RepeatShares[i])
			}
		}
		if len(v) > 0 {
			fmt.Fprintf(w, " ≤ %s %s %%;", distanceLabel(d), spreadOf(v).String("%.1f"))
		}
	}
	fmt.Fprintln(w, " the recording implies ≈ 38 % in all")
}
