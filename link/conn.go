package link

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	pool "github.com/libp2p/go-buffer-pool"
	manet "github.com/multiformats/go-multiaddr/net"
)

// conn is one shaped TCP connection: egress through a send buffer, the node's uplink and
// a delay line; ingress through the node's downlink.
//
// Write books its bytes on the uplink itself when the connection has no backlog and the
// uplink is booked less than uplinkLead ahead of real time (the common case for gossip:
// one lock, no hand-off); otherwise they wait in the connection's backlog, and the node's
// uplink scheduler (Link.scheduleUplink) books backlogs a chunk at a time, connection by
// connection in turn, as the uplink catches up. Booked bytes go on the line with their
// due time; one goroutine per connection (run) sleeps until the first is due and writes
// everything due to the socket.
type conn struct {
	manet.Conn
	link    *Link
	latency time.Duration // one-way, from this node's region to the remote's

	// Egress state, under mu.
	mu            sync.Mutex
	backlog       []piece // written, not yet scheduled on the uplink; each ≤ one chunk
	backlogBytes  int
	line          []piece // scheduled, with their due times, in due order
	lineHead      int
	heldBytes     int          // accepted by Write and not yet written to the socket
	waiters       atomic.Int32 // writers blocked on a full send buffer; changed under mu
	space         chan struct{}
	writeDeadline atomic.Int64 // Unix ns, 0: none; set without mu (pubsub sets it before every write)
	closing       bool
	writeClosed   bool          // CloseWrite: the socket's write side closes once the line drains
	eofSent       bool          // the socket's write side is closed
	err           error         // sticky egress failure
	wakeAt        time.Time     // when run will next look by itself; zero: only when woken
	wake          chan struct{} // capacity 1
	inUplinkQueue bool          // under link.upMu: in the uplink scheduler's turn queue
	sending       bool          // run is writing a batch it took off the line

	// tw is the socket's write that never waits (package memnet's pipe end), through which
	// Write hands bytes due at once straight to it; nil on a TCP socket.
	tw tryWriter

	rawConn  syscall.RawConn // the socket's, for reads that tell whether they waited; nil if none
	lastRead time.Time       // when the previous socket read returned; Read's goroutine only

	closed     atomic.Bool
	closeOnce  sync.Once
	forceClose *time.Timer
}

// tryWriter is a connection that takes what it has room for without waiting (package
// memnet's Conn).
type tryWriter interface {
	TryWrite(p []byte) (int, error)
}

// hold copies written bytes for the backlog or the line into a pooled buffer, which run puts
// back once it has written them to the socket (a dropped piece is left to the collector).
func hold(b []byte) []byte {
	h := pool.Get(len(b))
	copy(h, b)
	return h
}

// piece is a run of written bytes: in the backlog, at is when they were written; on the
// line, at is when they are due at the receiver.
type piece struct {
	b  []byte
	at time.Time
}

// preambleMagic starts the region preamble; a length byte and the region name follow.
const preambleMagic = "/streamsim-link/1\n"

// handshake exchanges regions with the remote end of raw and returns the shaped conn.
func (l *Link) handshake(ctx context.Context, raw manet.Conn) (*conn, error) {
	lat, err := l.exchangeRegions(ctx, raw)
	if err != nil {
		return nil, err
	}
	return l.wrap(raw, lat), nil
}

// upgrade is handshake for the transport: a pair with no latency on a link with no rate
// limits gets the raw connection back, unshaped, so that such links (in the neighbourhood,
// a real peer's links to its boundary, whose timing the periphery's schedule models) cost
// no goroutine and no copy. Their bytes are not in Stats.
func (l *Link) upgrade(ctx context.Context, raw manet.Conn) (manet.Conn, error) {
	lat, err := l.exchangeRegions(ctx, raw)
	if err != nil {
		return nil, err
	}
	if lat == 0 && l.up == nil && l.down == nil {
		return raw, nil
	}
	return l.wrap(raw, lat), nil
}

