package node

import (
	"fmt"
	"math"
	"sync"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"

	"github.com/streamsim/streamsim/topology"
)

// Time dilation. A run at time scale s replays mainnet s times faster (s < 1: slower), so
// every duration GossipSub acts on has to be divided by s, or the mesh it builds is not the
// mesh mainnet builds at that rate of messages: with the PRUNE backoff left at 60 s in a run
// 4× faster, a pruned peer waits four times as many heartbeats before it may graft again and
// the observed node sees fewer GRAFT/PRUNE and a different split between copies and IHAVE
// (docs/inputs.md §9). The durations are those of go-libp2p-pubsub v0.19.0:
//
//   - GossipSubParams: HeartbeatInterval, HeartbeatInitialDelay, FanoutTTL, PruneBackoff,
//     UnsubscribeBackoff, GraftFloodThreshold, IWantFollowupTime, DirectConnectInitialDelay.
//     Everything else is counted in heartbeats (history, mcache gossip, IDONTWANT TTL,
//     opportunistic graft and direct connect ticks) and scales with the heartbeat, except
//     ConnectionTimeout, which bounds a real TCP dial (peer exchange, off here) and stays.
//   - WithSeenMessagesTTL.
//   - The package variable GossipSubHeartbeatInterval, which clearBackoff (gossipsub.go
//     ~1966) adds twice as slack to every backoff before it forgets it: a process-wide
//     value, so every node of a process must run at the same scale (acquireTimeScale).
//   - PRUNE carries the backoff in whole seconds (makePrune: PruneBackoff / time.Second,
//     truncated), and the pruned peer obeys that figure, not its own. A scaled backoff of
//     7.5 s (60 s at 8×) would make the pruner refuse GRAFTs for 7.5 s while the pruned peer
//     waits 7 s. So a scaled backoff of 1 s or more is rounded to the nearest whole second,
//     and pruner and pruned agree exactly; the dilation of that backoff is then off by at
//     most half a second (Dilation.PruneBackoffError). Below 1 s PRUNE carries 0 and
//     handlePrune falls back to the receiver's own PruneBackoff, which is exact because every
//     profile keeps pubsub's 60 s (a PRUNE sent on unsubscribe then costs the receiver the
//     prune backoff instead of the unsubscribe backoff; no streamsim scenario leaves a topic).

// Dilation is the set of GossipSub durations a node runs with at a time scale.
type Dilation struct {
	Scale float64
	// Heartbeat, FanoutTTL and SeenTTL are the client's, divided by Scale.
	Heartbeat, FanoutTTL, SeenTTL time.Duration
	// PruneBackoff and UnsubscribeBackoff are pubsub's 60 s and 10 s divided by Scale,
	// rounded to whole seconds when at least 1 s (the unit PRUNE carries).
	PruneBackoff, UnsubscribeBackoff time.Duration
	// GraftFloodThreshold, IWantFollowupTime, DirectConnectInitialDelay: pubsub's defaults
	// divided by Scale.
	GraftFloodThreshold, IWantFollowupTime, DirectConnectInitialDelay time.Duration
	// BackoffSlack is the value given to pubsub's GossipSubHeartbeatInterval: its 1 s
	// divided by Scale (clearBackoff keeps a backoff twice that long past its expiry).
	BackoffSlack time.Duration
}

// Dilate returns the durations of client cl at time scale scale (> 0).
func Dilate(cl topology.Client, scale float64) Dilation {
	div := func(d time.Duration) time.Duration { return time.Duration(float64(d) / scale) }
	return Dilation{
		Scale:                     scale,
		Heartbeat:                 div(cl.Heartbeat),
		FanoutTTL:                 div(cl.FanoutTTL),
		SeenTTL:                   div(cl.SeenTTL),
		PruneBackoff:              wireBackoff(div(pubsubPruneBackoff)),
		UnsubscribeBackoff:        wireBackoff(div(pubsubUnsubscribeBackoff)),
		GraftFloodThreshold:       div(pubsubGraftFloodThreshold),
		IWantFollowupTime:         div(pubsubIWantFollowupTime),
		DirectConnectInitialDelay: div(pubsubDirectConnectInitialDelay),
		BackoffSlack:              div(pubsubHeartbeatSlack),
	}
}

// pubsub's real-time defaults, read once before any node changes the process-wide one.
var (
	pubsubPruneBackoff              = pubsub.GossipSubPruneBackoff
	pubsubUnsubscribeBackoff        = pubsub.GossipSubUnsubscribeBackoff
	pubsubGraftFloodThreshold       = pubsub.GossipSubGraftFloodThreshold
	pubsubIWantFollowupTime         = pubsub.GossipSubIWantFollowupTime
	pubsubDirectConnectInitialDelay = pubsub.GossipSubDirectConnectInitialDelay
	pubsubHeartbeatSlack            = pubsub.GossipSubHeartbeatInterval
)

// wireBackoff rounds a backoff of at least 1 s to whole seconds, the unit PRUNE carries, so
// that the peer that prunes and the peer that obeys the PRUNE wait the same time.
func wireBackoff(d time.Duration) time.Duration {
	if d < time.Second {
		return d
	}
	return time.Duration(math.Round(d.Seconds())) * time.Second
}

// PruneBackoffError is the relative error of the dilated prune backoff against an exact
// division of pubsub's 60 s (0 when exact).
func (d Dilation) PruneBackoffError() float64 {
	exact := float64(pubsubPruneBackoff) / d.Scale
	return math.Abs(float64(d.PruneBackoff)-exact) / exact
}

// apply writes the dilated durations into pubsub's parameters; initialDelay is the extra real
// time delay of the first heartbeat (stagger), which scales too.
func (d Dilation) apply(p *pubsub.GossipSubParams, initialDelay time.Duration) {
	p.HeartbeatInterval = d.Heartbeat
	p.HeartbeatInitialDelay = time.Duration(float64(100*time.Millisecond+initialDelay) / d.Scale)
	p.FanoutTTL = d.FanoutTTL
	p.PruneBackoff = d.PruneBackoff
	p.UnsubscribeBackoff = d.UnsubscribeBackoff
	p.GraftFloodThreshold = d.GraftFloodThreshold
	p.IWantFollowupTime = d.IWantFollowupTime
	p.DirectConnectInitialDelay = d.DirectConnectInitialDelay
}

// The process-wide backoff slack: set by the first node of a time scale, held while any node
// of that scale runs.
var timeScaleMu struct {
	sync.Mutex
	scale float64
	live  int
}

// acquireTimeScale sets pubsub's GossipSubHeartbeatInterval (clearBackoff's slack) for a node
// at d.Scale, or fails when nodes of another scale still run in this process: the variable is
// shared, and one value cannot be right for both. releaseTimeScale undoes one acquire.
func acquireTimeScale(d Dilation) error {
	timeScaleMu.Lock()
	defer timeScaleMu.Unlock()
	if timeScaleMu.live > 0 && timeScaleMu.scale != d.Scale {
		return fmt.Errorf("time scale %g: %d node(s) of this process run at %g, and pubsub's backoff slack (GossipSubHeartbeatInterval) is one value per process", d.Scale, timeScaleMu.live, timeScaleMu.scale)
	}
	if timeScaleMu.live == 0 && pubsub.GossipSubHeartbeatInterval != d.BackoffSlack {
		pubsub.GossipSubHeartbeatInterval = d.BackoffSlack
	}
	timeScaleMu.scale = d.Scale
	timeScaleMu.live++
	return nil
}

func releaseTimeScale() {
	timeScaleMu.Lock()
	defer timeScaleMu.Unlock()
	timeScaleMu.live--
}
