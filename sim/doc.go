// Package sim runs simulated Ethereum consensus nodes over real go-libp2p and unmodified
// go-libp2p-pubsub GossipSub, with whole-stream compression added by wrapping the host, and
// runs scenarios both under Testground and embedded in one process.
//
// # Node
//
// NewHost starts a libp2p host (TCP, noise, yamux, null resource and connection managers, a
// BandwidthCounter; extra libp2p options such as a shaped transport come last). NewNode runs
// GossipSub on it, configured by options in go-libp2p-pubsub's style: WithClient (a client's
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
//
// # Scenarios
//
// A Scenario (scenario.go) is a value: name, parameters, instance bounds, group → role, a
// parameter check, a topology Plan, which nodes check what they receive, flow control, whether
// nodes log message times. Register adds it; Lookup and Scenarios read the registry, which the
// Testground plan, the embedded runner and the CLI share. The lifecycle every scenario runs is
// in instance.go (host, address exchange over the sync service, plan, node, dial, subscribe,
// wait for subscriptions, barriers, a failing instance announcing its failure, summary.json and
// results.out) and traffic.go (publishing the workload on its schedule, each message by the
// member Plan.Origin names; receiving and checking against what was published on the node's
// topics). HubLeaves (hubleaves.go) is the proposal's live check; Mesh (mesh.go) a gossip mesh
// around an observed all-subnets node.
//
// Embedded runs every instance of a scenario in this process, each with its own RunEnv and
// outputs directory <out>/<group>/<instance>/, sharing one in-memory sync client.
package sim