// exchangeRegions has each end write its region preamble and then read the other's, so
// neither waits for the other, and returns the one-way latency from this end to the other.
func (l *Link) exchangeRegions(ctx context.Context, raw manet.Conn) (time.Duration, error) {
	deadline := time.Now().Add(handshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := raw.SetDeadline(deadline); err != nil {
		return 0, fmt.Errorf("set handshake deadline: %w", err)
	}
	msg := make([]byte, 0, len(preambleMagic)+1+len(l.shape.Region))
	msg = append(append(append(msg, preambleMagic...), byte(len(l.shape.Region))), l.shape.Region...)
	if _, err := raw.Write(msg); err != nil {
		return 0, fmt.Errorf("send region preamble: %w", err)
	}
	head := make([]byte, len(preambleMagic)+1)
	if _, err := io.ReadFull(raw, head); err != nil {
		return 0, fmt.Errorf("read region preamble: %w", err)
	}
	if string(head[:len(preambleMagic)]) != preambleMagic {
		return 0, fmt.Errorf("remote sent %q, not the region preamble: both ends must use link.Transport", head)
	}
	name := make([]byte, head[len(preambleMagic)])
	if _, err := io.ReadFull(raw, name); err != nil {
		return 0, fmt.Errorf("read remote region: %w", err)
	}
	lat, err := l.regions.Latency(l.shape.Region, string(name))
	if err != nil {
		return 0, fmt.Errorf("remote region: %w", err)
	}
	if err := raw.SetDeadline(time.Time{}); err != nil {
		return 0, fmt.Errorf("clear handshake deadline: %w", err)
	}
	return lat, nil
}

// wrap wraps raw in a conn with one-way latency lat and starts its writer.
func (l *Link) wrap(raw manet.Conn, lat time.Duration) *conn {
	// Small socket buffers keep the downlink's queue where backpressure sees it (see
	// socketBufferBytes); manet keeps the TCPConn's methods reachable.
	if b, ok := raw.(interface {
		SetReadBuffer(int) error
		SetWriteBuffer(int) error
	}); ok {
		_ = b.SetReadBuffer(socketBufferBytes)
		_ = b.SetWriteBuffer(socketBufferBytes)
	}
	c := &conn{
		Conn:    raw,
		link:    l,
		latency: lat,
		space:   make(chan struct{}),
		wake:    make(chan struct{}, 1),
	}
	c.tw, _ = raw.(tryWriter)
	if sc, ok := raw.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			c.rawConn = rc
		}
	}
	go c.run()
	return c
}

// Write accepts p into the send buffer, blocking while the buffer is full (until space
// frees, the write deadline passes or the conn fails or closes).
func (c *conn) Write(p []byte) (int, error) {
	chunkBytes := c.link.upChunkBytes
	written, queue := 0, false
	now := time.Now()
	c.mu.Lock()
	defer func() {
		c.mu.Unlock()
		if queue {
			c.link.queueUplink(c) // after unlocking: the scheduler takes link.upMu, then c.mu
		}
	}()
	for written < len(p) {
		if c.closing || c.writeClosed {
			return written, c.opError("write", net.ErrClosed)
		}
		if c.err != nil {
			return written, c.err
		}
		free := c.link.sendBufferBytes - c.heldBytes
		if free <= 0 {
			if queue { // the backlog must be booked for space to free
				c.mu.Unlock()
				c.link.queueUplink(c)
				c.mu.Lock()
				queue = false
				continue
			}
			if err := c.waitSpace(); err != nil {
				return written, c.opError("write", err)
			}
			now = time.Now()
			continue
		}
		n := min(free, len(p)-written)
		for n > 0 && c.err == nil {
			k := min(n, chunkBytes)
			if c.backlogBytes == 0 {
				if departure, ok := c.link.up.schedule(now, now, k, uplinkLead); ok {
					at := departure.Add(c.latency)
					if c.tw != nil && !c.sending && c.lineHead == len(c.line) && !at.After(now.Add(timerSlack)) {
						// Due at once (run would write it as soon as it woke): hand it to
						// the pipe here, and only what does not fit goes on the line.
						c.writeNowLocked(p[written:written+k], at)
					} else {
						c.appendLineLocked(piece{b: hold(p[written : written+k]), at: at})
						c.heldBytes += k
					}
					written += k
					n -= k
					continue
				}
			}
			b := hold(p[written : written+k])
			c.heldBytes += k
			written += k
			n -= k
			c.backlog = append(c.backlog, piece{b: b, at: now})
			c.backlogBytes += k
			queue = true
		}
	}
	return written, nil
}

