package gossip

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"

	pool "github.com/libp2p/go-buffer-pool"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// AppendFrame appends rpc as go-libp2p-pubsub writes it on a stream: uvarint(size) followed by
// the protobuf encoding, produced by the same marshaller (comm.go, handleSendingMessages).
func AppendFrame(dst []byte, rpc *pb.RPC) ([]byte, error) {
	size := proto.Size(rpc)
	dst = binary.AppendUvarint(dst, uint64(size))
	out, err := proto.MarshalOptions{}.MarshalAppend(dst, rpc)
	if err != nil {
		return dst, fmt.Errorf("marshal rpc: %w", err)
	}
	return out, nil
}

// AppendPublishFrame appends the frame of an RPC that carries one message with StrictNoSign
// (data and topic only), as a hub forwards it to a peer.
func AppendPublishFrame(dst []byte, topic string, data []byte) ([]byte, error) {
	return AppendFrame(dst, &pb.RPC{Publish: []*pb.Message{{Data: data, Topic: &topic}}})
}

// FrameParts is an RPC frame's bytes and messages split by category.
type FrameParts struct {
	// Bytes per category; they add up to the frame's length, length prefix included.
	Bytes [NumCategories]int
	// Messages per category: published messages by their topic; Control counts control
	// entries (IHAVE, IWANT, IDONTWANT, GRAFT, PRUNE, subscriptions).
	Messages [NumCategories]int
	// Control splits the Control category by kind: its bytes (adding up to Bytes[Control]),
	// entries and message ids.
	Control [NumControlKinds]ControlPart
}

// ControlKind is a kind of gossipsub control traffic.
type ControlKind uint8

const (
	Subscriptions ControlKind = iota
	IHave
	IWant
	Graft
	Prune
	IDontWant
	// NumControlKinds is the number of control kinds.
	NumControlKinds
)

var controlKindNames = [NumControlKinds]string{"subscriptions", "ihave", "iwant", "graft", "prune", "idontwant"}

func (k ControlKind) String() string {
	if k < NumControlKinds {
		return controlKindNames[k]
	}
	return fmt.Sprintf("ControlKind(%d)", uint8(k))
}

// ControlKinds lists every control kind in report order.
func ControlKinds() []ControlKind {
	out := make([]ControlKind, NumControlKinds)
	for i := range out {
		out[i] = ControlKind(i)
	}
	return out
}

// ControlPart is one control kind's share of a frame.
type ControlPart struct {
	Bytes   int // encoded bytes
	Entries int // subscriptions, or IHAVE/IWANT/GRAFT/PRUNE/IDONTWANT entries
	IDs     int // message ids carried (IHAVE, IWANT, IDONTWANT)
}

// Dominant returns the category holding most of the frame's bytes.
func (p *FrameParts) Dominant() Category {
	best := Other
	for c := Category(0); c < NumCategories; c++ {
		if p.Bytes[c] > p.Bytes[best] {
			best = c
		}
	}
	return best
}

// Field numbers of pubsub's pb/rpc.proto that streamsim reads: the RPC's own fields and a
// Message's topic.
const (
	FieldSubscriptions protowire.Number = 1 // RPC.subscriptions
	FieldPublish       protowire.Number = 2 // RPC.publish
	FieldControl       protowire.Number = 3 // RPC.control
	fieldMessageData   protowire.Number = 2 // Message.data
	fieldMessageTopic  protowire.Number = 4 // Message.topic
)

var errFrame = errors.New("malformed rpc frame")

