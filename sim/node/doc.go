// Package node is one simulated Ethereum consensus node: unmodified go-libp2p-pubsub GossipSub
// on a host of the run's network (package network), with whole-stream compression added by
// wrapping the host's gossipsub streams, meters on every stream direction, and the fault
// injection a scenario's schedule asks for.
//
// NewNode runs GossipSub on a host of the run's network, configured by options in
// go-libp2p-pubsub's style: WithClient (a client's
// GossipSub parameters from topology.ClientProfile; default the Ethereum spec's: D 8/6/12/6,
// heartbeat 700 ms, mcache 6/3, fanout TTL 60 s, seen TTL 768 s), WithTimeScale (durations
// divided by it), WithCodecs, WithPayloadSSZ, WithDirectPeers, WithRawTracers,
// WithFlowControl, WithQueueSize, WithRecorder, WithHeartbeatDelay. Every node uses StrictNoSign
// without author, the consensus message id (gossip.PubsubMsgID) and max RPC MaxMessageBytes.
// A node is not changed after NewNode. Gossipsub streams pass through a stream codec chosen by
// protocol ID:
//
//	/meshsub/1.2.0                  plain (the baseline; also the fallback)
//	/snappy-stream/meshsub/1.2.0    snappy-stream with a 64 KiB history (the proposal)
//	/streamsim/<spec>/meshsub/1.2.0 any other codec spec, canonical form (codec.Spec.String),
//	                                e.g. /streamsim/zstd/meshsub/1.2.0, /streamsim/snappy-stream:1MiB/meshsub/1.2.0
//
// A node offers its compressed IDs first and plain last; all of them get gossipsub v1.2
// features. In payload mode ssz the sender un-Snappies message data inside compressed streams
// and the receiver re-Snappies it (every node of a run uses the same mode). A codec or framing
// error resets that one stream with a logged error; pubsub then opens a fresh stream, with
// fresh codec history.
//
// Every stream direction is metered per peer and category (and control kind): raw bytes (the
// RPC stream before compression), wire bytes, frames, messages and codec time. An inbound
// frame's wire bytes are those of the codec unit that carried it, as the codec reader reports
// them. A RawTracer counts pubsub's deliveries and duplicates per category, drops per peer,
// rejections, mesh changes and each peer's outbound queue; with flow control on, a node stops
// reading while one of its queues is over half full, so overload becomes lag at the
// publishers rather than drops.
package node