// writeNowLocked hands b, booked on the uplink and due by now (within timerSlack, as run
// takes what is due), to the pipe at once; mu held, nothing on the line or in run's hands. What
// the pipe has no room for goes on the line, for run to write when the reader drains the
// pipe; a failure is the conn's, as when run's write fails.
func (c *conn) writeNowLocked(b []byte, at time.Time) {
	n, err := c.tw.TryWrite(b)
	c.link.upBytes.Add(int64(n))
	if err != nil {
		c.failLocked(err)
		notify(c.wake)
		return
	}
	if n < len(b) {
		c.appendLineLocked(piece{b: hold(b[n:]), at: at})
		c.heldBytes += len(b) - n
	}
}

// failLocked makes err the conn's sticky egress failure and drops what it holds; mu held.
func (c *conn) failLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	c.backlog, c.backlogBytes = nil, 0
	clear(c.line)
	c.line, c.lineHead = nil, 0
	c.heldBytes = 0
}

// waitSpace waits, with mu held on entry and exit, until the send buffer may have room,
// the deadline changes, or the write deadline passes.
func (c *conn) waitSpace() error {
	// Counted before the deadline is read: SetWriteDeadline stores first and then signals if
	// it sees a waiter, so a new deadline is either read here or wakes this wait.
	c.waiters.Add(1)
	dl := c.writeDeadline.Load()
	if dl != 0 && !time.Now().Before(time.Unix(0, dl)) {
		c.waiters.Add(-1)
		return os.ErrDeadlineExceeded
	}
	ch := c.space
	c.mu.Unlock()
	var timeout <-chan time.Time
	if dl != 0 {
		t := time.NewTimer(time.Until(time.Unix(0, dl)))
		defer t.Stop()
		timeout = t.C
	}
	var err error
	select {
	case <-ch:
	case <-timeout:
		err = os.ErrDeadlineExceeded
	}
	c.mu.Lock()
	c.waiters.Add(-1)
	return err
}

// signalLocked wakes blocked writers; mu held.
func (c *conn) signalLocked() {
	if c.waiters.Load() > 0 {
		close(c.space)
		c.space = make(chan struct{})
	}
}

func (c *conn) SetWriteDeadline(t time.Time) error {
	ns := int64(0)
	if !t.IsZero() {
		ns = max(t.UnixNano(), 1)
	}
	c.writeDeadline.Store(ns)
	if c.waiters.Load() > 0 { // a blocked writer looks at the new deadline
		c.mu.Lock()
		c.signalLocked()
		c.mu.Unlock()
	}
	return nil
}

