package trace

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/streamsim/streamsim/gossip"
)

// Reader reads a trace record by record.
type Reader struct {
	br      *bufio.Reader
	header  Header
	streams map[uint32]Stream
	buf     []byte
	frames  int
	closers []io.Closer
}

// NewReader reads the magic and header from r.
func NewReader(r io.Reader) (*Reader, error) {
	tr := &Reader{br: bufio.NewReaderSize(r, 256<<10), streams: map[uint32]Stream{}}
	var m [len(magic)]byte
	if _, err := io.ReadFull(tr.br, m[:]); err != nil || string(m[:]) != magic {
		return nil, fmt.Errorf("%w: not a streamsim trace (bad magic)", ErrFormat)
	}
	hj, err := tr.readBytes(maxJSONBytes, "header")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(hj, &tr.header); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrFormat, err)
	}
	if tr.header.Version != Version {
		return nil, fmt.Errorf("%w: format version %d, this reader knows %d", ErrFormat, tr.header.Version, Version)
	}
	return tr, nil
}

// Open opens a trace file (gzip when the name ends in ".gz"). Close closes it.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open trace: %w", err)
	}
	var r io.Reader = f
	closers := []io.Closer{f}
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("trace %s: %w", path, err)
		}
		r = gz
		closers = append([]io.Closer{gz}, closers...)
	}
	tr, err := NewReader(r)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("trace %s: %w", path, err)
	}
	tr.closers = closers
	return tr, nil
}

// Close closes what Open opened.
func (r *Reader) Close() error {
	var err error
	for _, c := range r.closers {
		if cerr := c.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	r.closers = nil
	return err
}

// Header returns the trace header.
func (r *Reader) Header() Header { return r.header }

// Stream returns a stream declared so far.
func (r *Reader) Stream(id uint32) (Stream, bool) {
	s, ok := r.streams[id]
	return s, ok
}

// Streams returns the streams declared so far, by ID.
func (r *Reader) Streams() []Stream {
	out := make([]Stream, 0, len(r.streams))
	for _, s := range r.streams {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Next returns the next frame, reading stream declarations on the way. It returns io.EOF at
// the end of the trace. The frame's Data is valid until the next call.
func (r *Reader) Next() (Frame, error) {
	for {
		kind, err := r.br.ReadByte()
		if err == io.EOF {
			return Frame{}, io.EOF
		}
		if err != nil {
			return Frame{}, fmt.Errorf("trace after frame %d: %w", r.frames, err)
		}
		switch kind {
		case kindStream:
			sj, err := r.readBytes(maxJSONBytes, "stream declaration")
			if err != nil {
				return Frame{}, err
			}
			var s Stream
			if err := json.Unmarshal(sj, &s); err != nil {
				return Frame{}, fmt.Errorf("%w: stream declaration after frame %d: %v", ErrFormat, r.frames, err)
			}
			if _, dup := r.streams[s.ID]; dup {
				return Frame{}, fmt.Errorf("%w: stream %d declared twice", ErrFormat, s.ID)
			}
			r.streams[s.ID] = s
		case kindFrame:
			return r.readFrame()
		default:
			return Frame{}, fmt.Errorf("%w: unknown record kind 0x%02x after frame %d", ErrFormat, kind, r.frames)
		}
	}
}

func (r *Reader) readFrame() (Frame, error) {
	var f Frame
	id, err := r.uvarint("frame stream id")
	if err != nil {
		return f, err
	}
	if id > 1<<32-1 {
		return f, fmt.Errorf("%w: frame %d: stream id %d out of range", ErrFormat, r.frames, id)
	}
	f.Stream = uint32(id)
	if _, ok := r.streams[f.Stream]; !ok {
		return f, fmt.Errorf("%w: frame %d on undeclared stream %d", ErrFormat, r.frames, f.Stream)
	}
	at, err := r.uvarint("frame time")
	if err != nil {
		return f, err
	}
	if at > 1<<63-1 {
		return f, fmt.Errorf("%w: frame %d: time offset out of range", ErrFormat, r.frames)
	}
	f.At = time.Duration(at)
	c, err := r.br.ReadByte()
	if err != nil {
		return f, r.truncated("frame category")
	}
	if gossip.Category(c) >= gossip.NumCategories {
		return f, fmt.Errorf("%w: frame %d: category %d", ErrFormat, r.frames, c)
	}
	f.Category = gossip.Category(c)
	if f.Data, err = r.readBytes(MaxFrameBytes, "frame"); err != nil {
		return f, err
	}
	r.frames++
	return f, nil
}

func (r *Reader) truncated(what string) error {
	return fmt.Errorf("%w: %s after frame %d: %v", ErrFormat, what, r.frames, io.ErrUnexpectedEOF)
}

func (r *Reader) uvarint(what string) (uint64, error) {
	v, err := binary.ReadUvarint(r.br)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, r.truncated(what)
		}
		return 0, fmt.Errorf("%w: %s after frame %d: %v", ErrFormat, what, r.frames, err)
	}
	return v, nil
}

// readBytes reads a length-prefixed byte string into the reader's buffer.
func (r *Reader) readBytes(limit int, what string) ([]byte, error) {
	n, err := r.uvarint(what + " length")
	if err != nil {
		return nil, err
	}
	if n > uint64(limit) {
		return nil, fmt.Errorf("%w: %s after frame %d: length %d exceeds %d", ErrFormat, what, r.frames, n, limit)
	}
	if cap(r.buf) < int(n) {
		r.buf = make([]byte, n)
	}
	b := r.buf[:n]
	if _, err := io.ReadFull(r.br, b); err != nil {
		return nil, r.truncated(what)
	}
	return b, nil
}
