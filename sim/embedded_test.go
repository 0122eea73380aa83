package sim

import (
	"context"
	"testing"
	"time"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
)

func runEmbedded(t *testing.T, leaves string, params map[string]string) *analysis.RunReport {
	t.Helper()
	specs, err := ParseCodecs(leaves)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	e := &Embedded{Out: dir, Leaves: specs, Params: params, Publishers: 2}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runErr := e.Run(ctx)
	r, err := analysis.LoadRun(dir)
	if err != nil {
		t.Fatalf("load run: %v (run: %v)", err, runErr)
	}
	if runErr != nil {
		t.Fatalf("run: %v\nproblems: %q\ndrops %v", runErr, r.Problems, r.DropsBy)
	}
	return r
}

// Parity holds for every codec in both payload modes, and a compressed leaf's attestation
// wire bytes are below the plain leaf's.
func TestHubLeavesParity(t *testing.T) {
	for _, payload := range []string{gossip.PayloadSSZSnappy, gossip.PayloadSSZ} {
		t.Run(payload, func(t *testing.T) {
			r := runEmbedded(t, "plain,snappy-stream,zstd", map[string]string{
				ParamProfile: "default", ParamSlots: "1", ParamTimeScale: "24", ParamPayload: payload, ParamSeed: "7", ParamValidators: "32768",
			})
			if !r.Parity.OK || !r.OK {
				t.Fatalf("run not OK: %v / %v", r.Parity.Message, r.Problems)
			}
			if len(r.Leaves) != 3 || r.Leaves[0].Codec != "plain" {
				t.Fatalf("leaves %+v", r.Leaves)
			}
			plain := r.Leaves[0]
			if plain.Messages[gossip.Attestation] == 0 {
				t.Fatal("no attestations delivered")
			}
			for _, l := range r.Leaves[1:] {
				pa, la := plain.Categories[gossip.Attestation].WireBytes, l.Categories[gossip.Attestation].WireBytes
				if la >= pa || la == 0 {
					t.Errorf("%s: attestation wire bytes %d, plain %d", l.Codec, la, pa)
				}
				if l.CPU.Decode.Blocks == 0 || l.CPU.HubEncode.Blocks == 0 {
					t.Errorf("%s: no codec work metered: %+v", l.Codec, l.CPU)
				}
			}
			if plain.WireBytes != plain.RawBytes {
				t.Errorf("plain leaf: wire %d != raw %d", plain.WireBytes, plain.RawBytes)
			}
			t.Logf("payload %s: plain %d B, %s %.1f %%, %s %.1f %%", payload, plain.WireBytes,
				r.Leaves[1].Codec, *r.Leaves[1].RelativeToPlain*100, r.Leaves[2].Codec, *r.Leaves[2].RelativeToPlain*100)
		})
	}
	_ = codec.Stats{}
}
