package node

import (
	"context"
	"math"
	"math/rand"
	gosync "sync"
	"testing"
	"testing/synctest"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	snet "github.com/streamsim/streamsim/sim/network"
	"github.com/streamsim/streamsim/topology"
)

// Every client's parameters are accepted by go-libp2p-pubsub (a node starts with them and
// sets them on every topic kind it scores), and the figures the clients' arithmetic gives at
// a million validators are the ones worked out by hand from their sources.
func TestClientScoring(t *testing.T) {
	topics := map[string]string{
		"block": "beacon_block", "aggregate": "beacon_aggregate_and_proof", "attestation": "beacon_attestation_5",
		"sync": "sync_committee_1", "contribution": "sync_committee_contribution_and_proof", "column": "data_column_sidecar_3",
	}
	full := func(name string) string { return "/eth2/" + testFork + "/" + name + "/ssz_snappy" }
	// Which kinds each client scores (the sources read: Lighthouse, Teku and Lodestar have no
	// sync committee parameters; none has data column ones).
	want := map[string][]string{
		"prysm":      {"block", "aggregate", "attestation", "sync", "contribution"},
		"lighthouse": {"block", "aggregate", "attestation"},
		"teku":       {"block", "aggregate", "attestation"},
		"lodestar":   {"block", "aggregate", "attestation"},
		"nimbus":     {"block", "aggregate", "attestation", "sync", "contribution"},
	}
	for _, cl := range ScoringClients {
		s, err := ClientScoring(cl, 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		scored := map[string]bool{}
		for _, k := range want[cl] {
			scored[k] = true
		}
		for k, name := range topics {
			if got := s.Scored(full(name)); got != scored[k] {
				t.Errorf("%s scores %s: %v, want %v", cl, k, got, scored[k])
			}
		}
		// pubsub validates the peer parameters at NewGossipSub and a topic's at SetScoreParams.
		h, err := snet.NewHost("")
		if err != nil {
			t.Fatal(err)
		}
		prof, _ := topology.ClientProfile(cl)
		n, err := NewNode(h, WithClient(prof), WithTimeScale(10), WithScoring(s))
		if err != nil {
			t.Fatalf("%s: %v", cl, err)
		}
		for _, name := range topics {
			if _, err := n.Topic(full(name)); err != nil {
				t.Errorf("%s: %v", cl, err)
			}
		}
		n.Close()
	}
	// Hand-worked figures (1M validators: 64 committees a slot, 488.28 attestations per subnet
	// and slot, several bursts a subnet and epoch).
	near := func(what string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol*math.Abs(want) {
			t.Errorf("%s = %.6g, want %.6g", what, got, want)
		}
	}
	at := full(topics["attestation"])
	lh, _ := ClientScoring("lighthouse", 1_000_000)
	p := lh.TopicParams(at)
	// first deliveries decay over one epoch (32 decay intervals): 0.01^(1/32); cap
	// 2·488.28/5 / (1 − decay); P3 threshold (488.28/50)/(1 − d)·d with d = 0.01^(1/128).
	d1, d4 := math.Pow(0.01, 1.0/32), math.Pow(0.01, 1.0/128)
	near("lighthouse attestation first-delivery cap", p.FirstMessageDeliveriesCap, 2*488.28125/5/(1-d1), 1e-9)
	near("lighthouse attestation P3 threshold", p.MeshMessageDeliveriesThreshold, 488.28125/50/(1-d4)*d4, 1e-9)
	near("lighthouse attestation P3 weight", p.MeshMessageDeliveriesWeight, -1.0/64, 1e-12)
	if p.MeshMessageDeliveriesActivation != 17*12*time.Second || p.MeshMessageDeliveriesWindow != 2*time.Second {
		t.Errorf("lighthouse attestation P3 activation %v window %v, want 204s and 2s", p.MeshMessageDeliveriesActivation, p.MeshMessageDeliveriesWindow)
	}
	near("lighthouse behaviour weight", lh.Params.BehaviourPenaltyWeight, -15.879, 1e-3)
	near("lighthouse topic score cap", lh.Params.TopicScoreCap, 53.75, 1e-12)
	pr, _ := ClientScoring("prysm", 1_000_000)
	p = pr.TopicParams(at)
	// Prysm: integer rate 488·2/8 = 122 over four epochs (128 intervals); P3 off.
	near("prysm attestation first-delivery cap", p.FirstMessageDeliveriesCap, 122/(1-d4), 1e-9)
	if p.MeshMessageDeliveriesWeight != 0 {
		t.Errorf("prysm attestation P3 weight %g, want 0 (meshDeliveryIsScored false)", p.MeshMessageDeliveriesWeight)
	}
	tk, _ := ClientScoring("teku", 1_000_000)
	// Teku's aggregators per slot in integers: (16·1472 + 16·576)/32 = 1024.
	near("teku aggregate first-delivery cap", tk.TopicParams(full(topics["aggregate"])).FirstMessageDeliveriesCap, 2*1024.0/8/(1-d1), 1e-9)
	if tk.Dscore != 5 {
		t.Errorf("teku Dscore %d, want 5", tk.Dscore)
	}
	// Dilation divides durations and leaves the factors.
	dl, err := lh.Dilate(4)
	if err != nil {
		t.Fatal(err)
	}
	q := dl.TopicParams(at)
	if dl.Params.DecayInterval != 3*time.Second || q.TimeInMeshQuantum != 3*time.Second || q.MeshMessageDeliveriesActivation != 51*time.Second ||
		q.FirstMessageDeliveriesDecay != lh.TopicParams(at).FirstMessageDeliveriesDecay {
		t.Errorf("dilated ×4: decay interval %v, quantum %v, activation %v, decay %g", dl.Params.DecayInterval, q.TimeInMeshQuantum, q.MeshMessageDeliveriesActivation, q.FirstMessageDeliveriesDecay)
	}
	if _, err := lh.Dilate(13); err == nil {
		t.Error("a time scale taking the 12 s decay interval below 1 s was accepted")
	}
}

// pruneTracer counts the PRUNEs a node makes, per peer.
type pruneTracer struct {
	mu     gosync.Mutex
	prunes map[peer.ID]int
}

func (p *pruneTracer) Prune(id peer.ID, _ string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prunes[id]++
}

func (p *pruneTracer) count(id peer.ID) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.prunes[id]
}

