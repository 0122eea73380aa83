package link

import (
	"fmt"
	"time"

	manet "github.com/multiformats/go-multiaddr/net"
)

// Region is the node's region in the latency model (its Shape's).
func (l *Link) Region() string { return l.shape.Region }

// Wrap shapes raw, one end of a connection whose other end is in remoteRegion, without the
// region preamble Transport exchanges: for transports that know both ends (package memnet's
// in-process switchboard). remoteRegion "" means a peer outside the latency model: no
// latency, the node's rates still apply. Like Transport's connections, a pair with no
// latency on a link with no rate limits gets raw back, unshaped (no goroutine, no timer).
// All waits are sleeps, timers and channels, so inside a testing/synctest bubble the link's
// rates and latencies are simulated time; once every connection the link shaped has closed
// raw, no goroutine of the link remains, so a bubble may end there.
func (l *Link) Wrap(raw manet.Conn, remoteRegion string) (manet.Conn, error) {
	var lat time.Duration
	if remoteRegion != "" {
		d, err := l.regions.Latency(l.shape.Region, remoteRegion)
		if err != nil {
			return nil, fmt.Errorf("link: remote region: %w", err)
		}
		lat = d
	}
	if lat == 0 && l.up == nil && l.down == nil {
		return raw, nil
	}
	return l.wrap(raw, lat), nil
}
