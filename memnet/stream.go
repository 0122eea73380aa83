package memnet

import (
	"errors"
	"io"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	manet "github.com/multiformats/go-multiaddr/net"
)

// stream is one end of a native connection's stream: reads and writes go through io (the
// pipe end raw, or the Shaper's wrapping of it), half-closes and resets to the pipe.
type stream struct {
	c   *conn
	raw *Conn
	io  manet.Conn
}

// shaped says whether the stream's end goes through a Shaper.
func (s *stream) shaped() bool { return s.io != manet.Conn(s.raw) }

func (s *stream) Read(p []byte) (int, error) {
	n, err := s.io.Read(p)
	return n, s.streamErr(err)
}

func (s *stream) Write(p []byte) (int, error) {
	n, err := s.io.Write(p)
	return n, s.streamErr(err)
}

// streamErr is network.ErrReset for any failure of a reset stream, as muxers report it.
func (s *stream) streamErr(err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	if errors.Is(err, network.ErrReset) || s.raw.IsReset() {
		return network.ErrReset
	}
	return err
}

// CloseWrite half-closes the stream: the other end reads what was written (on a shaped
// stream, once the link delivered it), then EOF.
func (s *stream) CloseWrite() error {
	if c, ok := s.io.(interface{ CloseWrite() error }); ok {
		return c.CloseWrite()
	}
	return errors.New("memnet: the shaper's connection has no CloseWrite")
}

// CloseRead stops reading: this end's reads fail, the other end's writes fail.
func (s *stream) CloseRead() error { return s.raw.CloseRead() }

// Close is CloseRead and CloseWrite, and frees the stream: what was written is still
// delivered.
func (s *stream) Close() error {
	s.raw.CloseRead()
	if s.shaped() {
		s.io.Close() // delivers what the link accepted, then closes the pipe end
	} else {
		s.raw.Close()
	}
	s.c.forget(s)
	return nil
}

// Reset ends the stream at both ends at once, dropping what either end held.
func (s *stream) Reset() error {
	s.raw.Reset()
	s.closeEnd()
	s.c.forget(s)
	return nil
}

// ResetWithError is Reset: the code has no one to tell that Reset does not tell.
func (s *stream) ResetWithError(network.StreamErrorCode) error { return s.Reset() }

// closeEnd closes this end of a reset stream: the pipe end, or the shaper's connection, whose
// goroutine closes the pipe end as it ends (the switchboard's Drain waits for that).
func (s *stream) closeEnd() {
	if s.shaped() {
		s.io.Close()
	} else {
		s.raw.Close()
	}
}

func (s *stream) SetDeadline(t time.Time) error      { return s.io.SetDeadline(t) }
func (s *stream) SetReadDeadline(t time.Time) error  { return s.io.SetReadDeadline(t) }
func (s *stream) SetWriteDeadline(t time.Time) error { return s.io.SetWriteDeadline(t) }

var _ network.MuxedStream = (*stream)(nil)
