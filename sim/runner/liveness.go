package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/testground/sdk-go/sync"

	"github.com/streamsim/streamsim/result"
)

// Failure semantics of a run: an instance that crashes or times out fails the run with a
// message naming it, and the others still finish and write their outputs.
//
//   - Timeout: an instance that has not finished its own work within its budget
//     (Params.Budget) fails with kind timeout, naming itself and what it was doing, and
//     announces its failure as before (it enters the remaining barriers, a publisher
//     announces a failed result), so the others, whose waits for other instances get a grace
//     period beyond the budget, go on.
//   - Crash: an instance that vanishes announces nothing. Its planned peers see its
//     connections close; one that is not back within a grace period (two slots, at least 5 s)
//     outside a scheduled disconnect is announced lost on the status topic. The first
//     announcer in topic order stands in for the lost instance: it enters the barriers the
//     lost instance will never enter and, for a publisher, announces its result as failed.
//     Every instance that learns of a lost instance records it and fails with kind peer
//     naming it, after finishing its own work and writing its outputs (a receiver records
//     what it received).
type liveness struct {
	in    *instance
	topic *sync.Topic

	crashed  atomic.Bool
	hangCh   chan struct{}
	hangOnce gosync.Once
	// cancelWork cancels the instance's work (a crash).
	cancelWork context.CancelFunc
	watching   atomic.Bool
	start      time.Time
	byPeer     map[peer.ID]int // planned peers → member index
	notifiee   *network.NotifyBundle

	mu      gosync.Mutex
	lost    map[InstanceRef]string
	order   []InstanceRef
	markers map[string]chan struct{}
}

// statusRecord is one announcement on the status topic: an instance lost (Lost set), or a
// marker an instance publishes to learn that it has read everything published before it.
type statusRecord struct {
	ObserverGroup    string `json:"observer_group"`
	ObserverInstance int    `json:"observer_instance"`
	LostGroup        string `json:"lost_group,omitempty"`
	LostInstance     int    `json:"lost_instance"`
	LostPublisher    bool   `json:"lost_publisher,omitempty"`
	Reason           string `json:"reason,omitempty"`
	Marker           string `json:"marker,omitempty"`
}

func newLiveness(in *instance) *liveness {
	return &liveness{
		in: in, hangCh: make(chan struct{}), lost: map[InstanceRef]string{}, markers: map[string]chan struct{}{},
		topic: sync.NewTopic(in.sc.Name+"-status", &statusRecord{}),
	}
}

// lostGrace is how long a planned peer may stay disconnected before it is announced lost.
func (l *liveness) lostGrace() time.Duration { return max(2*l.in.slot, 5*time.Second) }

// begin starts reading the status topic and watching the planned peers' connections; call
// it at the start of the measured phase.
func (l *liveness) begin(ctx context.Context, start time.Time) error {
	in := l.in
	l.start = start
	// The status topic is read as long as the instance waits for others (waitCtx).
	ch := make(chan *statusRecord, 64)
	if _, err := in.client.Subscribe(in.waitCtx, l.topic, ch); err != nil {
		return fmt.Errorf("subscribe to status: %w", err)
	}
	go func() {
		for {
			select {
			case r := <-ch:
				l.handle(r)
			case <-in.waitCtx.Done():
				return
			}
		}
	}()
	l.byPeer = map[peer.ID]int{}
	for _, j := range neighbours(in.plan, in.me) {
		l.byPeer[in.infos[j].ID] = j
	}
	l.notifiee = &network.NotifyBundle{DisconnectedF: func(nw network.Network, c network.Conn) {
		if j, ok := l.byPeer[c.RemotePeer()]; ok && l.watching.Load() && nw.Connectedness(c.RemotePeer()) != network.Connected {
			l.disconnected(c.RemotePeer(), j)
		}
	}}
	l.watching.Store(true)
	in.node.Host().Network().Notify(l.notifiee)
	return nil
}

// stopWatching ends the watch (after the done barrier, when instances start to close).
func (l *liveness) stopWatching() {
	l.watching.Store(false)
	if l.notifiee != nil && l.in.node != nil {
		l.in.node.Host().Network().StopNotify(l.notifiee)
	}
}

// disconnected starts the grace period of planned peer p (member j).
func (l *liveness) disconnected(p peer.ID, j int) {
	in := l.in
	now := time.Since(l.start)
	deadline := now + l.lostGrace()
	if in.faults != nil {
		// A scheduled disconnect of either end is expected: the grace starts at its end.
		for _, w := range append(in.faults.downWindows(j), in.faults.downWindows(in.me)...) {
			if now >= w[0]-2*time.Second && now <= w[1]+l.lostGrace() {
				deadline = max(deadline, w[1]+l.lostGrace())
			}
		}
	}
	time.AfterFunc(deadline-now, func() {
		if !l.watching.Load() || l.crashed.Load() || in.node.Host().Network().Connectedness(p) == network.Connected {
			return
		}
		l.announce(j, fmt.Sprintf("its connection to %s closed at +%.1f s outside any scheduled disconnect and it did not come back within %s",
			InstanceRef{in.group, in.seq}, now.Seconds(), l.lostGrace()))
	})
}

func (l *liveness) announce(j int, reason string) {
	in := l.in
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m := in.members[j]
	in.client.Publish(ctx, l.topic, &statusRecord{ObserverGroup: in.group, ObserverInstance: in.seq,
		LostGroup: m.Group, LostInstance: m.Instance, LostPublisher: in.plan.Nodes[j].Publishes, Reason: reason})
}

