package memnet

import (
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	ma "github.com/multiformats/go-multiaddr"
)

// pipeBufferBytes is how much one direction of a stream holds before its writer waits for the
// reader: what one direction of a yamux-over-memnet connection held before streams became
// native (its 4 MiB in-memory buffer), so a writer does not wait for its reader per write, and
// a slow reader still pushes back.
const pipeBufferBytes = 4 << 20

// keepBufferBytes is the most a drained direction keeps allocated; larger buffers are
// released, so thousands of idle connections do not each hold their busiest moment.
const keepBufferBytes = 64 << 10

// half is one direction of a connection: bytes written at one end and not yet read at the
// other. Its mutex is held only to copy bytes, never across a wait; waits are on channels,
// which a synctest bubble counts as durably blocked.
type half struct {
	mu         sync.Mutex
	buf        []byte
	off        int           // buf[off:] is unread
	wclosed    bool          // the writing end closed: EOF once drained
	rclosed    bool          // the reading end closed: writes fail
	reset      bool          // either end reset: reads and writes fail at once
	readable   chan struct{} // capacity 1: bytes arrived or the writer closed
	writable   chan struct{} // capacity 1: room freed or the reader closed
	readerWait bool
	writerWait bool
}

func newHalf() *half {
	return &half{readable: make(chan struct{}, 1), writable: make(chan struct{}, 1)}
}

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Conn is one end of an in-memory byte pipe (one stream of a native connection): a net.Conn
// whose reads and writes are copies between buffers, with TCP-like addresses and the
// multiaddrs go-libp2p wants (manet.Conn, so package link can shape it), and a stream's
// half-closes and reset.
type Conn struct {
	in, out       *half
	local, remote *net.TCPAddr
	lma, rma      ma.Multiaddr

	sb *Switchboard
	// closed, rd and wd are read without mu on every read and write; written under it.
	closed   atomic.Bool
	rd, wd   atomic.Int64 // deadlines, Unix ns; 0: none
	mu       sync.Mutex
	done     chan struct{} // closed by Close: wakes this end's blocked reads and writes
	dlChange chan struct{} // closed and replaced when a deadline changes
}

// deadline is the read or write deadline in Unix ns, 0 for none.
func (c *Conn) deadline(read bool) int64 {
	if read {
		return c.rd.Load()
	}
	return c.wd.Load()
}

// newPair returns the two ends of a connection: a's writes are b's reads and the reverse.
func (sb *Switchboard) newPair(aAddr, bAddr *net.TCPAddr, aMA, bMA ma.Multiaddr) (*Conn, *Conn) {
	ab, ba := newHalf(), newHalf()
	sb.live.Add(2)
	a := &Conn{sb: sb, in: ba, out: ab, local: aAddr, remote: bAddr, lma: aMA, rma: bMA, done: make(chan struct{}), dlChange: make(chan struct{})}
	b := &Conn{sb: sb, in: ab, out: ba, local: bAddr, remote: aAddr, lma: bMA, rma: aMA, done: make(chan struct{}), dlChange: make(chan struct{})}
	return a, b
}

// wait blocks until ch fires, the conn closes, or the deadline (read or write) passes or
// changes. It reports the error that ends the operation, or nil to try again. Without a
// deadline it is one channel receive: Close and deadline changes notify this end's channels
// too (a spurious wake-up only makes the caller look again).
func (c *Conn) wait(ch chan struct{}, read bool) error {
	if c.closed.Load() {
		return net.ErrClosed
	}
	if c.deadline(read) == 0 {
		<-ch
		return nil
	}
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return net.ErrClosed
	}
	dl := c.deadline(read)
	changed := c.dlChange
	c.mu.Unlock()
	if dl == 0 {
		<-ch
		return nil
	}
	d := time.Until(time.Unix(0, dl))
	if d <= 0 {
		return os.ErrDeadlineExceeded
	}
	t := time.NewTimer(d)
	defer t.Stop()
	timeout := t.C
	select {
	case <-ch:
		return nil
	case <-c.done:
		return net.ErrClosed
	case <-changed:
		return nil
	case <-timeout:
		return os.ErrDeadlineExceeded
	}
}

