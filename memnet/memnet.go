// Package memnet is an in-process go-libp2p transport for the virtual clock: hosts of one run
// dial each other through a Switchboard, and a connection is multiplexed and authenticated by
// construction, as a QUIC connection is (a native transport.CapableConn): each stream is a
// pair of in-memory byte pipes, and each end knows the other's peer ID and public key from the
// switchboard. No security handshake and no stream muxer run: nothing a figure needs happens
// there (streamsim meters wire bytes at its stream wrapper, above the transport), and the
// encryption and framing they cost was a third of a virtual run's CPU.
//
// # What is modelled
//
//   - Streams: open (the other end's AcceptStream gets it at once, as yamux's lazy SYN does),
//     half-close (CloseWrite: the other end reads what was written, then EOF), CloseRead,
//     Reset (both ends' reads and writes fail with network.ErrReset), deadlines; closing a
//     connection at either end resets its streams at both.
//   - Backpressure: each direction of a stream holds at most pipeBufferBytes (4 MiB, what one
//     direction of a connection held when yamux ran over memnet); a writer whose reader does
//     not keep up waits, on a channel, until the reader drains it: a full stream pushes back on
//     its writer as yamux's flow-control window does. On a shaped stream, package link's send
//     buffer (4 MiB) comes first, then the pipe, so a slow downlink fills both before the
//     writer waits, as it filled the send buffer and the connection's pipe before.
//   - Shaping: package link's Wrap on each end of each stream (Shaper): the node's uplink and
//     downlink rates, shared by all its streams, and the one-way latency between the two
//     ends' regions, in simulated time under a synctest bubble. Shaped bytes are stream bytes
//     (what the stream wrapper meters as wire bytes); noise's and yamux's few bytes of framing
//     per frame, which the shaped link carried before, are gone, and a connection is up at
//     once (no handshake round trips). The uplink is shared stream by stream in turn, where
//     it was connection by connection: a gossipsub connection carries one stream each way.
//
// Every wait is on a channel, durable in a bubble, and an unshaped stream arms no timer, so a
// bubble of hundreds of hosts steps its clock only when the model says time passes.
//
// Addresses are /ip4/<ip>/tcp/<port> multiaddrs claimed by this transport only: a host built
// with libp2p.NoTransports and this transport never opens a socket. Every host of a run must
// use the same Switchboard.
package memnet

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/sec"
	"github.com/libp2p/go-libp2p/core/transport"
	ma "github.com/multiformats/go-multiaddr"
	mafmt "github.com/multiformats/go-multiaddr-fmt"
	manet "github.com/multiformats/go-multiaddr/net"
)

// Shaper shapes one end of a new stream (package link's Link.Wrap): remote is the region of
// the other end's shaper ("" when it has none). It returns raw itself when there is nothing
// to shape; what it returns must offer CloseWrite (a shaped stream's half-close goes out
// after the bytes it accepted).
type Shaper interface {
	Wrap(raw manet.Conn, remoteRegion string) (manet.Conn, error)
	Region() string
}

// Switchboard maps listen addresses to the listeners of one run's hosts.
type Switchboard struct {
	live      atomic.Int64 // connection ends not yet closed
	mu        sync.Mutex
	listeners map[netip.AddrPort]*listener
	nextPort  map[netip.Addr]uint16 // dialers' ephemeral ports, per IP
}

// NewSwitchboard is an empty switchboard.
func NewSwitchboard() *Switchboard {
	return &Switchboard{listeners: map[netip.AddrPort]*listener{}, nextPort: map[netip.Addr]uint16{}}
}

// Drain waits, up to max, until every stream end made on the switchboard is closed: a shaped
// stream delivers what it accepted after it was closed, as a kernel does, and a synctest
// bubble must not end before that (its goroutines would outlive it). It reports how many
// ends are still open. Under a bubble the wait is simulated time.
func (sb *Switchboard) Drain(max time.Duration) int64 {
	deadline := time.Now().Add(max)
	for sb.live.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return sb.live.Load()
}

// Transport is one host's go-libp2p transport on a switchboard.
type Transport struct {
	sb     *Switchboard
	id     peer.ID
	pub    crypto.PubKey
	rcmgr  network.ResourceManager
	shaper Shaper // nil: unshaped

	mu    sync.Mutex
	addrs []netip.AddrPort // where this host listens: dials come from the first one's IP
}

var dialMatcher = mafmt.And(mafmt.IP, mafmt.Base(ma.P_TCP))

// Option is the libp2p option that gives a host this transport on sb, shaped by shaper (nil:
// unshaped). Use it with libp2p.NoTransports and /ip4/<ip>/tcp/<port> listen addresses
// (port 0 picks one); the host's security and muxer options do not apply to its connections.
func Option(sb *Switchboard, shaper Shaper) libp2p.Option {
	return libp2p.Transport(func(key crypto.PrivKey, rcmgr network.ResourceManager) (*Transport, error) {
		return New(sb, key, rcmgr, shaper)
	})
}

// New is the transport of the host whose identity is key, on sb; go-libp2p's constructor
// injection gives key and rcmgr.
func New(sb *Switchboard, key crypto.PrivKey, rcmgr network.ResourceManager, shaper Shaper) (*Transport, error) {
	if rcmgr == nil {
		rcmgr = &network.NullResourceManager{}
	}
	id, err := peer.IDFromPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("memnet: host key: %w", err)
	}
	return &Transport{sb: sb, id: id, pub: key.GetPublic(), rcmgr: rcmgr, shaper: shaper}, nil
}

func (t *Transport) String() string { return "memnet" }

