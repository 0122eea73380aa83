package link

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	manet "github.com/multiformats/go-multiaddr/net"
)

// Dilate divides every latency by the scale and leaves the receiver alone; bad scales are
// refused.
func TestRegionsDilate(t *testing.T) {
	r := DefaultRegions()
	d, err := r.Dilate(0.5)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.OneWay {
		for j := range r.OneWay[i] {
			if got, want := d.OneWay[i][j], 2*r.OneWay[i][j]; got != want {
				t.Fatalf("%s→%s at 0.5×: %v, want %v", r.Regions[i].Name, r.Regions[j].Name, got, want)
			}
		}
	}
	eu, _ := r.Index("europe")
	aus, _ := r.Index("australia")
	d4, err := r.Dilate(4)
	if err != nil {
		t.Fatal(err)
	}
	if got := d4.OneWay[eu][aus]; got != 41250*time.Microsecond {
		t.Errorf("europe→australia at 4×: %v, want 41.25ms (165 ms / 4)", got)
	}
	if r.OneWay[eu][aus] != 165*time.Millisecond {
		t.Errorf("Dilate changed its receiver: %v", r.OneWay[eu][aus])
	}
	for _, bad := range []float64{0, -1} {
		if _, err := r.Dilate(bad); err == nil {
			t.Errorf("scale %v accepted", bad)
		}
	}
}

func TestRegionsWithRegion(t *testing.T) {
	r, err := DefaultRegions().WithRegion("boundary", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range DefaultRegions().Names() {
		to, _ := r.Latency(n, "boundary")
		from, _ := r.Latency("boundary", n)
		if to != 0 || from != 0 {
			t.Errorf("%s↔boundary: %v / %v, want 0", n, to, from)
		}
	}
	if l, _ := r.Latency("europe", "na_east"); l != 70*time.Millisecond {
		t.Errorf("europe→na_east changed: %v", l)
	}
	if _, err := r.WithRegion("europe", 0); err == nil {
		t.Error("a second europe accepted")
	}
}

// upgradePair runs the transport's upgrade on both ends of a loopback TCP connection.
func upgradePair(t *testing.T, a, b *Link) (manet.Conn, manet.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type res struct {
		c   manet.Conn
		err error
	}
	accepted := make(chan res, 1)
	go func() {
		raw, err := ln.Accept()
		if err != nil {
			accepted <- res{nil, err}
			return
		}
		m, _ := manet.WrapNetConn(raw)
		c, err := b.upgrade(context.Background(), m)
		accepted <- res{c, err}
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	m, _ := manet.WrapNetConn(raw)
	ca, err := a.upgrade(context.Background(), m)
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

// A pair with no latency on unlimited links is passed through unshaped (no writer
// goroutine); with latency, or with a rate limit, it is shaped.
func TestUpgradePassesUnshapedPairs(t *testing.T) {
	regions, err := testRegions().WithRegion("z", 0)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(region string, bits int64) *Link {
		l, err := New(Shape{Region: region, UpBitsPerSec: bits, DownBitsPerSec: bits}, regions)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	cases := []struct {
		name         string
		a, b         *Link
		shapedA, shB bool
	}{
		{"latency 0, unlimited", mk("a", 0), mk("z", 0), false, false},
		{"latency 20 ms", mk("a", 0), mk("b", 0), true, true},
		{"latency 0, a rate-limited", mk("a", 8e6), mk("z", 0), true, false},
	}
	for _, c := range cases {
		ca, cb := upgradePair(t, c.a, c.b)
		_, sa := ca.(*conn)
		_, sb := cb.(*conn)
		if sa != c.shapedA || sb != c.shB {
			t.Errorf("%s: shaped %v/%v, want %v/%v", c.name, sa, sb, c.shapedA, c.shB)
		}
		// Bytes go through either way.
		if _, err := ca.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4)
		cb.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadFull(cb, buf); err != nil || string(buf) != "ping" {
			t.Errorf("%s: read %q, %v", c.name, buf, err)
		}
	}
}
