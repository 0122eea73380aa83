package node

import (
	"fmt"
	"math"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/streamsim/streamsim/gossip"
)

// Peer scoring (gossipsub v1.1) as each consensus client configures it, in go-libp2p-pubsub's
// terms. Every mainnet client scores its peers; with scoring a node keeps its Dscore
// best-scoring mesh peers when it prunes down from Dhi (the rest at random), drops and refuses
// peers of negative score, and every OpportunisticGraftTicks heartbeats grafts peers scoring
// above its mesh's median when that median is below OpportunisticGraftThreshold. The
// parameters are computed as each client computes them, from the validator count and
// mainnet's timing (12 s slots, 32 slots an epoch, 64 attestation subnets, 4 sync committee
// subnets, 512 sync committee members, 16 target aggregators per committee and per sync
// subcommittee), from the sources named per client in ClientScoring. Durations are mainnet
// time; a node at time scale s divides each by s (Scoring.Dilate), which leaves every decay
// factor as it is (each is per decay interval, and the decay interval is dilated too).
//
// Two inputs are set apart from the clients' on purpose:
//   - IP colocation (P6) is off: every host of a run shares one address (loopback, or the
//     in-process network), where mainnet peers have their own; the clients' P6 would make
//     every peer negative here and none on mainnet.
//   - The application-specific score (P5) is 0: the clients feed it from their peer managers
//     (req/resp behaviour, sync status), which no node here has.

// Mainnet's constants the parameters are computed from.
const (
	scoreSlot          = 12 * time.Second
	scoreSlotsPerEpoch = 32
	scoreEpoch         = scoreSlot * scoreSlotsPerEpoch
	scoreDecayToZero   = 0.01
	// maxCommitteesPerSlot, targetCommitteeSize, targetAggregatorsPerCommittee: the phase0
	// spec's MAX_COMMITTEES_PER_SLOT, TARGET_COMMITTEE_SIZE, TARGET_AGGREGATORS_PER_COMMITTEE.
	maxCommitteesPerSlot          = 64
	targetCommitteeSize           = 128
	targetAggregatorsPerCommittee = 16
	// syncCommitteeSize and targetAggregatorsPerSyncSubcommittee: altair's SYNC_COMMITTEE_SIZE
	// and TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE.
	syncCommitteeSize                    = 512
	targetAggregatorsPerSyncSubcommittee = 16
)

// scoreKind is the kind of topic a parameter set applies to.
type scoreKind uint8

const (
	scoreBlock scoreKind = iota
	scoreAggregate
	scoreAttestation
	scoreSyncSubnet
	scoreContribution
	numScoreKinds
)

// Scoring is one client's peer scoring: the peer-level parameters and thresholds, the Dscore
// its mesh maintenance keeps by score, and the parameters per topic kind (nil: the client
// gives that kind none, so its topic adds nothing to a score).
type Scoring struct {
	Client     string
	Params     pubsub.PeerScoreParams // Topics empty: a node sets them per topic as it joins
	Thresholds pubsub.PeerScoreThresholds
	Dscore     int
	topics     [numScoreKinds]*pubsub.TopicScoreParams
}

// TopicParams are the parameters of a full gossip topic, or nil when the client scores none.
func (s *Scoring) TopicParams(topic string) *pubsub.TopicScoreParams {
	_, name, err := gossip.ParseTopic(topic)
	if err != nil {
		return nil
	}
	var k scoreKind
	switch {
	case name == gossip.TopicBeaconBlock:
		k = scoreBlock
	case name == gossip.TopicAggregateAndProof:
		k = scoreAggregate
	case name == gossip.TopicContribution:
		k = scoreContribution
	case gossip.NameCategory(name) == gossip.Attestation:
		k = scoreAttestation
	case gossip.NameCategory(name) == gossip.SyncCommittee:
		k = scoreSyncSubnet
	default:
		return nil // data columns: no client read here scores them
	}
	if p := s.topics[k]; p != nil {
		c := *p
		return &c
	}
	return nil
}

