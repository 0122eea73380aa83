package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/streamsim/streamsim/codec/snappystream"
)

// Codec is the JS snappy-stream codec (js/snappystream.js) in a Node.js process
// (js/codectool.js), for checking it against the Go codec and timing it on the same frames.
// Its methods are safe for concurrent use; requests run one at a time.
type Codec struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *tailBuffer
	mu     sync.Mutex
}

// JS error codes of snappystream.js, one per rule of the format a block can break; each
// matches a Go error of codec/snappystream (see ErrorKind).
const (
	CodeBlockTooLarge = "ERR_BLOCK_TOO_LARGE" // snappystream.ErrBlockTooLarge
	CodeCorrupt       = "ERR_CORRUPT"         // snappystream.ErrCorrupt
	CodeTruncated     = "ERR_TRUNCATED"       // io.ErrUnexpectedEOF
)

// codecTimeout bounds one request; a bench request runs for its minimum time plus one pass.
const codecTimeout = 2 * time.Minute

// StartCodec starts the JS codec process from dir (default DefaultDir()), installing the
// JS dependencies first if needed (Setup). Errors about a missing Node.js wrap ErrNodeMissing.
func StartCodec(ctx context.Context, dir string) (*Codec, error) {
	if dir == "" {
		dir = DefaultDir()
	}
	if err := Setup(dir); err != nil {
		return nil, err
	}
	c := &Codec{stderr: &tailBuffer{max: 16 << 10}}
	var stdout io.ReadCloser
	var err error
	if c.cmd, c.stdin, stdout, err = startNode(ctx, dir, "js codec", c.stderr, filepath.Join(dir, "codectool.js")); err != nil {
		return nil, err
	}
	c.out = bufio.NewReaderSize(stdout, 1<<20)
	return c, nil
}

// Close ends the process.
func (c *Codec) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.stdin.Close()
	err := c.cmd.Wait()
	if err != nil {
		return fmt.Errorf("js codec: %w (stderr: %s)", err, c.stderr)
	}
	return nil
}

