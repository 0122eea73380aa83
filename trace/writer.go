package trace

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// Writer writes a trace. Its methods are safe for concurrent use.
type Writer struct {
	mu       sync.Mutex
	bw       *bufio.Writer
	closers  []io.Closer // closed in order by Close (gzip stream, then file)
	declared map[uint32]bool
	scratch  []byte
	err      error
}

// NewWriter writes the magic and header to w and returns a Writer. Close flushes but does not
// close w.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	tw := &Writer{bw: bufio.NewWriterSize(w, 256<<10), declared: map[uint32]bool{}}
	h.Version = Version
	hj, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("trace header: %w", err)
	}
	tw.bw.WriteString(magic)
	tw.writeBytes(hj)
	return tw, tw.err
}

// Create creates the file path and writes a trace to it; a ".gz" suffix gzips it. Close
// closes the file.
func Create(path string, h Header) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create trace: %w", err)
	}
	var w io.Writer = f
	var closers []io.Closer
	if strings.HasSuffix(path, ".gz") {
		gz := gzip.NewWriter(f)
		w = gz
		closers = append(closers, gz)
	}
	closers = append(closers, f)
	tw, err := NewWriter(w, h)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("trace %s: %w", path, err)
	}
	tw.closers = closers
	return tw, nil
}

func (w *Writer) writeUvarint(v uint64) {
	w.scratch = binary.AppendUvarint(w.scratch[:0], v)
	if _, err := w.bw.Write(w.scratch); err != nil && w.err == nil {
		w.err = err
	}
}

func (w *Writer) writeBytes(b []byte) {
	w.writeUvarint(uint64(len(b)))
	if _, err := w.bw.Write(b); err != nil && w.err == nil {
		w.err = err
	}
}

// AddStream declares a stream direction; it must precede the stream's frames. Declaring the
// same ID twice is an error.
func (w *Writer) AddStream(s Stream) error {
	if s.Direction != DirectionIn && s.Direction != DirectionOut {
		return fmt.Errorf("trace stream %d: direction %q (allowed: %q, %q)", s.ID, s.Direction, DirectionIn, DirectionOut)
	}
	sj, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("trace stream %d: %w", s.ID, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.declared[s.ID] {
		return fmt.Errorf("trace stream %d declared twice", s.ID)
	}
	w.declared[s.ID] = true
	w.bw.WriteByte(kindStream)
	w.writeBytes(sj)
	return w.err
}

// WriteFrame appends one frame; its stream must have been declared.
func (w *Writer) WriteFrame(f Frame) error {
	if len(f.Data) > MaxFrameBytes {
		return fmt.Errorf("trace frame of %d bytes exceeds %d", len(f.Data), MaxFrameBytes)
	}
	if f.At < 0 {
		return fmt.Errorf("trace frame at negative offset %v", f.At)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.declared[f.Stream] {
		return fmt.Errorf("trace frame on undeclared stream %d", f.Stream)
	}
	w.bw.WriteByte(kindFrame)
	w.writeUvarint(uint64(f.Stream))
	w.writeUvarint(uint64(f.At))
	w.bw.WriteByte(byte(f.Category))
	w.writeBytes(f.Data)
	return w.err
}

// Flush writes buffered records to the underlying writer.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.bw.Flush(); err != nil && w.err == nil {
		w.err = err
	}
	return w.err
}

// Close flushes, and closes what Create opened.
func (w *Writer) Close() error {
	err := w.Flush()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.closers {
		if cerr := c.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	w.closers = nil
	return err
}
