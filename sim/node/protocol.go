package node

import (
	"fmt"
	"strings"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/streamsim/streamsim/codec"
)

// Protocol IDs. PlainProtocol is the baseline every node speaks. SnappyStreamProtocol is the
// proposal's ID, for snappy-stream with a 64 KiB history. Every other codec spec gets
// "/streamsim/<canonical spec>/meshsub/1.2.0" (for example
// "/streamsim/zstd:3:2MiB/meshsub/1.2.0"), so one hub can serve leaves with different codecs.
// The codec families own the IDs (codec.Spec.ProtocolID). All compressed IDs carry gossipsub
// v1.2 features.
const (
	PlainProtocol        = protocol.ID(codec.PlainProtocolID)
	SnappyStreamProtocol = protocol.ID(codec.SnappyStreamProtocolID)
)

// ProtocolFor returns the protocol ID of a codec spec: PlainProtocol for plain, the proposal's
// ID for snappy-stream with its default 64 KiB history, a derived ID otherwise.
func ProtocolFor(spec codec.Spec) protocol.ID { return protocol.ID(spec.ProtocolID()) }

// SpecFor returns the codec spec a protocol ID stands for; ok is false for IDs that are not
// streamsim gossip protocols.
func SpecFor(id protocol.ID) (spec codec.Spec, ok bool) { return codec.ParseProtocolID(string(id)) }

// protocols is a node's gossipsub protocol list: the compressed IDs of its codecs in order of
// preference, then plain.
func protocols(specs []codec.Spec) []protocol.ID {
	var out []protocol.ID
	seen := map[protocol.ID]bool{PlainProtocol: true}
	for _, s := range specs {
		id := ProtocolFor(s)
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return append(out, PlainProtocol)
}

// features gives every streamsim protocol gossipsub v1.2's features: a compressed stream
// carries the same RPCs as /meshsub/1.2.0.
func features(feat pubsub.GossipSubFeature, id protocol.ID) bool {
	if _, ok := SpecFor(id); ok {
		id = pubsub.GossipSubID_v12
	}
	return pubsub.GossipSubDefaultFeatures(feat, id)
}

func mustParse(s string) codec.Spec {
	spec, err := codec.Parse(s)
	if err != nil {
		panic(fmt.Sprintf("codec spec %q: %v", s, err))
	}
	return spec
}

// ParseCodecs parses a comma-separated list of codec specs ("plain,snappy-stream,zstd").
func ParseCodecs(list string) ([]codec.Spec, error) {
	var out []codec.Spec
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		s, err := codec.Parse(f)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no codec specs in %q", list)
	}
	return out, nil
}
