package neighbourhood

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/streamsim/streamsim/internal/longtest"
	"github.com/streamsim/streamsim/sim/network"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
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
	checkBySlot(t, r)
}

// checkBySlot holds a run's per-slot bytes to its totals: one interval per measured slot,
// ending later each time, the last holding the drain slot (at least a slot long), and per
// category and direction the intervals' raw and wire bytes add up to the run's In and Out
// exactly; the JSON summary carries the series, and every control kind both ways.
func checkBySlot(t *testing.T, r *Report) {
	t.Helper()
	bs := r.BySlot
	if len(bs) != r.Config.Slots {
		t.Fatalf("%d per-slot intervals for %d measured slots: %+v", len(bs), r.Config.Slots, bs)
	}
	prev := 0.0
	for i, s := range bs {
		if s.Slot <= prev {
			t.Errorf("interval %d ends at slot %g, not after the previous (%g)", i, s.Slot, prev)
		}
		if i < len(bs)-1 {
			prev = s.Slot
		}
	}
	if last := bs[len(bs)-1].Slot; last-prev < 1 {
		t.Errorf("the last interval runs from slot %g to %g: it should hold the drain slot", prev, last)
	}
	for dir, total := range map[string]map[gossip.Category]result.CategoryBytes{"in": r.In, "out": r.Out} {
		sum := map[gossip.Category]result.CategoryBytes{}
		for _, s := range bs {
			m := s.In
			if dir == "out" {
				m = s.Out
			}
			for c, b := range m {
				if b.RawBytes < 0 || b.WireBytes < 0 {
					t.Errorf("%s %s at slot %g: %+v", dir, c, s.Slot, b)
				}
				v := sum[c]
				v.RawBytes += b.RawBytes
				v.WireBytes += b.WireBytes
				sum[c] = v
			}
		}
		for _, c := range gossip.Categories() {
			if sum[c] != total[c] {
				t.Errorf("%s %s: the intervals add up to %+v, the run's total is %+v", dir, c, sum[c], total[c])
			}
		}
		// Inbound, every run carries attestations and control. Outbound, the observed node
		// forwards an attestation only to a mesh peer that has not sent it the message first:
		// on a small subnet (4 subscribed peers, a mesh of 1 to 3) its peers can be upstream
		// of it for every message of two slots (seen in CI), so out asks for control and
		// some gossip, not attestations.
		var gossipOut int64
		for _, c := range gossip.Categories() {
			if c != gossip.Control {
				gossipOut += total[c].WireBytes
			}
		}
		if (dir == "in" && total[gossip.Attestation].WireBytes == 0) || total[gossip.Control].WireBytes == 0 || gossipOut == 0 {
			t.Errorf("%s: no attestation, control or gossip bytes: %+v", dir, total)
		}
	}
	js, err := json.Marshal(r.Summary())
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.BySlot, bs) {
		t.Errorf("the JSON summary's by_slot %+v, the run's %+v", back.BySlot, bs)
	}
	for _, k := range gossip.ControlKinds() {
		if _, ok := back.Control[k.String()]; !ok {
			t.Errorf("control_in lacks %s", k)
		}
		if _, ok := back.ControlOut[k.String()]; !ok {
			t.Errorf("control_out lacks %s", k)
		}
	}
}
