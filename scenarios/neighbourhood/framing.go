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
