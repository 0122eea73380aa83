package runner

import (
	"fmt"
	"slices"
	gosync "sync"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/workload"
)

// slotSource hands a run's workload out slot by slot. Publishers in one process (the
// embedded runner) share one generator per workload.Params: each slot is generated once and
// dropped when every publisher that opened the source has taken it. The source generates
// slots when it opens, before the measured phase, as far as preGenerateBytes of message data
// go (at least the first slot, so its first messages go out on time; a short run's whole
// workload), and the rest one slot ahead of need, so that a long run does not hold its whole
// workload. Generating the workload is the simulator's, not a node's: the measured phase's
// CPU figure should not carry it where memory allows.
// With each slot the source computes once which member publishes each message (the plan's
// Origin) and each message's id, instead of every publisher computing them. Under Testground
// each publisher is its own process and has its own source.
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
	origins []int
	// ids[i] is msgs[i]'s gossip message id (for the publisher's tallies and message log).
	ids      [][gossip.MessageIDBytes]byte
	err      error
	released int // users that are done with it
}

// preGenerateBytes bounds the message data a source generates when it opens (about 20 slots
// of the overhead benchmark's 65 536 validators; one or two of mainnet's size).
const preGenerateBytes = 64 << 20

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
		s.pregenerate()
	}
	if s.total != total {
		return nil, fmt.Errorf("workload opened for %d and %d slots", s.total, total)
	}
	s.mu.Lock()
	s.users++
	s.mu.Unlock()
	return s, nil
}

// pregenerate generates the first slots, synchronously: at least one, then while the next
// (as large as the last) stays within preGenerateBytes in all.
func (s *slotSource) pregenerate() {
	size, last := 0, 0
	for i := 0; i < s.total && (i == 0 || size+last <= preGenerateBytes); i++ {
		e := &sourceSlot{ready: make(chan struct{})}
		s.slots[i] = e
		s.generate(i, e)
		if e.err != nil {
			return
		}
		last = 0
		for j := range e.msgs {
			last += len(e.msgs[j].Data)
		}
		size += last
	}
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
	e.ids = make([][gossip.MessageIDBytes]byte, len(e.msgs))
	for j := range e.msgs {
		m := &e.msgs[j]
		e.origins[j] = s.plan.Origin(s.key.Seed, int(m.Slot), s.seq, m.Topic)
		if e.origins[j] >= 0 {
			e.ids[j] = gossip.MessageID(m.Topic, m.Data)
		}
		s.seq++
	}
}

// slot returns slot i (shared: read only): its messages, their origins and ids; and starts
// generating slot i+1 unless it is.
func (s *slotSource) slot(i int) (*sourceSlot, error) {
	e := s.entry(i)
	<-e.ready
	if i+1 < s.total {
		s.entry(i + 1)
	}
	return e, e.err
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
