package gossip

import (
	"encoding/binary"
	"fmt"

	"github.com/golang/snappy"
	"google.golang.org/protobuf/encoding/protowire"
)

// Payload modes inside a compressed stream (docs/format.md).
const (
	// PayloadSSZSnappy keeps message data Snappy-compressed, as on the network today.
	PayloadSSZSnappy = "ssz_snappy"
	// PayloadSSZ carries raw SSZ: the sender un-Snappies each message's data and the
	// receiver re-Snappies it before pubsub sees it.
	PayloadSSZ = "ssz"
)

// ParsePayload checks a payload mode name.
func ParsePayload(mode string) (string, error) {
	switch mode {
	case PayloadSSZSnappy, PayloadSSZ:
		return mode, nil
	}
	return "", fmt.Errorf("unknown payload mode %q (allowed: %s, %s)", mode, PayloadSSZSnappy, PayloadSSZ)
}

// AppendSSZFrame appends frame with every published message's data Snappy-decoded to raw
// SSZ; all other bytes are kept as they are. It fails when a message's data is not a Snappy
// block of at most MaxPayloadBytes.
func AppendSSZFrame(dst, frame []byte) ([]byte, error) {
	return transcodeFrame(dst, frame, func(dst, data []byte) ([]byte, error) {
		n, err := snappy.DecodedLen(data)
		if err != nil {
			return nil, fmt.Errorf("message data: %w", err)
		}
		if n > MaxPayloadBytes {
			return nil, fmt.Errorf("message data decodes to %d bytes, above the %d-byte limit", n, MaxPayloadBytes)
		}
		start := len(dst)
		dst = append(dst, make([]byte, n)...)
		if _, err := snappy.Decode(dst[start:], data); err != nil {
			return nil, fmt.Errorf("message data: %w", err)
		}
		return dst, nil
	})
}

// AppendSnappyFrame appends frame with every published message's data Snappy-encoded
// (golang/snappy), the inverse of AppendSSZFrame. Message ids do not change: they are
// computed on decompressed data.
func AppendSnappyFrame(dst, frame []byte) ([]byte, error) {
	return transcodeFrame(dst, frame, func(dst, data []byte) ([]byte, error) {
		if len(data) > MaxPayloadBytes {
			return nil, fmt.Errorf("message data of %d bytes above the %d-byte limit", len(data), MaxPayloadBytes)
		}
		start := len(dst)
		dst = append(dst, make([]byte, snappy.MaxEncodedLen(len(data)))...)
		enc := snappy.Encode(dst[start:], data)
		return dst[:start+len(enc)], nil
	})
}

// transcodeFrame rewrites the data field of each published message with conv, re-emitting
// the fields in their original order so the result is what pubsub would marshal for the
// rewritten RPC.
func transcodeFrame(dst, frame []byte, conv func(dst, data []byte) ([]byte, error)) ([]byte, error) {
	body, _, err := FrameBody(frame)
	if err != nil {
		return dst, err
	}
	out := make([]byte, 0, len(body)+len(body)/2)
	var msgBuf, dataBuf []byte
	for f, err := range Fields(body) {
		if err != nil {
			return dst, err
		}
		if !f.Is(FieldPublish) {
			out = append(out, f.All...)
			continue
		}
		msgBuf = msgBuf[:0]
		for mf, err := range Fields(f.Value) {
			if err != nil {
				return dst, fmt.Errorf("message: %w", err)
			}
			if !mf.Is(fieldMessageData) {
				msgBuf = append(msgBuf, mf.All...)
				continue
			}
			if dataBuf, err = conv(dataBuf[:0], mf.Value); err != nil {
				return dst, err
			}
			msgBuf = protowire.AppendTag(msgBuf, fieldMessageData, protowire.BytesType)
			msgBuf = protowire.AppendBytes(msgBuf, dataBuf)
		}
		out = protowire.AppendTag(out, FieldPublish, protowire.BytesType)
		out = protowire.AppendBytes(out, msgBuf)
	}
	dst = binary.AppendUvarint(dst, uint64(len(out)))
	return append(dst, out...), nil
}
