package link

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
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

// attempt is one try of a timing check: its checks collect misses instead of failing, and
// it remembers its links to report their timer lateness.
type attempt struct {
	t      *testing.T
	misses []string
	links  []*Link
}

// link makes a link on testRegions for this attempt.
func (a *attempt) link(s Shape, opts ...Option) *Link {
	a.t.Helper()
	l := newLink(a.t, s, opts...)
	a.links = append(a.links, l)
	return l
}

func (a *attempt) within(what string, got, want, tol time.Duration) {
	a.t.Helper()
	if got < want-tol || got > want+tol {
		a.misses = append(a.misses, fmt.Sprintf("%s: %v, want %v ± %v", what, got, want, tol))
	} else {
		a.t.Logf("%s: %v (want %v ± %v)", what, got, want, tol)
	}
}

// retry runs a timing check up to three times and fails only if every attempt misses.
// The model is deterministic and a loaded machine only delays it (a late timer, a starved
// process), so one clean attempt shows the model right; the misses are reported with how
// late the links' timers woke and how busy the machine was, which tells a saturated machine
// from a wrong model. When every attempt missed on a machine busy with other work (85 % or
// more of its CPU, niced jobs aside: `go test ./...` runs packages in parallel), the check is
// skipped as unmeasurable there, saying so, unless STREAMSIM_TIMING_STRICT is set (CI runs
// this package alone that way, on a quiet machine, where it must pass).
func retry(t *testing.T, check func(a *attempt)) {
	t.Helper()
	var report []string
	saturated := 0
	for i := 1; i <= 3; i++ {
		a := &attempt{t: t}
		b0, t0, ok0 := MachineBusy()
		check(a)
		if t.Failed() || len(a.misses) == 0 {
			return
		}
		busy := -1.0
		if b1, t1, ok1 := MachineBusy(); ok0 && ok1 && t1 > t0 {
			busy = float64(b1-b0) / float64(t1-t0)
		}
		if busy >= 0.85 {
			saturated++
		}
		var late, lateMax time.Duration
		for _, l := range a.links {
			s := l.Stats()
			late, lateMax = max(late, s.LateMean), max(lateMax, s.LateMax)
		}
		msg := fmt.Sprintf("attempt %d (machine %.0f %% busy; timers woke %v late on average, %v at most): %s", i, 100*busy, late, lateMax, strings.Join(a.misses, "; "))
		t.Log(msg)
		report = append(report, msg)
	}
	if saturated == 3 && os.Getenv("STREAMSIM_TIMING_STRICT") == "" {
		t.Skipf("machine saturated by other work in every attempt; timing not measurable here (STREAMSIM_TIMING_STRICT=1 makes this a failure):\n%s", strings.Join(report, "\n"))
	}
	t.Errorf("every attempt missed:\n%s", strings.Join(report, "\n"))
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
		retry(t, func(a *attempt) {
			la := a.link(Shape{Region: "a", UpBitsPerSec: rate})
			ca, cb := pair(t, la, a.link(Shape{Region: "b"}))
			want := expectedTransfer(n, rate, 20*time.Millisecond)
			a.within("1 MiB through a 16 Mbit/s uplink", transfer(t, ca, cb, n), want, want/10)
			if s := la.Stats(); s.UpBytes != n {
				t.Errorf("uplink counted %d bytes, want %d", s.UpBytes, n)
			}
		})
	})
	t.Run("downlink", func(t *testing.T) {
		retry(t, func(a *attempt) {
			lb := a.link(Shape{Region: "b", DownBitsPerSec: rate})
			ca, cb := pair(t, a.link(Shape{Region: "a"}), lb)
			want := expectedTransfer(n, rate, 20*time.Millisecond)
			a.within("1 MiB through a 16 Mbit/s downlink", transfer(t, ca, cb, n), want, want/10)
			if s := lb.Stats(); s.DownBytes != n {
				t.Errorf("downlink counted %d bytes, want %d", s.DownBytes, n)
			}
		})
	})
}

// TestOneWayLatency times small messages one way, in both directions of an asymmetric
// pair and within a region, against the matrix (±2 ms on the median of 5).
func TestOneWayLatency(t *testing.T) {
	retry(t, func(a *attempt) {
		ab, ba := pair(t, a.link(Shape{Region: "a", UpBitsPerSec: 50e6, DownBitsPerSec: 50e6}),
			a.link(Shape{Region: "b", UpBitsPerSec: 50e6, DownBitsPerSec: 50e6}))
		aa, aa2 := pair(t, a.link(Shape{Region: "a", UpBitsPerSec: 50e6, DownBitsPerSec: 50e6}), a.link(Shape{Region: "a"}))
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
			for range 5 {
				samples = append(samples, transfer(t, tc.w, tc.r, 100))
			}
			slices.Sort(samples)
			a.within("one-way latency "+tc.name+" (median of 5)", samples[2], tc.want, 2*time.Millisecond)
		}
	})
}