// SplitFrame attributes the bytes of one length-prefixed RPC frame to categories by the
// encoded size of its parts (docs/results-schema.md): each published message to its topic's category,
// subscriptions and control to Control, unknown fields to Other. The length prefix is shared
// out in proportion.
func SplitFrame(frame []byte) (FrameParts, error) {
	var parts FrameParts
	body, n, err := FrameBody(frame)
	if err != nil {
		return parts, err
	}
	for f, err := range Fields(body) {
		if err != nil {
			return parts, err
		}
		switch {
		case f.Is(FieldPublish):
			c := topicBytesCategory(messageTopic(f.Value))
			parts.Bytes[c] += len(f.All)
			parts.Messages[c]++
		case f.Is(FieldSubscriptions):
			parts.Bytes[Control] += len(f.All)
			parts.Messages[Control]++
			parts.Control[Subscriptions].Bytes += len(f.All)
			parts.Control[Subscriptions].Entries++
		case f.Is(FieldControl):
			parts.Bytes[Control] += len(f.All)
			parts.Messages[Control] += splitControl(f.Value, &parts.Control)
		default:
			parts.Bytes[Other] += len(f.All)
		}
	}
	// Share the length prefix out in proportion, remainder to the dominant category.
	if len(frame) > n {
		for c, b := range ShareOut(int64(n), &parts.Bytes) {
			parts.Bytes[c] += int(b)
		}
	} else {
		parts.Bytes[Control] += n
	}
	// The control message's own tag and length and its share of the length prefix go to
	// the heaviest control kind, so the kinds add up to the category.
	if parts.Bytes[Control] > 0 {
		sum, best := 0, Subscriptions
		for k := range parts.Control {
			sum += parts.Control[k].Bytes
			if parts.Control[k].Bytes > parts.Control[best].Bytes {
				best = ControlKind(k)
			}
		}
		parts.Control[best].Bytes += parts.Bytes[Control] - sum
	}
	return parts, nil
}

// FrameBody checks a frame's length prefix and returns the RPC bytes and the prefix length.
func FrameBody(frame []byte) (body []byte, prefixBytes int, err error) {
	size, n := binary.Uvarint(frame)
	if n <= 0 {
		return nil, 0, fmt.Errorf("%w: bad length prefix", errFrame)
	}
	if uint64(len(frame)-n) != size {
		return nil, 0, fmt.Errorf("%w: length prefix says %d bytes, frame has %d", errFrame, size, len(frame)-n)
	}
	return frame[n:], n, nil
}

// Field is one protobuf field of an encoded message: its number and wire type, all its bytes
// (tag included) and, for a length-delimited field, its contents.
type Field struct {
	Num        protowire.Number
	Type       protowire.Type
	All, Value []byte
}

// Is reports whether f is the length-delimited field num.
func (f Field) Is(num protowire.Number) bool { return f.Num == num && f.Type == protowire.BytesType }

// Fields walks the fields of an encoded protobuf message (an RPC frame's body, a Message, a
// ControlMessage) in order. A malformed field ends the walk with its error; the fields before
// it have been yielded.
func Fields(b []byte) iter.Seq2[Field, error] {
	return func(yield func(Field, error) bool) {
		for len(b) > 0 {
			num, typ, tn := protowire.ConsumeTag(b)
			if tn < 0 {
				yield(Field{}, fmt.Errorf("%w: %v", errFrame, protowire.ParseError(tn)))
				return
			}
			fn := protowire.ConsumeFieldValue(num, typ, b[tn:])
			if fn < 0 {
				yield(Field{}, fmt.Errorf("%w: field %d: %v", errFrame, num, protowire.ParseError(fn)))
				return
			}
			f := Field{Num: num, Type: typ, All: b[:tn+fn]}
			if typ == protowire.BytesType {
				f.Value, _ = protowire.ConsumeBytes(b[tn:])
			}
			b = b[tn+fn:]
			if !yield(f, nil) {
				return
			}
		}
	}
}

// MessageTopic returns the topic of an encoded pubsub Message, or "" when it has none or is
// malformed.
func MessageTopic(msg []byte) string { return string(messageTopic(msg)) }

// messageTopic is MessageTopic's bytes, inside msg. It walks the fields as Fields does, in a
// plain loop: it runs for every message of every frame on both sides of every stream.
func messageTopic(msg []byte) []byte {
	for len(msg) > 0 {
		num, typ, tn := protowire.ConsumeTag(msg)
		if tn < 0 {
			return nil
		}
		fn := protowire.ConsumeFieldValue(num, typ, msg[tn:])
		if fn < 0 {
			return nil
		}
		if num == fieldMessageTopic && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(msg[tn:])
			return v
		}
		msg = msg[tn+fn:]
	}
	return nil
}

