package link

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	manet "github.com/multiformats/go-multiaddr/net"
)

// conn is one shaped TCP connection: the node's egress through a send buffer, the uplink
// and a delay line, its ingress through the downlink.
type conn struct {
	manet.Conn
	link    *Link
	latency time.Duration // one-way, from this node's region to the remote's
	remote  string        // the remote's region

	// Egress state, under mu.
	mu            sync.Mutex
	pieces        []piece // written and not yet through the uplink; each ≤ one chunk
	queuedBytes   int     // bytes in pieces
	heldBytes     int     // bytes accepted by Write and not yet written to the socket
	waiters       int     // writers blocked on a full send buffer
	space         chan struct{}
	writeDeadline time.Time
	closing       bool
	err           error         // sticky egress failure
	wake          chan struct{} // capacity 1: the uplink goroutine has work

	// The delay line: chunks through the uplink, in due order, under lineMu.
	lineMu   sync.Mutex
	line     []chunk
	lineHead int
	lineEOF  bool
	lineWake chan struct{} // capacity 1

	lastRead time.Time // when the previous socket read returned; Read's goroutine only

	closed     atomic.Bool
	closeOnce  sync.Once
	forceClose *time.Timer
}

// piece is the bytes of one Write (or one chunk's worth of it) and when they were written.
type piece struct {
	b  []byte
	at time.Time
}

// chunk is a run of bytes that left the uplink together and is due at the receiver at due.
type chunk struct {
	due    time.Time
	pieces []piece
	bytes  int
}

// preambleMagic starts the region preamble; a length byte and the region name follow.
const preambleMagic = "/streamsim-link/1\n"

// handshake exchanges regions with the remote end of raw (each end writes its preamble and
// then reads the other's, so neither waits for the other) and returns the shaped conn.
func (l *Link) handshake(ctx context.Context, raw manet.Conn) (*conn, error) {
	deadline := time.Now().Add(handshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := raw.SetDeadline(deadline); err != nil {
		return nil, fmt.Errorf("set handshake deadline: %w", err)
	}
	msg := make([]byte, 0, len(preambleMagic)+1+len(l.shape.Region))
	msg = append(append(append(msg, preambleMagic...), byte(len(l.shape.Region))), l.shape.Region...)
	if _, err := raw.Write(msg); err != nil {
		return nil, fmt.Errorf("send region preamble: %w", err)
	}
	head := make([]byte, len(preambleMagic)+1)
	if _, err := io.ReadFull(raw, head); err != nil {
		return nil, fmt.Errorf("read region preamble: %w", err)
	}
	if string(head[:len(preambleMagic)]) != preambleMagic {
		return nil, fmt.Errorf("remote sent %q, not the region preamble: both ends must use link.Transport", head)
	}
	name := make([]byte, head[len(preambleMagic)])
	if _, err := io.ReadFull(raw, name); err != nil {
		return nil, fmt.Errorf("read remote region: %w", err)
	}
	lat, err := l.regions.Latency(l.shape.Region, string(name))
	if err != nil {
		return nil, fmt.Errorf("remote region: %w", err)
	}
	if err := raw.SetDeadline(time.Time{}); err != nil {
		return nil, fmt.Errorf("clear handshake deadline: %w", err)
	}
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
		Conn:     raw,
		link:     l,
		latency:  lat,
		remote:   string(name),
		space:    make(chan struct{}),
		wake:     make(chan struct{}, 1),
		lineWake: make(chan struct{}, 1),
	}
	go c.uplink()
	go c.deliver()
	return c, nil
}

// Write accepts p into the send buffer, blocking while the buffer is full (until space
// frees, the write deadline passes or the conn fails or closes).
func (c *conn) Write(p []byte) (int, error) {
	chunkBytes := c.link.upChunkBytes
	written := 0
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for written < len(p) {
		if c.closing {
			return written, c.opError("write", net.ErrClosed)
		}
		if c.err != nil {
			return written, c.err
		}
		free := c.link.sendBufferBytes - c.heldBytes
		if free <= 0 {
			if err := c.waitSpace(); err != nil {
				return written, c.opError("write", err)
			}
			now = time.Now()
			continue
		}
		n := min(free, len(p)-written)
		for n > 0 {
			k := min(n, chunkBytes)
			b := make([]byte, k)
			copy(b, p[written:written+k])
			c.pieces = append(c.pieces, piece{b: b, at: now})
			c.queuedBytes += k
			c.heldBytes += k
			written += k
			n -= k
		}
		notify(c.wake)
	}
	return written, nil
}

// waitSpace waits, with mu held on entry and exit, until the send buffer may have room,
// the deadline changes, or the write deadline passes.
func (c *conn) waitSpace() error {
	deadline := c.writeDeadline
	if !deadline.IsZero() && !time.Now().Before(deadline) {
		return os.ErrDeadlineExceeded
	}
	ch := c.space
	c.waiters++
	c.mu.Unlock()
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
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
	c.waiters--
	return err
}

// signalLocked wakes blocked writers; mu held.
func (c *conn) signalLocked() {
	if c.waiters > 0 {
		close(c.space)
		c.space = make(chan struct{})
	}
}

