package link

import (
	"fmt"

	"github.com/testground/sdk-go/network"

	"github.com/streamsim/streamsim/units"
)

// Shape is one node's link: its access rates and its region. Class is informational (the
// node class Assign drew it from), for reports.
type Shape struct {
	Region         string
	Class          string
	UpBitsPerSec   int64 // uplink rate, bits of TCP payload per second; 0 = unlimited
	DownBitsPerSec int64 // downlink rate, likewise; 0 = unlimited
}

// Validate checks the rates and that the region is one of regions.
func (s Shape) Validate(regions Regions) error {
	if s.UpBitsPerSec < 0 {
		return fmt.Errorf("shape: UpBitsPerSec = %d; must be ≥ 0 (0 = unlimited)", s.UpBitsPerSec)
	}
	if s.DownBitsPerSec < 0 {
		return fmt.Errorf("shape: DownBitsPerSec = %d; must be ≥ 0 (0 = unlimited)", s.DownBitsPerSec)
	}
	if _, err := regions.Index(s.Region); err != nil {
		return fmt.Errorf("shape: %w", err)
	}
	return nil
}

// String is e.g. "europe/fullnode 50Mbit↑ 50Mbit↓" ("europe 50Mbit↑ 50Mbit↓" without a class).
func (s Shape) String() string {
	where := s.Region
	if s.Class != "" {
		where += "/" + s.Class
	}
	return fmt.Sprintf("%s %s↑ %s↓", where, units.FormatBitsPerSec(s.UpBitsPerSec), units.FormatBitsPerSec(s.DownBitsPerSec))
}

// LinkShape converts a shape for Testground's network sidecar (local:docker and
// cluster:k8s), which shapes one instance's egress with one HTB class and one netem qdisc
// (testground v0.6.0 pkg/sidecar/link.go; LinkRule shaping per subnet is not implemented
// there, rules only filter). So only part of the model carries over:
//
//   - Bandwidth = UpBitsPerSec. The sidecar passes it to HTB as bits/s, whatever the
//     sdk's comment says; HTB counts IP packets with headers, so TCP payload gets about
//     3.5 % less than here (52 of 1500 bytes per full segment).
//   - Latency = the weight-averaged one-way latency from the node's region
//     (Regions.MeanLatency): netem delays every egress packet alike, so per-pair latency
//     cannot be expressed; the mean keeps the average delay of a message the same.
//   - DownBitsPerSec is dropped: the sidecar does not shape ingress.
//
// Where the link transport runs (any runner: it is user space over TCP), it applies the
// whole model exactly and ConfigureNetwork must not shape as well.
func (s Shape) LinkShape(regions Regions) (network.LinkShape, error) {
	if err := s.Validate(regions); err != nil {
		return network.LinkShape{}, err
	}
	lat, err := regions.MeanLatency(s.Region)
	if err != nil {
		return network.LinkShape{}, err
	}
	return network.LinkShape{Latency: lat, Bandwidth: uint64(s.UpBitsPerSec)}, nil
}
