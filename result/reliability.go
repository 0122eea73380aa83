package result

// The reliability records of a NodeSummary: what a fault schedule did (FaultEvent), when a
// node's gossip links were down (Outage), what pubsub lost and where (LostMessages), and how
// the node's resources developed (Sample). Reports account every published message against
// them (analysis: fault accounting, soak trends).

import "github.com/streamsim/streamsim/gossip"

// FaultEvent is one scheduled fault as this node carried it out (or failed to).
type FaultEvent struct {
	// Spec is the schedule entry as written in param faults.
	Spec string `json:"spec"`
	Kind string `json:"kind"`
	// AtNs is when the node acted (Unix nanoseconds); UntilNs ends a lasting fault
	// (disconnect, slow), 0 for the others.
	AtNs    int64 `json:"at_ns"`
	UntilNs int64 `json:"until_ns,omitempty"`
	// Peer is the other end (peer id), for faults on one stream.
	Peer string `json:"peer,omitempty"`
	// Applied is false when the fault could not be carried out (no such stream at the time);
	// Note says what happened.
	Applied bool   `json:"applied"`
	Note    string `json:"note,omitempty"`
}

// Outage is an interval during which one gossip link of the node was not working: from the
// moment the connection closed or one of the link's two gossip streams (in, out) ended, until
// the node was connected again with a live stream in each direction.
type Outage struct {
	Peer   string `json:"peer"`
	FromNs int64  `json:"from_ns"` // Unix nanoseconds
	// ToNs is when the link worked again; 0 when it was still down when the node stopped.
	ToNs  int64  `json:"to_ns,omitempty"`
	Cause string `json:"cause"`
}

// Lost message reasons.
const (
	// LostDropped: pubsub dropped an RPC for Peer at a full outbound queue (RawTracer DropRPC).
	LostDropped = "dropped_rpc"
	// LostUndeliverable: the node's subscription buffer was full (UndeliverableMessage).
	LostUndeliverable = "undeliverable"
	// LostRejected is the prefix of rejections: "rejected: <pubsub's reason>".
	LostRejected = "rejected"
)

// LostMessages are messages pubsub lost at this node for one reason (and one peer, for
// dropped RPCs): their ids, hex-encoded. Truncated counts ids beyond the kept ones.
type LostMessages struct {
	Reason    string   `json:"reason"`
	Peer      string   `json:"peer,omitempty"`
	IDs       []string `json:"ids"`
	Truncated int64    `json:"truncated,omitempty"`
}

// Sample is one periodic measurement of a node's resources. Heap and goroutines are the OS
// process's (in an embedded run every node shares them); streams and connections are the node's.
type Sample struct {
	AtNs int64 `json:"at_ns"` // since the start of the measured phase
	// HeapLiveBytes is the heap marked live by the last GC (runtime/metrics
	// /gc/heap/live:bytes); GoMemBytes all memory the Go runtime has mapped
	// (/memory/classes/total:bytes).
	HeapLiveBytes int64 `json:"heap_live_bytes"`
	GoMemBytes    int64 `json:"go_mem_bytes"`
	Goroutines    int64 `json:"goroutines"`
	// Streams is every open libp2p stream of the node's host; GossipStreams its live
	// gossipsub streams (both directions); Conns its open connections.
	Streams       int64 `json:"streams"`
	GossipStreams int64 `json:"gossip_streams"`
	Conns         int64 `json:"conns"`
	// Delivered is the messages delivered to the node's subscriptions so far.
	Delivered int64 `json:"delivered"`
	// In and Out are the node's gossip stream bytes per category so far, raw and wire, over
	// every stream direction (cumulative since the node started, as its streams' totals are):
	// the difference of two samples is the bytes between them. Absent in summaries from
	// before they were sampled.
	In  map[gossip.Category]CategoryBytes `json:"in,omitempty"`
	Out map[gossip.Category]CategoryBytes `json:"out,omitempty"`
}