func (*pruneTracer) AddPeer(peer.ID, protocol.ID)                         {}
func (*pruneTracer) RemovePeer(peer.ID)                                   {}
func (*pruneTracer) OnNewOutboundStream(peer.ID, protocol.ID)             {}
func (*pruneTracer) OnClosedOutboundStream(peer.ID)                       {}
func (*pruneTracer) Join(string)                                          {}
func (*pruneTracer) Leave(string)                                         {}
func (*pruneTracer) Graft(peer.ID, string)                                {}
func (*pruneTracer) ValidateMessage(*pubsub.Message)                      {}
func (*pruneTracer) DeliverMessage(*pubsub.Message)                       {}
func (*pruneTracer) RejectMessage(*pubsub.Message, string)                {}
func (*pruneTracer) DuplicateMessage(*pubsub.Message)                     {}
func (*pruneTracer) ThrottlePeer(peer.ID)                                 {}
func (*pruneTracer) RecvRPC(*pubsub.RPC)                                  {}
func (*pruneTracer) SendRPC(*pubsub.RPC, peer.ID)                         {}
func (*pruneTracer) SendRPCCompleted(*pubsub.RPC, peer.ID, time.Duration) {}
func (*pruneTracer) DropRPC(*pubsub.RPC, peer.ID)                         {}
func (*pruneTracer) UndeliverableMessage(*pubsub.Message)                 {}