// Scored reports whether the client gives topic parameters (for docs and tests).
func (s *Scoring) Scored(topic string) bool { return s.TopicParams(topic) != nil }

// Dilate returns the parameters of a node at time scale scale: every duration divided by it
// (decay interval, score retention, the time-in-mesh quantum, the mesh delivery window and
// activation), the decay factors unchanged. pubsub refuses a decay interval or mesh delivery
// activation below 1 s, so a scale that takes them there is refused.
func (s Scoring) Dilate(scale float64) (Scoring, error) {
	if !(scale > 0) {
		return s, fmt.Errorf("scoring: time scale %g: want a positive number", scale)
	}
	div := func(d time.Duration) time.Duration { return time.Duration(float64(d) / scale) }
	out := s
	out.Params.DecayInterval = div(s.Params.DecayInterval)
	out.Params.RetainScore = div(s.Params.RetainScore)
	if out.Params.DecayInterval < time.Second {
		return s, fmt.Errorf("scoring: %s's decay interval %v at time scale %g is %v, below pubsub's 1 s: run at a time scale of at most %g",
			s.Client, s.Params.DecayInterval, scale, out.Params.DecayInterval, s.Params.DecayInterval.Seconds())
	}
	for k, p := range s.topics {
		if p == nil {
			continue
		}
		c := *p
		c.TimeInMeshQuantum = div(p.TimeInMeshQuantum)
		c.MeshMessageDeliveriesWindow = div(p.MeshMessageDeliveriesWindow)
		c.MeshMessageDeliveriesActivation = div(p.MeshMessageDeliveriesActivation)
		if c.MeshMessageDeliveriesWeight != 0 && c.MeshMessageDeliveriesActivation < time.Second {
			return s, fmt.Errorf("scoring: %s's mesh delivery activation %v at time scale %g is below pubsub's 1 s", s.Client, p.MeshMessageDeliveriesActivation, scale)
		}
		out.topics[k] = &c
	}
	return out, nil
}

// ScoringClients are the clients ClientScoring knows (topology.ClientNames but the spec's,
// which sets no scoring).
var ScoringClients = []string{"prysm", "lighthouse", "teku", "lodestar", "nimbus"}

// ClientScoring returns client's peer scoring for a network of validators active validators,
// computed as the client computes it (sources read late 2026; the arithmetic below follows
// each line for line):
//
//	prysm       beacon-chain/p2p/gossip_scoring_params.go (v3, the versions read; meshDeliveryIsScored
//	            false: P3 weight 0 on every topic); thresholds −4000/−8000/−16000, accept PX
//	            100, opportunistic graft 5; Dscore go-libp2p-pubsub's 4.
//	lighthouse  beacon_node/lighthouse_network/src/service/gossipsub_scoring_parameters.rs
//	            (blocks, aggregates, attestation subnets; no sync committee parameters), its
//	            mesh_n (D 5) in the first-delivery cap, P3 weight −topic weight; thresholds as
//	            Prysm's; Dscore rust-libp2p's retain_scores 4. Its slow-peer penalty has no
//	            go-libp2p-pubsub equivalent.
//	teku        networking/eth2/.../gossip/config/GossipScoringConfigurator.java and
//	            ScoringConfig.java (blocks, aggregates, attestation subnets; integer
//	            aggregator counts), P3 weight −max score/(topic weight · threshold²);
//	            Dscore jvm-libp2p's default D·2/3 = 5 (Teku sets none).
//	lodestar    packages/beacon-node/src/network/gossip/scoringParameters.ts, the one version
//	            read (2022; a newer one not checked): Lighthouse's layout, D 8, a 12 s mesh
//	            delivery window, P3 weight as Teku's, no sync committee parameters; Dscore
//	            js-libp2p-gossipsub's 4.
//	nimbus      beacon_chain/networking/topic_params.nim (every topic but data columns,
//	            dampening 50, sync committee subnets and contributions too) and
//	            eth2_network.nim (thresholds −4000/−8000/−16000, opportunistic graft 0, decay
//	            12 s, retain 385 s, behaviour −15.9 decaying 0.986, Dscore 6); its topic
//	            score cap is nim-libp2p's default, not read (none here).
func ClientScoring(client string, validators int) (Scoring, error) {
	if validators < 1 {
		return Scoring{}, fmt.Errorf("scoring: %d validators: want at least 1", validators)
	}
	e := newEthCounts(validators)
	switch client {
	case "prysm":
		return prysmScoring(e), nil
	case "lighthouse":
		return lighthouseFamily(e, "lighthouse"), nil
	case "teku":
		return lighthouseFamily(e, "teku"), nil
	case "lodestar":
		return lighthouseFamily(e, "lodestar"), nil
	case "nimbus":
		return nimbusScoring(e), nil
	}
	return Scoring{}, fmt.Errorf("scoring: client %q has no scoring profile (known: %v)", client, ScoringClients)
}

