package neighbourhood

import (
	"github.com/streamsim/streamsim/link"
	"github.com/streamsim/streamsim/sim"
	"github.com/streamsim/streamsim/topology"
)

// Network makes every host a run needs: the observed node's, its real peers' and their
// boundary peers'. It is the one place a run's transport, links and clock are chosen; the
// phases after it only connect the hosts it made by their AddrInfo. Today's implementation is
// Loopback (TCP on 127.0.0.1 in real time); a virtual-clock one (simulated hosts in a synctest
// bubble) slots in here without touching the phases.
type Network interface {
	// Host makes a host placed in region: a region of the latency model (link.DefaultRegions),
	// BoundaryRegion, or "" when the latency model is off (unshaped).
	Host(region string) (*sim.Host, error)
	// Name says in the report which network the run used.
	Name() string
}

// Loopback is the real-clock network: TCP hosts on 127.0.0.1, each host's connections shaped
// by the latency model's per-pair delay (already divided by the time scale: a modelled
// latency is simulated time). Links carry no rate limit.
type Loopback struct {
	Regions link.Regions
}

// NewLoopback is the real clock's network for cfg: gossipsub-interop's regions plus the
// boundary's, dilated by cfg.TimeScale; unshaped when the latency model is off.
func NewLoopback(cfg Config) (*Loopback, error) {
	if cfg.Population.Latency == topology.LatencyOff {
		return &Loopback{}, nil
	}
	withB, err := link.DefaultRegions().WithRegion(BoundaryRegion, 0)
	if err != nil {
		return nil, err
	}
	dil, err := withB.Dilate(cfg.TimeScale)
	if err != nil {
		return nil, err
	}
	return &Loopback{Regions: dil}, nil
}

// Host makes a TCP loopback host in region (unshaped for "").
func (l *Loopback) Host(region string) (*sim.Host, error) {
	if region == "" {
		return sim.NewHost("")
	}
	lk, err := link.New(link.Shape{Region: region}, l.Regions)
	if err != nil {
		return nil, err
	}
	return sim.NewShapedHost("", lk)
}

// Name is the network's label in the report.
func (l *Loopback) Name() string { return "tcp-loopback (real clock)" }

// Virtual is the virtual clock's network: hosts on the run's simulated network (QUIC over
// simnet or package memnet's in-process streams, sim.VirtualNetwork) in the run's synctest bubble, each packet delayed by the latency
// model's per-pair delay in simulated time (undilated: there is no time scale). Links carry no
// rate limit, as on Loopback; the boundary region's latency is 0 (unshaped).
type Virtual struct {
	Net     *sim.VirtualNetwork
	Regions link.Regions
}

// NewVirtual is the virtual clock's network for cfg on vn: gossipsub-interop's regions plus
// the boundary's; unshaped when the latency model is off.
func NewVirtual(vn *sim.VirtualNetwork, cfg Config) (*Virtual, error) {
	if cfg.Population.Latency == topology.LatencyOff {
		return &Virtual{Net: vn}, nil
	}
	withB, err := link.DefaultRegions().WithRegion(BoundaryRegion, 0)
	if err != nil {
		return nil, err
	}
	return &Virtual{Net: vn, Regions: withB}, nil
}

// Host makes a host on the simulated network in region (unshaped for "").
func (v *Virtual) Host(region string) (*sim.Host, error) {
	if region == "" {
		return v.Net.NewHost(nil)
	}
	lk, err := link.New(link.Shape{Region: region}, v.Regions)
	if err != nil {
		return nil, err
	}
	return v.Net.NewHost(lk)
}

// Name is the network's label in the report.
func (v *Virtual) Name() string { return v.Net.Transport() + " (virtual clock)" }

// placement is where each host of a run sits in the latency model: each real peer's region
// drawn from the topology seed by the regions' weights, the observed node in ObservedRegion,
// the boundary peers in BoundaryRegion; every region "" when the latency model is off. It
// belongs to the model (the plan), not to the network that realises it.
type placement struct {
	observed, boundary string
	peers              []string
}

func placeHosts(cfg Config, peers int) (placement, error) {
	if cfg.Population.Latency == topology.LatencyOff {
		return placement{peers: make([]string, peers)}, nil
	}
	shapes, err := link.Assign(cfg.Population.Seed, peers, link.DefaultRegions(), []link.Class{{Name: "unlimited", Weight: 1}})
	if err != nil {
		return placement{}, err
	}
	p := placement{observed: ObservedRegion, boundary: BoundaryRegion, peers: make([]string, peers)}
	for i, sh := range shapes {
		p.peers[i] = sh.Region
	}
	return p, nil
}
