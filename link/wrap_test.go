package link

import (
	"net"
	"strings"
	"testing"

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
