package network

import (
	"crypto/rand"
	"fmt"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/connmgr"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/metrics"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"

	"github.com/streamsim/streamsim/link"
)

// Host is a libp2p host as streamsim runs it (TCP, noise, yamux, null resource and connection
// managers, a BandwidthCounter), listening before the address exchange; a Node runs GossipSub
// on it once the topology is known.
type Host struct {
	host.Host
	bw      *metrics.BandwidthCounter
	link    *link.Link // nil: unshaped
	virtual bool       // on a VirtualNetwork (virtual.go)
	// transport names a virtual host's transport (TransportSimnet, TransportMem).
	transport string
}

// Transport names what carries the host's connections, for summaries.
func (h *Host) Transport() string {
	switch {
	case h.virtual:
		return h.transport
	case h.link != nil:
		return TransportLink
	}
	return TransportTCP
}

// NewHost starts a host listening on ip (TCP, port chosen by the system). extra options come
// after streamsim's.
func NewHost(ip string, extra ...libp2p.Option) (*Host, error) { return newHost(ip, nil, true, extra) }

// newHost builds every streamsim host; bandwidth adds go-libp2p's BandwidthCounter, which
// costs a few meter updates per stream read and write and fills only Node.Bandwidth.
func newHost(ip string, lk *link.Link, bandwidth bool, extra []libp2p.Option) (*Host, error) {
	if ip == "" {
		ip = "127.0.0.1"
	}
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("node key: %w", err)
	}
	opts := append(baseOptions(key),
		libp2p.ListenAddrStrings(fmt.Sprintf("/ip4/%s/tcp/0", ip)),
		libp2p.Security(noise.ID, noise.New),
		libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
	)
	var bw *metrics.BandwidthCounter
	if bandwidth {
		bw = metrics.NewBandwidthCounter()
		opts = append(opts, libp2p.BandwidthReporter(bw))
	}
	if lk != nil {
		opts = append(opts, lk.Transport())
	} else {
		opts = append(opts, libp2p.Transport(tcp.NewTCPTransport))
	}
	h, err := libp2p.New(append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("libp2p host: %w", err)
	}
	return &Host{Host: h, bw: bw, link: lk}, nil
}

// baseOptions are what every streamsim host has, on any transport and clock: its identity,
// null resource and connection managers, no relay, metrics or ping. Keep every simulated peer:
// the null connection manager never trims, and it does not support decaying tags, which spares
// pubsub's tag tracer a failed (fmt.Errorf) tag bump per delivered message once the decayer's
// queue is full.
func baseOptions(key crypto.PrivKey) []libp2p.Option {
	return []libp2p.Option{
		libp2p.Identity(key),
		libp2p.ResourceManager(&network.NullResourceManager{}),
		libp2p.ConnectionManager(&connmgr.NullConnMgr{}),
		libp2p.DisableRelay(),
		libp2p.DisableMetrics(),
		libp2p.Ping(false),
	}
}

// AddrInfo is the host's id and listen addresses.
func (h *Host) AddrInfo() peer.AddrInfo { return peer.AddrInfo{ID: h.ID(), Addrs: h.Addrs()} }

// Virtual says whether the host is on a virtual-clock network (in a synctest bubble).
func (h *Host) Virtual() bool { return h.virtual }

// Link is the host's shaped link (nil: unshaped).
func (h *Host) Link() *link.Link { return h.link }

// BandwidthCounter is go-libp2p's BandwidthCounter of the host (nil when it has none).
func (h *Host) BandwidthCounter() *metrics.BandwidthCounter { return h.bw }
