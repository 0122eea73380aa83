package link_test

import (
	"fmt"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	"github.com/streamsim/streamsim/link"
)

// Every instance of a run draws the same shapes from the seed and takes its own by its
// sequence number.
func ExampleAssign() {
	shapes, err := link.Assign(1, 4, link.DefaultRegions(), link.DefaultClasses())
	if err != nil {
		panic(err)
	}
	for i, s := range shapes {
		fmt.Println(i, s)
	}
	// Output:
	// 0 europe/fullnode 50Mbit↑ 50Mbit↓
	// 1 south_america/fullnode 50Mbit↑ 50Mbit↓
	// 2 na_east/fullnode 50Mbit↑ 50Mbit↓
	// 3 europe/fullnode 50Mbit↑ 50Mbit↓
}

// A node's host gets its link's transport in place of libp2p.Transport(tcp.NewTCPTransport).
func ExampleLink_Transport() {
	l, err := link.New(link.Shape{Region: "europe", UpBitsPerSec: 50e6, DownBitsPerSec: 50e6}, link.DefaultRegions())
	if err != nil {
		panic(err)
	}
	h, err := libp2p.New(
		libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"),
		l.Transport(),
		libp2p.Security(noise.ID, noise.New),
		libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
	)
	if err != nil {
		panic(err)
	}
	defer h.Close()
	fmt.Println(l.Shape())
	// Output: europe 50Mbit↑ 50Mbit↓
}
