package sim

import (
	"fmt"
	"slices"
	gosync "sync"

	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/workload"
)

// slotSource hands a run's workload out slot by slot. Publishers in one process (the
// embedded runner) share one generator per workload.Params: each slot is generated once (the
// first when the source opens, the others one slot ahead of need) and dropped when every
// publisher that opened the source has taken it.
// With each slot the source computes once which member publishes each message (the plan's
// Origin), instead of every publisher computing it for every message. Under Testground each
// publisher is its own process and has its own source.
type slotSource struct {
	key   workload.Params
	plan  *topology.Plan // every user's plan gives the same origins (Plan.SameOrigins)
	total int

	mu    gosync.Mutex
	users int
	slots map[int]*sourceSlot

	genMu gosync.Mutex // serializes the generator
	gen   *workload.Generator
	made  int // slots generated so far
	seq   int // messages generated so far: the next message's index in the schedule
}

type sourceSlot struct {
	ready chan struct{}
	msgs  []workload.Message
	// origins[i] is the member that publishes msgs[i] (Plan.Origin; -1: none can).
	origins  []int
	err      error
	released int // users that are done with it
}

var sources = struct {
	gosync.Mutex
	m map[workload.Params][]*slotSource
}{m: map[workload.Params][]*slotSource{}}

// openSlots registers a user of the workload p (total slots) published over plan. Users
// with the same workload and plans of the same origins share a source. Every user must open the source
// before any of them takes a slot.
func openSlots(p workload.Params, total int, plan *topology.Plan) (*slotSource, error) {
	sources.Lock()
	defer sources.Unlock()
	var s *slotSource
	for _, o := range sources.m[p] {
		if o.plan == plan || o.plan.SameOrigins(plan) {
			s = o
			break
		}
	}
	if s == nil {
		gen, err := workload.NewGenerator(p)
		if err != nil {
			return nil, err
		}
		s = &slotSource{key: p, plan: plan, total: total, gen: gen, slots: map[int]*sourceSlot{}}
		sources.m[p] = append(sources.m[p], s)
		// The first slot is generated while the other users open the source, before the
		// measured phase starts, so that its first messages go out on time.
		if total > 0 {
			s.entry(0)
		}
	}
	if s.total != total {
		return nil, fmt.Errorf("workload opened for %d and %d slots", s.total, total)
	}
	s.mu.Lock()
	s.users++
	s.mu.Unlock()
	return s, nil
}

// entry returns slot i's entry, starting its generation if nobody has.
func (s *slotSource) entry(i int) *sourceSlot {
	s.mu.Lock()
	e := s.slots[i]
	if e == nil {
		e = &sourceSlot{ready: make(chan struct{})}
		s.slots[i] = e
		go s.generate(i, e)
	}
	s.mu.Unlock()
	return e
}

func (s *slotSource) generate(i int, e *sourceSlot) {
	s.genMu.Lock()
	defer s.genMu.Unlock()
	defer close(e.ready)
	if s.made != i {
		e.err = fmt.Errorf("workload slot %d requested out of order (next is %d)", i, s.made)
		return
	}
	e.msgs, e.err = s.gen.NextSlot()
	s.made++
	e.origins = make([]int, len(e.msgs))
	for j := range e.msgs {
		m := &e.msgs[j]
		e.origins[j] = s.plan.Origin(s.key.Seed, int(m.Slot), s.seq, m.Topic)
		s.seq++
	}
}

// slot returns slot i's messages and their origins (shared: read only) and starts
// generating slot i+1.
func (s *slotSource) slot(i int) ([]workload.Message, []int, error) {
	e := s.entry(i)
	<-e.ready
	if i+1 < s.total {
		s.entry(i + 1)
	}
	return e.msgs, e.origins, e.err
}

// release tells the source this user is done with slot i.
func (s *slotSource) release(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.slots[i]; e != nil {
		// Every user opened the source before any took a slot: users is final here.
		if e.released++; e.released >= s.users {
			delete(s.slots, i)
		}
	}
}

// close deregisters a user; the last one removes the source.
func (s *slotSource) close() {
	sources.Lock()
	defer sources.Unlock()
	s.mu.Lock()
	s.users--
	last := s.users == 0
	s.mu.Unlock()
	if last {
		if rest := slices.DeleteFunc(sources.m[s.key], func(o *slotSource) bool { return o == s }); len(rest) > 0 {
			sources.m[s.key] = rest
		} else {
			delete(sources.m, s.key)
		}
	}
}
