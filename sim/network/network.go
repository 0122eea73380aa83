package network

import (
	"github.com/libp2p/go-libp2p"

	"github.com/streamsim/streamsim/link"
)

// Network is what a run's hosts are built on. The runner makes one per run and hands it to
// the scenario; every host of the run comes from it.
type Network interface {
	// Host starts a host whose connections go through lk (its rates and per-pair latency;
	// nil: unshaped); extra libp2p options come after streamsim's.
	Host(lk *link.Link, extra ...libp2p.Option) (*Host, error)
	// Clock is the clock the hosts live in.
	Clock() Clock
	// Transport names what carries the hosts' unshaped connections, as summaries do.
	Transport() string
	// Close stops what the network runs once its hosts are closed.
	Close()
}

// TCP is the real clock's network: TCP hosts listening on IP (127.0.0.1 when empty; under
// Testground and Kubernetes the instance's data address), shaped by their links in user
// space below noise and yamux.
type TCP struct {
	IP string
	// BandwidthCounter gives every host go-libp2p's BandwidthCounter (the summary's
	// bandwidth, a cross-check of wire bytes); it costs meter updates on every stream read
	// and write.
	BandwidthCounter bool
}

// Host starts a TCP host on the network's IP.
func (t *TCP) Host(lk *link.Link, extra ...libp2p.Option) (*Host, error) {
	return newHost(t.IP, lk, t.BandwidthCounter, extra)
}

// Clock is the real clock.
func (t *TCP) Clock() Clock { return ClockReal }

// Transport names TCP's transport.
func (t *TCP) Transport() string { return TransportTCP }

// Close does nothing: TCP hosts close themselves.
func (t *TCP) Close() {}

var (
	_ Network = (*TCP)(nil)
	_ Network = (*VirtualNetwork)(nil)
)
