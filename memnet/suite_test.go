package memnet_test

import (
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/sec"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	tptu "github.com/libp2p/go-libp2p/p2p/net/upgrader"
	"github.com/libp2p/go-libp2p/p2p/security/insecure"
	ttransport "github.com/libp2p/go-libp2p/p2p/transport/testsuite"

	"github.com/streamsim/streamsim/memnet"
)

// TestTransportSuite runs go-libp2p's shared transport test suite (the one TCP, QUIC and
// WebSocket pass) on two transports of one switchboard, on the real clock, as TCP's own test
// does: insecure security, yamux.
func TestTransportSuite(t *testing.T) {
	muxers := []tptu.StreamMuxer{{ID: "/yamux", Muxer: yamux.DefaultTransport}}
	sb := memnet.NewSwitchboard()
	mk := func() (peer.ID, *memnet.Transport) {
		priv, _, err := crypto.GenerateKeyPair(crypto.Ed25519, 256)
		if err != nil {
			t.Fatal(err)
		}
		id, err := peer.IDFromPrivateKey(priv)
		if err != nil {
			t.Fatal(err)
		}
		u, err := tptu.New([]sec.SecureTransport{insecure.NewWithIdentity(insecure.ID, id, priv)}, muxers, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return id, memnet.New(sb, u, nil, nil)
	}
	peerA, ta := mk()
	_, tb := mk()
	ttransport.SubtestTransport(t, ta, tb, "/ip4/127.0.0.1/tcp/0", peerA)
}
