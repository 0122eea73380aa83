package link

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/transport"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	"github.com/libp2p/go-libp2p/p2p/transport/tcpreuse"
	manet "github.com/multiformats/go-multiaddr/net"
)

// Transport is the libp2p option that gives a host this link: go-libp2p's own TCP
// transport with an upgrader that shapes every raw connection before noise and yamux run
// on it. Use it instead of libp2p.Transport(tcp.NewTCPTransport). The host fails to start
// if another host already uses this Link, or with libp2p.ShareTCPListener (its protocol
// sniffing would read the region preamble).
func (l *Link) Transport() libp2p.Option {
	return libp2p.Transport(l.newTransport)
}

func (l *Link) newTransport(up transport.Upgrader, rcmgr network.ResourceManager, sharedTCP *tcpreuse.ConnMgr) (*tcp.TcpTransport, error) {
	if sharedTCP != nil {
		return nil, errors.New("link: libp2p.ShareTCPListener is not supported: its protocol sniffing would read the region preamble")
	}
	if !l.attached.CompareAndSwap(false, true) {
		return nil, errors.New("link: this Link already shapes another host; make one Link per host")
	}
	return tcp.NewTCPTransport(&shapingUpgrader{Upgrader: up, link: l}, rcmgr, nil)
}

// shapingUpgrader shapes raw connections and hands them to libp2p's upgrader: dialed ones
// in Upgrade, accepted ones in the listener it wraps in GateMaListener.
type shapingUpgrader struct {
	transport.Upgrader
	link *Link
}

func (u *shapingUpgrader) GateMaListener(l manet.Listener) transport.GatedMaListener {
	return u.Upgrader.GateMaListener(u.link.listen(l))
}

func (u *shapingUpgrader) UpgradeListener(t transport.Transport, l manet.Listener) transport.Listener {
	return u.Upgrader.UpgradeGatedMaListener(t, u.GateMaListener(l))
}

func (u *shapingUpgrader) Upgrade(ctx context.Context, t transport.Transport, raw manet.Conn, dir network.Direction, p peer.ID, scope network.ConnManagementScope) (transport.CapableConn, error) {
	c, err := u.link.upgrade(ctx, raw)
	if err != nil {
		raw.Close()
		return nil, fmt.Errorf("link handshake with %s at %s: %w", p, raw.RemoteMultiaddr(), err)
	}
	return u.Upgrader.Upgrade(ctx, t, c, dir, p, scope)
}

// listener accepts raw connections and returns them shaped. Each handshake runs in its own
// goroutine, so a silent dialer delays no one else.
type listener struct {
	manet.Listener
	link  *Link
	conns chan manet.Conn
	done  chan struct{}
	err   error // why accepting stopped; set before done closes
	once  sync.Once
}

func (l *Link) listen(inner manet.Listener) manet.Listener {
	ln := &listener{Listener: inner, link: l, conns: make(chan manet.Conn), done: make(chan struct{})}
	go ln.acceptLoop()
	return ln
}

func (ln *listener) acceptLoop() {
	for {
		raw, err := ln.Listener.Accept()
		if err != nil {
			ln.stop(err)
			return
		}
		go func() {
			c, err := ln.link.upgrade(context.Background(), raw)
			if err != nil {
				ln.link.handshakeErrors.Add(1)
				raw.Close()
				return
			}
			select {
			case ln.conns <- c:
			case <-ln.done:
				c.Close()
			}
		}()
	}
}

func (ln *listener) stop(err error) {
	ln.once.Do(func() {
		ln.err = err
		close(ln.done)
	})
}

func (ln *listener) Accept() (manet.Conn, error) {
	select {
	case c := <-ln.conns:
		return c, nil
	case <-ln.done:
		return nil, ln.err
	}
}

func (ln *listener) Close() error {
	err := ln.Listener.Close()
	ln.stop(net.ErrClosed)
	return err
}
