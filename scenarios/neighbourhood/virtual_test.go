package neighbourhood

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/streamsim/streamsim/internal/longtest"
	"github.com/streamsim/streamsim/sim/network"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
)

// The small neighbourhood of TestSmallNeighbourhood (its population, outside peers and churn) on
// the virtual clock, in a synctest bubble
// on a simulated network: every message of the observed node's topics arrives, the
// periphery's schedule is never late (lateness reads 0, the check stays), latency is at least
// the arrival model's first copy in simulated time, and the report names the network.
func TestSmallNeighbourhoodVirtualClock(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 9 real nodes and 112 boundary peers for 5 slots of simulated time on each virtual transport")
	}
	for _, vnet := range []network.VirtualTransport{network.VirtualQUIC, network.VirtualMem} {
		t.Run(string(vnet), func(t *testing.T) {
			if vnet == network.VirtualQUIC {
				longtest.Skip(t, "the same run over QUIC on simnet")
			}
			testSmallNeighbourhoodVirtualClock(t, vnet)
		})
	}
}

func testSmallNeighbourhoodVirtualClock(t *testing.T, vnet network.VirtualTransport) {
	var err error
	cfg := DefaultConfig()
	pop := smallPopulation(t)
	cfg.Population, cfg.Slots, cfg.Warmup, cfg.Validators = pop, 2, 2, 200_000
	cfg.Churn = 5 * time.Minute
	cfg.Clock, cfg.CodecCPU = network.ClockVirtual, true
	if cfg.Codec, err = codec.Parse("snappy-stream"); err != nil {
		t.Fatal(err)
	}
	var r *Report
	var runErr error
	start := network.WallNow()
	synctest.Test(t, func(t *testing.T) {
		vn := network.NewVirtualNetworkOn(vnet)
		defer vn.Close()
		cfg.Network = vn
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		r, runErr = Run(ctx, cfg)
	})
	if runErr != nil {
		t.Fatal(runErr)
	}
	t.Logf("%v simulated in %v wall, process CPU %v", r.Simulated, time.Duration(network.WallNow()-start).Round(time.Millisecond), r.CPU.Round(time.Millisecond))
	var b strings.Builder
	r.Print(&b)
	t.Log("\n" + b.String())
	if !r.Complete() {
		t.Fatalf("delivery incomplete: delivered %v, expected %v", r.Delivered, r.Expected)
	}
	if r.MaxLag != 0 || r.Timing.MaxLagMs != 0 {
		t.Errorf("the periphery's schedule was late by %v (%.3f ms) on the virtual clock", r.MaxLag, r.Timing.MaxLagMs)
	}
	if l := r.Timing.Latency["attestation"]; l.Messages == 0 || l.P50Ms < 50 {
		t.Errorf("attestation latency %+v", l)
	}
	want := map[network.VirtualTransport]string{network.VirtualQUIC: network.TransportSimnet, network.VirtualMem: network.TransportMem}[vnet]
	if r.Network != want+" (virtual clock)" || r.In[gossip.Attestation].RawBytes == 0 {
		t.Errorf("network %q, attestation bytes %+v", r.Network, r.In[gossip.Attestation])
	}
}