// request sends one request and decodes its reply into reply.
func (c *Codec) request(req map[string]any, reply any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	line, err := json.Marshal(req)
	if err != nil {
		return err
	}
	type result struct {
		line []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		if _, err := c.stdin.Write(append(line, '\n')); err != nil {
			done <- result{err: err}
			return
		}
		l, err := c.out.ReadBytes('\n')
		done <- result{l, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(codecTimeout):
		_ = c.cmd.Process.Kill()
		return fmt.Errorf("js codec %s: no reply after %v", req["op"], codecTimeout)
	}
	if r.err != nil {
		return fmt.Errorf("js codec %s: %w (stderr: %s)", req["op"], r.err, c.stderr)
	}
	var fail struct {
		Fail *string `json:"fail"`
	}
	if err := json.Unmarshal(r.line, &fail); err != nil {
		return fmt.Errorf("js codec %s: reply %.200q: %w", req["op"], r.line, err)
	}
	if fail.Fail != nil {
		return fmt.Errorf("js codec %s: %s", req["op"], *fail.Fail)
	}
	return json.Unmarshal(r.line, reply)
}

// Spec is what the JS codec makes of a codec spec string.
type Spec struct {
	Spec        string `json:"spec"` // canonical form
	Protocol    string `json:"protocol"`
	WindowBytes int    `json:"window"`
}

// ParseSpec parses a snappy-stream codec spec with the JS peer's parser.
func (c *Codec) ParseSpec(spec string) (Spec, error) {
	var s Spec
	err := c.request(map[string]any{"op": "spec", "spec": spec}, &s)
	return s, err
}

// Encode encodes frames as one stream direction with the given window and returns one
// block per frame.
func (c *Codec) Encode(windowBytes int, frames [][]byte) ([][]byte, error) {
	var r struct {
		Blocks [][]byte `json:"blocks"`
	}
	if err := c.request(map[string]any{"op": "encode", "window": windowBytes, "frames": frames}, &r); err != nil {
		return nil, err
	}
	if len(r.Blocks) != len(frames) {
		return nil, fmt.Errorf("js codec encode: %d blocks for %d frames", len(r.Blocks), len(frames))
	}
	return r.Blocks, nil
}

// Decoded is the JS decoder's verdict on an input: what it produced before the first
// error, and the error (Err empty when it accepted everything).
type Decoded struct {
	Output []byte   // stream decoding: every decoded byte, in order
	Blocks int      // blocks decoded
	Frames [][]byte // block decoding: each decoded block
	Err    string
	Code   string // CodeBlockTooLarge, CodeCorrupt, CodeTruncated or ""
}

// DecodeStream feeds stream to the JS StreamDecoder in chunks of chunkBytes (0: at once)
// and ends it. maxBlockBytes 0 is the default bound (as the Go reader's).
func (c *Codec) DecodeStream(windowBytes, maxBlockBytes int, stream []byte, chunkBytes int) (Decoded, error) {
	var r struct {
		Output []byte `json:"output"`
		Blocks int    `json:"blocks"`
		Error  string `json:"error"`
		Code   string `json:"code"`
	}
	err := c.request(map[string]any{"op": "decode", "window": windowBytes, "max_block_bytes": maxBlockBytes,
		"stream": stream, "chunk": chunkBytes}, &r)
	return Decoded{Output: r.Output, Blocks: r.Blocks, Err: r.Error, Code: r.Code}, err
}

// DecodeBlocks decodes blocks one by one with the JS Decoder, stopping at the first error.
func (c *Codec) DecodeBlocks(windowBytes, maxBlockBytes int, blocks [][]byte) (Decoded, error) {
	var r struct {
		Outputs [][]byte `json:"outputs"`
		ErrorAt int      `json:"error_at"`
		Error   string   `json:"error"`
		Code    string   `json:"code"`
	}
	if blocks == nil {
		blocks = [][]byte{}
	}
	err := c.request(map[string]any{"op": "decode_blocks", "window": windowBytes, "max_block_bytes": maxBlockBytes, "blocks": blocks}, &r)
	return Decoded{Frames: r.Outputs, Blocks: len(r.Outputs), Err: r.Error, Code: r.Code}, err
}

// BenchResult is one timing of the JS codec: one pass codes all frames as one stream.
type BenchResult struct {
	RawBytes     int64   `json:"raw_bytes"`
	WireBytes    int64   `json:"wire_bytes"`
	EncodeNs     float64 `json:"encode_ns"` // wall time per pass
	DecodeNs     float64 `json:"decode_ns"`
	EncodeCPUNs  float64 `json:"encode_cpu_ns"` // process CPU time per pass, every thread
	DecodeCPUNs  float64 `json:"decode_cpu_ns"`
	EncodePasses int     `json:"encode_passes"`
	DecodePasses int     `json:"decode_passes"`
}

// EncodeMBps and DecodeMBps are raw (decoded) megabytes (10^6 B) per second of wall time,
// EncodeCPUMBps and DecodeCPUMBps per second of CPU time.
func (b BenchResult) EncodeMBps() float64    { return float64(b.RawBytes) / b.EncodeNs * 1e3 }
func (b BenchResult) DecodeMBps() float64    { return float64(b.RawBytes) / b.DecodeNs * 1e3 }
func (b BenchResult) EncodeCPUMBps() float64 { return float64(b.RawBytes) / b.EncodeCPUNs * 1e3 }
func (b BenchResult) DecodeCPUMBps() float64 { return float64(b.RawBytes) / b.DecodeCPUNs * 1e3 }

// Bench times the JS encoder and decoder on frames, repeating passes for at least min.
func (c *Codec) Bench(windowBytes int, frames [][]byte, min time.Duration) (BenchResult, error) {
	var r BenchResult
	err := c.request(map[string]any{"op": "bench", "window": windowBytes, "frames": frames, "min_ms": min.Milliseconds()}, &r)
	return r, err
}

// ErrorKind maps an error of the Go codec (codec/snappystream) to the JS code of the same
// rule, "" for nil.
func ErrorKind(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, snappystream.ErrBlockTooLarge):
		return CodeBlockTooLarge
	case errors.Is(err, snappystream.ErrCorrupt):
		return CodeCorrupt
	case errors.Is(err, io.ErrUnexpectedEOF):
		return CodeTruncated
	}
	return "other: " + err.Error()
}
