package memnet

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/transport"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// connShared is what the two ends of one connection share: whether it is closed, and the
// streams open on it (either end's), which closing resets.
type connShared struct {
	mu      sync.Mutex
	closed  bool
	streams map[*stream]struct{}
}

// conn is one end of a native connection: a transport.CapableConn whose streams are pairs of
// in-memory pipes (Conn), each end shaped by its host's Shaper, and whose peers are known
// from the switchboard.
type conn struct {
	t, remoteT    *Transport
	rid           peer.ID // remoteT.id, kept here: pubsub asks for it on every frame it writes
	shared        *connShared
	peer          *conn // the other end
	local, remote *net.TCPAddr
	lma, rma      ma.Multiaddr
	scope         network.ConnManagementScope

	mu       sync.Mutex
	accepted []*stream     // opened by the other end, not yet accepted
	arrived  chan struct{} // capacity 1: a stream arrived or the connection closed
	done     chan struct{} // closed when the connection closes
	doneOnce sync.Once
}

// newConnPair is a connection between dialer d (at local) and listener l (at remote): the
// dialer's end and the listener's.
func newConnPair(d, l *Transport, local, remote netip.AddrPort, dScope, lScope network.ConnManagementScope) (*conn, *conn) {
	shared := &connShared{streams: map[*stream]struct{}{}}
	la, ra := net.TCPAddrFromAddrPort(local), net.TCPAddrFromAddrPort(remote)
	lma, rma := toMA(local), toMA(remote)
	a := &conn{t: d, remoteT: l, shared: shared, local: la, remote: ra, lma: lma, rma: rma, scope: dScope, arrived: make(chan struct{}, 1), done: make(chan struct{})}
	b := &conn{t: l, remoteT: d, shared: shared, local: ra, remote: la, lma: rma, rma: lma, scope: lScope, arrived: make(chan struct{}, 1), done: make(chan struct{})}
	a.peer, b.peer = b, a
	a.rid, b.rid = l.id, d.id
	return a, b
}

// errConnClosed is what opening or accepting a stream on a closed connection gives.
var errConnClosed = errors.New("memnet: connection closed")

// OpenStream opens a stream; the other end's AcceptStream returns its end.
func (c *conn) OpenStream(ctx context.Context) (network.MuxedStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sh := c.shared
	sh.mu.Lock()
	if sh.closed {
		sh.mu.Unlock()
		return nil, errConnClosed
	}
	mine, theirs, err := c.newStreamPair()
	if err != nil {
		sh.mu.Unlock()
		return nil, err
	}
	sh.streams[mine] = struct{}{}
	sh.streams[theirs] = struct{}{}
	sh.mu.Unlock()
	p := c.peer
	p.mu.Lock()
	p.accepted = append(p.accepted, theirs)
	p.mu.Unlock()
	notify(p.arrived)
	return mine, nil
}

// newStreamPair makes both ends of a stream opened at c, each shaped by its host's Shaper.
func (c *conn) newStreamPair() (mine, theirs *stream, err error) {
	a, b := c.t.sb.newPair(c.local, c.remote, c.lma, c.rma)
	var aio, bio manet.Conn = a, b
	if s := c.t.shaper; s != nil {
		if aio, err = s.Wrap(a, regionOf(c.remoteT.shaper)); err != nil {
			a.Close()
			b.Close()
			return nil, nil, err
		}
	}
	if s := c.remoteT.shaper; s != nil {
		if bio, err = s.Wrap(b, regionOf(c.t.shaper)); err != nil {
			aio.Close()
			b.Close()
			return nil, nil, err
		}
	}
	return &stream{c: c, raw: a, io: aio}, &stream{c: c.peer, raw: b, io: bio}, nil
}

// AcceptStream returns the next stream the other end opened.
func (c *conn) AcceptStream() (network.MuxedStream, error) {
	for {
		c.mu.Lock()
		if len(c.accepted) > 0 {
			s := c.accepted[0]
			c.accepted[0] = nil
			c.accepted = c.accepted[1:]
			if len(c.accepted) == 0 {
				c.accepted = nil
			}
			c.mu.Unlock()
			return s, nil
		}
		c.mu.Unlock()
		select {
		case <-c.arrived:
		case <-c.done:
			return nil, errConnClosed
		}
	}
}

// Close closes the connection at both ends, as a TCP connection closed under yamux ends the
// session at both: every stream is reset, and both ends' AcceptStream fail.
func (c *conn) Close() error {
	sh := c.shared
	sh.mu.Lock()
	if sh.closed {
		sh.mu.Unlock()
		return nil
	}
	sh.closed = true
	streams := sh.streams
	sh.streams = nil
	sh.mu.Unlock()
	for s := range streams {
		s.raw.Reset()
		s.closeEnd()
	}
	for _, e := range []*conn{c, c.peer} {
		e.doneOnce.Do(func() {
			close(e.done)
			e.mu.Lock()
			e.accepted = nil
			e.mu.Unlock()
			e.scope.Done()
		})
	}
	return nil
}

// CloseWithError is Close: the code has no one to tell that Close does not tell.
func (c *conn) CloseWithError(network.ConnErrorCode) error { return c.Close() }

// IsClosed says whether either end closed the connection.
func (c *conn) IsClosed() bool {
	c.shared.mu.Lock()
	defer c.shared.mu.Unlock()
	return c.shared.closed
}

// As finds nothing: there is no wrapped connection.
func (c *conn) As(any) bool { return false }

func (c *conn) LocalPeer() peer.ID             { return c.t.id }
func (c *conn) RemotePeer() peer.ID            { return c.rid }
func (c *conn) RemotePublicKey() crypto.PubKey { return c.remoteT.pub }

// ConnState names the transport; there is no security protocol or muxer to name.
func (c *conn) ConnState() network.ConnectionState {
	return network.ConnectionState{Transport: "memnet"}
}

func (c *conn) LocalMultiaddr() ma.Multiaddr   { return c.lma }
func (c *conn) RemoteMultiaddr() ma.Multiaddr  { return c.rma }
func (c *conn) Scope() network.ConnScope       { return c.scope }
func (c *conn) Transport() transport.Transport { return c.t }
func (c *conn) forget(s *stream) {
	c.shared.mu.Lock()
	delete(c.shared.streams, s)
	c.shared.mu.Unlock()
}

var _ transport.CapableConn = (*conn)(nil)
