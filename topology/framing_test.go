package topology

import (
	"testing"

	"github.com/streamsim/streamsim/gossip"
)

// Every client profile frames as its library does; only rust-libp2p and nim-libp2p split
// go-libp2p-pubsub's frames.
func TestClientFraming(t *testing.T) {
	want := map[string]gossip.Framing{"spec": gossip.FramingGo, "prysm": gossip.FramingGo, "lighthouse": gossip.FramingRust,
		"teku": gossip.FramingJVM, "lodestar": gossip.FramingJS, "nimbus": gossip.FramingNim}
	for _, name := range ClientNames {
		c, err := ClientProfile(name)
		if err != nil {
			t.Fatal(err)
		}
		w, ok := want[name]
		if !ok {
			t.Fatalf("client %s has no expected framing in this test", name)
		}
		if got := c.Framing(); got != w {
			t.Errorf("%s frames as %s, want %s", name, got, w)
		}
		if split := name == "lighthouse" || name == "nimbus"; c.Framing().Splits() != split {
			t.Errorf("%s: splits %v", name, !split)
		}
	}
}
