// Package codec holds the stream codecs streamsim compares, behind one interface built
// from a spec string: plain, snappy-stream[:window[:level]] and zstd[:level[:window]].
package codec

import (
	"fmt"
	"io"
	"time"
)

// Stats are the running totals of one codec instance (one stream direction).
type Stats struct {
	Units     int64         // units written (one per Write) or blocks read where the codec delimits them
	RawBytes  int64         // bytes before compression (written to the Writer, returned by the Reader)
	WireBytes int64         // compressed bytes written to / read from the underlying stream
	Time      time.Duration // time spent compressing or decompressing, excluding I/O on the underlying stream
	// StateBytes is the memory held across units: history, tables and buffers. For
	// zstd it is an estimate from the configured window and the level's table sizes.
	StateBytes int64
}

// Meter is implemented by every Writer and Reader returned by a Spec.
type Meter interface {
	Stats() Stats
}

// timedSource counts the bytes read from r and the time spent blocked in r.Read, so
// that a reader's codec time can exclude it.
type timedSource struct {
	r       io.Reader
	n       int64
	blocked time.Duration
}

func (t *timedSource) Read(p []byte) (int, error) {
	start := time.Now()
	n, err := t.r.Read(p)
	t.blocked += time.Since(start)
	t.n += int64(n)
	return n, err
}

// meteredReader wraps a decompressing reader that pulls from a timedSource.
type meteredReader struct {
	name  string // prefix for errors the decoder does not name itself
	dec   io.Reader
	src   *timedSource
	close func() error
	units func() int64
	state func() int64

	raw     int64
	elapsed time.Duration
}

func (m *meteredReader) Read(p []byte) (int, error) {
	start := time.Now()
	n, err := m.dec.Read(p)
	m.elapsed += time.Since(start)
	m.raw += int64(n)
	if err != nil && err != io.EOF && m.name != "" {
		err = fmt.Errorf("%s: read unit: %w", m.name, err)
	}
	return n, err
}

func (m *meteredReader) Close() error {
	if m.close != nil {
		return m.close()
	}
	return nil
}

func (m *meteredReader) Stats() Stats {
	s := Stats{RawBytes: m.raw, WireBytes: m.src.n, Time: m.elapsed - m.src.blocked}
	if m.units != nil {
		s.Units = m.units()
	}
	if m.state != nil {
		s.StateBytes = m.state()
	}
	return s
}
