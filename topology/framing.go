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

// WithholdsEchoes reports whether the client's gossipsub library leaves out of a forward the
// mesh peers whose own copy of the message arrived while it was validating: rust-libp2p
// (Lighthouse: the message cache's observe_duplicate, whose peers forward_msg skips) and
// nim-libp2p (Nimbus: validationSeen). go-libp2p-pubsub (Prysm), jvm-libp2p (Teku) and
// js-libp2p-gossipsub (Lodestar) leave out only the peer they got it from first (and those
// that sent IDONTWANT). docs/inputs.md ("Biases to keep in mind") gives the sources.
func (c Client) WithholdsEchoes() bool {
	return c.Name == "lighthouse" || c.Name == "nimbus"
}