// usable is nil, or the error (closed, deadline passed) that ends a read or write before it
// starts: no lock.
func (c *Conn) usable(read bool) error {
	if c.closed.Load() {
		return net.ErrClosed
	}
	if dl := c.deadline(read); dl != 0 && !time.Now().Before(time.Unix(0, dl)) {
		return os.ErrDeadlineExceeded
	}
	return nil
}

// Read copies buffered bytes, waiting for some when there are none; io.EOF once the other
// end closed and everything it wrote was read.
func (c *Conn) Read(p []byte) (int, error) {
	h := c.in
	for {
		if err := c.usable(true); err != nil {
			return 0, c.opError("read", err)
		}
		h.mu.Lock()
		if h.reset {
			h.mu.Unlock()
			return 0, c.opError("read", network.ErrReset)
		}
		if h.rclosed { // CloseRead at this end
			h.mu.Unlock()
			return 0, c.opError("read", net.ErrClosed)
		}
		if n := len(h.buf) - h.off; n > 0 {
			k := copy(p, h.buf[h.off:])
			h.off += k
			if h.off == len(h.buf) {
				if cap(h.buf) > keepBufferBytes {
					h.buf = nil
				} else {
					h.buf = h.buf[:0]
				}
				h.off = 0
			} else {
				notify(h.readable) // another reader may take the rest
			}
			if h.writerWait {
				notify(h.writable)
			}
			h.mu.Unlock()
			return k, nil
		}
		if h.wclosed {
			h.mu.Unlock()
			return 0, io.EOF
		}
		if len(p) == 0 {
			h.mu.Unlock()
			return 0, nil
		}
		h.readerWait = true
		h.mu.Unlock()
		if err := c.wait(h.readable, true); err != nil {
			return 0, c.opError("read", err)
		}
	}
}

// Write copies p into the other end's buffer, waiting while it is full.
func (c *Conn) Write(p []byte) (int, error) {
	h := c.out
	written := 0
	for {
		if err := c.usable(false); err != nil {
			return written, c.opError("write", err)
		}
		h.mu.Lock()
		if h.reset || h.rclosed { // reset, or the reader is gone: what a reset stream gives
			h.mu.Unlock()
			return written, c.opError("write", network.ErrReset)
		}
		if h.wclosed { // CloseWrite at this end
			h.mu.Unlock()
			return written, c.opError("write", net.ErrClosed)
		}
		if h.off > 0 && h.off*2 >= len(h.buf) { // reclaim what was read
			n := copy(h.buf, h.buf[h.off:])
			h.buf, h.off = h.buf[:n], 0
		}
		room := pipeBufferBytes - (len(h.buf) - h.off)
		if room > 0 {
			h.writerWait = false
			k := min(room, len(p)-written)
			h.buf = append(h.buf, p[written:written+k]...)
			written += k
			if h.readerWait {
				h.readerWait = false
				notify(h.readable)
			}
		}
		if written == len(p) {
			h.mu.Unlock()
			return written, nil
		}
		h.writerWait = true
		h.mu.Unlock()
		if err := c.wait(h.writable, false); err != nil {
			return written, c.opError("write", err)
		}
	}
}

// TryWrite copies as much of p into the other end's buffer as it has room for, without
// waiting: package link hands a shaped stream's bytes that are due at once straight to the
// pipe with it, instead of waking its goroutine to write them. It fails as Write does; n < len(p)
// with a nil error means the buffer is full.
func (c *Conn) TryWrite(p []byte) (int, error) {
	if err := c.usable(false); err != nil {
		return 0, c.opError("write", err)
	}
	h := c.out
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.reset || h.rclosed {
		return 0, c.opError("write", network.ErrReset)
	}
	if h.wclosed {
		return 0, c.opError("write", net.ErrClosed)
	}
	if h.off > 0 && h.off*2 >= len(h.buf) { // reclaim what was read
		n := copy(h.buf, h.buf[h.off:])
		h.buf, h.off = h.buf[:n], 0
	}
	k := min(pipeBufferBytes-(len(h.buf)-h.off), len(p))
	if k <= 0 {
		return 0, nil
	}
	h.buf = append(h.buf, p[:k]...)
	if h.readerWait {
		h.readerWait = false
		notify(h.readable)
	}
	return k, nil
}

