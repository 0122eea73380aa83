package memnet_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/streamsim/streamsim/link"
	"github.com/streamsim/streamsim/memnet"
)

// regions: a→b 20 ms, b→a 35 ms, a→c 5 ms.
func regions() link.Regions {
	ms := time.Millisecond
	return link.Regions{
		Regions: []link.Region{{Name: "a", Weight: 1}, {Name: "b", Weight: 1}, {Name: "c", Weight: 1}},
		OneWay:  [][]time.Duration{{0, 20 * ms, 5 * ms}, {35 * ms, 0, 20 * ms}, {5 * ms, 20 * ms, 0}},
	}
}

var nextIP = 0

// newHost is a host on sb as network.VirtualNetwork makes them: native streams, no socket.
func newHost(t *testing.T, sb *memnet.Switchboard, lk *link.Link) host.Host {
	t.Helper()
	nextIP++
	var shaper memnet.Shaper
	if lk != nil {
		shaper = lk
	}
	h, err := libp2p.New(
		libp2p.ListenAddrStrings(fmt.Sprintf("/ip4/10.0.0.%d/tcp/0", nextIP)),
		libp2p.NoTransports,
		memnet.Option(sb, shaper),
		libp2p.ResourceManager(&network.NullResourceManager{}),
		libp2p.DisableIdentifyAddressDiscovery(),
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

// newSwitchboard is a switchboard whose connections must all be closed within a minute of
// the test's hosts closing (cleanups run last-registered first: this one after the hosts').
// A shaped connection delivers what it accepted after it closes, as a kernel does; the bubble
// must outlast that.
func newSwitchboard(t *testing.T) *memnet.Switchboard {
	sb := memnet.NewSwitchboard()
	t.Cleanup(func() {
		if open := sb.Drain(time.Minute); open != 0 {
			t.Errorf("%d connection ends still open a minute after the hosts closed", open)
		}
	})
	return sb
}

func connect(t *testing.T, a, b host.Host) {
	t.Helper()
	if err := a.Connect(context.Background(), peer.AddrInfo{ID: b.ID(), Addrs: b.Addrs()}); err != nil {
		t.Fatal(err)
	}
}

func within(t *testing.T, what string, got, want, tol time.Duration) {
	t.Helper()
	if got < want-tol || got > want+tol {
		t.Errorf("%s: %v in simulated time, want %v ± %v", what, got, want, tol)
	} else {
		t.Logf("%s: %v (want %v ± %v)", what, got, want, tol)
	}
}

// TestUnshapedStreams: two hosts in a bubble, streams both ways carry random bytes intact,
// and on unshaped links no simulated time passes.
func TestUnshapedStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sb := newSwitchboard(t)
		a, b := newHost(t, sb, nil), newHost(t, sb, nil)
		// Each host echoes what it reads on /echo.
		for _, h := range []host.Host{a, b} {
			h.SetStreamHandler("/echo", func(s network.Stream) {
				io.Copy(s, s)
				s.Close()
			})
		}
		connect(t, a, b)
		start := time.Now()
		for _, dir := range [][2]host.Host{{a, b}, {b, a}} {
			s, err := dir[0].NewStream(context.Background(), dir[1].ID(), "/echo")
			if err != nil {
				t.Fatal(err)
			}
			msg := make([]byte, 3<<20+17)
			rand.Read(msg)
			go func() {
				s.Write(msg)
				s.CloseWrite()
			}()
			got, err := io.ReadAll(s)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, msg) {
				t.Fatalf("%d bytes echoed back as %d bytes, not identical", len(msg), len(got))
			}
			s.Close()
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("unshaped transfers took %v of simulated time, want 0", d)
		}
	})
}

