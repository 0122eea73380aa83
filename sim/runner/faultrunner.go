package runner

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamsim/streamsim/sim/node"

	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/units"
)

// faultRunner carries out the faults of a schedule that fall to one instance.
type faultRunner struct {
	in     *instance
	faults []Fault
	// idx resolves instance references to member indexes.
	idx map[InstanceRef]int

	mu     sync.Mutex
	events []result.FaultEvent
}

func newFaultRunner(in *instance) (*faultRunner, error) {
	r := &faultRunner{in: in, faults: in.p.Faults, idx: map[InstanceRef]int{}}
	groups := map[string]int{}
	for i, m := range in.members {
		r.idx[InstanceRef{m.Group, m.Instance}] = i
		groups[m.Group] = max(groups[m.Group], m.Instance+1)
	}
	if err := CheckFaultTargets(r.faults, groups); err != nil {
		return nil, err
	}
	return r, nil
}

// downWindows returns, for member j, the intervals (offsets from the measured phase's start)
// during which its connections are down by schedule: its own disconnects.
func (r *faultRunner) downWindows(j int) [][2]time.Duration {
	var out [][2]time.Duration
	for _, f := range r.faults {
		if f.Kind == FaultDisconnect && r.idx[f.Target] == j {
			at := r.in.slotTime(f.AtSlots)
			out = append(out, [2]time.Duration{at, at + r.in.slotTime(f.ForSlots)})
		}
	}
	return out
}

// run carries out this instance's faults, each at its time after start.
func (r *faultRunner) run(ctx context.Context, start time.Time) {
	me := r.in.me
	var wg sync.WaitGroup
	for i, f := range r.faults {
		target := r.idx[f.Target]
		var actor bool
		switch f.Kind {
		case FaultReset, FaultGarbage:
			// The writers of the streams into the target act: its peers (or the one named).
			if f.Peer != nil {
				actor = r.idx[*f.Peer] == me
			} else {
				actor = slices.Contains(neighbours(r.in.plan, target), me)
			}
		default:
			actor = target == me
		}
		if !actor {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(start.Add(r.in.slotTime(f.AtSlots)))):
			}
			r.apply(ctx, i, f, target)
		}()
	}
	wg.Wait()
}

func (r *faultRunner) record(e result.FaultEvent) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *faultRunner) snapshot() []result.FaultEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.events)
	slices.SortFunc(out, func(a, b result.FaultEvent) int { return int(a.AtNs - b.AtNs) })
	return out
}

// apply carries out fault i (f) as this instance's part.
func (r *faultRunner) apply(ctx context.Context, i int, f Fault, target int) {
	in := r.in
	nd := in.node
	ev := result.FaultEvent{Spec: f.Spec, Kind: string(f.Kind), AtNs: time.Now().UnixNano()}
	// Garbage is seeded by the run's seed and the entry's position: the same schedule
	// sends the same bytes.
	rng := rand.New(rand.NewSource(in.p.Seed*1_000_003 + int64(i)))
	switch f.Kind {
	case FaultDisconnect:
		until := time.Now().Add(in.slotTime(f.ForSlots))
		n := nd.Disconnect(until)
		ev.UntilNs, ev.Applied = until.UnixNano(), true
		ev.Note = fmt.Sprintf("closed %d connection(s)", n)
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(until)):
		}
		ev.Note += "; " + r.redial(ctx)
	case FaultReset, FaultGarbage:
		p := in.infos[target].ID
		ev.Peer = p.String()
		if f.Kind == FaultGarbage {
			garbage := make([]byte, f.Bytes)
			rng.Read(garbage)
			ev.Note, ev.Applied = nd.InjectGarbage(p, garbage)
			break
		}
		done, ok := nd.ArmCut(p)
		if !ok {
			ev.Note = "no outbound gossip stream to the target"
			break
		}
		select {
		case ev.Note = <-done:
			ev.Applied = true
		case <-ctx.Done():
			ev.Note = "no unit was written before the run ended"
		}
	case FaultRogue:
		garbage := make([]byte, f.Bytes)
		rng.Read(garbage)
		proto := nd.Protocols()[0]
		note, err := node.Rogue(ctx, r.in.net, nd.AddrInfo(), proto, garbage)
		ev.Note, ev.Applied = note, err == nil
		if err != nil {
			ev.Note = err.Error()
		}
	case FaultSlow:
		until := time.Now().Add(in.slotTime(f.ForSlots))
		nd.SlowReads(until, f.RateBytes)
		ev.UntilNs, ev.Applied = until.UnixNano(), true
		ev.Note = fmt.Sprintf("gossip reads at %s/s", units.FormatSize(f.RateBytes))
	case FaultCrash:
		in.crash()
		return // a crashed instance records nothing
	case FaultHang:
		ev.Applied = true
		ev.Note = "stopped making progress"
		r.record(ev)
		in.hang()
		return
	}
	r.record(ev)
}

// redial dials the instance's planned peers again after a disconnect.
func (r *faultRunner) redial(ctx context.Context) string {
	in := r.in
	var wg sync.WaitGroup
	var failed atomic.Int64
	peers := neighbours(in.plan, in.me)
	for _, j := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := in.node.Host().Connect(dctx, in.infos[j]); err != nil {
				failed.Add(1)
				in.runenv.RecordMessage("fault redial %s: %v", in.members[j], err)
			}
		}()
	}
	wg.Wait()
	return fmt.Sprintf("redialled %d peer(s), %d failed", len(peers), failed.Load())
}
