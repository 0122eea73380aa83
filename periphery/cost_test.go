package periphery_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/streamsim/streamsim/sim/network"
	"github.com/streamsim/streamsim/sim/node"

	"github.com/golang/snappy"
	pubsub "github.com/libp2p/go-libp2p-pubsub"

	"github.com/streamsim/streamsim/periphery"
	"github.com/streamsim/streamsim/topology"
)

// boundaryPeers is the boundary of one real node in the cost comparison: about what one
// all-subnets Lighthouse peer of the observed node needs (docs/inputs.md §9's b = 12–20).
const boundaryPeers = 16

// BenchmarkBoundary measures what the periphery costs per message it delivers, as full
// go-libp2p-pubsub nodes (node.Node) and as periphery.Peer, in one run so that both see the
// same machine: one real node (Lighthouse parameters, D 5/3/10) with 16 boundary peers; each
// message is published by two boundary peers (the real node gets it twice, as from two mesh
// peers outside), the real node forwards it to its mesh, which is boundary peers. Reported:
// process CPU per message (the real node's share is the same in both), heap and goroutines
// per boundary peer.
//
//	go test -run '^$' -bench BenchmarkBoundary -benchtime 4000x ./periphery/
func BenchmarkBoundary(b *testing.B) {
	for _, kind := range []string{"pubsub", "light"} {
		b.Run(kind, func(b *testing.B) { benchBoundary(b, kind) })
	}
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func heapInuse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

func benchBoundary(b *testing.B, kind string) {
	const scale = 4.0
	lh, _ := topology.ClientProfile("lighthouse")
	spec, _ := topology.ClientProfile("spec")
	d := node.Dilate(spec, scale)
	rh, err := network.NewHost("")
	if err != nil {
		b.Fatal(err)
	}
	real, err := node.NewNode(rh, node.WithTimeScale(scale), node.WithClient(lh))
	if err != nil {
		b.Fatal(err)
	}
	defer real.Close()
	rt, err := real.Topic(topic)
	if err != nil {
		b.Fatal(err)
	}
	sub, err := rt.Subscribe(pubsub.WithBufferSize(1 << 16))
	if err != nil {
		b.Fatal(err)
	}
	var got atomic.Int64
	go func() {
		for {
			if _, err := sub.Next(context.Background()); err != nil {
				return
			}
			got.Add(1)
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	heap0, g0 := heapInuse(), runtime.NumGoroutine()
	publish := make([]func([]byte) error, boundaryPeers)
	var received func() int64
	switch kind {
	case "pubsub":
		nodes := make([]*node.Node, boundaryPeers)
		for i := range nodes {
			h, err := network.NewHost("")
			if err != nil {
				b.Fatal(err)
			}
			n, err := node.NewNode(h, node.WithTimeScale(scale), node.WithClient(spec))
			if err != nil {
				b.Fatal(err)
			}
			defer n.Close()
			if err := h.Connect(ctx, real.AddrInfo()); err != nil {
				b.Fatal(err)
			}
			t, err := n.Topic(topic)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := t.Subscribe(pubsub.WithBufferSize(1 << 16)); err != nil {
				b.Fatal(err)
			}
			nodes[i] = n
			publish[i] = func(data []byte) error { return t.Publish(ctx, data) }
		}
		received = func() int64 {
			var s int64
			for _, n := range nodes {
				st := n.PubsubStats()
				s += st.Delivered + st.Duplicates
			}
			return s
		}
	case "light":
		peers := make([]*periphery.Peer, boundaryPeers)
		for i := range peers {
			h, err := network.NewHost("")
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			p, err := periphery.New(h.Host, periphery.Config{Topics: []string{topic}, Heartbeat: d.Heartbeat, PruneBackoff: d.PruneBackoff})
			if err != nil {
				b.Fatal(err)
			}
			if err := h.Connect(ctx, real.AddrInfo()); err != nil {
				b.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond) // the real node's stream to it opens first
			if err := p.Start(ctx, real.ID()); err != nil {
				b.Fatal(err)
			}
			peers[i] = p
			publish[i] = func(data []byte) error { return p.Publish(topic, data) }
		}
		received = func() int64 {
			var s int64
			for _, p := range peers {
				s += p.Stats().MessagesIn
			}
			return s
		}
	}
	time.Sleep(2 * time.Second) // meshes form (several heartbeats at 4×)
	heap1, g1 := heapInuse(), runtime.NumGoroutine()
	payloads := make([][]byte, b.N)
	for i := range payloads {
		raw := fmt.Appendf(make([]byte, 0, 240), "%-240d", i)
		payloads[i] = snappy.Encode(nil, raw)
	}
	recv0 := received()
	b.ResetTimer()
	cpu0, wall0 := cpuNow(), time.Now()
	for i, data := range payloads {
		if err := publish[i%boundaryPeers](data); err != nil {
			b.Fatal(err)
		}
		if err := publish[(i+7)%boundaryPeers](data); err != nil {
			b.Fatal(err)
		}
		if i%200 == 199 {
			time.Sleep(20 * time.Millisecond) // about 10 k messages/s at most
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for got.Load() < int64(b.N) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cpu, wall := cpuNow()-cpu0, time.Since(wall0)
	b.StopTimer()
	if got.Load() < int64(b.N) {
		b.Fatalf("%s: the real node got %d of %d messages", kind, got.Load(), b.N)
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu_us/msg")
	b.ReportMetric(float64(received()-recv0)/float64(b.N), "boundary_copies/msg")
	b.ReportMetric((float64(heap1)-float64(heap0))/boundaryPeers/1024, "heap_KiB/peer")
	b.ReportMetric(float64(g1-g0)/boundaryPeers, "goroutines/peer")
	b.ReportMetric(wall.Seconds()*1e6/float64(b.N), "wall_us/msg")
}
