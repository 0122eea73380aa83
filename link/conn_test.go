package link

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	manet "github.com/multiformats/go-multiaddr/net"
)

// testRegions: a→b 20 ms, b→a 35 ms (asymmetric, to catch a swapped direction), a→a 1 ms.
func testRegions() Regions {
	ms := time.Millisecond
	return Regions{
		Regions: []Region{{"a", 1}, {"b", 1}, {"c", 1}},
		OneWay: [][]time.Duration{
			{1 * ms, 20 * ms, 5 * ms},
			{35 * ms, 1 * ms, 5 * ms},
			{5 * ms, 5 * ms, 1 * ms},
		},
	}
}

func newLink(t *testing.T, s Shape, opts ...Option) *Link {
	t.Helper()
	l, err := New(s, testRegions(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// pair connects a (dialer) to b over loopback TCP and returns both shaped ends.
func pair(t *testing.T, a, b *Link) (*conn, *conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type res struct {
		c   *conn
		err error
	}
	accepted := make(chan res, 1)
	go func() {
		raw, err := ln.Accept()
		if err != nil {
			accepted <- res{nil, err}
			return
		}
		m, err := manet.WrapNetConn(raw)
		if err != nil {
			accepted <- res{nil, err}
			return
		}
		c, err := b.handshake(context.Background(), m)
		accepted <- res{c, err}
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	m, err := manet.WrapNetConn(raw)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := a.handshake(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	r := <-accepted
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { ca.Close(); r.c.Close() })
	return ca, r.c
}

func within(t *testing.T, what string, got, want, tol time.Duration) {
	t.Helper()
	if got < want-tol || got > want+tol {
		t.Errorf("%s: %v, want %v ± %v", what, got, want, tol)
	} else {
		t.Logf("%s: %v (want %v ± %v)", what, got, want, tol)
	}
}

// transfer writes n random bytes on w and returns how long after the first Write the
// last byte was read from r, checking the bytes.
func transfer(t *testing.T, w, r net.Conn, n int) time.Duration {
	t.Helper()
	data := make([]byte, n)
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	got := make([]byte, n)
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := io.ReadFull(r, got)
		done <- err
	}()
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	if !bytes.Equal(got, data) {
		t.Fatal("received bytes differ from sent bytes")
	}
	return elapsed
}

// expectedTransfer is the time to push n bytes through a link at bitsPerSec, plus the
// one-way latency.
func expectedTransfer(n int, bitsPerSec int64, latency time.Duration) time.Duration {
	return latency + time.Duration(float64(n)*8/float64(bitsPerSec)*float64(time.Second))
}

func TestBulkRate(t *testing.T) {
	const rate = 16e6 // 2 MB/s
	const n = 1 << 20 // about half a second
	t.Run("uplink", func(t *testing.T) {
		a := newLink(t, Shape{Region: "a", UpBitsPerSec: rate})
		b := newLink(t, Shape{Region: "b"})
		ca, cb := pair(t, a, b)
		want := expectedTransfer(n, rate, 20*time.Millisecond)
		within(t, "1 MiB through a 16 Mbit/s uplink", transfer(t, ca, cb, n), want, want/10)
		if s := a.Stats(); s.UpBytes != n {
			t.Errorf("uplink counted %d bytes, want %d", s.UpBytes, n)
		}
	})
	t.Run("downlink", func(t *testing.T) {
		a := newLink(t, Shape{Region: "a"})
		b := newLink(t, Shape{Region: "b", DownBitsPerSec: rate})
		ca, cb := pair(t, a, b)
		want := expectedTransfer(n, rate, 20*time.Millisecond)
		within(t, "1 MiB through a 16 Mbit/s downlink", transfer(t, ca, cb, n), want, want/10)
		if s := b.Stats(); s.DownBytes != n {
			t.Errorf("downlink counted %d bytes, want %d", s.DownBytes, n)
		}
	})
}

// TestOneWayLatency times small messages one way, in both directions of an asymmetric
// pair and within a region, against the matrix (±2 ms on the median of 5).
func TestOneWayLatency(t *testing.T) {
	a := newLink(t, Shape{Region: "a", UpBitsPerSec: 50e6, DownBitsPerSec: 50e6})
	b := newLink(t, Shape{Region: "b", UpBitsPerSec: 50e6, DownBitsPerSec: 50e6})
	a2 := newLink(t, Shape{Region: "a", UpBitsPerSec: 50e6, DownBitsPerSec: 50e6})
	ab, ba := pair(t, a, b)
	aa, aa2 := pair(t, a2, newLink(t, Shape{Region: "a"}))
	for _, tc := range []struct {
		name string
		w, r net.Conn
		want time.Duration
	}{
		{"a→b", ab, ba, 20 * time.Millisecond},
		{"b→a", ba, ab, 35 * time.Millisecond},
		{"a→a", aa, aa2, 1 * time.Millisecond},
	} {
		var samples []time.Duration
		msg := make([]byte, 100)
		for range 5 {
			samples = append(samples, transfer(t, tc.w, tc.r, len(msg)))
		}
		slices.Sort(samples)
		within(t, "one-way latency "+tc.name+" (median of 5)", samples[2], tc.want, 2*time.Millisecond)
	}
}

// TestFairShare starts two bulk flows through one uplink at once: with fair sharing both
// finish together, when the uplink has carried both (FIFO by write would finish the first
// in half the time).
func TestFairShare(t *testing.T) {
	const rate = 16e6
	const n = 512 << 10
	a := newLink(t, Shape{Region: "a", UpBitsPerSec: rate})
	ab, b := pair(t, a, newLink(t, Shape{Region: "b"}))
	ac, c := pair(t, a, newLink(t, Shape{Region: "a"}))
	var wg sync.WaitGroup
	times := make([]time.Duration, 2)
	for i, p := range [][2]net.Conn{{ab, b}, {ac, c}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			times[i] = transfer(t, p[0], p[1], n)
		}()
	}
	wg.Wait()
	want := expectedTransfer(2*n, rate, 0)
	within(t, "flow to b (20 ms away) sharing the uplink", times[0], want+20*time.Millisecond, want/10)
	within(t, "flow to c (1 ms away) sharing the uplink", times[1], want+1*time.Millisecond, want/10)
}

// TestQueueGrows writes 20 messages of 10 kB at once into an 8 Mbit/s uplink: each arrives
// when the uplink has carried it and those before it (latency grows by 10 ms a message),
// and every byte arrives.
func TestQueueGrows(t *testing.T) {
	const rate = 8e6 // 1 MB/s
	const size, count = 10_000, 20
	a := newLink(t, Shape{Region: "a", UpBitsPerSec: rate})
	w, r := pair(t, a, newLink(t, Shape{Region: "b"}))
	data := make([]byte, size*count)
	for i := range data {
		data[i] = byte(i / size)
	}
	arrivals := make([]time.Duration, count)
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		buf := make([]byte, size)
		for i := range count {
			if _, err := io.ReadFull(r, buf); err != nil {
				done <- err
				return
			}
			arrivals[i] = time.Since(start)
			if !bytes.Equal(buf, data[i*size:(i+1)*size]) {
				done <- errors.New("message bytes differ")
				return
			}
		}
		done <- nil
	}()
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	chunk := chunkBytes(rate)
	for i, got := range arrivals {
		// A message is complete when the chunk holding its last byte arrives.
		end := ((i+1)*size + chunk - 1) / chunk * chunk
		want := expectedTransfer(end, rate, 20*time.Millisecond)
		tol := max(2*time.Millisecond, (want-20*time.Millisecond)/10)
		if got < want-tol || got > want+tol {
			t.Errorf("message %d arrived after %v, want %v ± %v", i, got, want, tol)
		}
	}
	t.Logf("first message after %v, last after %v", arrivals[0], arrivals[count-1])
}

// TestBackpressure: with a 64 KiB send buffer, a 256 KiB Write returns only when all but
// the last 64 KiB have reached the socket; a write deadline interrupts a blocked Write.
func TestBackpressure(t *testing.T) {
	const rate = 8e6 // 1 MB/s
	a := newLink(t, Shape{Region: "a", UpBitsPerSec: rate}, WithSendBuffer(64<<10))
	w, r := pair(t, a, newLink(t, Shape{Region: "b"}))
	go io.Copy(io.Discard, r)
	start := time.Now()
	if _, err := w.Write(make([]byte, 256<<10)); err != nil {
		t.Fatal(err)
	}
	// The last 64 KiB still wait; the rest has left the uplink and spent 20 ms in flight.
	want := expectedTransfer(192<<10, rate, 20*time.Millisecond)
	within(t, "256 KiB Write into a 64 KiB send buffer returned after", time.Since(start), want, want/10)

	w.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	n, err := w.Write(make([]byte, 256<<10))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write past its deadline returned %v, want a deadline error", err)
	}
	if n == 0 || n >= 256<<10 {
		t.Errorf("Write past its deadline accepted %d bytes, want some but not all", n)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("deadline error %v is not a net.Error timeout", err)
	}
}

