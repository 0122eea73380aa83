// Package result is the schema every streamsim scenario writes and every report reads: one
// summary per instance (node), its stream meters, parity, schedule, build and failure.
package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/streamsim/streamsim/gossip"
)

// SummaryFile is the name of the summary asset every instance writes into its outputs
// directory (Testground layout: <run>/<group>/<instance>/summary.json).
const SummaryFile = "summary.json"

// SummaryVersion is the version of NodeSummary this package writes. Version 1 (hub-leaves
// only, failures as bare strings) is still read.
const SummaryVersion = 2

// Roles of instances (topology.Role values, as strings so this package stays light).
const (
	RolePublisher = "publisher"
	RoleHub       = "hub"
	RoleLeaf      = "leaf"
	RoleNode      = "node"
)

// FailureKind classifies why an instance failed, so reports never parse messages.
type FailureKind string

const (
	// FailSetup: bad parameters, a host or the address exchange failed before the run.
	FailSetup FailureKind = "setup"
	// FailPeer: another instance announced its failure, so this one stopped.
	FailPeer FailureKind = "peer"
	// FailRun: the measured phase failed (publishing, a barrier, a timeout).
	FailRun FailureKind = "run"
	// FailParity: what the node received differs from what was published to it.
	FailParity FailureKind = "parity"
)

// Failure is an instance's failure: its kind and a message for people.
type Failure struct {
	Kind    FailureKind `json:"kind"`
	Message string      `json:"message"`
}

func (f *Failure) Error() string { return string(f.Kind) + ": " + f.Message }

// NodeSummary is one instance's summary.json: what it measured on its streams and what it
// published or received.
type NodeSummary struct {
	Version int `json:"version"`
	// Scenario is the registered scenario that produced the summary ("hub-leaves", "mesh").
	Scenario string `json:"scenario,omitempty"`
	Role     string `json:"role"`
	Group    string `json:"group"`
	Instance int    `json:"instance"` // sequence number within the group, from 0
	PeerID   string `json:"peer_id"`
	// Codec is a leaf's stream codec spec (canonical); empty for other roles.
	Codec     string   `json:"codec,omitempty"`
	Protocols []string `json:"protocols"`

	Profile   string  `json:"profile"`
	Payload   string  `json:"payload"`
	Slots     int     `json:"slots"`
	TimeScale float64 `json:"time_scale"`
	Seed      int64   `json:"seed"`
	Build     string  `json:"build"` // "optimized" or why CPU figures are inflated
	// Optimized is false when the binary was built without compiler optimizations (CPU
	// figures inflated); see BuildOptimized.
	Optimized bool `json:"optimized"`

	// Start and Duration delimit the measured phase: from the start barrier until the node
	// has seen every published message (or gave up waiting).
	Start    time.Time `json:"start"`
	Duration float64   `json:"duration_s"`

	Streams []StreamStats `json:"streams"`
	// Parity: for a leaf, the messages delivered to it; for a publisher, the messages it
	// published within the leaves' profile.
	Parity   *Parity   `json:"parity,omitempty"`
	Schedule *Schedule `json:"schedule,omitempty"`
	Pubsub   Pubsub    `json:"pubsub"`
	// Bandwidth is go-libp2p's BandwidthCounter per protocol (stream level, after
	// compression, including multistream negotiation): the cross-check of wire bytes.
	Bandwidth    map[string]Traffic `json:"bandwidth"`
	StreamErrors int64              `json:"stream_errors"`
	// Failure is the instance's failure, if any.
	Failure *Failure `json:"failure,omitempty"`
	// Mesh holds what a node of a gossip mesh measured beyond the streams (nil elsewhere).
	Mesh *Mesh `json:"mesh,omitempty"`
}

// summaryV1 is the part of a version-1 summary that changed shape.
type summaryV1 struct {
	Error string `json:"error"`
}

// upgradeV1 converts a version-1 summary (hub-leaves, failures as strings; parity failures
// began with "parity FAIL") into the current shape.
func upgradeV1(s *NodeSummary, b []byte) error {
	var v1 summaryV1
	if err := json.Unmarshal(b, &v1); err != nil {
		return err
	}
	s.Scenario = "hub-leaves"
	s.Optimized = s.Build == "" || s.Build == "optimized"
	if v1.Error != "" {
		kind := FailRun
		if len(v1.Error) >= 11 && v1.Error[:11] == "parity FAIL" {
			kind = FailParity
		}
		s.Failure = &Failure{Kind: kind, Message: v1.Error}
	}
	s.Version = SummaryVersion
	return nil
}

// Traffic is bytes in and out.
type Traffic struct {
	In  int64 `json:"in"`
	Out int64 `json:"out"`
}