// ethCounts are the validator-dependent counts the clients derive.
type ethCounts struct {
	validators        int
	committeesPerSlot int
	// aggregatorsPerSlot as Lighthouse and Nimbus compute it (float division by the modulo),
	// as Teku does (integer) and as Lodestar does (floors).
	aggLighthouse, aggTeku, aggLodestar float64
}

func newEthCounts(v int) ethCounts {
	// get_committee_count_per_slot
	c := max(1, min(maxCommitteesPerSlot, v/scoreSlotsPerEpoch/targetCommitteeSize))
	committees := c * scoreSlotsPerEpoch
	small := v / committees
	larger := v - small*committees
	smallCount := committees - larger
	modSmall := max(1, small/targetAggregatorsPerCommittee)
	modLarge := max(1, (small+1)/targetAggregatorsPerCommittee)
	e := ethCounts{validators: v, committeesPerSlot: c}
	e.aggLighthouse = (float64(smallCount*small)/float64(modSmall) + float64(larger*(small+1))/float64(modLarge)) / scoreSlotsPerEpoch
	e.aggTeku = float64(small/modSmall*smallCount+(small+1)/modLarge*larger) / scoreSlotsPerEpoch
	e.aggLodestar = max(1, math.Floor((math.Floor(float64(small)/float64(modSmall)*float64(smallCount))+
		math.Floor(float64(small+1)/float64(modLarge)*float64(larger)))/scoreSlotsPerEpoch))
	return e
}

// multipleBursts is the clients' committeesPerSlot ≥ 2·subnets/slotsPerEpoch.
func (e ethCounts) multipleBursts() bool {
	return e.committeesPerSlot >= 2*gossip.AttestationSubnets/scoreSlotsPerEpoch
}

// decayWithBase is score_parameter_decay_with_base: the factor per decay interval that takes
// 1 to decayToZero in decay.
func decayWithBase(decay, interval time.Duration) float64 {
	return math.Pow(scoreDecayToZero, 1/(decay.Seconds()/interval.Seconds()))
}

// convergence is decay_convergence: the limit of a counter fed rate per interval.
func convergence(decay, rate float64) float64 { return rate / (1 - decay) }

// behaviourWeight is the Lighthouse layout's P7 weight: the gossip threshold at 10 penalties
// per epoch above the threshold.
func behaviourWeight(decay, threshold, gossipThreshold float64) float64 {
	t := convergence(decay, 10.0/scoreSlotsPerEpoch) - threshold
	return gossipThreshold / (t * t)
}

// ethThresholds are every client's thresholds but Nimbus's opportunistic graft threshold.
var ethThresholds = pubsub.PeerScoreThresholds{GossipThreshold: -4000, PublishThreshold: -8000, GraylistThreshold: -16000, AcceptPXThreshold: 100, OpportunisticGraftThreshold: 5}

func zeroApp(peer.ID) float64 { return 0 }

// timeInMesh sets P1 as every client does: one quantum a slot, capped at an hour, 10 at most.
func timeInMesh(t *pubsub.TopicScoreParams) {
	t.TimeInMeshQuantum = scoreSlot
	t.TimeInMeshCap = float64(time.Hour / scoreSlot)
	t.TimeInMeshWeight = 10 / t.TimeInMeshCap
}

