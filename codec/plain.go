package codec

import (
	"fmt"
	"io"
)

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
}

func newPlainReader(r io.Reader) *plainReader { return &plainReader{r: r} }

func (p *plainReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.stats.RawBytes += int64(n)
	p.stats.WireBytes += int64(n)
	return n, err
}

func (p *plainReader) Close() error { return nil }
func (p *plainReader) Stats() Stats { return p.stats }
