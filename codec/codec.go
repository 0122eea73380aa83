// Package codec holds the stream codecs streamsim compares, behind one interface built
// from a spec string (plain, snappy-stream[:window[:level]], zstd[:level[:window]],
// zstd-c[:level[:window]]). Each family is a file and an entry of the table in family.go.
package codec

import (
	"fmt"
	"io"
	"time"
)

// Stats are the running totals of one codec instance (one stream direction).
//
// A unit is what one Write of the Writer produced: one gossipsub RPC frame, compressed
// (a snappy-stream block; a zstd flush, with the frame header before the first and the
// frame end written by Close). A Reader's figures count what Read has returned, not what
// it has taken from the transport: WireBytes is the wire size of the units (for zstd:
// blocks) all of whose decoded bytes Read has returned so far, so that after a reader
// has returned a whole frame its WireBytes has grown by exactly the Writer's WireBytes
// for that Write, however the transport split or coalesced the bytes. Bytes a reader
// holds ahead (a later unit, part of one) count only once their unit has been returned.
type Stats struct {
	// Units counts Writes; for a Reader, the units (zstd: blocks) returned completely.
	// plain does not delimit units and reports 0 for its Reader.
	Units int64
	// RawBytes are the bytes before compression: given to Write, returned by Read.
	RawBytes int64
	// WireBytes are the compressed bytes: written to the underlying stream; for a
	// Reader, those of the units returned completely (for plain, RawBytes).
	WireBytes int64
	// Time is the time spent compressing or decompressing, excluding I/O on the
	// underlying stream.
	Time time.Duration
	// StateBytes is the memory held across units: history, tables and buffers. For
	// klauspost's zstd it is an estimate from the configured window and the level's
	// table sizes; for libzstd it is the library's own count.
	StateBytes int64
}

// Meter is implemented by every Writer and Reader returned by a Spec.
type Meter interface {
	Stats() Stats
}

// WriterResetter is a Writer that can start a new stream direction on the state it holds
// (history emptied, tables and buffers kept), as a fresh Writer of its spec would start, so
// that a benchmark can repeat a stream without allocating and first touching its state again.
// snappy-stream's and zstd's Writers implement it (zstd: a new frame; the current one is
// abandoned without its end, or, after Close, a new encoder is opened).
type WriterResetter interface {
	Reset(w io.Writer)
}

// ReaderResetter is the Reader's WriterResetter: snappy-stream's and zstd's Readers implement it.
type ReaderResetter interface {
	Reset(r io.Reader)
}

// meterClock is the clock of Stats.Time; off (WithoutTiming) it is never read.
type meterClock struct{ off bool }

func (c meterClock) now() time.Time {
	if c.off {
		return time.Time{}
	}
	return time.Now()
}

func (c meterClock) since(t time.Time) time.Duration {
	if c.off {
		return 0
	}
	return time.Since(t)
}

// timedSource counts the bytes read from r and the time spent blocked in r.Read, so
// that a reader's codec time can exclude it.
type timedSource struct {
	r       io.Reader
	n       int64
	blocked time.Duration
	clock   meterClock
}

func (t *timedSource) Read(p []byte) (int, error) {
	start := t.clock.now()
	n, err := t.r.Read(p)
	t.blocked += t.clock.since(start)
	t.n += int64(n)
	return n, err
}

// meteredReader wraps a decompressing reader that pulls from a timedSource and knows
// which of its wire bytes belong to units it has returned completely.
type meteredReader struct {
	name  string // prefix for errors the decoder does not name itself
	dec   io.Reader
	src   *timedSource
	close func() error
	wire  func() int64
	units func() int64
	state func() int64

	raw     int64
	elapsed time.Duration
	one     [1]byte // ReadByte's buffer when dec has no ReadByte
	// dec as an io.ByteReader and a peeker where it is one, asserted once (an assertion per
	// frame cost 7 % of a decode op).
	byteDec io.ByteReader
	peekDec peeker
}

func (m *meteredReader) Read(p []byte) (int, error) {
	var n int
	var err error
	if m.src.clock.off {
		// Without timing, no clock at all: a frame's reads are several calls each.
		n, err = m.dec.Read(p)
	} else {
		start := m.src.clock.now()
		n, err = m.dec.Read(p)
		m.elapsed += m.src.clock.since(start)
	}
	m.raw += int64(n)
	if err != nil && err != io.EOF && m.name != "" {
		err = fmt.Errorf("%s: read unit: %w", m.name, err)
	}
	return n, err
}

// ReadByte reads one decoded byte as Read would (io.ByteReader), from the decoder's own
// ReadByte where it has one.
func (m *meteredReader) ReadByte() (byte, error) {
	br := m.byteDec
	if br == nil {
		return readOneByte(m, &m.one)
	}
	var c byte
	var err error
	if m.src.clock.off {
		c, err = br.ReadByte()
	} else {
		start := m.src.clock.now()
		c, err = br.ReadByte()
		m.elapsed += m.src.clock.since(start)
	}
	if err != nil {
		if err != io.EOF && m.name != "" {
			err = fmt.Errorf("%s: read unit: %w", m.name, err)
		}
		return 0, err
	}
	m.raw++
	return c, nil
}

// peeker is a decoder that lends its decoded bytes (snappystream.Reader).
type peeker interface {
	Peek() ([]byte, error)
	Discard(n int)
}

// Peek returns decoded bytes without returning them, as the decoder's Peek does, or none
// (and no error) for a decoder without one: a frame reader then Reads.
func (m *meteredReader) Peek() ([]byte, error) {
	p := m.peekDec
	if p == nil {
		return nil, nil
	}
	var b []byte
	var err error
	if m.src.clock.off {
		b, err = p.Peek()
	} else {
		start := m.src.clock.now()
		b, err = p.Peek()
		m.elapsed += m.src.clock.since(start)
	}
	if err != nil && err != io.EOF && m.name != "" {
		err = fmt.Errorf("%s: read unit: %w", m.name, err)
	}
	return b, err
}

// Discard returns the first n bytes Peek lent, as a Read of them would.
func (m *meteredReader) Discard(n int) {
	m.peekDec.Discard(n)
	m.raw += int64(n)
}

// readOneByte reads one byte from r into *one as io.ReadFull would: a read of nothing
// without an error is retried, a byte read with an error is the byte.
func readOneByte(r io.Reader, one *[1]byte) (byte, error) {
	for {
		n, err := r.Read(one[:])
		if n == 1 {
			return one[0], nil
		}
		if err != nil {
			return 0, err
		}
	}
}

func (m *meteredReader) Close() error {
	if m.close != nil {
		return m.close()
	}
	return nil
}

func (m *meteredReader) Stats() Stats {
	s := Stats{RawBytes: m.raw, WireBytes: m.wire(), Units: m.units(), Time: m.elapsed - m.src.blocked}
	if m.state != nil {
		s.StateBytes = m.state()
	}
	return s
}

// failedWriter reports a construction error on every Write.
type failedWriter struct{ err error }

func (f *failedWriter) Write([]byte) (int, error) { return 0, f.err }
func (f *failedWriter) Close() error              { return nil }
func (f *failedWriter) Stats() Stats              { return Stats{} }

// failedReader reports a construction error on every Read.
type failedReader struct{ err error }

func (f *failedReader) Read([]byte) (int, error) { return 0, f.err }
func (f *failedReader) Close() error             { return nil }
func (f *failedReader) Stats() Stats             { return Stats{} }
