package gossip

import (
	"fmt"

	"github.com/golang/snappy"
)

// MessageSnappy is today's per-message Snappy of a frame's published messages, done for what
// it costs: what a plain (/meshsub/1.2.0) stream's messages need besides the stream itself.
// Load finds each message's data (ssz_snappy) in a frame and, for Encode, decodes it once (the
// preparation); Encode then Snappy-encodes every message's SSZ as its publisher did
// (golang/snappy), Decode Snappy-decodes every message's data as a receiver does before it can
// compute the message id. Only Encode and Decode are the work to time. A message whose data
// is not a Snappy block (pubsub's to judge) was encoded by no one: Encode leaves it out, and
// Decode's attempt on it costs what a receiver's does.
type MessageSnappy struct {
	data [][]byte // each message's data, slices of the loaded frame
	ssz  [][]byte // each message's SSZ, slices of sszBuf (Load with ssz)
	offs []int
	sszBuf,
	out []byte
}

// Load takes frame's messages (the frame is read until the next Load); with ssz it also
// decodes their data, for Encode. A frame without messages loads none; only a malformed frame
// is an error.
func (m *MessageSnappy) Load(frame []byte, ssz bool) error {
	m.data, m.ssz, m.sszBuf = m.data[:0], m.ssz[:0], m.sszBuf[:0]
	body, _, err := FrameBody(frame)
	if err != nil {
		return err
	}
	for f, err := range Fields(body) {
		if err != nil {
			return err
		}
		if !f.Is(FieldPublish) {
			continue
		}
		for mf, err := range Fields(f.Value) {
			if err != nil {
				return fmt.Errorf("message: %w", err)
			}
			if mf.Is(fieldMessageData) {
				m.data = append(m.data, mf.Value)
			}
		}
	}
	if !ssz {
		return nil
	}
	offs := m.offs[:0]
	for _, d := range m.data {
		n, err := snappy.DecodedLen(d)
		if err != nil || n > MaxPayloadBytes {
			continue
		}
		start := len(m.sszBuf)
		m.sszBuf = append(m.sszBuf, make([]byte, n)...)
		if _, err := snappy.Decode(m.sszBuf[start:], d); err != nil {
			m.sszBuf = m.sszBuf[:start]
			continue
		}
		offs = append(offs, start)
	}
	offs = append(offs, len(m.sszBuf))
	m.offs = offs
	for i := range len(offs) - 1 {
		m.ssz = append(m.ssz, m.sszBuf[offs[i]:offs[i+1]])
	}
	return nil
}

// Messages is the number of messages loaded.
func (m *MessageSnappy) Messages() int { return len(m.data) }

// Encode Snappy-encodes each loaded message's SSZ (Load with ssz) and returns the encoded
// bytes in all.
func (m *MessageSnappy) Encode() int {
	n := 0
	for _, s := range m.ssz {
		if need := snappy.MaxEncodedLen(len(s)); cap(m.out) < need {
			m.out = make([]byte, need)
		}
		n += len(snappy.Encode(m.out[:cap(m.out)], s))
	}
	return n
}

// Decode Snappy-decodes each loaded message's data and returns the decoded bytes in all
// (data that is not a Snappy block of at most MaxPayloadBytes decodes to none).
func (m *MessageSnappy) Decode() int {
	n := 0
	for _, d := range m.data {
		size, err := snappy.DecodedLen(d)
		if err != nil || size > MaxPayloadBytes {
			continue
		}
		if cap(m.out) < size {
			m.out = make([]byte, size)
		}
		if dec, err := snappy.Decode(m.out[:cap(m.out)], d); err == nil {
			n += len(dec)
		}
	}
	return n
}
