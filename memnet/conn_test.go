package memnet_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/sec"
	"github.com/libp2p/go-libp2p/core/transport"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/streamsim/streamsim/link"
	"github.com/streamsim/streamsim/memnet"
)

// dialPair is a connection from a transport at 10.1.0.1 to one at 10.1.0.2 (shaped by sa and
// sb, nil: unshaped): the dialer's end and the listener's.
func dialPair(t *testing.T, sa, sb memnet.Shaper) (transport.CapableConn, transport.CapableConn) {
	t.Helper()
	board := memnet.NewSwitchboard()
	idA, ta := newTransport(t, board, sa)
	idB, tb := newTransport(t, board, sb)
	if _, err := ta.Listen(ma.StringCast("/ip4/10.1.0.1/tcp/1")); err != nil {
		t.Fatal(err)
	}
	l, err := tb.Listen(ma.StringCast("/ip4/10.1.0.2/tcp/1"))
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan transport.CapableConn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	a, err := ta.Dial(context.Background(), l.Multiaddr(), idB)
	if err != nil {
		t.Fatal(err)
	}
	b := <-accepted
	if a.LocalPeer() != idA || a.RemotePeer() != idB || b.LocalPeer() != idB || b.RemotePeer() != idA {
		t.Fatalf("peers: dialer %s→%s, listener %s→%s; want %s→%s", a.LocalPeer(), a.RemotePeer(), b.LocalPeer(), b.RemotePeer(), idA, idB)
	}
	if got, _ := peer.IDFromPublicKey(b.RemotePublicKey()); got != idA {
		t.Fatalf("listener's remote public key is %s's, want %s's", got, idA)
	}
	t.Cleanup(func() {
		a.Close()
		l.Close()
		if open := board.Drain(time.Minute); open != 0 {
			t.Errorf("%d stream ends open a minute after the connection closed", open)
		}
	})
	return a, b
}

// openPair opens a stream at a and accepts it at b.
func openPair(t *testing.T, a, b transport.CapableConn) (network.MuxedStream, network.MuxedStream) {
	t.Helper()
	s, err := a.OpenStream(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.AcceptStream()
	if err != nil {
		t.Fatal(err)
	}
	return s, r
}

// A dial names the peer it expects: another peer's identity at that address is refused, as a
// security handshake refuses it.
func TestDialChecksPeer(t *testing.T) {
	board := memnet.NewSwitchboard()
	_, ta := newTransport(t, board, nil)
	_, tb := newTransport(t, board, nil)
	other, _ := newTransport(t, board, nil)
	l, err := tb.Listen(ma.StringCast("/ip4/10.1.0.2/tcp/1"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = ta.Dial(context.Background(), l.Multiaddr(), other)
	var mismatch sec.ErrPeerIDMismatch
	if !errors.As(err, &mismatch) || mismatch.Expected != other {
		t.Fatalf("dial expecting another peer: %v, want sec.ErrPeerIDMismatch", err)
	}
}

// Half-close: after CloseWrite the other end reads everything, then EOF, and still writes
// back; this end's writes fail. Streams opened at either end reach the other in order.
func TestStreamHalfClose(t *testing.T) {
	for _, shaped := range []bool{false, true} {
		t.Run(map[bool]string{false: "unshaped", true: "shaped"}[shaped], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sa, sb memnet.Shaper
				if shaped {
					sa, sb = shapedLink(t, "a", 0), shapedLink(t, "b", 0)
				}
				a, b := dialPair(t, sa, sb)
				for _, dir := range [][2]transport.CapableConn{{a, b}, {b, a}} {
					s, r := openPair(t, dir[0], dir[1])
					msg := bytes.Repeat([]byte("half-close "), 1000)
					if _, err := s.Write(msg); err != nil {
						t.Fatal(err)
					}
					if err := s.CloseWrite(); err != nil {
						t.Fatal(err)
					}
					if _, err := s.Write([]byte("x")); err == nil {
						t.Error("a write after CloseWrite succeeded")
					}
					got, err := io.ReadAll(r)
					if err != nil || !bytes.Equal(got, msg) {
						t.Fatalf("read to EOF after CloseWrite: %d bytes (%v), want %d", len(got), err, len(msg))
					}
					if _, err := r.Write([]byte("reply")); err != nil {
						t.Fatalf("the reader's write back after the writer's CloseWrite: %v", err)
					}
					r.Close()
					back, err := io.ReadAll(s)
					if err != nil || string(back) != "reply" {
						t.Fatalf("reply after the other end closed: %q, %v", back, err)
					}
					s.Close()
				}
			})
		})
	}
}

