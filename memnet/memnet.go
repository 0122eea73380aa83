// Package memnet is an in-process stream transport for go-libp2p: hosts of one run dial each
// other through a Switchboard, and a connection is a pair of in-memory byte buffers, upgraded
// by the host's own upgrader (noise and yamux, as on TCP), so what sits above the transport
// (streams, their bytes, the meters) means what it means on TCP.
//
// It exists for the virtual clock (testing/synctest): every wait is on a channel, durable in a
// bubble, and an unshaped connection arms no timer, so a bubble of hundreds of hosts steps its
// clock only when the model says time passes. Shaping (a node's uplink and downlink rates and
// the one-way latency between two regions) is package link's, applied to each end of a
// connection in user space; with a synctest bubble its sleeps and timers are simulated time.
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
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/transport"
	ma "github.com/multiformats/go-multiaddr"
	mafmt "github.com/multiformats/go-multiaddr-fmt"
	manet "github.com/multiformats/go-multiaddr/net"
)

// Shaper shapes one end of a new connection (package link's Link.Wrap): remote is the region
// of the other end's shaper ("" when it has none). It returns raw itself when there is
// nothing to shape.
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

// Drain waits, up to max, until every connection end made on the switchboard is closed: a
// shaped connection delivers what it accepted after its host closed it, as a kernel does, and
// a synctest bubble must not end before that (its goroutines would outlive it). It reports
// how many ends are still open. Under a bubble the wait is simulated time.
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
	up     transport.Upgrader
	rcmgr  network.ResourceManager
	shaper Shaper // nil: unshaped

	mu    sync.Mutex
	addrs []netip.AddrPort // where this host listens: dials come from the first one's IP
}

var dialMatcher = mafmt.And(mafmt.IP, mafmt.Base(ma.P_TCP))

// Option is the libp2p option that gives a host this transport on sb, shaped by shaper (nil:
// unshaped). Use it with libp2p.NoTransports and /ip4/<ip>/tcp/<port> listen addresses
// (port 0 picks one).
func Option(sb *Switchboard, shaper Shaper) libp2p.Option {
	return libp2p.Transport(func(up transport.Upgrader, rcmgr network.ResourceManager) (*Transport, error) {
		return New(sb, up, rcmgr, shaper), nil
	})
}

// New is a transport on sb; go-libp2p's constructor injection gives up and rcmgr.
func New(sb *Switchboard, up transport.Upgrader, rcmgr network.ResourceManager, shaper Shaper) *Transport {
	if rcmgr == nil {
		rcmgr = &network.NullResourceManager{}
	}
	return &Transport{sb: sb, up: up, rcmgr: rcmgr, shaper: shaper}
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
	l := &listener{t: t, sb: sb, at: ap, ma: toMA(ap), conns: make(chan manet.Conn), done: make(chan struct{})}
	sb.listeners[ap] = l
	sb.mu.Unlock()
	t.mu.Lock()
	t.addrs = append(t.addrs, ap)
	t.mu.Unlock()
	return t.up.UpgradeGatedMaListener(t, t.up.GateMaListener(l)), nil
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

// Dial connects to the host listening at raddr and upgrades the connection (security, muxer).
func (t *Transport) Dial(ctx context.Context, raddr ma.Multiaddr, p peer.ID) (transport.CapableConn, error) {
	scope, err := t.rcmgr.OpenConnection(network.DirOutbound, true, raddr)
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
	if err := scope.SetPeer(p); err != nil {
		return nil, err
	}
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
	mine, theirs := sb.newPair(net.TCPAddrFromAddrPort(local), net.TCPAddrFromAddrPort(ap), toMA(local), l.ma)
	var raw manet.Conn = mine
	if t.shaper != nil {
		if raw, err = t.shaper.Wrap(mine, regionOf(l.t.shaper)); err != nil {
			mine.Close()
			return nil, err
		}
	}
	var remote manet.Conn = theirs
	if s := l.t.shaper; s != nil {
		if remote, err = s.Wrap(theirs, regionOf(t.shaper)); err != nil {
			raw.Close()
			theirs.Close()
			return nil, err
		}
	}
	select {
	case l.conns <- remote:
	case <-l.done:
		raw.Close()
		remote.Close()
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(ap), Err: errRefused}
	case <-ctx.Done():
		raw.Close()
		remote.Close()
		return nil, ctx.Err()
	}
	dir := network.DirOutbound
	if ok, isClient, _ := network.GetSimultaneousConnect(ctx); ok && !isClient {
		dir = network.DirInbound
	}
	return t.up.Upgrade(ctx, t, raw, dir, p, scope)
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

// listener is a host's listen address on the switchboard (a manet.Listener the upgrader wraps).
type listener struct {
	t     *Transport
	sb    *Switchboard
	at    netip.AddrPort
	ma    ma.Multiaddr
	conns chan manet.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *listener) Accept() (manet.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
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

var _ transport.Transport = (*Transport)(nil)