func (c *conn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.writeDeadline = t
	c.signalLocked()
	c.mu.Unlock()
	return nil
}

func (c *conn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// uplink moves the send buffer through the node's uplink, one chunk at a time, and puts
// each chunk on the delay line with its due time.
func (c *conn) uplink() {
	up := c.link.up
	chunkBytes := c.link.upChunkBytes
	for {
		c.mu.Lock()
		for c.queuedBytes == 0 && !c.closing && c.err == nil {
			c.mu.Unlock()
			<-c.wake
			c.mu.Lock()
		}
		if c.err != nil || c.queuedBytes == 0 { // failed, or closing and drained
			c.mu.Unlock()
			c.push(chunk{}, true)
			return
		}
		k, n := 0, 0
		for k < len(c.pieces) && (k == 0 || n+len(c.pieces[k].b) <= chunkBytes) {
			n += len(c.pieces[k].b)
			k++
		}
		taken := c.pieces[:k:k]
		c.pieces = c.pieces[k:]
		if len(c.pieces) == 0 {
			c.pieces = nil
		}
		c.queuedBytes -= n
		c.mu.Unlock()

		departure := taken[k-1].at // all of the chunk was there when its last piece was
		if up != nil {
			departure = up.storeAndForward(departure, n)
		}
		c.link.upBytes.Add(int64(n))
		c.push(chunk{due: departure.Add(c.latency), pieces: taken, bytes: n}, false)
		// Take the next chunk only when the uplink is nearly through this one, so that
		// other connections get their turns in between.
		if ahead := time.Until(departure); ahead > uplinkLead {
			time.Sleep(ahead - uplinkLead)
		}
	}
}

func (c *conn) push(ch chunk, eof bool) {
	c.lineMu.Lock()
	if eof {
		c.lineEOF = true
	} else {
		c.line = append(c.line, ch)
	}
	c.lineMu.Unlock()
	notify(c.lineWake)
}

// deliver writes each chunk to the socket when it is due, and closes the socket when the
// conn is closed and drained or has failed.
func (c *conn) deliver() {
	defer c.Conn.Close()
	var buf []byte
	var due []chunk
	for {
		c.lineMu.Lock()
		for c.lineHead == len(c.line) && !c.lineEOF {
			c.lineMu.Unlock()
			<-c.lineWake
			c.lineMu.Lock()
		}
		if c.lineHead == len(c.line) { // EOF and drained
			c.lineMu.Unlock()
			c.mu.Lock()
			if c.forceClose != nil {
				c.forceClose.Stop()
			}
			c.mu.Unlock()
			return
		}
		first := c.line[c.lineHead]
		c.lineMu.Unlock()

		if time.Until(first.due) > timerSlack {
			c.link.sleepUntil(first.due)
		}
		// Everything due by now (within the slack) goes out in one write.
		now := time.Now().Add(timerSlack)
		c.lineMu.Lock()
		end := c.lineHead + 1
		for end < len(c.line) && !c.line[end].due.After(now) {
			end++
		}
		due = append(due[:0], c.line[c.lineHead:end]...)
		clear(c.line[c.lineHead:end]) // drop the line's references to these bytes
		c.lineHead = end
		if c.lineHead > 64 && c.lineHead*2 > len(c.line) {
			n := copy(c.line, c.line[c.lineHead:])
			clear(c.line[n:])
			c.line = c.line[:n]
			c.lineHead = 0
		}
		c.lineMu.Unlock()

		total, pieces := 0, 0
		for _, ch := range due {
			total += ch.bytes
			pieces += len(ch.pieces)
		}
		var out []byte
		if pieces == 1 {
			out = due[0].pieces[0].b
		} else {
			buf = buf[:0]
			for _, ch := range due {
				for _, p := range ch.pieces {
					buf = append(buf, p.b...)
				}
			}
			out = buf
		}
		_, err := c.Conn.Write(out)
		clear(due)
		c.mu.Lock()
		c.heldBytes -= total
		if err != nil && c.err == nil {
			c.err = err
			c.pieces, c.queuedBytes = nil, 0
		}
		c.signalLocked()
		failed := c.err != nil
		c.mu.Unlock()
		if failed {
			notify(c.wake)
			return
		}
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
	called := time.Now()
	n, err := c.Conn.Read(p)
	returned := time.Now()
	if n > 0 {
		c.link.downBytes.Add(int64(n))
		if down := c.link.down; down != nil {
			// Bytes found waiting arrived after the previous read; counting them from then
			// keeps a late reader from turning a busy downlink into an idle one.
			arrived := returned
			if returned.Sub(called) < blockedRead && c.lastRead.Before(returned) {
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

// Close stops reads and writes at once; what Write had accepted is still delivered, as a
// kernel delivers a closed socket's send buffer, for up to drainTimeout.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.mu.Lock()
		c.closing = true
		c.signalLocked()
		c.forceClose = time.AfterFunc(drainTimeout, func() { c.Conn.Close() })
		c.mu.Unlock()
		notify(c.wake)
		_ = c.Conn.SetReadDeadline(time.Now()) // unblock a pending Read
	})
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
