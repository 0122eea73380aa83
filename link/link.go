package link

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultSendBufferBytes is a connection's send buffer: bytes written and not yet handed to
// the socket (queued for the uplink or in flight). 4 MiB is Linux's default tcp_wmem
// maximum, the most a kernel send buffer grows to.
const DefaultSendBufferBytes = 4 << 20

const (
	// granularity is the link's unit of time: a chunk is at most this much of the link,
	// and timed waits shorter than this are skipped.
	granularity = time.Millisecond
	// minChunkBytes and maxChunkBytes bound a chunk: one Ethernet MTU at low rates, 64 KiB
	// (a large TCP segment offload) at high ones.
	minChunkBytes = 1500
	maxChunkBytes = 64 << 10
	// socketBufferBytes is what the link asks the kernel for as SO_SNDBUF and SO_RCVBUF on
	// each socket: small, so that a full downlink pushes back to the sender instead of
	// queueing megabytes in loopback socket buffers.
	socketBufferBytes = 64 << 10
	// uplinkLead is how far ahead of real time the uplink may be booked before a
	// connection's further bytes wait in its backlog; backlogs are booked a chunk at a
	// time, up to twice this, so connections with bytes to send take turns.
	uplinkLead = 2 * time.Millisecond
	// blockedRead is how long a socket read must take to count as having waited for
	// bytes to arrive, rather than finding them there.
	blockedRead = 50 * time.Microsecond
	// timerSlack is how early timed waits aim: with nothing else to run, Go's runtime
	// waits for timers in epoll with whole-millisecond timeouts, so a wake-up comes up to a
	// millisecond late; aiming half a millisecond early centres the error on zero.
	timerSlack = 500 * time.Microsecond
	// handshakeTimeout bounds the region preamble exchange.
	handshakeTimeout = 10 * time.Second
	// drainTimeout bounds how long a closed connection keeps delivering what it had
	// accepted before its socket is closed anyway.
	drainTimeout = 10 * time.Second
)

// Link is one node's access link. Give its Transport to exactly one libp2p host.
type Link struct {
	shape           Shape
	regions         Regions
	up, down        *serializer // nil: unlimited
	upChunkBytes    int
	downChunkBytes  int
	sendBufferBytes int
	attached        atomic.Bool

	// The uplink scheduler: connections with backlog, served in turn.
	upMu      sync.Mutex
	upQueue   []*conn
	upRunning bool
	upWake    chan struct{} // capacity 1: the queue emptied while the scheduler slept

	upBytes, downBytes atomic.Int64
	handshakeErrors    atomic.Int64
	wakeups            atomic.Int64
	lateSumNs          atomic.Int64
	lateMaxNs          atomic.Int64
	lateOver2ms        atomic.Int64
}

// Option changes a Link from its defaults.
type Option func(*Link) error

// WithSendBuffer sets a connection's send buffer (DefaultSendBufferBytes by default).
func WithSendBuffer(bytes int) Option {
	return func(l *Link) error {
		if bytes < 1 {
			return fmt.Errorf("link: send buffer %d bytes; must be ≥ 1", bytes)
		}
		l.sendBufferBytes = bytes
		return nil
	}
}

// New makes a node's link from its shape; regions must hold the node's region and the
// region of every node it will connect to.
func New(shape Shape, regions Regions, opts ...Option) (*Link, error) {
	if err := regions.Validate(); err != nil {
		return nil, fmt.Errorf("link: %w", err)
	}
	if err := shape.Validate(regions); err != nil {
		return nil, fmt.Errorf("link: %w", err)
	}
	l := &Link{
		shape:           shape,
		regions:         regions,
		upChunkBytes:    chunkBytes(shape.UpBitsPerSec),
		downChunkBytes:  chunkBytes(shape.DownBitsPerSec),
		sendBufferBytes: DefaultSendBufferBytes,
		upWake:          make(chan struct{}, 1),
	}
	for _, o := range opts {
		if err := o(l); err != nil {
			return nil, err
		}
	}
	l.up = newSerializer(shape.UpBitsPerSec)
	l.down = newSerializer(shape.DownBitsPerSec)
	return l, nil
}

// chunkBytes is one granularity of a link at bitsPerSec, within the chunk bounds.
func chunkBytes(bitsPerSec int64) int {
	if bitsPerSec == 0 {
		return maxChunkBytes
	}
	n := bitsPerSec / 8 * int64(granularity) / int64(time.Second)
	return int(min(max(n, minChunkBytes), maxChunkBytes))
}

// serializer is one direction of an access link as a virtual clock: when the last byte
// scheduled on it is through. Bytes are scheduled from when they became available, not
// from when a goroutine got round to them, so the link keeps its rate when wake-ups come
// late on a loaded machine. A token bucket (x/time/rate, which this package used first)
// counts a late caller's delay as idle time and loses it: this package's 1 MiB transfers
// through a 16 Mbit/s link took 11–26 % too long with it at load average 5, and it cannot
// book bytes at a time in the past.
type serializer struct {
	mu        sync.Mutex
	nsPerByte float64
	free      time.Time
}

// newSerializer returns nil for an unlimited link.
func newSerializer(bitsPerSec int64) *serializer {
	if bitsPerSec == 0 {
		return nil
	}
	return &serializer{nsPerByte: 8e9 / float64(bitsPerSec)}
}

// schedule puts n bytes, all available at avail, on the uplink and returns when the last
// of them has left, unless the uplink is already more than lead ahead of now (then it
// does nothing and returns false). A nil serializer (unlimited) passes bytes at once.
func (s *serializer) schedule(avail, now time.Time, n int, lead time.Duration) (time.Time, bool) {
	if s == nil {
		return avail, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.free.Sub(now) > lead {
		return time.Time{}, false
	}
	s.free = later(s.free, avail).Add(s.duration(n))
	return s.free, true
}

// freeAt is when the link will have carried everything scheduled on it.
func (s *serializer) freeAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.free
}