// TestShapedLink: link's latency and rate, in simulated time. One-way latencies are the
// regions' within 1 ms (link aims its timers half a millisecond early, as it does on the
// real clock), and 1 MiB from a 16 Mbit/s uplink takes its wire bytes' time plus the latency
// within 5 %.
func TestShapedLink(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate = 16e6
		lk := func(s link.Shape) *link.Link {
			l, err := link.New(s, regions())
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		la := lk(link.Shape{Region: "a", UpBitsPerSec: rate, DownBitsPerSec: rate})
		sb := newSwitchboard(t)
		a := newHost(t, sb, la)
		b := newHost(t, sb, lk(link.Shape{Region: "b", UpBitsPerSec: 50e6, DownBitsPerSec: 50e6}))
		c := newHost(t, sb, lk(link.Shape{Region: "c"}))

		oneWay := make(chan time.Duration, 16)
		b.SetStreamHandler("/echo", func(s network.Stream) {
			defer s.Close()
			var m [8]byte
			for {
				if _, err := io.ReadFull(s, m[:]); err != nil {
					return
				}
				sent := time.Unix(0, int64(binary.BigEndian.Uint64(m[:])))
				oneWay <- time.Since(sent)
				binary.BigEndian.PutUint64(m[:], uint64(time.Now().UnixNano()))
				s.Write(m[:])
			}
		})
		done := make(chan time.Time, 1)
		c.SetStreamHandler("/bulk", func(s network.Stream) {
			io.Copy(io.Discard, s)
			done <- time.Now()
			s.Close()
		})
		connect(t, a, b)
		connect(t, a, c)
		s, err := a.NewStream(context.Background(), b.ID(), "/echo")
		if err != nil {
			t.Fatal(err)
		}
		var m [8]byte
		for i := range 4 {
			binary.BigEndian.PutUint64(m[:], uint64(time.Now().UnixNano()))
			if _, err := s.Write(m[:]); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(s, m[:]); err != nil {
				t.Fatal(err)
			}
			back := time.Since(time.Unix(0, int64(binary.BigEndian.Uint64(m[:]))))
			there := <-oneWay
			if i > 0 { // the first also carries protocol negotiation
				within(t, "a→b one-way latency", there, 20*time.Millisecond, time.Millisecond)
				within(t, "b→a one-way latency", back, 35*time.Millisecond, time.Millisecond)
			}
		}
		s.Close()

		const n = 1 << 20
		before := la.Stats().UpBytes
		bs, err := a.NewStream(context.Background(), c.ID(), "/bulk")
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
			t.Fatalf("a's uplink carried %d bytes for a %d-byte write", wire, n)
		}
		want := 5*time.Millisecond + time.Duration(float64(wire)*8/rate*float64(time.Second))
		within(t, "1 MiB from a 16 Mbit/s uplink", end.Sub(start), want, want/20)
	})
}

// TestCloseAndReset: a reset stream fails the peer's read; a closed host's connections end
// at the peer; a dial to an address nobody listens on is refused.
func TestCloseAndReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sb := newSwitchboard(t)
		a, b := newHost(t, sb, nil), newHost(t, sb, nil)
		readErr := make(chan error, 1)
		started := make(chan struct{})
		b.SetStreamHandler("/r", func(s network.Stream) {
			var one [1]byte
			if _, err := io.ReadFull(s, one[:]); err != nil {
				readErr <- err
				return
			}
			close(started)
			_, err := io.ReadAll(s)
			readErr <- err
		})
		connect(t, a, b)
		s, err := a.NewStream(context.Background(), b.ID(), "/r")
		if err != nil {
			t.Fatal(err)
		}
		s.Write([]byte("x"))
		<-started
		s.Reset()
		if err := <-readErr; err == nil {
			t.Error("the peer of a reset stream read to EOF, want an error")
		}
		b.Close()
		synctest.Wait()
		if got := a.Network().Connectedness(b.ID()); got == network.Connected {
			t.Errorf("a still connected to b after b closed")
		}
		c := newHost(t, sb, nil)
		addrs := c.Addrs()
		c.Close()
		err = a.Connect(context.Background(), peer.AddrInfo{ID: c.ID(), Addrs: addrs})
		if err == nil {
			t.Errorf("dial to a closed host: %v, want an error", err)
		}
	})
}