// StreamStats is one stream direction to one peer, summed over every stream to that peer in
// that direction (a reconnect opens a new stream).
type StreamStats struct {
	Peer      string `json:"peer"`
	PeerRole  string `json:"peer_role,omitempty"`
	Direction string `json:"direction"` // "in" or "out", from this node's view
	Protocol  string `json:"protocol"`
	Codec     string `json:"codec"`
	Streams   int    `json:"streams"`
	Frames    int64  `json:"frames"`
	RawBytes  int64  `json:"raw_bytes"`
	WireBytes int64  `json:"wire_bytes"`
	// Messages per category (published messages by topic; control entries for control).
	Messages   map[gossip.Category]int64         `json:"messages"`
	Categories map[gossip.Category]CategoryBytes `json:"categories"`
	CodecStats CodecStats                        `json:"codec_stats"`
}

// CategoryBytes is raw and wire bytes of one category.
type CategoryBytes struct {
	RawBytes  int64 `json:"raw_bytes"`
	WireBytes int64 `json:"wire_bytes"`
}

// CodecStats is the stream codec's own accounting for a stream direction.
type CodecStats struct {
	Units      int64 `json:"units"`       // blocks encoded or decoded
	RawBytes   int64 `json:"raw_bytes"`   // bytes before compression
	WireBytes  int64 `json:"wire_bytes"`  // bytes after compression
	TimeNs     int64 `json:"time_ns"`     // codec work only
	StateBytes int64 `json:"state_bytes"` // memory held, largest seen
}

// Parity is what a node delivered (leaf) or published (publisher), per category: a count and
// an order-independent digest of message ids (two 64-bit lanes, each the sum mod 2^64 of the
// ids' leading words), so publishers' digests add up to the published set's.
type Parity struct {
	Messages map[gossip.Category]int64     `json:"messages"`
	Digest   map[gossip.Category][2]uint64 `json:"digest"`
}

// Equal reports whether two parity records agree in every category.
func (p *Parity) Equal(q *Parity) bool {
	for _, c := range gossip.Categories() {
		if p.Messages[c] != q.Messages[c] || p.Digest[c] != q.Digest[c] {
			return false
		}
	}
	return true
}

// Add adds q's counts and digests into p.
func (p *Parity) Add(q *Parity) {
	if p.Messages == nil {
		p.Messages = map[gossip.Category]int64{}
		p.Digest = map[gossip.Category][2]uint64{}
	}
	for c, n := range q.Messages {
		p.Messages[c] += n
	}
	for c, d := range q.Digest {
		e := p.Digest[c]
		p.Digest[c] = [2]uint64{e[0] + d[0], e[1] + d[1]}
	}
}

// Total is the number of messages over all categories.
func (p *Parity) Total() int64 {
	var n int64
	for _, v := range p.Messages {
		n += v
	}
	return n
}

// Schedule is a publisher's timing: scheduled versus achieved send times.
type Schedule struct {
	Messages int64 `json:"messages"`
	// MaxLagNs and MeanLagNs: how late Publish returned after the scheduled (scaled) time.
	MaxLagNs  int64 `json:"max_lag_ns"`
	MeanLagNs int64 `json:"mean_lag_ns"`
	// LateMessages published more than one (scaled) slot after their time.
	LateMessages int64 `json:"late_messages"`
	// ScheduledNs is the scaled span of the schedule; ElapsedNs the time publishing took.
	ScheduledNs int64 `json:"scheduled_ns"`
	ElapsedNs   int64 `json:"elapsed_ns"`
	SlotNs      int64 `json:"slot_ns"` // one scaled slot
}

// Pubsub counts go-libp2p-pubsub events from its RawTracer.
type Pubsub struct {
	Delivered     int64            `json:"delivered"`
	Duplicates    int64            `json:"duplicates"`
	Rejected      map[string]int64 `json:"rejected,omitempty"`
	DroppedRPCs   int64            `json:"dropped_rpcs"`
	Undeliverable int64            `json:"undeliverable"`
	Throttled     int64            `json:"throttled"`
}

// Drops is everything pubsub lost: dropped RPCs, undeliverable messages and rejections.
func (p Pubsub) Drops() int64 {
	n := p.DroppedRPCs + p.Undeliverable
	for _, v := range p.Rejected {
		n += v
	}
	return n
}

// ReadSummary reads one summary.json.
func ReadSummary(path string) (*NodeSummary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s NodeSummary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch s.Version {
	case SummaryVersion:
	case 1:
		if err := upgradeV1(&s, b); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	default:
		return nil, fmt.Errorf("%s: summary version %d, want 1 or %d", path, s.Version, SummaryVersion)
	}
	return &s, nil
}

// WriteSummary writes s as indented JSON to path.
func WriteSummary(path string, s *NodeSummary) error {
	s.Version = SummaryVersion
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// FindSummaries returns every summary.json under dir, sorted.
func FindSummaries(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == SummaryFile {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no " + SummaryFile + " under " + dir)
	}
	sort.Strings(out)
	return out, nil
}
