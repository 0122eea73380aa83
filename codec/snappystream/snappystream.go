// Package snappystream implements snappy-stream: a stream of unmodified Snappy blocks,
// one per message, whose copies may also reach into a history of earlier blocks.
//
// The wire format. One direction of a stream is a concatenation of Snappy blocks with
// no other framing. Each block is uvarint(decoded length) followed by elements exactly as
// in github.com/golang/snappy: literals (tag 0) and copies with 1-, 2- or 4-byte offsets
// (tags 1, 2, 3); a block ends when its declared length has been produced. Both ends keep
// the last W bytes (the window) of everything decoded earlier on the stream. While a block
// has produced p bytes, a copy offset o is valid when 1 ≤ o ≤ p + h, where
// h = min(W, bytes decoded before this block); overlapping copies work as in Snappy. With
// W = 0 every block is a plain Snappy block. A decoder rejects a declared length above its
// bound before allocating, an offset beyond p + h, elements that run past the declared
// length, and truncated blocks; its memory is W plus one block. W is fixed per protocol,
// so both ends agree on it without a handshake.
package snappystream

import (
	"errors"
	"fmt"
)

const (
	// MaxWindowBytes is the largest supported history window.
	MaxWindowBytes = 16 << 20
	// DefaultWindowBytes is the proposal's history window.
	DefaultWindowBytes = 64 << 10
	// DefaultMaxBlockBytes bounds a block's declared length by default: one gossip
	// RPC frame carrying a maximal 10 MiB payload (MAX_PAYLOAD_SIZE) plus its framing.
	DefaultMaxBlockBytes = 10<<20 + 64<<10
	// MaxEncodeBytes is the largest src Encode accepts; Snappy's length header limits
	// blocks to 4 GiB.
	MaxEncodeBytes = 1 << 30
)

const (
	tagLiteral = 0x00
	tagCopy1   = 0x01
	tagCopy2   = 0x02
	tagCopy4   = 0x03
)

// Level selects how hard the encoder searches for matches.
type Level uint8

const (
	// Fast probes one hash table once per position and skips ahead over
	// incompressible bytes (signatures, blob cells).
	Fast Level = iota
	// Better probes a long and a short hash table, tries the next position
	// (lazy matching) and re-probes across the end of each match for a longer one.
	Better
)

// String returns "fast" or "better".
func (l Level) String() string {
	switch l {
	case Fast:
		return "fast"
	case Better:
		return "better"
	}
	return fmt.Sprintf("Level(%d)", uint8(l))
}

// ParseLevel parses "fast" or "better".
func ParseLevel(s string) (Level, error) {
	switch s {
	case "fast":
		return Fast, nil
	case "better":
		return Better, nil
	}
	return 0, fmt.Errorf("snappystream: unknown level %q (want fast or better)", s)
}

var (
	// ErrBlockTooLarge is wrapped by errors about a declared length above the bound.
	ErrBlockTooLarge = errors.New("declared length above the bound")
	// ErrCorrupt is wrapped by errors about malformed blocks.
	ErrCorrupt = errors.New("corrupt block")
)

// MaxEncodedLen returns the largest block Encode can append for srcLen input bytes.
func MaxEncodedLen(srcLen int) int {
	// Header (≤5) + literals with at most 5 tag bytes per 60 bytes, as in golang/snappy.
	// Copies never expand: a copy of n bytes costs at most n bytes (4-byte-offset copies
	// are only emitted for 8 or more bytes).
	return 32 + srcLen + srcLen/6
}

func checkWindow(windowBytes int) {
	if windowBytes < 0 || windowBytes > MaxWindowBytes {
		panic(fmt.Sprintf("snappystream: window of %d bytes outside [0, %d]", windowBytes, MaxWindowBytes))
	}
}