// meshInfo is the Lighthouse layout's mesh delivery input: decay time, cap factor, activation.
type meshInfo struct {
	decay      time.Duration
	capFactor  float64
	activation time.Duration
}

// lighthouseFamily is get_topic_params of Lighthouse, and Teku's and Lodestar's ports of it.
func lighthouseFamily(e ethCounts, client string) Scoring {
	const (
		blockWeight, aggWeight, attTotal = 0.5, 0.5, 1.0
		exitsSlashings                   = 3 * 0.05 // exits, proposer and attester slashings
	)
	maxPositive := (10.0 + 40.0) * (blockWeight + aggWeight + attTotal + exitsSlashings)
	interval := scoreSlot
	decay := func(d time.Duration) float64 { return decayWithBase(d, interval) }
	d := 8.0
	window := 2 * time.Second
	agg := e.aggTeku
	switch client {
	case "lighthouse":
		d = 5 // mesh_n
		agg = e.aggLighthouse
	case "lodestar":
		window = 12 * time.Second
		agg = e.aggLodestar
	}
	topic := func(weight, rate float64, firstDecay time.Duration, mi *meshInfo) *pubsub.TopicScoreParams {
		t := &pubsub.TopicScoreParams{TopicWeight: weight}
		timeInMesh(t)
		t.FirstMessageDeliveriesDecay = decay(firstDecay)
		t.FirstMessageDeliveriesCap = convergence(t.FirstMessageDeliveriesDecay, 2*rate/d)
		t.FirstMessageDeliveriesWeight = 40 / t.FirstMessageDeliveriesCap
		if mi != nil {
			t.MeshMessageDeliveriesDecay = decay(mi.decay)
			th := convergence(t.MeshMessageDeliveriesDecay, rate/50) * t.MeshMessageDeliveriesDecay
			t.MeshMessageDeliveriesThreshold = th
			t.MeshMessageDeliveriesCap = max(2, mi.capFactor*th)
			t.MeshMessageDeliveriesActivation = mi.activation
			t.MeshMessageDeliveriesWindow = window
			t.MeshFailurePenaltyDecay = t.MeshMessageDeliveriesDecay
			if client == "lighthouse" {
				t.MeshMessageDeliveriesWeight = -weight
			} else {
				t.MeshMessageDeliveriesWeight = -maxPositive / (weight * th * th)
			}
			t.MeshFailurePenaltyWeight = t.MeshMessageDeliveriesWeight
		}
		t.InvalidMessageDeliveriesWeight = -maxPositive / weight
		t.InvalidMessageDeliveriesDecay = decay(50 * scoreEpoch)
		return t
	}
	s := Scoring{Client: client, Thresholds: ethThresholds, Dscore: 4}
	if client == "teku" {
		s.Dscore = 5
	}
	bDecay := decay(10 * scoreEpoch)
	s.Params = pubsub.PeerScoreParams{
		AppSpecificScore: zeroApp, AppSpecificWeight: 1,
		DecayInterval: interval, DecayToZero: scoreDecayToZero, RetainScore: 100 * scoreEpoch,
		BehaviourPenaltyThreshold: 6, BehaviourPenaltyDecay: bDecay,
		BehaviourPenaltyWeight: behaviourWeight(bDecay, 6, ethThresholds.GossipThreshold),
		TopicScoreCap:          maxPositive * 0.5,
	}
	s.topics[scoreBlock] = topic(blockWeight, 1, 20*scoreEpoch, &meshInfo{5 * scoreEpoch, 3, scoreEpoch})
	s.topics[scoreAggregate] = topic(aggWeight, agg, scoreEpoch, &meshInfo{2 * scoreEpoch, 4, scoreEpoch})
	rate := float64(e.validators) / gossip.AttestationSubnets / scoreSlotsPerEpoch
	att := &meshInfo{16 * scoreEpoch, 16, 3 * scoreEpoch}
	firstDecay := 4 * scoreEpoch
	if e.multipleBursts() {
		att = &meshInfo{4 * scoreEpoch, 16, scoreSlot * (scoreSlotsPerEpoch/2 + 1)}
		firstDecay = scoreEpoch
	}
	s.topics[scoreAttestation] = topic(attTotal/gossip.AttestationSubnets, rate, firstDecay, att)
	return s
}

