package link

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	"github.com/libp2p/go-libp2p/x/simlibp2p"
	"github.com/marcopolo/simnet"

	"github.com/streamsim/streamsim/units"
)

// cpuTime is the process's user + system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchRate and benchLatency shape both the link and simnet variants: an ordinary node's
// 50 Mbit/s and a short one-way latency.
const (
	benchRate    = 50e6
	benchLatency = 10 * time.Millisecond
	mib          = 1 << 20
)

// pipe is one sending host's stream to a receiving host that counts what arrives.
type pipe struct {
	name     string
	s        network.Stream
	received atomic.Int64
	arrived  chan struct{} // capacity 1: received grew
}

func connectPipe(b *testing.B, name string, a, z host.Host) *pipe {
	p := &pipe{name: name, arrived: make(chan struct{}, 1)}
	z.SetStreamHandler("/sink", func(s network.Stream) {
		buf := make([]byte, 64<<10)
		for {
			n, err := s.Read(buf)
			if n > 0 {
				p.received.Add(int64(n))
				notify(p.arrived)
			}
			if err != nil {
				return
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Connect(ctx, peer.AddrInfo{ID: z.ID(), Addrs: z.Addrs()}); err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	s, err := a.NewStream(ctx, z.ID(), "/sink")
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	p.s = s
	return p
}

// send writes n bytes in writes of size w and waits until all have arrived.
func (p *pipe) send(b *testing.B, n, w int) {
	want := p.received.Load() + int64(n)
	msg := make([]byte, w)
	for sent := 0; sent < n; sent += w {
		if _, err := p.s.Write(msg); err != nil {
			b.Fatalf("%s: %v", p.name, err)
		}
	}
	p.await(b, want)
}

// await waits until the sink has received want bytes in all.
func (p *pipe) await(b *testing.B, want int64) {
	timeout := time.After(30 * time.Second)
	for p.received.Load() < want {
		select {
		case <-p.arrived:
		case <-timeout:
			b.Fatalf("%s: %d bytes arrived, want %d", p.name, p.received.Load(), want)
		}
	}
}

// tcpPipes are k pairs of hosts on go-libp2p's TCP transport, unshaped.
func tcpPipes(b *testing.B, k int) []*pipe {
	mk := func() host.Host {
		h, err := libp2p.New(
			libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"),
			libp2p.Transport(tcp.NewTCPTransport),
			libp2p.Security(noise.ID, noise.New),
			libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
			libp2p.ResourceManager(&network.NullResourceManager{}),
			libp2p.DisableRelay(), libp2p.DisableMetrics(), libp2p.Ping(false),
		)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { h.Close() })
		return h
	}
	var out []*pipe
	for range k {
		out = append(out, connectPipe(b, "tcp", mk(), mk()))
	}
	return out
}

// linkPipes are k pairs of hosts on links at bitsPerSec up and down, latency apart.
func linkPipes(b *testing.B, k int, bitsPerSec int64, latency time.Duration) []*pipe {
	regions := Regions{Regions: []Region{{"x", 1}, {"y", 1}}, OneWay: [][]time.Duration{{0, latency}, {latency, 0}}}
	mk := func(region string) host.Host {
		l, err := New(Shape{Region: region, UpBitsPerSec: bitsPerSec, DownBitsPerSec: bitsPerSec}, regions)
		if err != nil {
			b.Fatal(err)
		}
		return newHost(b, l)
	}
	var out []*pipe
	for range k {
		out = append(out, connectPipe(b, fmt.Sprintf("link %s %v", units.FormatBitsPerSec(bitsPerSec), latency), mk("x"), mk("y")))
	}
	return out
}

// simnetPipes are k pairs of hosts on go-libp2p's x/simlibp2p: QUIC over marcopolo/simnet's
// simulated UDP, with per-node uplink and downlink and per-packet latency, as
// go-libp2p-pubsub's tests use it.
func simnetPipes(b *testing.B, k int) []*pipe {
	sn := &simnet.Simnet{LatencyFunc: simnet.StaticLatency(benchLatency)}
	settings := simnet.NodeBiDiLinkSettings{
		Downlink: simnet.LinkSettings{BitsPerSecond: benchRate},
		Uplink:   simnet.LinkSettings{BitsPerSecond: benchRate},
	}
	mk := func(i int) host.Host {
		h, err := libp2p.New(
			libp2p.ListenAddrStrings(fmt.Sprintf("/ip4/%s/udp/8000/quic-v1", simnet.IntToPublicIPv4(i))),
			simlibp2p.QUICSimnet(sn, settings),
			libp2p.DisableIdentifyAddressDiscovery(),
			libp2p.ResourceManager(&network.NullResourceManager{}),
			libp2p.DisableRelay(), libp2p.DisableMetrics(), libp2p.Ping(false),
		)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { h.Close() })
		return h
	}
	b.Cleanup(sn.Close) // cleanups run last first: the hosts close before the network
	hosts := make([]host.Host, 2*k)
	for i := range hosts {
		hosts[i] = mk(i)
	}
	sn.Start()
	var out []*pipe
	for i := range k {
		out = append(out, connectPipe(b, "simnet", hosts[2*i], hosts[2*i+1]))
	}
	return out
}

// variants are the transports the benchmarks compare, k host pairs each, all real libp2p
// hosts (TCP or QUIC, noise or TLS, yamux) in this process: unshaped TCP, the link at
// 50 Mbit/s and 10 ms, the link unlimited with no latency, and simnet at 50 Mbit/s and
// 10 ms.
func variants(b *testing.B, k int) ([][]*pipe, []string) {
	return [][]*pipe{tcpPipes(b, k), linkPipes(b, k, benchRate, benchLatency), linkPipes(b, k, 0, 0), simnetPipes(b, k)},
		[]string{"tcp", "link50M", "linkUnlimited", "simnet50M"}
}

// reportCPU reports each variant's CPU per unit and its ratio to the first (TCP).
func reportCPU(b *testing.B, names []string, cpu []time.Duration, units float64, unit string) {
	per := func(i int) float64 { return float64(cpu[i].Nanoseconds()) / 1e3 / units }
	for i, name := range names {
		b.ReportMetric(per(i), "cpu-µs/"+unit+"-"+name)
		if i > 0 {
			b.ReportMetric(per(i)/per(0), "x-tcp-"+name)
		}
	}
}

// BenchmarkBulkCPU moves 1 MiB per iteration through one host pair of each variant, one
// after the other, and reports the process CPU per MiB of each (both ends together,
// measured with getrusage) and the ratios to TCP; ns/op is the four transfers' wall time.
// Writes are 512 B (an attestation RPC) or 64 KiB.
func BenchmarkBulkCPU(b *testing.B) {
	for _, w := range []int{512, 64 << 10} {
		b.Run(fmt.Sprintf("write=%dB", w), func(b *testing.B) {
			pipes, names := variants(b, 1)
			for _, p := range pipes {
				p[0].send(b, mib, w) // warm up: stream windows, QUIC's congestion window
			}
			cpu := make([]time.Duration, len(pipes))
			b.ResetTimer()
			for range b.N {
				for i, p := range pipes {
					before := cpuTime(b)
					p[0].send(b, mib, w)
					cpu[i] += cpuTime(b) - before
				}
			}
			b.StopTimer()
			reportCPU(b, names, cpu, float64(b.N), "MiB")
		})
	}
}

// BenchmarkMessageCPU is gossip-like traffic: 8 host pairs of each variant at once, each
// sending 500 messages of 512 B, one about every millisecond, without waiting for them
// (8000 messages/s in all; with 10 ms of latency about 80 are in flight). Each message
// travels alone, so the link's per-message work (a timer for its due time) is not shared.
// It reports the process CPU per message and the ratios to TCP.
func BenchmarkMessageCPU(b *testing.B) {
	const pairs, count, size = 8, 500, 512
	pipes, names := variants(b, pairs)
	cpu := make([]time.Duration, len(pipes))
	msg := make([]byte, size)
	b.ResetTimer()
	for range b.N {
		for i, ps := range pipes {
			before := cpuTime(b)
			var wg sync.WaitGroup
			for _, p := range ps {
				wg.Add(1)
				go func() {
					defer wg.Done()
					want := p.received.Load() + count*size
					for range count {
						if _, err := p.s.Write(msg); err != nil {
							b.Errorf("%s: %v", p.name, err)
							return
						}
						time.Sleep(time.Millisecond)
					}
					p.await(b, want)
				}()
			}
			wg.Wait()
			cpu[i] += cpuTime(b) - before
		}
	}
	b.StopTimer()
	reportCPU(b, names, cpu, float64(b.N*pairs*count), "msg")
}