// The mechanism scoring adds, on unmodified go-libp2p-pubsub: node X, with Prysm's
// attestation-subnet parameters, a mesh of D 2 that it prunes at Dhi 4 keeping Dscore 1 peer
// by score, has four peers that each keep grafting it (each has X as its only peer on the
// topic, so it is below Dlo whenever X pruned it and grafts again after the backoff). Peer A
// publishes an attestation every 500 ms, so A delivers X every message first; the three others
// deliver none first (the observed node's position at a real peer whose outside peers deliver
// first). Over 20 minutes of simulated time (about 19 rounds of pruning at the 60 s backoff):
// with scoring X never prunes A (its first deliveries put it on top) and prunes the others
// every round; without scoring X keeps 2 of 4 at random, so A is pruned in about half the
// rounds (all 19 kept: 2⁻¹⁹).
func TestScoringKeepsTheFirstDeliverer(t *testing.T) {
	if testing.Short() {
		t.Skip("20 minutes of simulated time, five nodes")
	}
	prysm, err := ClientScoring("prysm", 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	prysm.Dscore = 1
	spec, _ := topology.ClientProfile("spec")
	small := spec
	small.D, small.Dlo, small.Dhi, small.Dout, small.Dlazy = 2, 1, 4, 0, 1
	peerProf := spec
	peerProf.D, peerProf.Dlo, peerProf.Dhi, peerProf.Dout, peerProf.Dlazy, peerProf.Dscore = 2, 1, 3, 0, 1, 1
	peerProf.FloodPublish = true // A publishes to X even while X has pruned it
	for _, scored := range []bool{true, false} {
		var prunesA, prunesOthers int
		synctest.Test(t, func(t *testing.T) {
			vn := snet.NewVirtualNetwork()
			defer vn.Close()
			tr := &pruneTracer{prunes: map[peer.ID]int{}}
			hx, err := vn.NewHost(nil)
			if err != nil {
				t.Fatal(err)
			}
			xOpts := []Option{WithClient(small), WithTimeScale(1), WithRawTracers(tr)}
			if scored {
				xOpts = append(xOpts, WithScoring(prysm))
			}
			x, err := NewNode(hx, xOpts...)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			var peers []*Node
			for i := range 4 {
				h, err := vn.NewHost(nil)
				if err != nil {
					t.Fatal(err)
				}
				n, err := NewNode(h, WithClient(peerProf), WithTimeScale(1), WithHeartbeatDelay(time.Duration(i)*100*time.Millisecond))
				if err != nil {
					t.Fatal(err)
				}
				defer n.Close()
				// X dials: its links are outbound, so it accepts their GRAFTs at Dhi and
				// prunes in its heartbeat.
				if err := x.Host().Connect(context.Background(), n.AddrInfo()); err != nil {
					t.Fatal(err)
				}
				peers = append(peers, n)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for _, n := range append([]*Node{x}, peers...) {
				tp, err := n.Topic(testTopic)
				if err != nil {
					t.Fatal(err)
				}
				sub, err := tp.Subscribe()
				if err != nil {
					t.Fatal(err)
				}
				go func() {
					for {
						if _, err := sub.Next(ctx); err != nil {
							return
						}
					}
				}()
			}
			a := peers[0]
			ta, _ := a.Topic(testTopic)
			rng := rand.New(rand.NewSource(1))
			end := time.Now().Add(20 * time.Minute)
			for i := 0; time.Now().Before(end); i++ {
				if err := ta.Publish(ctx, attestationPayload(rng, i)); err != nil {
					t.Fatal(err)
				}
				time.Sleep(500 * time.Millisecond)
			}
			prunesA = tr.count(a.ID())
			for _, n := range peers[1:] {
				prunesOthers += tr.count(n.ID())
			}
			cancel()
		})
		t.Logf("scoring %v: X pruned A %d times and the three others %d times", scored, prunesA, prunesOthers)
		if prunesOthers < 15 {
			t.Fatalf("scoring %v: only %d prunes of the late peers in 20 minutes: the pressure did not build", scored, prunesOthers)
		}
		if scored && prunesA != 0 {
			t.Errorf("with scoring X pruned its first deliverer %d times, want 0", prunesA)
		}
		if !scored && prunesA == 0 {
			t.Errorf("without scoring X never pruned A in %d prunes of the others: not random", prunesOthers)
		}
	}
}
