package gossip

import (
	"encoding/binary"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// Framing is how a gossipsub implementation puts what it sends a peer into RPC frames (one
// uvarint-length-prefixed protobuf RPC each) on its outbound stream. The content (messages,
// subscriptions, control entries) is the same in every framing; what differs is which items
// share a frame, so the stream's bytes differ only by the frames' length prefixes and the RPC
// and ControlMessage tags and lengths that each frame repeats. It matters to a stream codec
// that skips ahead: an IHAVE that follows kilobytes of message data in one frame is matched
// differently from one in a frame of its own. docs/inputs.md ("RPC framing") gives the
// sources read for each.
type Framing string

const (
	// FramingGo is go-libp2p-pubsub's (Prysm): one RPC per queue entry, as the router built
	// it (comm.go handleSendingMessages writes each popped RPC as one frame). A forward is an
	// RPC of one message; the heartbeat's gossip to a peer is one RPC with every topic's
	// IHAVE (gossipsub.go flush); the answer to a peer's control is one RPC with the IWANTed
	// messages, the IWANT and the PRUNEs (handleControl). Frames pass unchanged.
	FramingGo Framing = "go"
	// FramingRust is rust-libp2p's (Lighthouse, Grandine): every item is an RPC of its own.
	// The behaviour queues one RpcOut per message, per IHAVE (one topic), IWANT, GRAFT,
	// PRUNE and IDONTWANT; the handler turns each into one proto::Rpc
	// (types.rs, impl From<RpcOut> for proto::Rpc) and sends and flushes it alone
	// (handler.rs, OutboundSubstreamState::PendingSend then PendingFlush). The hello
	// packet's subscriptions are one RPC (RpcOut::SubscribeMany). Order: the handler's
	// queue pops subscriptions, then GRAFT, PRUNE and IDONTWANT, then messages, IHAVE and
	// IWANT in the order they were queued (queue.rs, Queue::try_push and poll_pop).
	FramingRust Framing = "rust"
	// FramingNim is nim-libp2p's (Nimbus): control never shares a frame with messages.
	// The heartbeat's IHAVEs to a peer are one RPC (behavior.nim onHeartbeat,
	// makeGossipControlMessages); a GRAFT or PRUNE goes out per topic (rebalanceMesh,
	// broadcastResponse of one ControlMessage.withGraft/withPrune) and an IDONTWANT per
	// message (gossipsub.nim sendIDontWant); forwards are one message per RPC and IWANT
	// replies one RPC of messages (gossipsub.nim handleControl, then sendResponse's batching
	// in pubsubpeer.nim), sent after the control (high priority before low).
	FramingNim Framing = "nim"
	// FramingJVM is jvm-libp2p's (Teku): parts queued for a peer are merged into one RPC at
	// each flush (RpcPartsQueue takeMerged after every handled RPC and heartbeat), messages
	// and control together, IHAVEs of every topic in one ControlMessage; an IDONTWANT is
	// sent at once in an RPC of its own (GossipRouter sendIdontwant). That is go's layout:
	// frames pass unchanged.
	FramingJVM Framing = "jvm"
	// FramingJS is js-libp2p-gossipsub's (Lodestar), a port of go-libp2p-pubsub's router:
	// a forward is one message per RPC, pending GRAFT/PRUNE and IHAVE ride on the next RPC
	// to the peer (index.ts sendRpc, piggybackControl, piggybackGossip) and the heartbeat's
	// rest leaves in one RPC per peer (flush). Go's layout: frames pass unchanged.
	FramingJS Framing = "js"
)

// Framings lists every framing, in the order errors name them.
var Framings = []Framing{FramingGo, FramingRust, FramingNim, FramingJVM, FramingJS}

// ParseFraming reads a framing's name.
func ParseFraming(s string) (Framing, error) {
	for _, f := range Framings {
		if string(f) == strings.TrimSpace(s) {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown framing %q (allowed: %s)", s, FramingNames())
}

// FramingNames is the framings' names, comma-separated.
func FramingNames() string {
	names := make([]string, len(Framings))
	for i, f := range Framings {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// Splits reports whether f ever writes a go-libp2p-pubsub frame as more than one frame.
func (f Framing) Splits() bool { return f == FramingRust || f == FramingNim }

// ControlMessage field numbers (pubsub pb/rpc.proto).
const (
	ctrlIHave      protowire.Number = 1
	ctrlIWant      protowire.Number = 2
	ctrlGraft      protowire.Number = 3
	ctrlPrune      protowire.Number = 4
	ctrlIDontWant  protowire.Number = 5
	ctrlExtensions protowire.Number = 6
)

// Reframer re-frames go-libp2p-pubsub frames as another implementation frames the same
// content. Its zero value is ready; it keeps scratch space between calls and is not safe for
// concurrent use.
type Reframer struct {
	subs, pubs, other [][]byte // top-level fields (tag included)
	ctrl              []Field  // ControlMessage fields, in order
	groups            []group
	pieces            [][]byte // the groups' fields, in groups' order
}

// group is one output frame: pieces[top:ctrl] are top-level fields, pieces[ctrl:end] control
// entries wrapped in one ControlMessage.
type group struct{ top, ctrl, end int }

// add appends a group of top-level fields top and control entries ctrl.
func (r *Reframer) add(top [][]byte, ctrl ...[]byte) {
	g := group{top: len(r.pieces)}
	r.pieces = append(r.pieces, top...)
	g.ctrl = len(r.pieces)
	r.pieces = append(r.pieces, ctrl...)
	g.end = len(r.pieces)
	r.groups = append(r.groups, g)
}

// Append appends frame (one length-prefixed RPC as go-libp2p-pubsub writes it) re-framed as
// f to dst, and the end offset in dst of each frame it appended to ends. The frames carry
// exactly the fields of frame (each message, subscription and control entry once, byte for
// byte), so merged back in order they are the same RPC (protobuf merge: repeated fields
// concatenate). A frame that f would not split is appended unchanged, and a framing that never
// splits (go, jvm, js) does not read it. For rust and nim a malformed frame is an error and
// nothing is appended; an unknown framing is an error for any frame.
func (r *Reframer) Append(dst []byte, ends []int, f Framing, frame []byte) ([]byte, []int, error) {
	if !f.Splits() {
		if _, err := ParseFraming(string(f)); err != nil {
			return dst, ends, err
		}
		dst = append(dst, frame...)
		return dst, append(ends, len(dst)), nil
	}
	body, _, err := FrameBody(frame)
	if err != nil {
		return dst, ends, err
	}
	r.subs, r.pubs, r.other, r.ctrl, r.groups, r.pieces = r.subs[:0], r.pubs[:0], r.other[:0], r.ctrl[:0], r.groups[:0], r.pieces[:0]
	for fl, err := range Fields(body) {
		if err != nil {
			return dst, ends, err
		}
		switch {
		case fl.Is(FieldSubscriptions):
			r.subs = append(r.subs, fl.All)
		case fl.Is(FieldPublish):
			r.pubs = append(r.pubs, fl.All)
		case fl.Is(FieldControl) && len(fl.Value) > 0:
			for c, err := range Fields(fl.Value) {
				if err != nil {
					return dst, ends, err
				}
				r.ctrl = append(r.ctrl, c)
			}
		default:
			// Unknown fields, and an empty ControlMessage (kept: its presence is content).
			r.other = append(r.other, fl.All)
		}
	}
	switch f {
	case FramingRust:
		r.rust()
	case FramingNim:
		r.nim()
	}
	if len(r.groups) <= 1 {
		dst = append(dst, frame...)
		return dst, append(ends, len(dst)), nil
	}
	for _, g := range r.groups {
		dst, ends = appendGroup(dst, ends, r.pieces[g.top:g.ctrl], r.pieces[g.ctrl:g.end])
	}
	return dst, ends, nil
}

// rust groups the fields as rust-libp2p's queue sends them (FramingRust).
func (r *Reframer) rust() {
	if len(r.subs) > 0 {
		r.add(r.subs)
	}
	// The priority queue: extensions; then the control queue: GRAFT, PRUNE, IDONTWANT.
	for _, c := range r.ctrl {
		if c.Num == ctrlExtensions {
			r.add(nil, c.All)
		}
	}
	for _, c := range r.ctrl {
		if c.Num == ctrlGraft || c.Num == ctrlPrune || c.Num == ctrlIDontWant {
			r.add(nil, c.All)
		}
	}
	// The non-priority queue, in the order pubsub built the RPC: messages, then IHAVE,
	// IWANT and any other control entry.
	for i := range r.pubs {
		r.add(r.pubs[i : i+1])
	}
	for _, c := range r.ctrl {
		switch c.Num {
		case ctrlExtensions, ctrlGraft, ctrlPrune, ctrlIDontWant:
		default:
			r.add(nil, c.All)
		}
	}
	for i := range r.other {
		r.add(r.other[i : i+1])
	}
}

// nim groups the fields as nim-libp2p sends them (FramingNim).
func (r *Reframer) nim() {
	if len(r.subs) > 0 {
		r.add(r.subs)
	}
	// GRAFT, PRUNE and IDONTWANT one entry per RPC; then the rest of the control in one RPC
	// (the heartbeat's IHAVEs, an IWANT); then the messages in one RPC.
	for _, c := range r.ctrl {
		switch c.Num {
		case ctrlGraft, ctrlPrune, ctrlIDontWant:
			r.add(nil, c.All)
		}
	}
	rest := group{top: len(r.pieces), ctrl: len(r.pieces)}
	for _, c := range r.ctrl {
		switch c.Num {
		case ctrlGraft, ctrlPrune, ctrlIDontWant:
		default:
			r.pieces = append(r.pieces, c.All)
		}
	}
	if rest.end = len(r.pieces); rest.end > rest.ctrl {
		r.groups = append(r.groups, rest)
	}
	if len(r.pubs) > 0 {
		r.add(r.pubs)
	}
	if len(r.other) > 0 {
		r.add(r.other)
	}
}

// appendGroup appends one length-prefixed RPC of top-level fields top and control entries
// ctrl (in one ControlMessage).
func appendGroup(dst []byte, ends []int, top, ctrl [][]byte) ([]byte, []int) {
	ctrlLen := 0
	for _, c := range ctrl {
		ctrlLen += len(c)
	}
	size := 0
	for _, t := range top {
		size += len(t)
	}
	if len(ctrl) > 0 {
		size += protowire.SizeTag(FieldControl) + protowire.SizeBytes(ctrlLen)
	}
	dst = binary.AppendUvarint(dst, uint64(size))
	for _, t := range top {
		dst = append(dst, t...)
	}
	if len(ctrl) > 0 {
		dst = protowire.AppendTag(dst, FieldControl, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(ctrlLen))
		for _, c := range ctrl {
			dst = append(dst, c...)
		}
	}
	return dst, append(ends, len(dst))
}
