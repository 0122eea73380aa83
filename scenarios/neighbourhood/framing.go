package neighbourhood

import (
	"fmt"
	"strings"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/topology"
)

// ParamFraming sets how the observed node and its real peers frame their outbound RPCs:
// FramingClient (the default), each as its client's gossipsub library does
// (topology.Client.Framing: Lighthouse rust-libp2p, every item its own frame; Nimbus
// nim-libp2p, control apart from messages; Prysm, Teku and Lodestar as go-libp2p-pubsub
// writes them), or one framing for every node (gossip.Framings). The content is the same
// either way; the frames' prefixes and tags are what change.
const (
	ParamFraming  = "framing"
	FramingClient = "client"
)

// ParseFraming reads ParamFraming: "" for each node's client framing, otherwise the framing
// every node uses.
func ParseFraming(v string) (gossip.Framing, error) {
	t := strings.TrimSpace(v)
	if t == "" || t == FramingClient {
		return "", nil
	}
	f, err := gossip.ParseFraming(t)
	if err != nil {
		return "", fmt.Errorf("param %s: %q is not %s or a framing (allowed: %s, %s)", ParamFraming, v, FramingClient, FramingClient, gossip.FramingNames())
	}
	return f, nil
}

// nodeFraming is the framing of a node of client cl: forced when set, else the client's.
func nodeFraming(forced gossip.Framing, cl topology.Client) gossip.Framing {
	if forced != "" {
		return forced
	}
	return cl.Framing()
}

// framingLabel is the report's words for ParamFraming.
func framingLabel(forced gossip.Framing) string {
	if forced != "" {
		return fmt.Sprintf("every node as %s (param %s)", forced, ParamFraming)
	}
	var by []string
	for _, name := range topology.ClientNames {
		if cl, err := topology.ClientProfile(name); err == nil && name != "spec" {
			by = append(by, name+" "+string(cl.Framing()))
		}
	}
	return fmt.Sprintf("each node as its client's library (%s; param %s)", strings.Join(by, ", "), ParamFraming)
}

// ParamForwarding sets which mesh peers a real node leaves out when it forwards a message:
// ForwardingClient (the default), each as its client's library does
// (topology.Client.WithholdsEchoes: Lighthouse's rust-libp2p and Nimbus's nim-libp2p leave out
// every peer whose copy arrived while they validated; Prysm, Teku and Lodestar only the peer
// they got it from first), or one rule for every node: ForwardingGo (only the first sender,
// the model before) or ForwardingWithhold (every node as rust-libp2p).
const (
	ParamForwarding    = "forwarding"
	ForwardingClient   = "client"
	ForwardingGo       = "go"
	ForwardingWithhold = "withhold"
)

// ParseForwarding reads ParamForwarding.
func ParseForwarding(v string) (string, error) {
	switch t := strings.TrimSpace(v); t {
	case "", ForwardingClient:
		return ForwardingClient, nil
	case ForwardingGo, ForwardingWithhold:
		return t, nil
	}
	return "", fmt.Errorf("param %s: %q is not a forwarding rule (allowed: %s, %s, %s)", ParamForwarding, v, ForwardingClient, ForwardingGo, ForwardingWithhold)
}

// nodeWithholds reports whether a node of client cl withholds echoes under rule.
func nodeWithholds(rule string, cl topology.Client) bool {
	switch rule {
	case "", ForwardingGo:
		return false
	case ForwardingWithhold:
		return true
	}
	return cl.WithholdsEchoes()
}

// forwardingLabel is the report's words for ParamForwarding.
func forwardingLabel(rule string) string {
	switch rule {
	case "":
		return "every node forwards to every mesh peer but its first sender, as go-libp2p-pubsub (a run from before param " + ParamForwarding + ")"
	case ForwardingGo:
		return fmt.Sprintf("every node forwards to every mesh peer but its first sender, as go-libp2p-pubsub (param %s)", ParamForwarding)
	case ForwardingWithhold:
		return fmt.Sprintf("every node leaves out the mesh peers whose copy arrived while it validated, as rust-libp2p (param %s)", ParamForwarding)
	}
	return fmt.Sprintf("each node as its client's library (lighthouse and nimbus leave out the mesh peers whose copy arrived while they validated; prysm, teku, lodestar only the first sender; param %s)", ParamForwarding)
}
