package topology

import "github.com/streamsim/streamsim/gossip"

// Framing is the RPC framing of the client's gossipsub library (gossip.Framing; sources in
// docs/inputs.md, "RPC framing"): Prysm and the spec profile go-libp2p-pubsub, Lighthouse
// rust-libp2p, Teku jvm-libp2p, Lodestar js-libp2p-gossipsub, Nimbus nim-libp2p. A profile
// this package does not know frames as go-libp2p-pubsub does.
func (c Client) Framing() gossip.Framing {
	switch c.Name {
	case "lighthouse":
		return gossip.FramingRust
	case "teku":
		return gossip.FramingJVM
	case "lodestar":
		return gossip.FramingJS
	case "nimbus":
		return gossip.FramingNim
	}
	return gossip.FramingGo
}
