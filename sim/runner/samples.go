package runner

import (
	"runtime"
	"runtime/metrics"
	gosync "sync"
	"time"

	"github.com/streamsim/streamsim/result"
)

// sampler takes periodic resource samples of a node for the soak check: the process's live
// heap, Go memory and goroutines, the node's open streams, gossip streams and connections,
// its deliveries and its gossip stream bytes per category so far (a per-slot byte series at
// the default period of one slot).
type sampler struct {
	in    *instance
	start time.Time
	every time.Duration
	stopC chan struct{}
	done  chan struct{}

	mu      gosync.Mutex
	samples []result.Sample
	stopped bool
}

// metrics read for every sample (runtime/metrics: no stop-the-world, unlike ReadMemStats).
var sampleMetrics = []string{"/gc/heap/live:bytes", "/memory/classes/total:bytes", "/sched/goroutines:goroutines"}

// startSampler samples every `every` from start until stop; the first sample is at start.
func startSampler(in *instance, start time.Time, every time.Duration) *sampler {
	s := &sampler{in: in, start: start, every: every, stopC: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		s.take()
		for {
			select {
			case <-t.C:
				s.take()
			case <-s.stopC:
				return
			}
		}
	}()
	return s
}

func (s *sampler) take() {
	ms := make([]metrics.Sample, len(sampleMetrics))
	for i, name := range sampleMetrics {
		ms[i].Name = name
	}
	metrics.Read(ms)
	val := func(i int) int64 {
		if ms[i].Value.Kind() == metrics.KindUint64 {
			return int64(ms[i].Value.Uint64())
		}
		return 0
	}
	x := result.Sample{AtNs: int64(time.Since(s.start)), HeapLiveBytes: val(0), GoMemBytes: val(1), Goroutines: val(2)}
	if x.Goroutines == 0 {
		x.Goroutines = int64(runtime.NumGoroutine())
	}
	if n := s.in.node; n != nil {
		conns := n.Host().Network().Conns()
		x.Conns = int64(len(conns))
		for _, c := range conns {
			x.Streams += int64(len(c.GetStreams()))
		}
		x.GossipStreams = n.GossipStreams()
		x.In, x.Out = n.CategoryTotals()
	}
	if s.in.received != nil {
		x.Delivered = s.in.received.total()
	}
	s.mu.Lock()
	if !s.stopped {
		s.samples = append(s.samples, x)
	}
	s.mu.Unlock()
}

// stop takes a last sample, ends sampling and returns the samples.
func (s *sampler) stop() []result.Sample {
	s.mu.Lock()
	stopped := s.stopped
	s.mu.Unlock()
	if !stopped {
		s.take()
		close(s.stopC)
		<-s.done
		s.mu.Lock()
		s.stopped = true
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}
