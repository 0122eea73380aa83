package neighbourhood

import (
	"fmt"
	"time"

	"github.com/streamsim/streamsim/sim/network"

	"github.com/streamsim/streamsim/link"
	"github.com/streamsim/streamsim/sim/runner"
	"github.com/streamsim/streamsim/units"
)

// Hosts makes every host a run needs (the observed node's, its real peers' and their
// boundary peers') on the run's network, each with its link in the model: the latency
// model's per-pair delay and its bandwidth class's rates, both in simulated time. On the real
// clock they are dilated by the time scale (a modelled latency or rate is simulated time: at
// time scale s a latency takes 1/s of it in wall time and a rate carries s times its bits per
// wall second, so a transmission time dilates as a latency does); on the virtual clock they
// apply as they are. The phases after it only connect the hosts it made by their AddrInfo.
type Hosts struct {
	Net     network.Network
	Regions link.Regions
	// Scale multiplies every rate (the run's time scale on the real clock; 0 reads as 1).
	Scale float64
}

// NewHosts is cfg's hosts on net (nil: TCP on 127.0.0.1, the real clock): the model's regions
// (modelRegions), dilated by cfg.TimeScale on the real clock; unshaped when neither latency
// nor bandwidth is modelled.
func NewHosts(net network.Network, cfg Config) (*Hosts, error) {
	if net == nil {
		net = &network.TCP{IP: "127.0.0.1"}
	}
	regions, ok, err := modelRegions(cfg)
	if err != nil || !ok {
		return &Hosts{Net: net}, err
	}
	if net.Clock() == network.ClockVirtual {
		return &Hosts{Net: net, Regions: regions}, nil
	}
	dil, err := regions.Dilate(cfg.TimeScale)
	if err != nil {
		return nil, err
	}
	return &Hosts{Net: net, Regions: dil, Scale: cfg.TimeScale}, nil
}

// Host makes a host with access link sh (placement's, in simulated time): sh.Region is a
// region of the latency model (link.DefaultRegions), BoundaryRegion, FlatRegion, or "" for an
// unshaped host; sh's rates are its bandwidth class's (0: unlimited).
func (h *Hosts) Host(sh link.Shape) (*network.Host, error) {
	if sh.Region == "" {
		return h.Net.Host(nil)
	}
	lk, err := link.New(h.dilate(sh), h.Regions)
	if err != nil {
		return nil, err
	}
	return h.Net.Host(lk)
}

// dilate is sh's link in wall time: its rates times the time scale (the real clock only).
func (h *Hosts) dilate(sh link.Shape) link.Shape {
	if h.Scale > 0 {
		sh.UpBitsPerSec = int64(float64(sh.UpBitsPerSec)*h.Scale + 0.5)
		sh.DownBitsPerSec = int64(float64(sh.DownBitsPerSec)*h.Scale + 0.5)
	}
	return sh
}

// Name is the network's label in the report.
func (h *Hosts) Name() string {
	if h.Net.Clock() == network.ClockVirtual {
		return h.Net.Transport() + " (virtual clock)"
	}
	return "tcp-loopback (real clock)"
}

// FlatRegion is every host's region when bandwidth is modelled without the latency model:
// one region of latency 0, so that the hosts' links carry their rates and nothing else.
const FlatRegion = "flat"

// modelRegions is the latency model every network of cfg shapes its hosts with (simulated
// time): gossipsub-interop's regions plus the boundary's; with the latency model off but
// bandwidth on, the one FlatRegion; neither: ok false (hosts unshaped).
func modelRegions(cfg Config) (regions link.Regions, ok bool, err error) {
	if cfg.Population.Latency == LatencyOff {
		if !cfg.Bandwidth.On() {
			return link.Regions{}, false, nil
		}
		return link.Regions{Regions: []link.Region{{Name: FlatRegion, Weight: 1}}, OneWay: [][]time.Duration{{0}}}, true, nil
	}
	withB, err := link.DefaultRegions().WithRegion(BoundaryRegion, 0)
	return withB, err == nil, err
}

// ParamBandwidth turns the links' rates on (BandwidthClasses) or off (BandwidthOff).
const (
	ParamBandwidth   = "bandwidth"
	BandwidthClasses = "classes"
	BandwidthOff     = "off"
)

// ParamAllSubnetsBandwidth is the all-subnets class's rate; its default is the supernode
// class's (see DefaultAllSubnetsBandwidth).
const ParamAllSubnetsBandwidth = "allsubnets_bandwidth"

// DefaultAllSubnetsBandwidth is the all-subnets class's default rate: gossipsub-interop's
// supernode class (1 Gbit/s, a data-centre link). An assumption with a measured reason: a node
// on every subnet at a million validators forwards each attestation to its D mesh peers,
// ≈ 55 Mbit/s of uplink before IHAVE and bursts, more than the ordinary class (50 Mbit/s) or
// EIP-7870's recommendations (15–50 Mbit/s up) carry; the full form at the ordinary class
// fell minutes behind its schedule in simulated time (docs/neighbourhood.md).
const DefaultAllSubnetsBandwidth = runner.DefaultSupernodeBandwidth

