package gossip

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/golang/snappy"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
)

// MaxPayloadBytes is the largest uncompressed gossip payload (MAX_PAYLOAD_SIZE, 10 MiB).
const MaxPayloadBytes = 10 << 20

// MessageIDBytes is the length of an Ethereum gossip message id.
const MessageIDBytes = 20

var (
	domainValidSnappy   = [4]byte{0x01, 0x00, 0x00, 0x00}
	domainInvalidSnappy = [4]byte{0x00, 0x00, 0x00, 0x00}
)

// MessageID computes the consensus-spec message id (Altair onwards):
// SHA256(MESSAGE_DOMAIN_VALID_SNAPPY ‖ uint64_le(len(topic)) ‖ topic ‖ snappy_decompress(data))[:20],
// or with MESSAGE_DOMAIN_INVALID_SNAPPY over the raw data when data is not a valid Snappy
// block of at most MaxPayloadBytes.
func MessageID(topic string, data []byte) [MessageIDBytes]byte {
	domain, payload := domainInvalidSnappy, data
	if n, err := snappy.DecodedLen(data); err == nil && n <= MaxPayloadBytes {
		if dec, err := snappy.Decode(nil, data); err == nil {
			domain, payload = domainValidSnappy, dec
		}
	}
	var tl [8]byte
	binary.LittleEndian.PutUint64(tl[:], uint64(len(topic)))
	h := sha256.New()
	h.Write(domain[:])
	h.Write(tl[:])
	h.Write([]byte(topic))
	h.Write(payload)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	var id [MessageIDBytes]byte
	copy(id[:], sum[:MessageIDBytes])
	return id
}

// PubsubMsgID is MessageID in the form go-libp2p-pubsub's WithMessageIdFn takes.
func PubsubMsgID(m *pb.Message) string {
	id := MessageID(m.GetTopic(), m.GetData())
	return string(id[:])
}