// cutThrough schedules n bytes whose last byte arrived at avail, having streamed in
// behind it, and returns when the last of them is through: the downlink, which on an idle
// link adds no delay to bytes that arrived no faster than it carries them, and on a busy
// one queues them behind what it is carrying.
func (s *serializer) cutThrough(avail time.Time, n int) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free = later(s.free.Add(s.duration(n)), avail)
	return s.free
}

func (s *serializer) duration(n int) time.Duration {
	return time.Duration(float64(n)*s.nsPerByte + 0.5)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Shape is the shape the link was made with.
func (l *Link) Shape() Shape { return l.shape }

// Regions is the latency model the link was made with (a simulated network applies the same
// per-pair latencies in virtual time: package network's VirtualNetwork).
func (l *Link) Regions() Regions { return l.regions }

// Stats are a link's counters since New.
type Stats struct {
	UpBytes   int64 // bytes through the uplink (TCP payload: noise, yamux and above)
	DownBytes int64 // bytes through the downlink
	// HandshakeErrors counts inbound connections dropped because the region preamble
	// failed (a peer not using this transport, or an unknown region).
	HandshakeErrors int64
	// Wakeups counts timed waits (latency and downlink pacing); LateMean and LateMax say
	// how much later than scheduled they woke (early counts as 0), and LateOver2ms how
	// many woke more than 2 ms late. On a machine with CPU to spare LateMean stays in the tens of microseconds; when
	// it grows to milliseconds the machine, not the model, is setting the latencies.
	Wakeups     int64
	LateMean    time.Duration
	LateMax     time.Duration
	LateOver2ms int64
}

// Stats reads the link's counters.
func (l *Link) Stats() Stats {
	s := Stats{
		UpBytes:         l.upBytes.Load(),
		DownBytes:       l.downBytes.Load(),
		HandshakeErrors: l.handshakeErrors.Load(),
		Wakeups:         l.wakeups.Load(),
		LateMax:         time.Duration(l.lateMaxNs.Load()),
		LateOver2ms:     l.lateOver2ms.Load(),
	}
	if s.Wakeups > 0 {
		s.LateMean = time.Duration(l.lateSumNs.Load() / s.Wakeups)
	}
	return s
}

// sleepUntil waits until about t (aiming timerSlack early) and records how late it woke.
func (l *Link) sleepUntil(t time.Time) {
	if d := time.Until(t) - timerSlack; d > 0 {
		time.Sleep(d)
	}
	l.recordLate(time.Since(t))
}

func (l *Link) recordLate(late time.Duration) {
	if late < 0 {
		late = 0
	}
	l.wakeups.Add(1)
	l.lateSumNs.Add(int64(late))
	if late > 2*time.Millisecond {
		l.lateOver2ms.Add(1)
	}
	for {
		m := l.lateMaxNs.Load()
		if int64(late) <= m || l.lateMaxNs.CompareAndSwap(m, int64(late)) {
			return
		}
	}
}

// queueUplink gives c a turn on the uplink scheduler, starting the scheduler if it is not
// running.
func (l *Link) queueUplink(c *conn) {
	l.upMu.Lock()
	defer l.upMu.Unlock()
	if !c.inUplinkQueue {
		c.inUplinkQueue = true
		l.upQueue = append(l.upQueue, c)
	}
	if !l.upRunning {
		l.upRunning = true
		go l.scheduleUplink()
	}
}

// dropUplink takes c, which has ended, out of the uplink scheduler's queue. When that
// empties the queue, the scheduler returns at once instead of sleeping out the uplink it
// booked ahead: a link none of whose connections is open keeps no goroutine (in a
// testing/synctest bubble, one that outlived the bubble's last connection would be left
// asleep when the bubble's clock stops).
func (l *Link) dropUplink(c *conn) {
	l.upMu.Lock()
	defer l.upMu.Unlock()
	if !c.inUplinkQueue {
		return
	}
	c.inUplinkQueue = false
	l.upQueue = slices.DeleteFunc(l.upQueue, func(q *conn) bool { return q == c })
	if len(l.upQueue) == 0 && l.upRunning {
		notify(l.upWake)
	}
}

// scheduleUplink books the backlogs of connections on the uplink, one chunk per
// connection in turn (round robin: a bulk flow cannot starve another), keeping the uplink
// booked up to twice uplinkLead ahead, and sleeps while it is booked further than
// uplinkLead. It returns when no connection has backlog, or when the last connection with
// backlog ends (dropUplink).
func (l *Link) scheduleUplink() {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		l.upMu.Lock()
		now := time.Now()
		for len(l.upQueue) > 0 {
			c := l.upQueue[0]
			booked, more := c.bookChunk(now, 2*uplinkLead)
			if !booked && more {
				break // the uplink is booked far enough ahead
			}
			l.upQueue = l.upQueue[1:]
			if more {
				l.upQueue = append(l.upQueue, c)
			} else {
				c.inUplinkQueue = false
			}
		}
		if len(l.upQueue) == 0 {
			l.upQueue = nil
			l.upRunning = false
			select { // a wake-up meant for this run is not the next run's
			case <-l.upWake:
			default:
			}
			l.upMu.Unlock()
			return
		}
		l.upMu.Unlock()
		if wait := time.Until(l.up.freeAt().Add(-uplinkLead)); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-l.upWake:
				timer.Stop()
			}
		}
	}
}
