// Package sim runs simulated Ethereum consensus nodes over real go-libp2p and unmodified
// go-libp2p-pubsub GossipSub, with whole-stream compression added by wrapping the host, and
// the hub-leaves scenario both under Testground and embedded in one process.
//
// # Node
//
// A Node is a libp2p host (TCP, noise, yamux, null resource and connection managers) running
// GossipSub with Ethereum settings: D 8/6/12/6, heartbeat 700 ms, fanout TTL 60 s, mcache 6/3,
// seen TTL 768 s (durations divided by the time scale), StrictNoSign without author, the
// consensus message id (gossip.PubsubMsgID), max RPC MaxMessageBytes, outbound and validation
// queues of 1000. Gossipsub streams pass through a stream codec chosen by protocol ID:
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
// Every stream direction is metered per peer and category: raw bytes (the RPC stream before
// compression), wire bytes, frames, messages and codec time. Inbound frames are reassembled
// from the decoded bytes; the wire bytes the codec consumed up to a frame's end belong to
// it. A RawTracer counts pubsub's drops, rejections and undeliverable messages, and tracks
// each peer's outbound queue: a node stops reading while one of its queues is over half full,
// so overload becomes lag at the publishers rather than drops.
//
// # Scenario hub-leaves
//
// HubLeaves is one instance of the live check, written against the Testground SDK. Groups:
// "publishers" (they publish the workload through the hub, message i of the run by publisher
// i mod publishers), "hub" (subscribes to every topic and forwards), and any other group is a
// leaf group whose "codec" parameter is its stream codec. Leaves and hub are direct peers of
// each other. Parameters (all optional, Testground strings):
//
//	codec       a leaf group's codec spec                      default plain
//	profile     leaves' profile: all-subnets, default, supernode   default all-subnets
//	slots       slots of workload                               default 2 (DefaultSlots)
//	time_scale  speed-up over real time                         default 0.5 (DefaultTimeScale)
//	payload     ssz_snappy or ssz                               default ssz_snappy
//	seed        workload seed                                   default 1
//	record      true: record every frame to frames.trace.gz     default false
//	publishers  size of the publishers group                    default 4
//	validators  active validators of the workload               default 1000000
//
// Each instance writes results.out points and a summary.json asset (analysis.NodeSummary);
// analysis.LoadRun reads a run's outputs back. A leaf fails when its delivered messages
// (count and id digest per category) differ from what the publishers published.
//
// Embedded runs every instance of HubLeaves in this process, each with its own RunEnv and
// outputs directory <out>/<group>/<instance>/, sharing one in-memory sync client.
package sim
