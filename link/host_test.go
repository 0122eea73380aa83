package link

import (
	"context"
	"encoding/binary"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
)

// newHost is a libp2p host as streamsim makes them (TCP, noise, yamux), on l's link.
func newHost(t testing.TB, l *Link) host.Host {
	t.Helper()
	h, err := libp2p.New(
		libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"),
		l.Transport(),
		libp2p.Security(noise.ID, noise.New),
		libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
		libp2p.ResourceManager(&network.NullResourceManager{}),
		libp2p.DisableRelay(),
		libp2p.DisableMetrics(),
		libp2p.Ping(false),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// TestHosts runs real libp2p hosts on links and measures, through streams, the one-way
// latency in both directions (±2 ms) and a bulk transfer's rate (±10 %).
func TestHosts(t *testing.T) {
	const rate = 16e6
	retry(t, func(at *attempt) {
		la := at.link(Shape{Region: "a", UpBitsPerSec: rate, DownBitsPerSec: rate})
		lb := at.link(Shape{Region: "b", UpBitsPerSec: 50e6, DownBitsPerSec: 50e6})
		lc := at.link(Shape{Region: "c", UpBitsPerSec: 50e6, DownBitsPerSec: 50e6})
		a, b, c := newHost(t, la), newHost(t, lb), newHost(t, lc)

		// b echoes 8-byte messages, each replaced by its own send time.
		oneWay := make(chan time.Duration, 16)
		b.SetStreamHandler("/echo", func(s network.Stream) {
			defer s.Close()
			var m [8]byte
			for {
				if _, err := io.ReadFull(s, m[:]); err != nil {
					return
				}
				sent := time.Unix(0, int64(binary.BigEndian.Uint64(m[:])))
				binary.BigEndian.PutUint64(m[:], uint64(time.Now().UnixNano()))
				s.Write(m[:])
				oneWay <- time.Since(sent)
			}
		})
		// The bulk transfer goes to c, 5 ms away: over a longer round trip, yamux's initial
		// 256 KiB stream window (filled at once into the send buffer) stalls the first MiB
		// for about one round trip, which is yamux's doing, not the link's.
		done := make(chan time.Time, 1)
		c.SetStreamHandler("/bulk", func(s network.Stream) {
			io.Copy(io.Discard, s)
			done <- time.Now()
			s.Close()
		})

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, h := range []host.Host{b, c} {
			if err := a.Connect(ctx, peer.AddrInfo{ID: h.ID(), Addrs: h.Addrs()}); err != nil {
				t.Fatal(err)
			}
		}
		s, err := a.NewStream(ctx, b.ID(), "/echo")
		if err != nil {
			t.Fatal(err)
		}
		var ab, ba []time.Duration
		var m [8]byte
		for i := range 6 {
			binary.BigEndian.PutUint64(m[:], uint64(time.Now().UnixNano()))
			if _, err := s.Write(m[:]); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(s, m[:]); err != nil {
				t.Fatal(err)
			}
			back := time.Since(time.Unix(0, int64(binary.BigEndian.Uint64(m[:]))))
			there := <-oneWay
			if i > 0 { // the first message also carries the stream's protocol negotiation
				ab, ba = append(ab, there), append(ba, back)
			}
		}
		s.Close()
		slices.Sort(ab)
		slices.Sort(ba)
		at.within("host a→b one-way latency (median of 5)", ab[2], 20*time.Millisecond, 2*time.Millisecond)
		at.within("host b→a one-way latency (median of 5)", ba[2], 35*time.Millisecond, 2*time.Millisecond)

		const n = 1 << 20
		before := la.Stats().UpBytes
		bs, err := a.NewStream(ctx, c.ID(), "/bulk")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := bs.Write(make([]byte, n)); err != nil {
			t.Fatal(err)
		}
		bs.CloseWrite()
		end := <-done
		wire := la.Stats().UpBytes - before
		if wire < n {
			t.Fatalf("a's uplink carried %d bytes for a %d-byte stream write", wire, n)
		}
		// The wire bytes (noise, yamux, negotiation) through a's 16 Mbit/s uplink, then 5 ms.
		want := expectedTransfer(int(wire), rate, 5*time.Millisecond)
		at.within("1 MiB over a libp2p stream from a 16 Mbit/s uplink", end.Sub(start), want, want/10)
		t.Logf("wire bytes %d for %d stream bytes (%.2f %% overhead)", wire, n, 100*float64(wire-n)/n)
	})
}

// TestOneHostPerLink: a Link shapes one host; a second host on it fails to start.
func TestOneHostPerLink(t *testing.T) {
	l := newLink(t, Shape{Region: "a"})
	newHost(t, l)
	_, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), l.Transport())
	if err == nil || !strings.Contains(err.Error(), "one Link per host") {
		t.Errorf("second host on one Link: %v, want an error saying one Link per host", err)
	}
}