// countFields counts the length-delimited fields num of an encoded message, up to the first
// malformed field (Fields' walk, in a plain loop: IHAVE, IWANT and IDONTWANT entries carry
// up to thousands of ids).
func countFields(b []byte, num protowire.Number) int {
	n := 0
	for len(b) > 0 {
		f, typ, tn := protowire.ConsumeTag(b)
		if tn < 0 {
			return n
		}
		fn := protowire.ConsumeFieldValue(f, typ, b[tn:])
		if fn < 0 {
			return n
		}
		if f == num && typ == protowire.BytesType {
			n++
		}
		b = b[tn+fn:]
	}
	return n
}

// controlField is a ControlMessage field (pubsub pb/rpc.proto) and the message-id field
// inside its entries.
type controlField struct {
	known bool
	kind  ControlKind
	ids   protowire.Number // field of message ids inside the entry; 0 for none
}

// controlFields are the ControlMessage's fields by number.
var controlFields = [...]controlField{
	1: {true, IHave, 2}, 2: {true, IWant, 1}, 3: {true, Graft, 0}, 4: {true, Prune, 0}, 5: {true, IDontWant, 1},
}

// splitControl adds a ControlMessage's entries to parts by kind and returns how many entries
// it has (unknown fields count as entries of no kind).
func splitControl(b []byte, parts *[NumControlKinds]ControlPart) int {
	n := 0
	for f, err := range Fields(b) {
		if err != nil {
			return n
		}
		n++
		if f.Num < 0 || int(f.Num) >= len(controlFields) || !controlFields[f.Num].known || f.Type != protowire.BytesType {
			continue
		}
		cf := controlFields[f.Num]
		p := &parts[cf.kind]
		p.Bytes += len(f.All)
		p.Entries++
		if cf.ids != 0 {
			p.IDs += countFields(f.Value, cf.ids)
		}
	}
	return n
}

// ShareOut splits n bytes across categories in proportion to weights (a frame's raw bytes per
// category, as SplitFrame gives them); the rounding remainder goes to the heaviest category,
// so the shares add up to n exactly. With no weight at all, everything goes to Other.
func ShareOut(n int64, weights *[NumCategories]int) [NumCategories]int64 {
	var out [NumCategories]int64
	var total int64
	weighted, only := 0, Other
	for c, w := range weights {
		total += int64(w)
		if w != 0 {
			weighted, only = weighted+1, Category(c)
		}
	}
	if total <= 0 {
		out[Other] = n
		return out
	}
	// Two exact shortcuts of the division below (it runs for every frame on both sides of
	// every stream): most frames carry one category, and a plain stream's wire bytes are
	// its raw bytes.
	if weighted == 1 {
		out[only] = n
		return out
	}
	if n == total {
		for c, w := range weights {
			out[c] = int64(w)
		}
		return out
	}
	var given int64
	best := Other
	for c, w := range weights {
		out[c] = n * int64(w) / total
		given += out[c]
		if w > weights[best] {
			best = Category(c)
		}
	}
	out[best] += n - given
	return out
}

// ReadFrame reads one length-prefixed RPC frame from r into buf (grown as needed) and returns
// it, length prefix included, exactly as pubsub wrote it. A frame longer than maxBytes is an
// error before anything is allocated for it; io.EOF is returned only when r ends before the
// first byte of a frame.
func ReadFrame(r io.Reader, buf []byte, maxBytes int) ([]byte, error) {
	// The prefix is read into buf itself: a local array handed to r (an interface) would be
	// allocated on the heap for every frame.
	if cap(buf) < binary.MaxVarintLen64 {
		buf = make([]byte, 0, 256)
	}
	out, err := readFrame(r, buf[:binary.MaxVarintLen64], maxBytes, func(n int) []byte {
		if cap(buf) < n {
			return make([]byte, n)
		}
		return buf[:n]
	}, nil)
	if out == nil {
		return buf, err
	}
	return out, err
}