// prysmScoring is gossip_scoring_params.go: fixed block parameters, the rest from the
// validator count with integer rates, P3 weights 0 (meshDeliveryIsScored false).
func prysmScoring(e ethCounts) Scoring {
	const (
		blockWeight, aggWeight, contribWeight, attTotal, syncTotal = 0.8, 0.5, 0.2, 1.0, 0.4
		small                                                      = 4 * 0.05 // attester and proposer slashings, exits, BLS changes
		gossipSubD                                                 = 8
	)
	maxScore := (10.0 + 40.0) * (blockWeight + aggWeight + contribWeight + attTotal + syncTotal + small)
	// scoreDecay divides durations as integers (whole slots).
	scoreDecay := func(d time.Duration) float64 { return math.Pow(scoreDecayToZero, 1/float64(d/scoreSlot)) }
	topic := func(weight float64, fmdWeight, fmdDecay, fmdCap float64) *pubsub.TopicScoreParams {
		t := &pubsub.TopicScoreParams{TopicWeight: weight, FirstMessageDeliveriesWeight: fmdWeight,
			FirstMessageDeliveriesDecay: fmdDecay, FirstMessageDeliveriesCap: fmdCap,
			InvalidMessageDeliveriesWeight: -maxScore / weight, InvalidMessageDeliveriesDecay: scoreDecay(50 * scoreEpoch)}
		timeInMesh(t)
		return t
	}
	rated := func(weight float64, rate int, decayEpochs int) *pubsub.TopicScoreParams {
		dec := scoreDecay(time.Duration(decayEpochs) * scoreEpoch)
		c := convergence(dec, float64(rate))
		return topic(weight, 40/c, dec, c)
	}
	s := Scoring{Client: "prysm", Thresholds: ethThresholds, Dscore: 4}
	s.Params = pubsub.PeerScoreParams{
		AppSpecificScore: zeroApp, AppSpecificWeight: 1, TopicScoreCap: 32.72,
		BehaviourPenaltyWeight: -15.92, BehaviourPenaltyThreshold: 6, BehaviourPenaltyDecay: scoreDecay(10 * scoreEpoch),
		DecayInterval: scoreSlot, DecayToZero: scoreDecayToZero, RetainScore: 100 * scoreEpoch,
	}
	block := topic(blockWeight, 1, scoreDecay(20*scoreEpoch), 23)
	block.InvalidMessageDeliveriesWeight = -140.4475
	s.topics[scoreBlock] = block
	aggPerSlot := e.committeesPerSlot * targetAggregatorsPerCommittee
	s.topics[scoreAggregate] = rated(aggWeight, aggPerSlot*2/gossipSubD, 1)
	numPerSlot := e.validators / gossip.AttestationSubnets / scoreSlotsPerEpoch
	firstDecay := 1
	if e.committeesPerSlot >= 2*gossip.AttestationSubnets/scoreSlotsPerEpoch {
		firstDecay = 4
	}
	s.topics[scoreAttestation] = rated(attTotal/gossip.AttestationSubnets, numPerSlot*2/gossipSubD, firstDecay)
	syncValidators := min(e.validators, syncCommitteeSize)
	s.topics[scoreSyncSubnet] = rated(syncTotal/gossip.SyncCommitteeSubnets, syncValidators/gossip.SyncCommitteeSubnets*2/gossipSubD, 1)
	s.topics[scoreContribution] = rated(contribWeight, gossip.SyncCommitteeSubnets*targetAggregatorsPerSyncSubcommittee*2/gossipSubD, 1)
	return s
}