// handle processes one status record, in topic order (the same at every instance).
func (l *liveness) handle(r *statusRecord) {
	in := l.in
	if r.Marker != "" {
		l.mu.Lock()
		if ch := l.markers[r.Marker]; ch != nil {
			close(ch)
			delete(l.markers, r.Marker)
		}
		l.mu.Unlock()
		return
	}
	ref := InstanceRef{r.LostGroup, r.LostInstance}
	l.mu.Lock()
	_, seen := l.lost[ref]
	if !seen {
		l.lost[ref] = r.Reason
		l.order = append(l.order, ref)
	}
	l.mu.Unlock()
	if seen || r.ObserverGroup != in.group || r.ObserverInstance != in.seq {
		return
	}
	// This instance announced first: stand in for the lost one.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if r.LostPublisher {
		in.client.Publish(ctx, in.resultTopic, &resultRecord{Group: ref.Group, Instance: ref.Instance, Error: "lost: " + r.Reason})
	}
	for _, st := range []sync.State{in.stateDone, in.stateFinished} {
		in.client.SignalEntry(ctx, st)
	}
}

// settle returns once every status record published before this call has been handled.
func (l *liveness) settle(ctx context.Context) error {
	in := l.in
	id := fmt.Sprintf("%s/%d/%d", in.group, in.seq, time.Now().UnixNano())
	ch := make(chan struct{})
	l.mu.Lock()
	l.markers[id] = ch
	l.mu.Unlock()
	if _, err := in.client.Publish(ctx, l.topic, &statusRecord{ObserverGroup: in.group, ObserverInstance: in.seq, Marker: id}); err != nil {
		return err
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lostPeers lists the instances announced lost, as "group/instance: reason".
func (l *liveness) lostPeers() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.order {
		out = append(out, r.String()+": "+l.lost[r])
	}
	return out
}

// failure is the instance's failure for the instances lost during the run, or nil.
func (l *liveness) failure() error {
	lost := l.lostPeers()
	if len(lost) == 0 {
		return nil
	}
	names := make([]string, len(lost))
	l.mu.Lock()
	for i, r := range l.order {
		names[i] = r.String()
	}
	l.mu.Unlock()
	return &result.Failure{Kind: result.FailPeer, Message: fmt.Sprintf("instance(s) %s lost during the run (crashed?): %s",
		strings.Join(names, ", "), lost[0])}
}

// crash makes the instance vanish: its host closes at once and its work stops; runInstance
// then returns without announcing anything or writing a summary.
func (l *liveness) crash() {
	l.crashed.Store(true)
	l.watching.Store(false)
	if l.in.node != nil {
		l.in.node.Close()
	}
	if l.cancelWork != nil {
		l.cancelWork()
	}
}

// hang makes the instance stop at its next checkpoint until its budget runs out.
func (l *liveness) hang() { l.hangOnce.Do(func() { close(l.hangCh) }) }

// hold is a checkpoint of the instance's work: after a hang fault it blocks until ctx ends.
func (l *liveness) hold(ctx context.Context) error {
	if l == nil {
		return nil
	}
	select {
	case <-l.hangCh:
		<-ctx.Done()
		return ctx.Err()
	default:
		return nil
	}
}

func (in *instance) crash() { in.live.crash() }
func (in *instance) hang()  { in.live.hang() }

// timeoutFailure names an instance that ran out of its budget and what it was doing.
func (in *instance) timeoutFailure(err error) error {
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	phase := in.phase
	if phase == "" {
		phase = "starting"
	}
	return &result.Failure{Kind: result.FailTimeout, Message: fmt.Sprintf("%s %s/%d timed out after %s (param %s) while %s: %v",
		in.role, in.group, in.seq, in.p.Budget(), ParamTimeout, phase, err)}
}

// recordPartial keeps what a failed receiver had received, so reports show it.
func (in *instance) recordPartial() {
	if in.received != nil && in.summary.Parity == nil && in.plan != nil && in.spec.Receiver(&in.plan.Nodes[in.me]) {
		in.summary.Parity = in.received.parity()
	}
}

// reliabilityRecords fills the summary's reliability fields from the node, the fault runner,
// the liveness watch and the sampler.
func (in *instance) reliabilityRecords() {
	s := in.summary
	if in.node != nil && !s.Start.IsZero() {
		s.Outages = in.node.Outages(s.Start)
		s.LostMessages = in.node.LostMessages()
	}
	if in.faults != nil {
		s.Faults = in.faults.snapshot()
	}
	if in.live != nil {
		s.LostPeers = in.live.lostPeers()
	}
	if in.sampler != nil {
		s.Samples = in.sampler.stop()
	}
	if in.p != nil && len(in.p.Faults) > 0 {
		s.FaultSchedule = in.p.Values[ParamFaults]
	}
	slices.SortFunc(s.Outages, func(a, b result.Outage) int { return int(a.FromNs - b.FromNs) })
}

// startReliability starts, at the start of the measured phase, the liveness watch, this
// instance's part of the fault schedule and the resource sampler.
func (in *instance) startReliability(ctx context.Context, start time.Time) error {
	if err := in.live.begin(ctx, start); err != nil {
		return err
	}
	if in.faults != nil {
		go in.faults.run(ctx, start)
	}
	if in.p.SampleSlots > 0 {
		in.sampler = startSampler(in, start, in.slotTime(in.p.SampleSlots))
	}
	return nil
}

// closeFiles closes what a crashed instance leaves open in this process.
func (in *instance) closeFiles() {
	if in.sampler != nil {
		in.sampler.stop()
	}
	if in.msgLog != nil {
		in.msgLog.Close()
	}
	if in.rec != nil {
		in.rec.Close()
	}
}
