package node

import (
	"testing"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/streamsim/streamsim/codec"
)

func TestProtocolIDs(t *testing.T) {
	cases := []struct {
		spec string
		id   protocol.ID
	}{
		{"plain", PlainProtocol},
		{"snappy-stream", SnappyStreamProtocol},
		{"snappy-stream:64KiB", SnappyStreamProtocol}, // the canonical spec decides
		{"snappy-stream:64KiB:fast", SnappyStreamProtocol},
		{"snappy-stream:1MiB:better", "/streamsim/snappy-stream:1MiB:better/meshsub/1.2.0"},
		{"snappy-stream:4KiB", "/streamsim/snappy-stream:4KiB/meshsub/1.2.0"},
		{"zstd", "/streamsim/zstd/meshsub/1.2.0"},
		{"zstd:3", "/streamsim/zstd/meshsub/1.2.0"},
		{"zstd:7:8MiB", "/streamsim/zstd:7:8MiB/meshsub/1.2.0"},
	}
	for _, c := range cases {
		spec := mustParse(c.spec)
		id := ProtocolFor(spec)
		if id != c.id {
			t.Errorf("%s: %s, want %s", c.spec, id, c.id)
		}
		back, ok := SpecFor(id)
		if !ok || back.String() != spec.String() {
			t.Errorf("%s: SpecFor(%s) = %v, %v", c.spec, id, back, ok)
		}
		if !features(pubsub.GossipSubFeatureIdontwant, id) || !features(pubsub.GossipSubFeatureMesh, id) ||
			features(pubsub.GossipSubFeatureExtensions, id) {
			t.Errorf("%s: not exactly gossipsub v1.2 features", id)
		}
	}
	for _, id := range []protocol.ID{
		"/meshsub/1.1.0", "/streamsim/zstd:3/meshsub/1.2.0", // non-canonical spelling
		"/streamsim/brotli/meshsub/1.2.0", "/streamsim/zstd/meshsub/1.3.0", "/snappy-stream/meshsub/1.1.0",
	} {
		if spec, ok := SpecFor(id); ok {
			t.Errorf("%s accepted as %v", id, spec)
		}
	}
	got := protocols([]codec.Spec{mustParse("zstd"), mustParse("snappy-stream"), mustParse("zstd:3"), mustParse("plain")})
	want := []protocol.ID{"/streamsim/zstd/meshsub/1.2.0", SnappyStreamProtocol, PlainProtocol}
	if len(got) != len(want) {
		t.Fatalf("protocols %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("protocols %v, want %v", got, want)
		}
	}
}