// TestFairShare starts two bulk flows through one uplink, and two through one downlink,
// at once: with fair sharing both finish together, when the link has carried both (FIFO
// by write would finish the first in half the time).
func TestFairShare(t *testing.T) {
	const rate = 16e6
	const n = 512 << 10
	both := func(pairs [2][2]net.Conn) [2]time.Duration {
		var wg sync.WaitGroup
		var times [2]time.Duration
		for i, p := range pairs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				times[i] = transfer(t, p[0], p[1], n)
			}()
		}
		wg.Wait()
		return times
	}
	want := expectedTransfer(2*n, rate, 0)
	t.Run("uplink", func(t *testing.T) {
		retry(t, func(a *attempt) {
			la := a.link(Shape{Region: "a", UpBitsPerSec: rate})
			ab, b := pair(t, la, a.link(Shape{Region: "b"}))
			ac, c := pair(t, la, a.link(Shape{Region: "a"}))
			times := both([2][2]net.Conn{{ab, b}, {ac, c}})
			a.within("flow to b (20 ms away) sharing the uplink", times[0], want+20*time.Millisecond, want/10)
			a.within("flow to c (1 ms away) sharing the uplink", times[1], want+1*time.Millisecond, want/10)
		})
	})
	t.Run("downlink", func(t *testing.T) {
		retry(t, func(a *attempt) {
			la := a.link(Shape{Region: "a", DownBitsPerSec: rate})
			ba, b := pair(t, a.link(Shape{Region: "b"}), la)
			ca, c := pair(t, a.link(Shape{Region: "a"}), la)
			times := both([2][2]net.Conn{{ba, b}, {ca, c}})
			// c's bytes arrive from 1 ms, b's from 35 ms: c has the downlink alone for 34 ms,
			// then they share it until c is done; the link is busy throughout, so b finishes
			// when both are through.
			alone := int(34 * time.Millisecond * rate / 8 / time.Second)
			wantC := 35*time.Millisecond + 2*expectedTransfer(n-alone, rate, 0)
			a.within("flow from c (1 ms away) sharing the downlink", times[1], wantC, wantC/10)
			a.within("flow from b (35 ms away) sharing the downlink", times[0], want+1*time.Millisecond, want/10)
		})
	})
}

// TestQueueGrows writes 20 messages of 10 kB at once into an 8 Mbit/s uplink: each arrives
// when the uplink has carried it and those before it (latency grows by 10 ms a message),
// and every byte arrives.
func TestQueueGrows(t *testing.T) {
	const rate = 8e6 // 1 MB/s
	const size, count = 10_000, 20
	data := make([]byte, size*count)
	for i := range data {
		data[i] = byte(i / size)
	}
	retry(t, func(a *attempt) {
		w, r := pair(t, a.link(Shape{Region: "a", UpBitsPerSec: rate}), a.link(Shape{Region: "b"}))
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
			if tol := max(2*time.Millisecond, (want-20*time.Millisecond)/10); got < want-tol || got > want+tol {
				a.misses = append(a.misses, fmt.Sprintf("message %d arrived after %v, want %v ± %v", i, got, want, tol))
			}
		}
		t.Logf("first of %d messages after %v, last after %v", count, arrivals[0], arrivals[count-1])
	})
}

// TestPipelined is the mocknet case: 100 writes of 300 B, one after another, over
// a 20 ms link. mocknet blocks each write until the previous one arrives (1.27 s at
// 25 ms); here they are all in flight at once and the last arrives after the latency plus
// the uplink's time for all 30 kB.
func TestPipelined(t *testing.T) {
	const rate = 50e6
	const size, count = 300, 100
	retry(t, func(a *attempt) {
		w, r := pair(t, a.link(Shape{Region: "a", UpBitsPerSec: rate}), a.link(Shape{Region: "b"}))
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := io.ReadFull(r, make([]byte, size*count))
			done <- err
		}()
		msg := make([]byte, size)
		for range count {
			if _, err := w.Write(msg); err != nil {
				t.Fatal(err)
			}
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		a.within("100 writes of 300 B over a 20 ms, 50 Mbit/s link", time.Since(start),
			expectedTransfer(size*count, rate, 20*time.Millisecond), 2*time.Millisecond)
	})
}

