// Package trace owns the frame-trace file format: every gossipsub RPC frame of a set of
// stream directions, with its time and category. The workload export, the simulator's frame
// recorder and the offline analysis all read and write traces through this package.
//
// Layout (all integers unsigned LEB128 varints unless stated):
//
//	magic    "SSTRACE\n" (8 bytes)
//	header   len, then JSON of Header (format version, source, parameters)
//	records  until end of file, each one kind byte and its body:
//	  'S' stream    len, then JSON of Stream (declares a stream direction before its frames)
//	  'F' frame     stream id, time offset in ns from the trace start, category (1 byte),
//	                len, then the frame bytes: one length-prefixed gossipsub RPC exactly as
//	                go-libp2p-pubsub writes it, before any stream compression
//
// A file whose name ends in ".gz" is gzip-compressed as a whole.
package trace

import (
	"errors"
	"time"

	"github.com/streamsim/streamsim/gossip"
)

// Version is the format version this package writes and reads.
const Version = 1

// MaxFrameBytes bounds one frame: larger than any gossipsub RPC streamsim produces (pubsub's
// max message size is configured below this), small enough that a corrupt length cannot make
// a reader allocate without bound.
const MaxFrameBytes = 64 << 20

// maxJSONBytes bounds header and stream declarations.
const maxJSONBytes = 1 << 20

const magic = "SSTRACE\n"

const (
	kindStream byte = 'S'
	kindFrame  byte = 'F'
)

// Header describes a trace as a whole.
type Header struct {
	Version int               `json:"version"`
	Source  string            `json:"source"` // what wrote it: "workload", "recorder", …
	Params  map[string]string `json:"params,omitempty"`
}

// Directions of a stream, from the recording node's view.
const (
	DirectionIn  = "in"
	DirectionOut = "out"
)

// Stream describes one stream direction.
type Stream struct {
	ID        uint32 `json:"id"`
	Node      string `json:"node"`      // the node whose view this is
	Peer      string `json:"peer"`      // the other end
	Direction string `json:"direction"` // DirectionIn or DirectionOut, from Node's view
	Protocol  string `json:"protocol"`  // negotiated protocol ID
	Codec     string `json:"codec"`     // stream codec spec on that stream
}

// Frame is one RPC frame of one stream direction.
type Frame struct {
	At       time.Duration // offset from the start of the trace
	Stream   uint32
	Category gossip.Category // the category holding most of the frame's bytes
	Data     []byte          // uvarint length + RPC protobuf, before stream compression
}

// ErrFormat is wrapped by every error about malformed trace contents.
var ErrFormat = errors.New("malformed trace")
