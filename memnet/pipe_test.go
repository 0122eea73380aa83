package memnet

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"testing/synctest"
	"time"
)

func testPair(t *testing.T) (*Switchboard, *Conn, *Conn) {
	sb := NewSwitchboard()
	a, b := sb.newPair(&net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 1}, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 2), Port: 2}, nil, nil)
	return sb, a, b
}

// A writer does not wait for its reader until the buffer is full; then it waits (simulated
// time does not pass meanwhile: the wait is durable) and resumes when the reader reads.
// After Close the other end reads everything written, then EOF, and its writes fail.
func TestPipeBuffersAndCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sb, a, b := testPair(t)
		msg := bytes.Repeat([]byte("0123456789abcdef"), pipeBufferBytes/16+1024) // 16 KiB past the buffer
		if n, err := a.Write(msg[:pipeBufferBytes]); n != pipeBufferBytes || err != nil {
			t.Fatalf("write of a buffer's worth: %d, %v", n, err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := a.Write(msg[pipeBufferBytes:])
			done <- err
		}()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("a write past a full buffer returned (%v) before the reader read", err)
		default:
		}
		got := make([]byte, 0, len(msg))
		buf := make([]byte, 64<<10)
		for len(got) < len(msg) {
			n, err := b.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, buf[:n]...)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		a.Write([]byte("tail"))
		a.Close()
		rest, err := io.ReadAll(b)
		if err != nil || string(rest) != "tail" || !bytes.Equal(got, msg) {
			t.Fatalf("after close: %q, %v; stream intact %v", rest, err, bytes.Equal(got, msg))
		}
		if _, err := b.Write([]byte("x")); err == nil {
			t.Error("a write to a closed peer succeeded")
		}
		b.Close()
		if open := sb.Drain(0); open != 0 {
			t.Errorf("%d ends open after both closed", open)
		}
	})
}

// A read deadline ends a blocked read at that simulated instant, also one set while the read
// waits without one; closing the conn ends a blocked read with net.ErrClosed.
func TestPipeDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, a, b := testPair(t)
		defer a.Close()
		start := time.Now()
		b.SetReadDeadline(start.Add(50 * time.Millisecond))
		_, err := b.Read(make([]byte, 1))
		if !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) != 50*time.Millisecond {
			t.Fatalf("read past its deadline: %v after %v", err, time.Since(start))
		}
		b.SetReadDeadline(time.Time{})
		errc := make(chan error, 1)
		go func() {
			_, err := b.Read(make([]byte, 1))
			errc <- err
		}()
		// A deadline set while a read without one waits ends it at that deadline.
		time.Sleep(time.Second)
		set := time.Now()
		b.SetReadDeadline(set.Add(20 * time.Millisecond))
		if err := <-errc; !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(set) != 20*time.Millisecond {
			t.Fatalf("read given a deadline while waiting: %v after %v, want the deadline at 20ms", err, time.Since(set))
		}
		b.SetReadDeadline(time.Time{})
		go func() {
			_, err := b.Read(make([]byte, 1))
			errc <- err
		}()
		time.Sleep(time.Second)
		b.Close()
		if err := <-errc; !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read when its conn closed: %v, want net.ErrClosed", err)
		}
	})
}