// TestBackpressure: with a 64 KiB send buffer, a 256 KiB Write returns only when all but
// the last 64 KiB have reached the socket; a write deadline interrupts a blocked Write.
func TestBackpressure(t *testing.T) {
	const rate = 8e6 // 1 MB/s
	var w net.Conn
	retry(t, func(a *attempt) {
		var r net.Conn
		w, r = pair(t, a.link(Shape{Region: "a", UpBitsPerSec: rate}, WithSendBuffer(64<<10)), a.link(Shape{Region: "b"}))
		go io.Copy(io.Discard, r)
		start := time.Now()
		if _, err := w.Write(make([]byte, 256<<10)); err != nil {
			t.Fatal(err)
		}
		// The last 64 KiB still wait; the rest has left the uplink and spent 20 ms in flight.
		want := expectedTransfer(192<<10, rate, 20*time.Millisecond)
		a.within("256 KiB Write into a 64 KiB send buffer returned after", time.Since(start), want, want/10)
	})

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

// TestDeadlineWhileBlocked: a write deadline set while a Write waits for room in the send
// buffer ends that Write at the deadline, and one cleared lets the next Write wait again.
func TestDeadlineWhileBlocked(t *testing.T) {
	w, r := pair(t, newLink(t, Shape{Region: "a", UpBitsPerSec: 1e10}, WithSendBuffer(64<<10)), newLink(t, Shape{Region: "b"}))
	defer r.Close()
	done := make(chan error, 1)
	go func() { // nothing reads r: the socket fills, then the send buffer, and Write waits for good
		_, err := w.Write(make([]byte, 16<<20))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Write into a full path returned at once: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	set := time.Now()
	w.SetWriteDeadline(set.Add(30 * time.Millisecond))
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("blocked Write returned %v, want a deadline error", err)
		}
		if d := time.Since(set); d < 25*time.Millisecond {
			t.Errorf("blocked Write ended %v after the deadline was set 30 ms ahead", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a deadline set while Write waited did not end it")
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

// closeSignal is a raw conn whose Close closes closed.
type closeSignal struct {
	pipeConn
	once   sync.Once
	closed chan struct{}
}

func (c *closeSignal) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.pipeConn.Close()
}

// TestEndedConnLeavesNoScheduler: when a closed connection with a backlog fails (its peer
// went away) and ends, its link's uplink scheduler returns with it instead of sleeping out
// the uplink it had booked ahead, so in a synctest bubble nothing of the link outlives its
// last connection (the simulated network's drain ends the bubble when every connection end
// is closed).
func TestEndedConnLeavesNoScheduler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 1 Mbit/s: a chunk is 1500 bytes, 12 ms of uplink, so the scheduler books ~10 ms
		// ahead and sleeps.
		l := newLink(t, Shape{Region: "a", UpBitsPerSec: 1e6})
		near, far := net.Pipe()
		raw := &closeSignal{pipeConn: pipeConn{near}, closed: make(chan struct{})}
		wrapped, err := l.Wrap(raw, "b")
		if err != nil {
			t.Fatal(err)
		}
		c := wrapped.(*conn)
		if _, err := c.Write(make([]byte, 64<<10)); err != nil {
			t.Fatal(err)
		}
		c.Close() // what was written is still to be delivered
		far.Close()
		<-raw.closed // the first chunk's write failed: the connection ended
		synctest.Wait()
		l.upMu.Lock()
		running, queued := l.upRunning, len(l.upQueue)
		l.upMu.Unlock()
		c.mu.Lock()
		backlog := c.backlogBytes
		c.mu.Unlock()
		if running || queued > 0 || backlog > 0 {
			t.Errorf("after the link's only connection ended: scheduler running %v with %d connections queued, the connection's backlog %d bytes; want none",
				running, queued, backlog)
		}
		time.Sleep(time.Second) // lets a scheduler left asleep finish, so a failure is reported, not a bubble deadlock
	})
}

// TestDrainTimeoutDropsBacklog: a closed connection that has not delivered its backlog
// within drainTimeout (here because another flow shares the uplink) gives it up with its
// socket: the backlog leaves the uplink scheduler's queue and the connection's goroutine
// ends, rather than going on booking uplink for a closed socket.
func TestDrainTimeoutDropsBacklog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLink(t, Shape{Region: "a", UpBitsPerSec: 1e6})
		open := func() (*conn, *closeSignal, net.Conn) {
			near, far := net.Pipe()
			go io.Copy(io.Discard, far)
			raw := &closeSignal{pipeConn: pipeConn{near}, closed: make(chan struct{})}
			wrapped, err := l.Wrap(raw, "b")
			if err != nil {
				t.Fatal(err)
			}
			return wrapped.(*conn), raw, far
		}
		// Each flow gets half of 1 Mbit/s: the closed one delivers ~0.6 MB of its 2 MiB in
		// drainTimeout.
		bulk, _, bulkFar := open()
		if _, err := bulk.Write(make([]byte, 4<<20)); err != nil {
			t.Fatal(err)
		}
		c, raw, _ := open()
		if _, err := c.Write(make([]byte, 2<<20)); err != nil {
			t.Fatal(err)
		}
		c.Close()
		<-raw.closed
		synctest.Wait()
		c.mu.Lock()
		backlog, line := c.backlogBytes, len(c.line)-c.lineHead
		c.mu.Unlock()
		l.upMu.Lock()
		queued := c.inUplinkQueue
		l.upMu.Unlock()
		if backlog > 0 || line > 0 || queued {
			t.Errorf("after drainTimeout closed the socket: backlog %d bytes, %d pieces on the line, in the uplink queue %v; want none",
				backlog, line, queued)
		}
		bulk.Close()
		bulkFar.Close()
		time.Sleep(time.Second) // lets what a failure left running finish
	})
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