// ReadPooledFrame is ReadFrame into a buffer from go-buffer-pool, which the caller returns
// with pool.Put once done with the frame; hdr (at least binary.MaxVarintLen64 bytes, not
// retained) holds the length prefix while it is read. A stream's reader that hands each
// frame on and puts it back reuses buffers that are warm in the cache, as pubsub's own reader
// does, instead of keeping a buffer of its largest frame for every stream.
func ReadPooledFrame(r io.Reader, hdr []byte, maxBytes int) ([]byte, error) {
	return readFrame(r, hdr[:binary.MaxVarintLen64], maxBytes, pool.Get, pool.Put)
}

// readFrame reads the prefix into hdr, then the frame into get(its length); on a failed read
// of the body it gives the buffer to put (when not nil) and returns nil.
func readFrame(r io.Reader, hdr []byte, maxBytes int, get func(int) []byte, put func([]byte)) ([]byte, error) {
	if p, ok := r.(peeker); ok {
		// A reader that lends its decoded bytes (a stream codec's Reader): a frame whole in
		// them, with a canonical prefix within the bound, is taken in one copy. Anything
		// else (the frame spans blocks, a bad or padded prefix, an error) is read below,
		// which reports it as it always has: Peek returned no bytes as read.
		if b, err := p.Peek(); err == nil {
			if size, hl := binary.Uvarint(b); hl > 0 && size <= uint64(maxBytes) && size <= uint64(len(b)-hl) &&
				hl == uvarintLen(size) && hl <= len(hdr) {
				n := hl + int(size)
				buf := get(n)
				copy(buf, b[:n])
				p.Discard(n)
				return buf, nil
			}
		}
	}
	var size uint64
	// A reader that yields a byte without a Read (a stream codec's Reader, whose decoded
	// block holds the prefix) is asked for each byte of the prefix that way: the same bytes
	// and errors as io.ReadFull of one byte, without its calls.
	br, _ := r.(io.ByteReader)
	for i := 0; ; i++ {
		if i == len(hdr) {
			return nil, fmt.Errorf("%w: length prefix longer than %d bytes", errFrame, len(hdr))
		}
		// One byte at a time, as pubsub's own varint reader does: nothing past the prefix
		// is taken from r before the frame's size is known.
		var err error
		if br != nil {
			hdr[i], err = br.ReadByte()
		} else {
			_, err = io.ReadFull(r, hdr[i:i+1])
		}
		if err != nil {
			if i == 0 && errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("read frame length: %w", noEOF(err))
		}
		if hdr[i] < 0x80 {
			v, n := binary.Uvarint(hdr[:i+1])
			if n <= 0 {
				return nil, fmt.Errorf("%w: bad length prefix", errFrame)
			}
			size = v
			break
		}
	}
	if size > uint64(maxBytes) {
		return nil, fmt.Errorf("%w: frame of %d bytes exceeds the bound of %d", errFrame, size, maxBytes)
	}
	// The prefix as binary.PutUvarint writes it (a padded one is not kept).
	var canon [binary.MaxVarintLen64]byte
	hl := binary.PutUvarint(canon[:], size)
	buf := get(hl + int(size))
	copy(buf, canon[:hl])
	if _, err := io.ReadFull(r, buf[hl:]); err != nil {
		if put != nil {
			put(buf)
			buf = nil
		}
		return buf, fmt.Errorf("read frame of %d bytes: %w", size, noEOF(err))
	}
	return buf, nil
}

// peeker is a reader that lends bytes it holds (Peek) and takes them as read (Discard):
// codec's Readers where the codec decodes into memory of its own (snappy-stream).
type peeker interface {
	Peek() ([]byte, error)
	Discard(n int)
}

// uvarintLen is the length of size's canonical varint.
func uvarintLen(size uint64) int {
	n := 1
	for ; size >= 0x80; size >>= 7 {
		n++
	}
	return n
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
