package network

import (
	"crypto/rand"
	"fmt"
	"net"
	"net/netip"
	"strings"
	gosync "sync"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	libp2pquic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/x/simlibp2p"
	"github.com/marcopolo/simnet"

	"github.com/streamsim/streamsim/link"
	"github.com/streamsim/streamsim/memnet"
)

// Transports a run's hosts use, as summaries name them.
const (
	TransportTCP    = "tcp+noise+yamux"        // real clock, unshaped
	TransportLink   = "tcp+noise+yamux (link)" // real clock, shaped by package link
	TransportSimnet = "quic+simnet"            // virtual clock: QUIC over marcopolo/simnet
	TransportMem    = "memnet"                 // virtual clock: package memnet's native in-process streams, shaped by package link
)

// VirtualTransport is what carries a virtual-clock run's connections (param vnet).
//
// quic: go-libp2p's QUIC over marcopolo/simnet, each packet paced and delayed by simnet.
// mem: package memnet's native connections (multiplexed and authenticated by construction, no
// noise or yamux: wire bytes are metered above them, at the stream wrapper), each stream shaped
// in user space by package link (rates and per-pair latency); an unshaped stream arms no
// timer. docs/overhead.md measures both.
type VirtualTransport string

const (
	VirtualQUIC VirtualTransport = "quic"
	VirtualMem  VirtualTransport = "mem"
)

// DefaultVirtualTransport is vnet's default: mem, measured (docs/overhead.md) at a seventh of
// QUIC's CPU on the neighbourhood's calibration form and half of it on the 14-node mesh.
const DefaultVirtualTransport = VirtualMem

// ParseVirtualTransport parses a virtual transport's name; empty is the default.
func ParseVirtualTransport(v string) (VirtualTransport, error) {
	switch t := VirtualTransport(strings.ToLower(strings.TrimSpace(v))); t {
	case "":
		return DefaultVirtualTransport, nil
	case VirtualQUIC, VirtualMem:
		return t, nil
	}
	return "", fmt.Errorf("%q is not %s or %s", v, VirtualQUIC, VirtualMem)
}

// unshapedBitsPerSec and unshapedBurstBytes make a simulated link the scenario leaves
// unshaped: simnet paces every link with a token bucket whose burst is the link's MTU setting
// (1500 bytes by default), so at any rate each packet beyond the first at one instant waits
// for a timer, and every such wait is a step of the whole bubble's clock (measured: the
// neighbourhood's calibration form ran about ten times slower than real time that way). A
// rate no gossip load comes near (100 Gbit/s) with a 4 MiB burst lets a burst of packets
// through at one instant. The MTU setting is simnet's pacing quantum only; QUIC sizes its
// packets itself.
const (
	unshapedBitsPerSec = 100_000_000_000
	unshapedBurstBytes = 4 << 20
)

// VirtualNetwork is the simulated network of a virtual-clock run, on one of two transports
// (VirtualTransport): package memnet's native in-process streams, each stream shaped by its
// hosts' links (rates, and the latency between their regions), or
// go-libp2p's QUIC over marcopolo/simnet (as go-libp2p-pubsub's own tests run), each host with
// its link's uplink and downlink rates and each packet delayed by the latency between its
// sender's and receiver's regions; all in simulated time. docs/overhead.md measures both
// against the real clock. Make it, and every host on it, inside the run's synctest bubble.
type VirtualNetwork struct {
	kind VirtualTransport
	sn   *simnet.Simnet      // quic
	sb   *memnet.Switchboard // mem

	mu     gosync.RWMutex
	next   int
	region map[netip.Addr]nodeRegion // by listen IP: the node's latency model and region
}

// nodeRegion is a host's region in its link's latency model (no model: unshaped).
type nodeRegion struct {
	regions *link.Regions
	name    string
}

// NewVirtualNetwork starts an empty simulated network on the default transport; Close stops
// it after its hosts closed.
func NewVirtualNetwork() *VirtualNetwork { return NewVirtualNetworkOn(DefaultVirtualTransport) }

// NewVirtualNetworkOn starts an empty simulated network on transport kind.
func NewVirtualNetworkOn(kind VirtualTransport) *VirtualNetwork {
	v := &VirtualNetwork{kind: kind, region: map[netip.Addr]nodeRegion{}}
	if kind == VirtualMem {
		v.sb = memnet.NewSwitchboard()
		return v
	}
	v.kind = VirtualQUIC
	v.sn = &simnet.Simnet{LatencyFunc: v.latency}
	v.sn.Start()
	return v
}

// Transport names the network's transport, as summaries do.
func (v *VirtualNetwork) Transport() string {
	if v.kind == VirtualMem {
		return TransportMem
	}
	return TransportSimnet
}

// memDrain bounds how long Close waits for the mem transport's shaped connections to deliver
// what they accepted before their hosts closed (package link delivers for up to 10 s).
const memDrain = 15 * time.Second