// TestCloseDelivers: bytes written before Close still arrive, then EOF; Write after
// Close fails.
func TestCloseDelivers(t *testing.T) {
	a := newLink(t, Shape{Region: "a", UpBitsPerSec: 8e6})
	w, r := pair(t, a, newLink(t, Shape{Region: "b"}))
	msg := bytes.Repeat([]byte("x"), 50_000)
	if _, err := w.Write(msg); err != nil {
		t.Fatal(err)
	}
	w.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, msg) {
		t.Errorf("read %d bytes after the writer closed, want %d", len(got), len(msg))
	}
	if _, err := w.Write([]byte("y")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Write after Close: %v, want net.ErrClosed", err)
	}
	if _, err := w.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Read after Close: %v, want net.ErrClosed", err)
	}
}

// TestHandshakeErrors: a peer that does not send the preamble, and one from a region the
// matrix lacks, are refused with errors that say so.
func TestHandshakeErrors(t *testing.T) {
	l := newLink(t, Shape{Region: "a"})
	for _, tc := range []struct {
		name, send, want string
	}{
		{"plain libp2p peer", "/multistream/1.0.0\n/noise\n", "not the region preamble"},
		{"unknown region", preambleMagic + "\x04mars", `unknown region "mars"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				io.WriteString(c, tc.send)
				io.Copy(io.Discard, c)
			}()
			raw, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			m, err := manet.WrapNetConn(raw)
			if err != nil {
				t.Fatal(err)
			}
			_, err = l.handshake(context.Background(), m)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("handshake error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