func (c *conn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// appendLineLocked puts booked bytes on the line and wakes run if the line was empty.
func (c *conn) appendLineLocked(p piece) {
	c.line = append(c.line, p)
	c.link.upBytes.Add(int64(len(p.b)))
	if c.wakeAt.IsZero() {
		notify(c.wake)
	}
}

// bookChunk books the next chunk of the backlog on the uplink, unless the uplink is booked
// more than lead ahead of now. It reports whether it booked and whether backlog remains.
func (c *conn) bookChunk(now time.Time, lead time.Duration) (booked, more bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.backlogBytes == 0 {
		return false, false
	}
	k, n := 0, 0
	for k < len(c.backlog) && (k == 0 || n+len(c.backlog[k].b) <= c.link.upChunkBytes) {
		n += len(c.backlog[k].b)
		k++
	}
	// All of the chunk was there when its last piece was written.
	departure, ok := c.link.up.schedule(c.backlog[k-1].at, now, n, lead)
	if !ok {
		return false, true
	}
	for i := range k {
		c.appendLineLocked(piece{b: c.backlog[i].b, at: departure.Add(c.latency)})
	}
	clear(c.backlog[:k])
	c.backlog = c.backlog[k:]
	c.backlogBytes -= n
	if c.backlogBytes == 0 {
		c.backlog = nil
	}
	return true, c.backlogBytes > 0
}

// run writes the line to the socket as it falls due; it closes the socket when the conn is
// closed and drained, or has failed.
func (c *conn) run() {
	defer c.Conn.Close()
	defer c.link.dropUplink(c) // before the socket closes: nothing of c outlives it
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var batch []piece
	var buf []byte
	for {
		c.mu.Lock()
		if c.lineHead == len(c.line) {
			if c.writeClosed && !c.eofSent && c.backlogBytes == 0 && c.err == nil && !c.closing {
				c.eofSent = true
				c.mu.Unlock()
				if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
					_ = cw.CloseWrite()
				}
				continue
			}
			if c.err != nil || (c.closing && c.backlogBytes == 0) {
				if c.forceClose != nil {
					c.forceClose.Stop()
				}
				c.mu.Unlock()
				return
			}
			c.wakeAt = time.Time{}
			c.mu.Unlock()
			<-c.wake
			continue
		}
		next := c.line[c.lineHead].at.Add(-timerSlack)
		c.wakeAt = next
		c.mu.Unlock()
		if wait := time.Until(next); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
				c.link.recordLate(time.Since(next.Add(timerSlack)))
			case <-c.wake: // closed, or abandoned: look again
				timer.Stop()
				continue
			}
		}

		// Everything due by now (within the slack) goes out in one write.
		c.mu.Lock()
		limit := time.Now().Add(timerSlack)
		end := c.lineHead
		for end < len(c.line) && !c.line[end].at.After(limit) {
			end++
		}
		batch = append(batch[:0], c.line[c.lineHead:end]...)
		clear(c.line[c.lineHead:end])
		c.lineHead = end
		if c.lineHead == len(c.line) {
			c.line, c.lineHead = c.line[:0], 0
		} else if c.lineHead > 64 && c.lineHead*2 > len(c.line) {
			n := copy(c.line, c.line[c.lineHead:])
			clear(c.line[n:])
			c.line, c.lineHead = c.line[:n], 0
		}
		c.sending = len(batch) > 0
		c.mu.Unlock()
		if len(batch) == 0 {
			continue
		}

		out, total := batch[0].b, 0
		if len(batch) > 1 {
			buf = buf[:0]
			for _, p := range batch {
				buf = append(buf, p.b...)
			}
			out = buf
		}
		for _, p := range batch {
			total += len(p.b)
		}
		_, err := c.Conn.Write(out)
		for _, p := range batch {
			pool.Put(p.b)
		}
		clear(batch)
		c.mu.Lock()
		c.sending = false
		c.heldBytes -= total
		if err != nil {
			c.failLocked(err)
		}
		c.signalLocked()
		c.mu.Unlock()
	}
}

// Read reads at most one chunk of the downlink from the socket and waits for the node's
// downlink to have carried it.
func (c *conn) Read(p []byte) (int, error) {
	if c.closed.Load() {
		return 0, c.opError("read", net.ErrClosed)
	}
	if len(p) > c.link.downChunkBytes {
		p = p[:c.link.downChunkBytes]
	}
	n, waited, err := c.readSocket(p)
	returned := time.Now()
	if n > 0 {
		c.link.downBytes.Add(int64(n))
		if down := c.link.down; down != nil {
			// Bytes found waiting arrived after the previous read; counting them from then
			// keeps a late reader from turning a busy downlink into an idle one.
			arrived := returned
			if !waited && c.lastRead.Before(returned) {
				arrived = c.lastRead
			}
			if through := down.cutThrough(arrived, n); through.Sub(returned) > granularity {
				c.link.sleepUntil(through)
			}
		}
	}
	c.lastRead = returned
	if err != nil && c.closed.Load() {
		err = c.opError("read", net.ErrClosed)
	}
	return n, err
}