// CanDial accepts /ip4|ip6/<ip>/tcp/<port>.
func (t *Transport) CanDial(addr ma.Multiaddr) bool { return dialMatcher.Matches(addr) }

// Protocols is TCP's: this transport claims tcp multiaddrs.
func (t *Transport) Protocols() []int { return []int{ma.P_TCP} }

// Proxy is false.
func (t *Transport) Proxy() bool { return false }

func addrPort(a ma.Multiaddr) (netip.AddrPort, error) {
	na, err := manet.ToNetAddr(a)
	if err != nil {
		return netip.AddrPort{}, err
	}
	tcp, ok := na.(*net.TCPAddr)
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("memnet: %s is not a tcp address", a)
	}
	ap := tcp.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}

func toMA(ap netip.AddrPort) ma.Multiaddr {
	m, err := manet.FromNetAddr(net.TCPAddrFromAddrPort(ap))
	if err != nil {
		panic(err) // every AddrPort is a valid tcp multiaddr
	}
	return m
}

// Listen claims laddr on the switchboard (port 0: the next free port on its IP).
func (t *Transport) Listen(laddr ma.Multiaddr) (transport.Listener, error) {
	ap, err := addrPort(laddr)
	if err != nil {
		return nil, err
	}
	if !ap.Addr().IsValid() || ap.Addr().IsUnspecified() {
		return nil, fmt.Errorf("memnet: listen address %s: give a concrete IP (an unspecified one has no place on the switchboard)", laddr)
	}
	sb := t.sb
	sb.mu.Lock()
	if ap.Port() == 0 {
		ap = sb.freePortLocked(ap.Addr())
	}
	if _, taken := sb.listeners[ap]; taken {
		sb.mu.Unlock()
		return nil, fmt.Errorf("memnet: listen address %s: already in use", laddr)
	}
	l := &listener{t: t, sb: sb, at: ap, ma: toMA(ap), conns: make(chan *conn), done: make(chan struct{})}
	sb.listeners[ap] = l
	sb.mu.Unlock()
	t.mu.Lock()
	t.addrs = append(t.addrs, ap)
	t.mu.Unlock()
	return l, nil
}

// freePortLocked is a port on ip no listener or dialer of the switchboard uses.
func (sb *Switchboard) freePortLocked(ip netip.Addr) netip.AddrPort {
	for {
		p := sb.nextPort[ip]
		if p < 10000 {
			p = 10000
		}
		sb.nextPort[ip] = p + 1
		ap := netip.AddrPortFrom(ip, p)
		if _, taken := sb.listeners[ap]; !taken {
			return ap
		}
	}
}

// Dial connects to the host listening at raddr, which must be peer p (when p is not empty).
func (t *Transport) Dial(ctx context.Context, raddr ma.Multiaddr, p peer.ID) (transport.CapableConn, error) {
	scope, err := t.rcmgr.OpenConnection(network.DirOutbound, false, raddr)
	if err != nil {
		return nil, err
	}
	c, err := t.dial(ctx, raddr, p, scope)
	if err != nil {
		scope.Done()
		return nil, err
	}
	return c, nil
}

func (t *Transport) dial(ctx context.Context, raddr ma.Multiaddr, p peer.ID, scope network.ConnManagementScope) (transport.CapableConn, error) {
	ap, err := addrPort(raddr)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	from := netip.IPv4Unspecified()
	if len(t.addrs) > 0 {
		from = t.addrs[0].Addr()
	}
	t.mu.Unlock()
	sb := t.sb
	sb.mu.Lock()
	l := sb.listeners[ap]
	local := sb.freePortLocked(from)
	sb.mu.Unlock()
	if l == nil {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(ap), Err: errRefused}
	}
	lt := l.t
	if p != "" && p != lt.id {
		return nil, sec.ErrPeerIDMismatch{Expected: p, Actual: lt.id}
	}
	if err := scope.SetPeer(lt.id); err != nil {
		return nil, err
	}
	lma := toMA(local)
	inScope, err := lt.rcmgr.OpenConnection(network.DirInbound, false, lma)
	if err != nil {
		return nil, err
	}
	if err := inScope.SetPeer(t.id); err != nil {
		inScope.Done()
		return nil, err
	}
	mine, theirs := newConnPair(t, lt, local, ap, scope, inScope)
	select {
	case l.conns <- theirs:
		return mine, nil
	case <-l.done:
	case <-ctx.Done():
		mine.Close()
		return nil, ctx.Err()
	}
	mine.Close()
	return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(ap), Err: errRefused}
}

func regionOf(s Shaper) string {
	if s == nil {
		return ""
	}
	return s.Region()
}

type refusedError struct{}

func (refusedError) Error() string { return "connection refused" }

var errRefused error = refusedError{}

// listener is a host's listen address on the switchboard.
type listener struct {
	t     *Transport
	sb    *Switchboard
	at    netip.AddrPort
	ma    ma.Multiaddr
	conns chan *conn
	done  chan struct{}
	once  sync.Once
}

func (l *listener) Accept() (transport.CapableConn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, transport.ErrListenerClosed
	}
}

func (l *listener) Close() error {
	l.once.Do(func() {
		l.sb.mu.Lock()
		if l.sb.listeners[l.at] == l {
			delete(l.sb.listeners, l.at)
		}
		l.sb.mu.Unlock()
		close(l.done)
	})
	return nil
}

func (l *listener) Addr() net.Addr          { return net.TCPAddrFromAddrPort(l.at) }
func (l *listener) Multiaddr() ma.Multiaddr { return l.ma }

var (
	_ transport.Transport = (*Transport)(nil)
	_ transport.Listener  = (*listener)(nil)
)