// Reset: both ends' reads and writes fail with network.ErrReset, at once, even with bytes
// in flight; CloseRead fails this end's reads (not EOF) and the other end's writes.
func TestStreamResetAndCloseRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := dialPair(t, nil, nil)
		s, r := openPair(t, a, b)
		s.Write([]byte("unread"))
		blocked := make(chan error, 1)
		go func() {
			_, err := io.ReadAll(s) // s's own read, blocked until the reset
			blocked <- err
		}()
		synctest.Wait()
		r.Reset()
		if err := <-blocked; !errors.Is(err, network.ErrReset) {
			t.Errorf("a blocked read at the other end of a reset: %v, want network.ErrReset", err)
		}
		if _, err := s.Write([]byte("x")); !errors.Is(err, network.ErrReset) {
			t.Errorf("a write at the other end of a reset: %v, want network.ErrReset", err)
		}
		if _, err := r.Read(make([]byte, 8)); !errors.Is(err, network.ErrReset) {
			t.Errorf("a read at the reset end: %v, want network.ErrReset (its unread bytes dropped)", err)
		}
		s.Close()

		s, r = openPair(t, a, b)
		if err := r.CloseRead(); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Read(make([]byte, 1)); err == nil || err == io.EOF {
			t.Errorf("a read after CloseRead: %v, want an error other than EOF", err)
		}
		if _, err := s.Write([]byte("x")); err == nil {
			t.Error("a write to an end that closed its reading succeeded")
		}
		if _, err := r.Write([]byte("still")); err != nil {
			t.Errorf("a write after CloseRead: %v, want it to go through", err)
		}
		buf := make([]byte, 5)
		if _, err := io.ReadFull(s, buf); err != nil || string(buf) != "still" {
			t.Errorf("read of what the CloseRead end wrote: %q, %v", buf, err)
		}
		s.Close()
		r.Close()
	})
}

// Backpressure: a stream holds 4 MiB unread; a writer past that waits (durably: no simulated
// time passes) until its reader reads, and then completes.
func TestStreamBackpressure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := dialPair(t, nil, nil)
		s, r := openPair(t, a, b)
		const window = 4 << 20
		msg := bytes.Repeat([]byte("0123456789abcdef"), (window+64<<10)/16)
		start := time.Now()
		if n, err := s.Write(msg[:window]); n != window || err != nil {
			t.Fatalf("a window's worth: %d, %v", n, err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := s.Write(msg[window:])
			done <- err
		}()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("a write past a full stream returned (%v) before its reader read", err)
		default:
		}
		// Another stream of the same connection is not held up by the full one.
		s2, r2 := openPair(t, a, b)
		if _, err := s2.Write([]byte("free")); err != nil {
			t.Fatal(err)
		}
		four := make([]byte, 4)
		if _, err := io.ReadFull(r2, four); err != nil || string(four) != "free" {
			t.Fatalf("a second stream beside a full one: %q, %v", four, err)
		}
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("reading the full stream: %v, intact %v", err, bytes.Equal(got, msg))
		}
		if err := <-done; err != nil {
			t.Fatalf("the waiting write: %v", err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("backpressure took %v of simulated time, want 0 (waits are durable)", d)
		}
	})
}

