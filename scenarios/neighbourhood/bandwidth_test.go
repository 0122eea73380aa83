package neighbourhood

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/streamsim/streamsim/sim/network"
	"github.com/streamsim/streamsim/sim/node"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/workload"
)

// A block's transmission time is modelled: a small neighbourhood on the virtual clock, with
// the latency model and validation delays off and every block reaching the real peers 100 ms
// after publication, delivers each block to the observed node no sooner than 100 ms plus the
// block's bytes at the classes' 10 Mbit/s (it crosses the observed node's downlink whole);
// with bandwidth off the same blocks arrive within a few ms of the 100 ms. Unmodified
// go-libp2p-pubsub on simnet, whose links carry the rates.
func TestBandwidthDelaysBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two small neighbourhoods of 4 real nodes for 3 slots of simulated time")
	}
	const rate = 10e6
	cfg := DefaultConfig()
	pop, err := ParseNeighbourhoodParams(map[string]string{topology.ParamObservedPeers: "4", ParamSubnets: "1",
		topology.ParamMix: "default:0.25,all-subnets:0.5,supernode:0.25", ParamBoundary: "8", ParamDialledShare: "1",
		ParamLatency: LatencyOff})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Population, cfg.Slots, cfg.Warmup, cfg.Validators, cfg.Churn = pop, 2, 1, 200_000, 0
	cfg.Validation = node.ValidationDelays{}
	// Independent arrival with every block at the real peers at one instant: the bound below.
	cfg.Arrival = Arrival{First: node.DelayRange{Min: 100 * time.Millisecond, Max: 100 * time.Millisecond}}
	cfg.Clock = network.ClockVirtual
	if cfg.Codec, err = codec.Parse("plain"); err != nil {
		t.Fatal(err)
	}
	// The measured blocks' sizes on the wire, from the run's own workload.
	wp := workload.DefaultParams()
	wp.Seed, wp.Validators, wp.ForkDigest = cfg.Seed, cfg.Validators, cfg.Population.ForkDigest
	gen, err := workload.NewGenerator(wp)
	if err != nil {
		t.Fatal(err)
	}
	minBlock := -1
	for s := range cfg.Warmup + cfg.Slots {
		msgs, err := gen.NextSlot()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if m.Category == gossip.Block && s >= cfg.Warmup && (minBlock < 0 || len(m.Data) < minBlock) {
				minBlock = len(m.Data)
			}
		}
	}
	if minBlock <= 0 {
		t.Fatal("no block in the measured slots")
	}
	tx := time.Duration(float64(minBlock) * 8 / rate * float64(time.Second))
	bound := cfg.Arrival.First.Min + tx
	run := func(bw Bandwidth) float64 {
		c := cfg
		c.Bandwidth = bw
		var r *Report
		var runErr error
		synctest.Test(t, func(t *testing.T) {
			vn := network.NewVirtualNetwork()
			defer vn.Close()
			c.Network = vn
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			r, runErr = Run(ctx, c)
		})
		if runErr != nil {
			t.Fatal(runErr)
		}
		if !r.Complete() {
			t.Fatalf("bandwidth %v: delivery incomplete: delivered %v, expected %v", bw, r.Delivered, r.Expected)
		}
		l := r.Timing.Latency[gossip.Block.String()]
		if l.Messages != cfg.Slots {
			t.Fatalf("bandwidth %v: %d block latencies, want %d", bw, l.Messages, cfg.Slots)
		}
		t.Logf("bandwidth %v: block latency p50 %.1f ms, p99 %.1f ms; smallest block %d B, %v at %g bit/s", bw, l.P50Ms, l.P99Ms, minBlock, tx, rate)
		return l.P50Ms
	}
	bw, err := ParseBandwidth(BandwidthClasses, "10Mbit", "10Mbit", "10Mbit")
	if err != nil {
		t.Fatal(err)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	if on := run(bw); on < ms(bound) {
		t.Errorf("bandwidth on: block latency p50 %.1f ms, below the first arrival plus the smallest block's transmission time (%.1f ms)", on, ms(bound))
	}
	if off := run(Bandwidth{}); off >= ms(bound) || off < ms(cfg.Arrival.First.Min) {
		t.Errorf("bandwidth off: block latency p50 %.1f ms, want within [%.1f, %.1f) ms", off, ms(cfg.Arrival.First.Min), ms(bound))
	}
}
