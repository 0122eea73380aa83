package memnet_test

import (
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ttransport "github.com/libp2p/go-libp2p/p2p/transport/testsuite"

	"github.com/streamsim/streamsim/memnet"
)

// newTransport is a transport on sb with a fresh identity, unshaped.
func newTransport(t testing.TB, sb *memnet.Switchboard, shaper memnet.Shaper) (peer.ID, *memnet.Transport) {
	t.Helper()
	priv, _, err := crypto.GenerateKeyPair(crypto.Ed25519, 256)
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := memnet.New(sb, priv, nil, shaper)
	if err != nil {
		t.Fatal(err)
	}
	return id, tr
}

// TestTransportSuite runs go-libp2p's shared transport test suite (the one TCP, QUIC and
// WebSocket pass: dial, listen, streams, ping-pong, reset, cancel, stress) on two transports
// of one switchboard, on the real clock.
func TestTransportSuite(t *testing.T) {
	sb := memnet.NewSwitchboard()
	peerA, ta := newTransport(t, sb, nil)
	_, tb := newTransport(t, sb, nil)
	ttransport.SubtestTransport(t, ta, tb, "/ip4/127.0.0.1/tcp/0", peerA)
}
