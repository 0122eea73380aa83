package link

import (
	"context"
	"fmt"
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
	timeout := time.After(30 * time.Second)
	for p.received.Load() < want {
		select {
		case <-p.arrived:
		case <-timeout:
			b.Fatalf("%s: %d of %d bytes arrived", p.name, p.received.Load()-want+int64(n), n)
		}
	}
}

func tcpPipe(b *testing.B) *pipe {
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
	return connectPipe(b, "tcp", mk(), mk())
}

func linkPipe(b *testing.B, bitsPerSec int64, latency time.Duration) *pipe {
	regions := Regions{Regions: []Region{{"x", 1}, {"y", 1}}, OneWay: [][]time.Duration{{0, latency}, {latency, 0}}}
	mk := func(region string) host.Host {
		l, err := New(Shape{Region: region, UpBitsPerSec: bitsPerSec, DownBitsPerSec: bitsPerSec}, regions)
		if err != nil {
			b.Fatal(err)
		}
		return newHost(b, l)
	}
	return connectPipe(b, fmt.Sprintf("link %s %v", FormatBitsPerSec(bitsPerSec), latency), mk("x"), mk("y"))
}

// simnetPipe is go-libp2p's x/simlibp2p: QUIC over marcopolo/simnet's simulated UDP, with
// per-node uplink and downlink and per-packet latency, as go-libp2p-pubsub's tests use it.
func simnetPipe(b *testing.B) *pipe {
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
	a, z := mk(0), mk(1)
	sn.Start()
	b.Cleanup(sn.Close)
	return connectPipe(b, "simnet", a, z)
}

// BenchmarkShapingCPU moves 1 MiB per iteration through each of: unshaped TCP, the link
// at 50 Mbit/s and 10 ms, the link unlimited with no latency, and simnet (QUIC) at
// 50 Mbit/s and 10 ms, all real libp2p hosts in this process; it reports the process CPU
// per MiB of each (both ends together) and their ratios to TCP. Writes are 512 B (the
// size of an attestation RPC) or 64 KiB (bulk).
func BenchmarkShapingCPU(b *testing.B) {
	for _, w := range []int{512, 64 << 10} {
		b.Run(fmt.Sprintf("write=%dB", w), func(b *testing.B) {
			pipes := []*pipe{tcpPipe(b), linkPipe(b, benchRate, benchLatency), linkPipe(b, 0, 0), simnetPipe(b)}
			names := []string{"tcp", "link50M", "linkUnlimited", "simnet50M"}
			for _, p := range pipes {
				p.send(b, mib, w) // warm up: connection windows, QUIC slow start
			}
			cpu := make([]time.Duration, len(pipes))
			b.SetBytes(mib)
			b.ResetTimer()
			for range b.N {
				for i, p := range pipes {
					before := cpuTime(b)
					p.send(b, mib, w)
					cpu[i] += cpuTime(b) - before
				}
			}
			b.StopTimer()
			perMiB := func(i int) float64 { return float64(cpu[i].Microseconds()) / 1000 / float64(b.N) }
			for i, name := range names {
				b.ReportMetric(perMiB(i), "cpu-ms/MiB-"+name)
				if i > 0 {
					b.ReportMetric(perMiB(i)/perMiB(0), "x-tcp-"+name)
				}
			}
			b.ReportMetric(perMiB(3)/perMiB(1), "simnet/link")
		})
	}
}