// nimbusScoring is topic_params.nim (2026) and eth2_network.nim's GossipSubParams.
func nimbusScoring(e ethCounts) Scoring {
	const (
		blockWeight, aggWeight, contribWeight, attTotal, syncTotal = 0.5, 0.5, 0.2, 1.0, 0.4
		small                                                      = 4 * 0.05 // attester and proposer slashings, exits, BLS changes
		gossipD                                                    = 8
		dampening                                                  = 50
	)
	maxScore := (10.0 + 40.0) * (blockWeight + aggWeight + attTotal + syncTotal + contribWeight + small)
	// scoreParameterDecay: ticks in whole seconds, integer division.
	decay := func(d time.Duration) float64 {
		return math.Pow(scoreDecayToZero, 1/float64(int64(d.Seconds())/int64(scoreSlot.Seconds())))
	}
	topic := func(weight, rate float64, firstDecay time.Duration, mi *meshInfo) *pubsub.TopicScoreParams {
		t := &pubsub.TopicScoreParams{TopicWeight: weight}
		timeInMesh(t)
		t.FirstMessageDeliveriesDecay = decay(firstDecay)
		t.FirstMessageDeliveriesCap = convergence(t.FirstMessageDeliveriesDecay, 2*rate/gossipD)
		t.FirstMessageDeliveriesWeight = 40 / t.FirstMessageDeliveriesCap
		t.MeshMessageDeliveriesDecay = decay(mi.decay)
		th := convergence(t.MeshMessageDeliveriesDecay, rate/dampening) * t.MeshMessageDeliveriesDecay
		t.MeshMessageDeliveriesThreshold = th
		t.MeshMessageDeliveriesWeight = -maxScore / (weight * th * th)
		t.MeshMessageDeliveriesCap = mi.capFactor * th
		t.MeshMessageDeliveriesActivation = mi.activation
		t.MeshMessageDeliveriesWindow = 2 * time.Second
		t.MeshFailurePenaltyWeight, t.MeshFailurePenaltyDecay = t.MeshMessageDeliveriesWeight, t.MeshMessageDeliveriesDecay
		t.InvalidMessageDeliveriesWeight = -maxScore / weight
		t.InvalidMessageDeliveriesDecay = decay(50 * scoreEpoch)
		return t
	}
	th := ethThresholds
	th.OpportunisticGraftThreshold = 0
	s := Scoring{Client: "nimbus", Thresholds: th, Dscore: 6}
	s.Params = pubsub.PeerScoreParams{
		AppSpecificScore: zeroApp, AppSpecificWeight: 0,
		DecayInterval: scoreSlot, DecayToZero: scoreDecayToZero, RetainScore: 385 * time.Second,
		BehaviourPenaltyWeight: -15.9, BehaviourPenaltyDecay: 0.986,
	}
	s.topics[scoreBlock] = topic(blockWeight, 1, 20*scoreEpoch, &meshInfo{5 * scoreEpoch, 3, scoreEpoch})
	s.topics[scoreAggregate] = topic(aggWeight, e.aggLighthouse, scoreEpoch, &meshInfo{2 * scoreEpoch, 4, scoreEpoch})
	rate := float64(e.validators) / gossip.AttestationSubnets / scoreSlotsPerEpoch
	att, firstDecay := &meshInfo{16 * scoreEpoch, 16, 3 * scoreEpoch}, 4*scoreEpoch
	if e.multipleBursts() {
		att, firstDecay = &meshInfo{4 * scoreEpoch, 16, scoreSlot * (scoreSlotsPerEpoch/2 + 1)}, scoreEpoch
	}
	s.topics[scoreAttestation] = topic(attTotal/gossip.AttestationSubnets, rate, firstDecay, att)
	syncRate := float64(min(e.validators, syncCommitteeSize)) / gossip.SyncCommitteeSubnets
	s.topics[scoreSyncSubnet] = topic(syncTotal/gossip.SyncCommitteeSubnets, syncRate, scoreEpoch, &meshInfo{4 * scoreEpoch, 4, scoreEpoch})
	s.topics[scoreContribution] = topic(contribWeight, gossip.SyncCommitteeSubnets*targetAggregatorsPerSyncSubcommittee, scoreEpoch, &meshInfo{scoreEpoch, 4, scoreEpoch})
	return s
}