// A shaped stream pushes back too: with the reader's downlink at 8 Mbit/s, a writer that
// writes 24 MiB waits for the downlink, and the whole transfer takes the downlink's time for
// its bytes (within 5 %), not the writer's.
func TestShapedStreamBackpressure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate = 8e6
		a, b := dialPair(t, shapedLink(t, "a", 0), shapedLink(t, "b", rate))
		s, r := openPair(t, a, b)
		const n = 24 << 20
		wrote := make(chan time.Time, 1)
		start := time.Now()
		go func() {
			s.Write(make([]byte, n))
			wrote <- time.Now()
			s.CloseWrite()
		}()
		got, err := io.Copy(io.Discard, r)
		end := time.Now()
		if err != nil || got != n {
			t.Fatalf("read %d of %d bytes: %v", got, n, err)
		}
		w := (<-wrote).Sub(start)
		t.Logf("the writer's Write returned after %v", w)
		want := time.Duration(float64(n) * 8 / rate * float64(time.Second))
		within(t, "24 MiB through an 8 Mbit/s downlink", end.Sub(start), want, want/20)
		// The writer got ahead by at most the link's send buffer and the pipe (8 MiB).
		if ahead := want - w; ahead > time.Duration(float64(8<<20)*8/rate*float64(time.Second))*21/20 || w < want/2 {
			t.Errorf("the writer finished after %v of %v: not held back by the downlink", w, want)
		}
		s.Close()
		r.Close()
	})
}

// Deadlines: a read deadline ends a blocked read at that simulated instant, a write deadline
// a write blocked on a full stream; clearing them lets the stream go on.
func TestStreamDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := dialPair(t, nil, nil)
		s, r := openPair(t, a, b)
		start := time.Now()
		r.SetReadDeadline(start.Add(50 * time.Millisecond))
		if _, err := r.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) != 50*time.Millisecond {
			t.Fatalf("read past its deadline: %v after %v", err, time.Since(start))
		}
		r.SetReadDeadline(time.Time{})
		s.SetWriteDeadline(time.Now().Add(time.Second))
		n, err := s.Write(make([]byte, 5<<20))
		if !errors.Is(err, os.ErrDeadlineExceeded) || n != 4<<20 {
			t.Fatalf("a write blocked on a full stream past its deadline: %d bytes, %v; want 4 MiB and a deadline error", n, err)
		}
		s.SetWriteDeadline(time.Time{})
		if _, err := io.ReadFull(r, make([]byte, n)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write([]byte("after")); err != nil {
			t.Fatalf("a write after clearing the deadline: %v", err)
		}
		s.Close()
		r.Close()
	})
}

// Closing a connection at one end resets its streams at both and ends both ends'
// AcceptStream; opening a stream on it then fails.
func TestConnCloseResetsStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := dialPair(t, nil, nil)
		s, r := openPair(t, a, b)
		accepting := make(chan error, 1)
		go func() {
			_, err := a.AcceptStream()
			accepting <- err
		}()
		synctest.Wait()
		b.Close()
		if !a.IsClosed() || !b.IsClosed() {
			t.Errorf("closed at one end: dialer closed %v, listener closed %v; want both", a.IsClosed(), b.IsClosed())
		}
		if err := <-accepting; err == nil {
			t.Error("AcceptStream at the other end of a closed connection returned a stream")
		}
		if _, err := s.Write([]byte("x")); !errors.Is(err, network.ErrReset) {
			t.Errorf("a write on a stream of a closed connection: %v, want network.ErrReset", err)
		}
		if _, err := r.Read(make([]byte, 1)); !errors.Is(err, network.ErrReset) {
			t.Errorf("a read on a stream of a closed connection: %v, want network.ErrReset", err)
		}
		if _, err := a.OpenStream(context.Background()); err == nil {
			t.Error("OpenStream on a closed connection succeeded")
		}
	})
}

// shapedLink is a link in region (of regions()) with downlink rate down bits/s (0: none).
func shapedLink(t *testing.T, region string, down float64) *link.Link {
	t.Helper()
	l, err := link.New(link.Shape{Region: region, DownBitsPerSec: int64(down)}, regions())
	if err != nil {
		t.Fatal(err)
	}
	return l
}