// Close ends both directions at this end: the other end reads what was written and then EOF,
// and its writes fail; this end's blocked reads and writes return net.ErrClosed.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return nil
	}
	c.closed.Store(true)
	close(c.done)
	c.mu.Unlock()
	c.sb.live.Add(-1)
	c.out.mu.Lock()
	c.out.wclosed = true
	c.out.mu.Unlock()
	notify(c.out.readable)
	c.in.mu.Lock()
	c.in.rclosed = true
	c.in.buf, c.in.off = nil, 0
	c.in.mu.Unlock()
	notify(c.in.writable)
	c.wakeOwn()
	return nil
}

// CloseWrite ends this end's direction: the other end reads what was written, then EOF; this
// end's further writes fail.
func (c *Conn) CloseWrite() error {
	h := c.out
	h.mu.Lock()
	h.wclosed = true
	h.mu.Unlock()
	notify(h.readable)
	notify(h.writable) // a writer blocked on a full buffer gives up
	return nil
}

// CloseRead ends the other end's direction at this end: what it held is dropped, this end's
// reads fail (not EOF), and the other end's writes fail as on a reset stream.
func (c *Conn) CloseRead() error {
	h := c.in
	h.mu.Lock()
	h.rclosed = true
	h.buf, h.off = nil, 0
	h.mu.Unlock()
	notify(h.writable)
	notify(h.readable) // a blocked read returns
	return nil
}

// Reset ends both directions at both ends at once: what either held is dropped, and every
// read and write on either end fails with network.ErrReset. Each end still has to be closed
// (a shaped end closes when its link's goroutine ends).
func (c *Conn) Reset() error {
	for _, h := range []*half{c.in, c.out} {
		h.mu.Lock()
		h.reset = true
		h.buf, h.off = nil, 0
		h.mu.Unlock()
		notify(h.readable)
		notify(h.writable)
	}
	return nil
}

// IsReset says whether either end reset the pipe.
func (c *Conn) IsReset() bool {
	c.in.mu.Lock()
	defer c.in.mu.Unlock()
	return c.in.reset
}

func (c *Conn) setDeadlines(rd, wd *time.Time) {
	c.mu.Lock()
	if rd != nil {
		c.rd.Store(unixNs(*rd))
	}
	if wd != nil {
		c.wd.Store(unixNs(*wd))
	}
	close(c.dlChange)
	c.dlChange = make(chan struct{})
	c.mu.Unlock()
	c.wakeOwn()
}

// unixNs is t in Unix ns, 0 for the zero time (no deadline); a deadline at or before the
// epoch is the epoch's first ns (passed all the same).
func unixNs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(t.UnixNano(), 1)
}

// wakeOwn wakes this end's blocked read and write (a wait without a deadline is on their
// channels only) to look again.
func (c *Conn) wakeOwn() {
	notify(c.in.readable)
	notify(c.out.writable)
}

func (c *Conn) SetDeadline(t time.Time) error      { c.setDeadlines(&t, &t); return nil }
func (c *Conn) SetReadDeadline(t time.Time) error  { c.setDeadlines(&t, nil); return nil }
func (c *Conn) SetWriteDeadline(t time.Time) error { c.setDeadlines(nil, &t); return nil }

func (c *Conn) LocalAddr() net.Addr           { return c.local }
func (c *Conn) RemoteAddr() net.Addr          { return c.remote }
func (c *Conn) LocalMultiaddr() ma.Multiaddr  { return c.lma }
func (c *Conn) RemoteMultiaddr() ma.Multiaddr { return c.rma }
func (c *Conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.local, Addr: c.remote, Err: err}
}