// readSocket reads from the socket and says whether it had to wait for bytes to arrive or
// found them there. Through the socket's RawConn the first, non-blocking read attempt
// tells; without one (not a TCP socket), a read that took blockedRead or longer counts as
// having waited.
func (c *conn) readSocket(p []byte) (n int, waited bool, err error) {
	if c.rawConn == nil {
		called := time.Now()
		n, err = c.Conn.Read(p)
		return n, time.Since(called) >= blockedRead, err
	}
	return c.readRaw(p)
}

// readRaw is readSocket through the socket's RawConn (apart, so that the variables its
// callback shares are not moved to the heap on every read of a socket without one).
func (c *conn) readRaw(p []byte) (n int, waited bool, err error) {
	var rerr error
	attempts := 0
	err = c.rawConn.Read(func(fd uintptr) bool {
		attempts++
		for {
			n, rerr = syscall.Read(int(fd), p)
			if rerr != syscall.EINTR {
				break
			}
		}
		return rerr != syscall.EAGAIN
	})
	waited = attempts > 1
	switch {
	case err != nil:
		return 0, waited, c.opError("read", err)
	case rerr != nil:
		return 0, waited, c.opError("read", os.NewSyscallError("read", rerr))
	case n == 0 && len(p) > 0:
		return 0, waited, io.EOF
	}
	return n, waited, nil
}

// Close stops reads and writes at once; what Write had accepted is still delivered, as a
// kernel delivers a closed socket's send buffer, for up to drainTimeout.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.mu.Lock()
		c.closing = true
		c.signalLocked()
		c.forceClose = time.AfterFunc(drainTimeout, c.abandon)
		c.mu.Unlock()
		notify(c.wake)
		_ = c.Conn.SetReadDeadline(time.Now()) // unblock a pending Read
	})
	return nil
}

// abandon ends a closed connection that has not delivered what it accepted within
// drainTimeout: its backlog and the bytes booked on its line are dropped, as a kernel drops
// a socket's send buffer when it gives up on it, so the uplink scheduler books nothing
// more for it; run ends, and the socket closes (which also ends a write blocked on it).
func (c *conn) abandon() {
	c.mu.Lock()
	if c.err == nil {
		c.err = c.opError("write", net.ErrClosed)
	}
	dropped := c.backlogBytes
	for _, p := range c.line[c.lineHead:] {
		dropped += len(p.b)
	}
	c.heldBytes -= dropped
	c.backlog, c.backlogBytes = nil, 0
	clear(c.line)
	c.line, c.lineHead = nil, 0
	c.mu.Unlock()
	notify(c.wake)
	c.link.dropUplink(c)
	c.Conn.Close()
}

// CloseWrite half-closes the connection: further writes fail, and once everything Write
// accepted has reached the socket, the socket's write side closes (when it has a
// CloseWrite), so the other end reads it all and then EOF. Reads go on. For transports that
// carry streams natively (package memnet), whose streams half-close; Close still ends the
// connection.
func (c *conn) CloseWrite() error {
	c.mu.Lock()
	if c.writeClosed || c.closing {
		c.mu.Unlock()
		return nil
	}
	c.writeClosed = true
	c.signalLocked()
	c.mu.Unlock()
	notify(c.wake)
	return nil
}

// go-libp2p's TCP transport sets keepalive and linger on the conns it accepts; they
// belong to the socket.

func (c *conn) SetKeepAlive(on bool) error {
	if k, ok := c.Conn.(interface{ SetKeepAlive(bool) error }); ok {
		return k.SetKeepAlive(on)
	}
	return nil
}

func (c *conn) SetKeepAlivePeriod(d time.Duration) error {
	if k, ok := c.Conn.(interface{ SetKeepAlivePeriod(time.Duration) error }); ok {
		return k.SetKeepAlivePeriod(d)
	}
	return nil
}

func (c *conn) SetLinger(sec int) error {
	if k, ok := c.Conn.(interface{ SetLinger(int) error }); ok {
		return k.SetLinger(sec)
	}
	return nil
}

func (c *conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// notify wakes a goroutine waiting on a capacity-1 channel, without blocking.
func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
