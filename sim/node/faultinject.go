package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	snet "github.com/streamsim/streamsim/sim/network"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
)

// cutUnit sends the first half of frame's compressed unit, then resets the stream (the
// reset fault). Called by Write with s.wmu held.
func (s *codecStream) cutUnit(frame []byte) (int, error) {
	s.cut = false
	var unit bytes.Buffer
	s.wire.w = &unit
	_, err := s.w.Write(frame)
	s.wire.w = s.Stream
	if err != nil {
		return 0, err
	}
	part := unit.Bytes()[:max(1, unit.Len()/2)]
	_, werr := s.Stream.Write(part)
	s.Stream.Reset()
	s.node.links.ended(s, fmt.Sprintf("fault reset: sent %d of a %d-byte unit, then reset", len(part), unit.Len()), true)
	s.release()
	s.faultDone <- fmt.Sprintf("sent %d of a %d-byte unit (%d-byte frame), then reset (write error: %v)", len(part), unit.Len(), len(frame), werr)
	return 0, network.ErrReset
}

// ArmCut makes the next Write of p's outbound gossip stream send part of its unit and reset
// the stream; it returns a channel that receives a note when that happened, or false when
// there is no such stream.
func (n *Node) ArmCut(p peer.ID) (<-chan string, bool) {
	s := n.links.stream(p, network.DirOutbound)
	if s == nil {
		return nil, false
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.wclosed || s.cut {
		return nil, false
	}
	s.cut = true
	s.faultDone = make(chan string, 1)
	return s.faultDone, true
}

// InjectGarbage writes garbage into p's outbound gossip stream between two units.
func (n *Node) InjectGarbage(p peer.ID, garbage []byte) (string, bool) {
	s := n.links.stream(p, network.DirOutbound)
	if s == nil {
		return "no outbound gossip stream", false
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.wclosed {
		return "stream closed", false
	}
	if _, err := s.Stream.Write(garbage); err != nil {
		return "write: " + err.Error(), false
	}
	return fmt.Sprintf("%d bytes into %s after %d units", len(garbage), s.Protocol(), s.wlast.Units), true
}

// Disconnect closes every connection of the node and refuses new ones until until.
func (n *Node) Disconnect(until time.Time) int {
	n.links.refuseUntil.Store(until.UnixNano())
	conns := n.host.Network().Conns()
	for _, c := range conns {
		c.Close()
	}
	return len(conns)
}

// SlowReads throttles the node's gossip reads to rate bytes per second until until.
func (n *Node) SlowReads(until time.Time, rate int) {
	n.links.slowRate.Store(int64(rate))
	n.links.slowUntil.Store(until.UnixNano())
}

// Rogue opens a gossip stream to target from a fresh host of the run's network (a stranger
// outside the run) with proto and writes garbage on it; it returns what the stranger saw.
func Rogue(ctx context.Context, net snet.Network, target peer.AddrInfo, proto protocol.ID, garbage []byte) (string, error) {
	h, err := net.Host(nil)
	if err != nil {
		return "", err
	}
	defer h.Close()
	if err := h.Connect(ctx, target); err != nil {
		return "", fmt.Errorf("connect: %w", err)
	}
	s, err := h.NewStream(ctx, target.ID, proto)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", proto, err)
	}
	if _, err := s.Write(garbage); err != nil {
		return "", fmt.Errorf("write: %w", err)
	}
	// The stranger is done sending: a decoder that waits for the rest of a declared block
	// now sees the stream end inside it. The target answers with a reset; wait for it.
	s.CloseWrite()
	s.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, rerr := s.Read(make([]byte, 1))
	s.Reset()
	answer := "the target reset the stream"
	if !errors.Is(rerr, network.ErrReset) {
		answer = fmt.Sprintf("then read: %v", rerr)
	}
	return fmt.Sprintf("%d bytes on %s from stranger %s, then closed; %s", len(garbage), proto, h.ID(), answer), nil
}
