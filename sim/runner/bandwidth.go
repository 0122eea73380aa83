package runner

import (
	"github.com/streamsim/streamsim/link"
	"github.com/streamsim/streamsim/units"
)

// Parameters of links' access rates by bandwidth class, which the scenarios that shape links
// share: ordinary nodes and supernodes (gossipsub-interop's full nodes and supernodes).
const (
	ParamOrdinaryBandwidth  = "ordinary_bandwidth"
	ParamSupernodeBandwidth = "supernode_bandwidth"
)

// Default rates of the two bandwidth classes: gossipsub-interop's full nodes and supernodes
// (link.DefaultClasses; Shadow's "Mbit" is 10^6 bits).
const (
	DefaultOrdinaryBandwidth  = "50Mbit"
	DefaultSupernodeBandwidth = "1024Mbit"
)

// ParseBandwidthClasses parses the ordinary nodes' and the supernodes' rates (the values of
// ParamOrdinaryBandwidth and ParamSupernodeBandwidth) into the classes "fullnode" and
// "supernode", uplink and downlink alike; a bad value is refused naming its parameter. The
// mesh's links and the neighbourhood's share it.
func ParseBandwidthClasses(ordinary, supernode string) ([2]link.Class, error) {
	var classes [2]link.Class
	for i, k := range []string{ParamOrdinaryBandwidth, ParamSupernodeBandwidth} {
		bps, err := units.ParseBitsPerSec([2]string{ordinary, supernode}[i])
		if err != nil {
			return classes, paramError(k, "%w", err)
		}
		name := [2]string{"fullnode", "supernode"}[i]
		classes[i] = link.Class{Name: name, UpBitsPerSec: bps, DownBitsPerSec: bps, Weight: 1}
	}
	return classes, nil
}
