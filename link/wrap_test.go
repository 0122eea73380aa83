package link

import (
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// pipeConn is a net.Pipe end as a manet.Conn (Wrap reads no addresses).
type pipeConn struct{ net.Conn }

func (pipeConn) LocalMultiaddr() ma.Multiaddr  { return nil }
func (pipeConn) RemoteMultiaddr() ma.Multiaddr { return nil }

// Wrap: an unknown remote region is an error naming it; a pair with no latency on a link
// without rates is left unshaped (the same conn back); latency or a rate shapes it.
func TestWrap(t *testing.T) {
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	var raw manet.Conn = pipeConn{c1}
	regions, err := testRegions().WithRegion("edge", 0)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := New(Shape{Region: "edge"}, regions)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Wrap(raw, "mars"); err == nil || !strings.Contains(err.Error(), "mars") {
		t.Errorf("unknown remote region: %v, want an error naming it", err)
	}
	for _, remote := range []string{"", "a"} {
		if got, err := plain.Wrap(raw, remote); err != nil || got != raw {
			t.Errorf("no latency to %q, no rates: %T, %v; want the raw conn", remote, got, err)
		}
	}
	shaped := newLink(t, Shape{Region: "a"})
	got, err := shaped.Wrap(raw, "b")
	if err != nil {
		t.Fatal(err)
	}
	c, ok := got.(*conn)
	if !ok || c.latency != testRegions().OneWay[0][1] {
		t.Fatalf("a→b: %T, want a shaped conn with a→b's latency", got)
	}
	c.Close()
}

// tryConn is a raw connection with memnet's TryWrite: it records each byte's path (TryWrite
// or Write) and when it came, and takes at most room bytes through TryWrite.
type tryConn struct {
	pipeConn
	mu    sync.Mutex
	room  int
	log   []tryWrite
	close chan struct{}
}

type tryWrite struct {
	try bool
	b   string
	at  time.Time
}

func (t *tryConn) TryWrite(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := min(t.room, len(p))
	t.room -= n
	if n > 0 {
		t.log = append(t.log, tryWrite{true, string(p[:n]), time.Now()})
	}
	return n, nil
}

func (t *tryConn) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.log = append(t.log, tryWrite{false, string(p), time.Now()})
	return len(p), nil
}

func (t *tryConn) written() []tryWrite {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.log)
}

func (t *tryConn) Close() error                     { return nil }
func (t *tryConn) SetReadDeadline(time.Time) error  { return nil }
func (t *tryConn) SetWriteDeadline(time.Time) error { return nil }
func (t *tryConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (t *tryConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }

// A shaped write due at once (within timerSlack of now: no latency, the uplink idle) goes into
// a TryWrite connection before Write returns, with no goroutine between; what TryWrite has no
// room for goes later through Write, in order, as does everything behind it; bytes with
// latency go on the line and through Write at their due time.
func TestWriteDueAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		regions, err := testRegions().WithRegion("edge", 0)
		if err != nil {
			t.Fatal(err)
		}
		// 8 Mbit/s: a byte a microsecond.
		l, err := New(Shape{Region: "edge", UpBitsPerSec: 8_000_000, DownBitsPerSec: 8_000_000}, regions)
		if err != nil {
			t.Fatal(err)
		}
		raw := &tryConn{room: 150}
		w, err := l.Wrap(raw, "edge")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := w.Write([]byte(strings.Repeat("a", 100))); err != nil {
			t.Fatal(err)
		}
		if got := raw.written(); len(got) != 1 || !got[0].try || len(got[0].b) != 100 || !got[0].at.Equal(start) {
			t.Fatalf("100 bytes due in 100 µs: %+v, want them taken by TryWrite at once", got)
		}
		// 100 more: due at +200 µs, still within the slack; 50 fit, 50 wait for run.
		if _, err := w.Write([]byte(strings.Repeat("b", 100))); err != nil {
			t.Fatal(err)
		}
		// Behind them, even though TryWrite now has room: the line is not empty.
		raw.mu.Lock()
		raw.room = 1 << 20
		raw.mu.Unlock()
		if _, err := w.Write([]byte("c")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		got := raw.written()
		var all strings.Builder
		for _, x := range got {
			all.WriteString(x.b)
		}
		if want := strings.Repeat("a", 100) + strings.Repeat("b", 100) + "c"; all.String() != want {
			t.Fatalf("bytes out of order: %q", all.String())
		}
		if len(got) != 3 || !got[1].try || len(got[1].b) != 50 || got[2].try || got[2].b != strings.Repeat("b", 50)+"c" {
			t.Fatalf("paths %+v: want TryWrite 100, TryWrite 50, then Write of the other 50 and c", got)
		}
		if !got[2].at.Equal(start) {
			t.Errorf("run wrote the rest %v after the start; want at once (due within the slack)", got[2].at.Sub(start))
		}
		w.Close()

		// 20 ms of latency (a→b): the line, through Write, at 20 ms (aimed timerSlack early).
		la, err := New(Shape{Region: "a", UpBitsPerSec: 8_000_000, DownBitsPerSec: 8_000_000}, regions)
		if err != nil {
			t.Fatal(err)
		}
		raw = &tryConn{room: 1 << 20}
		w, err = la.Wrap(raw, "b")
		if err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		if _, err := w.Write([]byte("d")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		got = raw.written()
		if len(got) != 1 || got[0].try || got[0].b != "d" {
			t.Fatalf("with latency: %+v, want one Write of d", got)
		}
		if want := time.Microsecond + 20*time.Millisecond - timerSlack; got[0].at.Sub(start) != want {
			t.Errorf("with latency: written at +%v, want +%v", got[0].at.Sub(start), want)
		}
		w.Close()
	})
}
