package sim

import (
	"fmt"
	gosync "sync"

	"github.com/streamsim/streamsim/workload"
)

// slotSource hands a run's workload out slot by slot. Publishers in one process (the
// embedded runner) share one generator per workload.Params: each slot is generated once, one
// slot ahead of need, and dropped when every publisher that opened the source has taken it.
// Under Testground each publisher is its own process and has its own source.
type slotSource struct {
	key   workload.Params
	total int

	mu    gosync.Mutex
	users int
	slots map[int]*sourceSlot

	genMu gosync.Mutex // serializes the generator
	gen   *workload.Generator
	made  int // slots generated so far
}

type sourceSlot struct {
	ready chan struct{}
	msgs  []workload.Message
	err   error
	left  int // users that have not released it
}

var sources = struct {
	gosync.Mutex
	m map[workload.Params]*slotSource
}{m: map[workload.Params]*slotSource{}}

// openSlots registers a user of the workload p (total slots). Every user must open the
// source before any of them takes a slot.
func openSlots(p workload.Params, total int) (*slotSource, error) {
	sources.Lock()
	defer sources.Unlock()
	s := sources.m[p]
	if s == nil {
		gen, err := workload.NewGenerator(p)
		if err != nil {
			return nil, err
		}
		s = &slotSource{key: p, total: total, gen: gen, slots: map[int]*sourceSlot{}}
		sources.m[p] = s
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
		e = &sourceSlot{ready: make(chan struct{}), left: s.users}
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
}

// slot returns slot i's messages (shared: read only) and starts generating slot i+1.
func (s *slotSource) slot(i int) ([]workload.Message, error) {
	e := s.entry(i)
	<-e.ready
	if i+1 < s.total {
		s.entry(i + 1)
	}
	return e.msgs, e.err
}

// release tells the source this user is done with slot i.
func (s *slotSource) release(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.slots[i]; e != nil {
		if e.left--; e.left <= 0 {
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
	if last && sources.m[s.key] == s {
		delete(sources.m, s.key)
	}
}