// Close stops the network's goroutines; on the mem transport it first waits (simulated time)
// for closed connections to deliver what they had accepted.
func (v *VirtualNetwork) Close() {
	if v.sn != nil {
		v.sn.Close()
	}
	if v.sb != nil {
		v.sb.Drain(memDrain)
	}
}

// latency is the one-way latency of a packet: the sender's latency model from its region to
// the receiver's; 0 when either end is unshaped.
func (v *VirtualNetwork) latency(p *simnet.Packet) time.Duration {
	from, ok1 := addrIP(p.From)
	to, ok2 := addrIP(p.To)
	if !ok1 || !ok2 {
		return 0
	}
	v.mu.RLock()
	a, b := v.region[from], v.region[to]
	v.mu.RUnlock()
	if a.regions == nil || b.regions == nil {
		return 0
	}
	d, err := a.regions.Latency(a.name, b.name)
	if err != nil {
		return 0 // regions are validated when the link is made
	}
	return d
}

func addrIP(a net.Addr) (netip.Addr, bool) {
	if u, ok := a.(*net.UDPAddr); ok {
		ip, ok := netip.AddrFromSlice(u.IP)
		return ip.Unmap(), ok
	}
	return netip.Addr{}, false
}

// Host starts a host on the network (Network.Host).
func (v *VirtualNetwork) Host(lk *link.Link, extra ...libp2p.Option) (*Host, error) {
	return v.NewHost(lk, extra...)
}

// Clock is the virtual clock.
func (v *VirtualNetwork) Clock() Clock { return ClockVirtual }

// NewHost starts a host on the network: QUIC (TLS and stream multiplexing built in) on a
// simulated UDP endpoint with lk's rates and region (nil: unshaped), the resource and
// connection managers null as on every streamsim host, identify's address discovery off (it
// stalls synctest, as simlibp2p notes), and no BandwidthCounter (its meters' sweeper would
// outlive the bubble; the stream meters count every byte).
func (v *VirtualNetwork) NewHost(lk *link.Link, extra ...libp2p.Option) (*Host, error) {
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("node key: %w", err)
	}
	if v.kind == VirtualMem {
		return v.newMemHost(key, lk, extra)
	}
	unshaped := simnet.LinkSettings{BitsPerSecond: unshapedBitsPerSec, MTU: unshapedBurstBytes}
	settings := simnet.NodeBiDiLinkSettings{Uplink: unshaped, Downlink: unshaped}
	var nr nodeRegion
	if lk != nil {
		sh := lk.Shape()
		if sh.UpBitsPerSec > 0 {
			settings.Uplink = simnet.LinkSettings{BitsPerSecond: int(sh.UpBitsPerSec)}
		}
		if sh.DownBitsPerSec > 0 {
			settings.Downlink = simnet.LinkSettings{BitsPerSecond: int(sh.DownBitsPerSec)}
		}
		regions := lk.Regions()
		nr = nodeRegion{regions: &regions, name: sh.Region}
	}
	// simnet adds endpoints without a lock of its own.
	v.mu.Lock()
	defer v.mu.Unlock()
	ip := simnet.IntToPublicIPv4(v.next)
	v.next++
	addr, _ := netip.AddrFromSlice(ip.To4())
	v.region[addr] = nr
	opts := append(baseOptions(key),
		libp2p.ListenAddrStrings(fmt.Sprintf("/ip4/%s/udp/8000/quic-v1", ip)),
		libp2p.NoTransports,
		libp2p.Transport(libp2pquic.NewTransport),
		simlibp2p.QUICSimnet(v.sn, settings),
		libp2p.DisableIdentifyAddressDiscovery(),
	)
	h, err := libp2p.New(append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("libp2p host on the simulated network: %w", err)
	}
	return &Host{Host: h, link: lk, virtual: true, transport: TransportSimnet}, nil
}

// newMemHost is NewHost on the mem transport: package memnet's native connections (no noise,
// no yamux: streams are in-memory pipes), each stream shaped by lk (link.Wrap: its rates, and
// the latency to the other end's region) or plain when lk is nil; no socket is ever opened.
func (v *VirtualNetwork) newMemHost(key crypto.PrivKey, lk *link.Link, extra []libp2p.Option) (*Host, error) {
	v.mu.Lock()
	ip := simnet.IntToPublicIPv4(v.next)
	v.next++
	v.mu.Unlock()
	var shaper memnet.Shaper
	if lk != nil {
		shaper = lk
	}
	opts := append(baseOptions(key),
		libp2p.ListenAddrStrings(fmt.Sprintf("/ip4/%s/tcp/4001", ip)),
		libp2p.NoTransports,
		memnet.Option(v.sb, shaper),
		libp2p.DisableIdentifyAddressDiscovery(),
	)
	h, err := libp2p.New(append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("libp2p host on the in-process network: %w", err)
	}
	return &Host{Host: h, link: lk, virtual: true, transport: TransportMem}, nil
}
