package codec

import (
	"errors"
	"fmt"
	"io"
)

// Plain is the uncompressed baseline: each Write goes to the stream as it is.
const Plain Kind = 0

// PlainProtocolID is gossipsub v1.2's own ID: plain nodes negotiate v1.2, so comparisons
// are like-for-like.
const PlainProtocolID = "/meshsub/1.2.0"

var plainFamily = Family{
	Name:       "plain",
	Form:       "plain",
	Default:    Spec{Kind: Plain},
	ProtocolID: PlainProtocolID,
	Specs:      []string{"plain"},
	is:         func(s Spec) bool { return s.Kind == Plain },
	parse: func(d Spec, params []string) (Spec, error) {
		if len(params) > 0 {
			return Spec{}, errors.New("plain takes no parameters")
		}
		return d, nil
	},
	canonical:      func(Spec) string { return "plain" },
	explicit:       func(Spec) string { return "plain" },
	newWriter:      func(w io.Writer, _ Spec, _ options) io.WriteCloser { return &plainWriter{w: w} },
	newReader:      func(r io.Reader, _ Spec, _ options) io.ReadCloser { return newPlainReader(r) },
	implementation: func(Spec) string { return "none" },
}

// plainWriter passes each Write through; it does no codec work.
type plainWriter struct {
	w     io.Writer
	stats Stats
}

func (p *plainWriter) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, err := p.w.Write(b)
	p.stats.RawBytes += int64(n)
	p.stats.WireBytes += int64(n)
	if err != nil {
		return n, fmt.Errorf("plain: write: %w", err)
	}
	p.stats.Units++
	return n, nil
}

func (p *plainWriter) Close() error { return nil }
func (p *plainWriter) Stats() Stats { return p.stats }

type plainReader struct {
	r     io.Reader
	stats Stats
	one   [1]byte // ReadByte's buffer when r has no ReadByte
}

func newPlainReader(r io.Reader) *plainReader { return &plainReader{r: r} }

func (p *plainReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.stats.RawBytes += int64(n)
	p.stats.WireBytes += int64(n)
	return n, err
}

// ReadByte reads one byte as Read would (io.ByteReader), from the stream's own ReadByte
// where it has one (a frame's length prefix is read a byte at a time).
func (p *plainReader) ReadByte() (byte, error) {
	br, ok := p.r.(io.ByteReader)
	if !ok {
		return readOneByte(p, &p.one)
	}
	c, err := br.ReadByte()
	if err != nil {
		return 0, err
	}
	p.stats.RawBytes++
	p.stats.WireBytes++
	return c, nil
}

func (p *plainReader) Close() error { return nil }
func (p *plainReader) Stats() Stats { return p.stats }