// Bandwidth is the access rate (bit/s, simulated time, uplink and downlink alike; 0:
// unlimited) of the observed node's and its real peers' links by bandwidth class
// (NeighbourPeer.Bandwidth): default nodes at gossipsub-interop's ordinary class,
// supernodes at its supernode class, all-subnets nodes (the observed node among them) at the
// all-subnets class. Outside peers stay unshaped: they stand for the rest of
// mainnet, whose own links the periphery's arrival model already stands for. The zero value
// is off.
type Bandwidth struct {
	FullNode, Supernode, AllSubnets int64
	on                              bool
}

// NewBandwidth is bandwidth on at the classes' rates (runner.ParseBandwidthClasses) and the
// all-subnets class's.
func NewBandwidth(classes [2]link.Class, allSubnets int64) Bandwidth {
	return Bandwidth{FullNode: classes[0].UpBitsPerSec, Supernode: classes[1].UpBitsPerSec, AllSubnets: allSubnets, on: true}
}

// DefaultBandwidth is gossipsub-interop's classes (runner.DefaultOrdinaryBandwidth and
// runner.DefaultSupernodeBandwidth) and DefaultAllSubnetsBandwidth.
func DefaultBandwidth() Bandwidth {
	b, err := ParseBandwidth(BandwidthClasses, runner.DefaultOrdinaryBandwidth, runner.DefaultSupernodeBandwidth, DefaultAllSubnetsBandwidth)
	if err != nil {
		panic(err) // the defaults parse
	}
	return b
}

// ParseBandwidth reads the parameters ParamBandwidth (BandwidthClasses or BandwidthOff),
// runner.ParamOrdinaryBandwidth, runner.ParamSupernodeBandwidth and ParamAllSubnetsBandwidth; the
// rates are parsed (and a bad one refused) even when bandwidth is off.
func ParseBandwidth(mode, ordinary, supernode, allSubnets string) (Bandwidth, error) {
	c, err := runner.ParseBandwidthClasses(ordinary, supernode)
	if err != nil {
		return Bandwidth{}, err
	}
	all, err := units.ParseBitsPerSec(allSubnets)
	if err != nil {
		return Bandwidth{}, fmt.Errorf("param %s: %w", ParamAllSubnetsBandwidth, err)
	}
	switch mode {
	case BandwidthClasses:
		return NewBandwidth(c, all), nil
	case BandwidthOff:
		return Bandwidth{}, nil
	}
	return Bandwidth{}, fmt.Errorf("param %s: %q is not %s (the links at %s, %s and %s by class) or %s (unshaped)", ParamBandwidth, mode, BandwidthClasses, runner.ParamOrdinaryBandwidth, runner.ParamSupernodeBandwidth, ParamAllSubnetsBandwidth, BandwidthOff)
}

// On says whether the links carry rates.
func (b Bandwidth) On() bool { return b.on }

// shape is the link of a host of bandwidth class in region.
func (b Bandwidth) shape(region, class string) link.Shape {
	sh := link.Shape{Region: region}
	if !b.on || region == "" {
		return sh
	}
	sh.Class = class
	rate := b.FullNode
	switch class {
	case BandwidthSupernode:
		rate = b.Supernode
	case BandwidthAllSubnets:
		rate = b.AllSubnets
	}
	sh.UpBitsPerSec, sh.DownBitsPerSec = rate, rate
	return sh
}

// String is the report's label, e.g. "fullnode 50Mbit, supernode 1024Mbit, all-subnets
// 1024Mbit" or "off".
func (b Bandwidth) String() string {
	if !b.on {
		return "off"
	}
	return fmt.Sprintf("%s %s, %s %s, %s %s", BandwidthFullNode, units.FormatBitsPerSec(b.FullNode), BandwidthSupernode, units.FormatBitsPerSec(b.Supernode), BandwidthAllSubnets, units.FormatBitsPerSec(b.AllSubnets))
}

// placement is each host's link in the model: each real peer's region drawn from the
// topology seed by the regions' weights, the observed node in ObservedRegion, the boundary
// peers in BoundaryRegion (every region FlatRegion when only bandwidth is modelled, "" when
// neither is); the observed node's and real peers' rates by their bandwidth class, the
// boundary's unlimited. It belongs to the model (the plan), not to the network that
// realises it.
type placement struct {
	observed, boundary link.Shape
	peers              []link.Shape
}

func placeHosts(cfg Config, plan *NeighbourhoodPlan) (placement, error) {
	n := len(plan.Peers)
	regions := make([]string, n)
	obs, bound := ObservedRegion, BoundaryRegion
	switch {
	case cfg.Population.Latency != LatencyOff:
		shapes, err := link.Assign(cfg.Population.Seed, n, link.DefaultRegions(), []link.Class{{Name: "unlimited", Weight: 1}})
		if err != nil {
			return placement{}, err
		}
		for i, sh := range shapes {
			regions[i] = sh.Region
		}
	case cfg.Bandwidth.On():
		obs, bound = FlatRegion, FlatRegion
		for i := range regions {
			regions[i] = FlatRegion
		}
	default:
		obs, bound = "", ""
	}
	p := placement{observed: cfg.Bandwidth.shape(obs, plan.ObservedBandwidth), boundary: link.Shape{Region: bound}, peers: make([]link.Shape, n)}
	for i, r := range regions {
		p.peers[i] = cfg.Bandwidth.shape(r, plan.Peers[i].Bandwidth)
	}
	return p, nil
}
