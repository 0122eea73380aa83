package replay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/analysis/page"
)

// TestSweepFactsLeaveOutUnreplayedSide: an inbound-only sweep replays no encoder of the
// node's, so its memory facts hold decoders per peer and not a 0 KiB "encoders per peer";
// an outbound-only one the reverse; both directions give both.
func TestSweepFactsLeaveOutUnreplayedSide(t *testing.T) {
	for _, tc := range []struct {
		name     string
		plain    [2]int64
		enc, dec bool
	}{
		{"inbound only", [2]int64{1000, 0}, false, true},
		{"outbound only", [2]int64{0, 1000}, true, false},
		{"both", [2]int64{1000, 1000}, true, true},
	} {
		rep := &Report{Results: []Result{{View: "all-subnets", Config: "snappy-stream:64KiB:fast", Layout: "topic-streams",
			DirPlainTotal: tc.plain, Memory: Memory{Peers: 3, MeanPeerEncoderBytes: 4096, MeanPeerDecoderBytes: 2048}}}}
		js, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		var p page.Page
		src, err := p.AddSource("sweep", js)
		if err != nil {
			t.Fatal(err)
		}
		var enc, dec, peers bool
		for _, f := range sweepFacts(src, rep, 0, []int{0}) {
			if f.Kind != page.FactMemory {
				continue
			}
			switch {
			case strings.HasPrefix(f.What, "encoders per peer"):
				enc = true
			case strings.HasPrefix(f.What, "decoders per peer"):
				dec = true
			case strings.HasPrefix(f.What, "peers the replay measured"):
				peers = true
			}
		}
		if enc != tc.enc || dec != tc.dec || !peers {
			t.Errorf("%s: encoder fact %v (want %v), decoder fact %v (want %v), peers fact %v (want true)", tc.name, enc, tc.enc, dec, tc.dec, peers)
		}
	}
}
