package result

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// MessagesFile is the asset in which a node records when it published or first received each
// message: the input of delivery latency.
const MessagesFile = "messages.bin"

// messagesMagic opens a messages file (format version 1).
const messagesMagic = "streamsim-messages-1\n"

// IDBytes is the length of an Ethereum gossip message id.
const IDBytes = 20

// MessageEvent is one record: a message published by the node (Topic set) or delivered to it
// for the first time, at At (Unix nanoseconds on the node's clock).
type MessageEvent struct {
	ID        [IDBytes]byte
	At        int64
	Published bool
	Topic     string // published events only
}

// MessageLog appends events to a messages file; safe for concurrent use.
type MessageLog struct {
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	err error
}

// CreateMessageLog creates a messages file at path.
func CreateMessageLog(path string) (*MessageLog, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	l := &MessageLog{f: f, w: bufio.NewWriterSize(f, 256<<10)}
	_, l.err = l.w.WriteString(messagesMagic)
	return l, nil
}

// Add appends one event. id shorter than IDBytes is zero-padded.
func (l *MessageLog) Add(id string, at int64, published bool, topic string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	// The record is built in the writer's own buffer (a local array handed to Write would
	// be allocated for every event: one per delivery at every node).
	n := 1 + IDBytes + 8
	if published {
		n += 2
	}
	if l.w.Available() < n {
		if l.err = l.w.Flush(); l.err != nil {
			return
		}
	}
	rec := l.w.AvailableBuffer()[:n]
	clear(rec[1 : 1+IDBytes])
	rec[0] = 0
	if published {
		rec[0] = 1
		binary.LittleEndian.PutUint16(rec[1+IDBytes+8:], uint16(len(topic)))
	}
	copy(rec[1:1+IDBytes], id)
	binary.LittleEndian.PutUint64(rec[1+IDBytes:], uint64(at))
	if _, l.err = l.w.Write(rec); l.err == nil && published {
		_, l.err = l.w.WriteString(topic)
	}
}

// Close flushes and closes the file, returning the first error of any write.
func (l *MessageLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.err
	if ferr := l.w.Flush(); err == nil {
		err = ferr
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadMessages reads every event of a messages file.
func ReadMessages(path string) ([]MessageEvent, error) {
	var out []MessageEvent
	err := ScanMessages(path, func(e MessageEvent) { out = append(out, e) })
	return out, err
}

// ScanMessages calls fn with each event of a messages file in turn, without holding them
// (a long run's logs hold millions of events).
func ScanMessages(path string, fn func(MessageEvent)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	magic := make([]byte, len(messagesMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != messagesMagic {
		return fmt.Errorf("%s: not a streamsim messages file", path)
	}
	var rec [1 + IDBytes + 8]byte
	for n := 0; ; n++ {
		if _, err := io.ReadFull(r, rec[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%s: event %d: %w", path, n, err)
		}
		e := MessageEvent{Published: rec[0] == 1, At: int64(binary.LittleEndian.Uint64(rec[1+IDBytes:]))}
		copy(e.ID[:], rec[1:1+IDBytes])
		if e.Published {
			var l [2]byte
			if _, err := io.ReadFull(r, l[:]); err != nil {
				return fmt.Errorf("%s: event %d topic: %w", path, n, err)
			}
			topic := make([]byte, binary.LittleEndian.Uint16(l[:]))
			if _, err := io.ReadFull(r, topic); err != nil {
				return fmt.Errorf("%s: event %d topic: %w", path, n, err)
			}
			e.Topic = string(topic)
		}
		fn(e)
	}
}
