// Package interop runs a second GossipSub implementation as a real peer of streamsim's Go
// nodes: a js-libp2p node with Lodestar's GossipSub (interop/js, Node.js ≥ 20).
//
// The JS peer runs over TCP, noise and yamux, with the Ethereum message id, StrictNoSign and
// Ethereum GossipSub parameters. It speaks plain /meshsub/1.2.0 and /meshsub/1.1.0 and, with
// Options.Codecs, snappy-stream in its own JavaScript implementation (js/snappystream.js),
// offered first as the Go nodes do: with a Go node offering the same codec the link
// compresses, otherwise it falls back to plain. It is driven through JSON lines on its stdin
// and stdout (the protocol is described at the top of js/peer.js) and reports every message
// it received when it stops.
//
// Codec drives the same JavaScript codec in a process of its own, so that tests can hold it
// against the Go codec block for block.
package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/codec/snappystream"
	"github.com/streamsim/streamsim/gossip"
)

// Timeouts of the JS process: startup includes loading libp2p (about a second on an idle
// machine, several on a busy one); a command is one publish or query.
const (
	startTimeout   = 60 * time.Second
	commandTimeout = 30 * time.Second
	stopTimeout    = 30 * time.Second
)

// Options configures the JS peer.
type Options struct {
	// Dir is the JS peer's folder (package.json, package-lock.json, peer.js). Default
	// DefaultDir().
	Dir string
	// ListenIP is the IP to listen on (TCP, port chosen by the system). Default 127.0.0.1.
	ListenIP string
	// Direct are GossipSub direct peers: they get every message of the topics they subscribe
	// to, and the JS peer dials them.
	Direct []peer.AddrInfo
	// Dial are peers dialled at start.
	Dial []peer.AddrInfo
	// Topics are subscribed at start.
	Topics []string
	// Codecs are the snappy-stream specs offered before plain, in order of preference (the
	// JS encoder has the fast level only). None: plain only.
	Codecs []codec.Spec
	// PrivateKey is the JS peer's identity, so that its peer id is known before it starts (a
	// Go node's direct peers are fixed when it is built). Nil: the JS peer makes one. It is
	// passed on the command line: test identities only.
	PrivateKey crypto.PrivKey
	// TimeScale divides the heartbeat, fanout TTL and seen TTL, as runner.Config.TimeScale does
	// on the Go side. Default 1.
	TimeScale float64
	// MaxRPCBytes is the largest RPC the JS peer accepts; 0 keeps peer.js's default (the
	// Snappy worst case of a 10 MiB payload plus 64 KiB, as on the Go side).
	MaxRPCBytes int
	// Log receives the process's stderr. The last 16 KiB are kept for error messages either way.
	Log io.Writer
}

// Received is one message the JS peer received (once per message id; its own publications
// are not included).
type Received struct {
	ID    [gossip.MessageIDBytes]byte
	Topic string
	// Bytes is the size of the message data as received (ssz_snappy).
	Bytes int
	// From is the peer the first copy came from.
	From peer.ID
}

// Stream is a libp2p stream of the JS peer, as js-libp2p reports it.
type Stream struct {
	Peer      peer.ID
	Protocol  protocol.ID
	Direction string // "inbound" or "outbound"
	// Codec is the canonical spec on a snappy-stream stream ("" otherwise), with what the JS
	// codec coded on it: blocks, and bytes before (raw) and after (wire) compression. An
	// inbound stream counts what it decoded, an outbound one what it encoded.
	Codec     string
	Blocks    int64
	RawBytes  int64
	WireBytes int64
}

// Peer is a running JS peer.
type Peer struct {
	info      peer.AddrInfo
	protocols []protocol.ID

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tailBuffer
	done   chan struct{} // closed when stdout reaches EOF

	cmdMu sync.Mutex // one command at a time
	seq   int

	mu       sync.Mutex
	waiting  map[int]chan reply
	received []Received
	stopped  *int // the "stopped" line's count, once read
	readErr  error
	stopOnce sync.Once
	stopErr  error
}

// reply is any JSON line of peer.js's stdout.
type reply struct {
	Event string `json:"event"`
	Seq   int    `json:"seq"`
	Error string `json:"error"`
	// ready
	PeerID    string   `json:"peer_id"`
	Addrs     []string `json:"addrs"`
	Protocols []string `json:"protocols"`
	// published, received
	ID         string `json:"id"`
	Recipients int    `json:"recipients"`
	Topic      string `json:"topic"`
	Size       int    `json:"size"`
	From       string `json:"from"`
	// count, stopped
	Count *int `json:"received"`
	// subscribers
	Peers []string `json:"peers"`
	// streams
	StreamErrors int `json:"stream_errors"`
	Streams      []struct {
		Peer      string `json:"peer"`
		Protocol  string `json:"protocol"`
		Direction string `json:"direction"`
		Codec     string `json:"codec"`
		Blocks    int64  `json:"blocks"`
		RawBytes  int64  `json:"raw_bytes"`
		WireBytes int64  `json:"wire_bytes"`
	} `json:"streams"`
}

// startNode starts `node args...` in dir, stopped with SIGTERM when ctx ends, its stderr
// going to stderr; what names the process in errors.
func startNode(ctx context.Context, dir, what string, stderr io.Writer, args ...string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s stdin: %w", what, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s stdout: %w", what, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, fmt.Errorf("start %s: %w", what, err)
	}
	return cmd, stdin, stdout, nil
}

// Start installs the JS peer's dependencies if needed (Setup), starts it and waits until it
// listens. The process ends when ctx is done (SIGTERM, then SIGKILL after 5 s) or on Stop.
// Errors about a missing or too old Node.js wrap ErrNodeMissing.
func Start(ctx context.Context, opts Options) (*Peer, error) {
	dir := opts.Dir
	if dir == "" {
		dir = DefaultDir()
	}
	if err := Setup(dir); err != nil {
		return nil, err
	}
	args, err := opts.args(filepath.Join(dir, "peer.js"))
	if err != nil {
		return nil, err
	}
	p := &Peer{stderr: &tailBuffer{max: 16 << 10}, done: make(chan struct{}), waiting: map[int]chan reply{}}
	var stderr io.Writer = p.stderr
	if opts.Log != nil {
		stderr = io.MultiWriter(p.stderr, opts.Log)
	}
	var stdout io.ReadCloser
	if p.cmd, p.stdin, stdout, err = startNode(ctx, dir, "js peer", stderr, args...); err != nil {
		return nil, err
	}
	ready := make(chan reply, 1)
	go p.read(stdout, ready)
	select {
	case r := <-ready:
		if err := p.identify(r); err != nil {
			p.kill()
			return nil, err
		}
		return p, nil
	case <-p.done:
		err := p.wait()
		return nil, fmt.Errorf("js peer exited before it was ready (%v): %s", err, p.stderr)
	case <-time.After(startTimeout):
		p.kill()
		return nil, fmt.Errorf("js peer not ready after %v: %s", startTimeout, p.stderr)
	}
}

func (o Options) args(script string) ([]string, error) {
	ip := o.ListenIP
	if ip == "" {
		ip = "127.0.0.1"
	}
	listen, err := ma.NewMultiaddr(fmt.Sprintf("/%s/%s/tcp/0", ipProto(ip), ip))
	if err != nil {
		return nil, fmt.Errorf("listen IP %q: %w", ip, err)
	}
	scale := o.TimeScale
	if scale == 0 {
		scale = 1
	}
	if scale < 0 {
		return nil, fmt.Errorf("time scale %v: want > 0", scale)
	}
	if o.MaxRPCBytes < 0 {
		return nil, fmt.Errorf("max RPC bytes %d: want ≥ 0", o.MaxRPCBytes)
	}
	args := []string{script, "--listen", listen.String(), "--time-scale", strconv.FormatFloat(scale, 'g', -1, 64)}
	if o.MaxRPCBytes > 0 {
		args = append(args, "--max-rpc-bytes", strconv.Itoa(o.MaxRPCBytes))
	}
	for _, flag := range []struct {
		name  string
		peers []peer.AddrInfo
	}{{"--direct", o.Direct}, {"--dial", o.Dial}} {
		for _, ai := range flag.peers {
			addrs, err := peer.AddrInfoToP2pAddrs(&ai)
			if err != nil || len(addrs) == 0 {
				return nil, fmt.Errorf("%s peer %s: no address (%v)", flag.name, ai.ID, err)
			}
			// One address per peer: the JS peer dials what it is given, and the first listen
			// address of a Go node on ListenIP is the one it can reach.
			args = append(args, flag.name, addrs[0].String())
		}
	}
	for _, t := range o.Topics {
		args = append(args, "--topic", t)
	}
	if o.PrivateKey != nil {
		b, err := crypto.MarshalPrivateKey(o.PrivateKey)
		if err != nil {
			return nil, fmt.Errorf("private key: %w", err)
		}
		args = append(args, "--key", base64.StdEncoding.EncodeToString(b))
	}
	for _, c := range o.Codecs {
		if c.Kind != codec.SnappyStream || c.SnappyLevel != snappystream.Fast {
			return nil, fmt.Errorf("codec %s: the JS peer speaks snappy-stream with the fast encoder only (snappy-stream[:<window>])", c)
		}
		args = append(args, "--codec", c.String())
	}
	return args, nil
}

func ipProto(ip string) string {
	if strings.Contains(ip, ":") {
		return "ip6"
	}
	return "ip4"
}

func (p *Peer) identify(r reply) error {
	id, err := peer.Decode(r.PeerID)
	if err != nil {
		return fmt.Errorf("js peer ready line: peer id %q: %w", r.PeerID, err)
	}
	p.info.ID = id
	for _, s := range r.Addrs {
		a, err := ma.NewMultiaddr(s)
		if err != nil {
			return fmt.Errorf("js peer ready line: address %q: %w", s, err)
		}
		transport, _ := peer.SplitAddr(a)
		p.info.Addrs = append(p.info.Addrs, transport)
	}
	if len(p.info.Addrs) == 0 {
		return errors.New("js peer ready line: no listen address")
	}
	for _, s := range r.Protocols {
		p.protocols = append(p.protocols, protocol.ID(s))
	}
	return nil
}

// read dispatches stdout lines until EOF: the ready line, replies to commands by sequence
// number, and the received and stopped lines of the exit report.
func (p *Peer) read(stdout io.Reader, ready chan<- reply) {
	defer close(p.done)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var r reply
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			p.fail(fmt.Errorf("js peer stdout: %q: %w", sc.Text(), err))
			continue
		}
		switch r.Event {
		case "ready":
			ready <- r
		case "received":
			rec, err := r.received()
			if err != nil {
				p.fail(err)
				continue
			}
			p.mu.Lock()
			p.received = append(p.received, rec)
			p.mu.Unlock()
		case "stopped":
			if r.Count == nil {
				p.fail(fmt.Errorf("js peer stdout: stopped line without a count: %q", sc.Text()))
				continue
			}
			p.mu.Lock()
			p.stopped = r.Count
			p.mu.Unlock()
		default:
			p.mu.Lock()
			ch := p.waiting[r.Seq]
			delete(p.waiting, r.Seq)
			p.mu.Unlock()
			if ch == nil {
				p.fail(fmt.Errorf("js peer stdout: unexpected line %q", sc.Text()))
				continue
			}
			ch <- r
		}
	}
	if err := sc.Err(); err != nil {
		p.fail(fmt.Errorf("js peer stdout: %w", err))
	}
}

func (p *Peer) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.readErr = errors.Join(p.readErr, err)
}

func (r reply) received() (Received, error) {
	id, err := decodeID(r.ID)
	if err != nil {
		return Received{}, fmt.Errorf("js peer received line: %w", err)
	}
	from, err := peer.Decode(r.From)
	if err != nil {
		return Received{}, fmt.Errorf("js peer received line: from %q: %w", r.From, err)
	}
	return Received{ID: id, Topic: r.Topic, Bytes: r.Size, From: from}, nil
}

func decodeID(s string) ([gossip.MessageIDBytes]byte, error) {
	var id [gossip.MessageIDBytes]byte
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(id) {
		return id, fmt.Errorf("message id %q: want %d bytes in hex", s, len(id))
	}
	copy(id[:], b)
	return id, nil
}

// command sends one command and waits for its reply.
func (p *Peer) command(cmd map[string]any) (reply, error) {
	p.cmdMu.Lock()
	defer p.cmdMu.Unlock()
	p.seq++
	cmd["seq"] = p.seq
	ch := make(chan reply, 1)
	p.mu.Lock()
	p.waiting[p.seq] = ch
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.waiting, cmd["seq"].(int))
		p.mu.Unlock()
	}()
	line, err := json.Marshal(cmd)
	if err != nil {
		return reply{}, err
	}
	if _, err := p.stdin.Write(append(line, '\n')); err != nil {
		return reply{}, fmt.Errorf("js peer %s: %w (stderr: %s)", cmd["cmd"], err, p.stderr)
	}
	select {
	case r := <-ch:
		if r.Event == "error" {
			return r, fmt.Errorf("js peer: %s", r.Error)
		}
		return r, nil
	case <-p.done:
		return reply{}, fmt.Errorf("js peer %s: process exited (stderr: %s)", cmd["cmd"], p.stderr)
	case <-time.After(commandTimeout):
		return reply{}, fmt.Errorf("js peer %s: no reply after %v", cmd["cmd"], commandTimeout)
	}
}

// ID is the JS peer's peer id.
func (p *Peer) ID() peer.ID { return p.info.ID }

// AddrInfo is the JS peer's id and listen addresses.
func (p *Peer) AddrInfo() peer.AddrInfo {
	return peer.AddrInfo{ID: p.info.ID, Addrs: append([]ma.Multiaddr(nil), p.info.Addrs...)}
}

// Protocols lists the GossipSub protocol IDs the JS peer offers, in preference order.
func (p *Peer) Protocols() []protocol.ID { return append([]protocol.ID(nil), p.protocols...) }

// Publish publishes data (ssz_snappy, as on the network) on topic and returns the message id
// the JS peer computed. It fails when no peer is subscribed to the topic.
func (p *Peer) Publish(topic string, data []byte) ([gossip.MessageIDBytes]byte, error) {
	r, err := p.command(map[string]any{"cmd": "publish", "topic": topic, "data": base64.StdEncoding.EncodeToString(data)})
	if err != nil {
		return [gossip.MessageIDBytes]byte{}, err
	}
	return decodeID(r.ID)
}

// Subscribe subscribes the JS peer to a topic.
func (p *Peer) Subscribe(topic string) error {
	_, err := p.command(map[string]any{"cmd": "subscribe", "topic": topic})
	return err
}

// Subscribers lists the peers the JS peer knows to be subscribed to topic.
func (p *Peer) Subscribers(topic string) ([]peer.ID, error) {
	return p.peerList(map[string]any{"cmd": "subscribers", "topic": topic})
}

func (p *Peer) peerList(cmd map[string]any) ([]peer.ID, error) {
	r, err := p.command(cmd)
	if err != nil {
		return nil, err
	}
	out := make([]peer.ID, 0, len(r.Peers))
	for _, s := range r.Peers {
		id, err := peer.Decode(s)
		if err != nil {
			return nil, fmt.Errorf("js peer %s: %q: %w", cmd["cmd"], s, err)
		}
		out = append(out, id)
	}
	return out, nil
}

// Mesh lists the JS peer's GossipSub mesh peers of topic.
func (p *Peer) Mesh(topic string) ([]peer.ID, error) {
	return p.peerList(map[string]any{"cmd": "mesh", "topic": topic})
}

// Count is the number of messages the JS peer has received so far.
func (p *Peer) Count() (int, error) {
	r, err := p.command(map[string]any{"cmd": "count"})
	if err != nil {
		return 0, err
	}
	if r.Count == nil {
		return 0, errors.New("js peer count: reply without a count")
	}
	return *r.Count, nil
}

// Streams lists the JS peer's open streams with a negotiated protocol.
func (p *Peer) Streams() ([]Stream, error) {
	streams, _, err := p.StreamReport()
	return streams, err
}

// StreamReport lists the JS peer's open streams with a negotiated protocol and counts the
// streams it reset after a snappy-stream decoding error.
func (p *Peer) StreamReport() ([]Stream, int, error) {
	r, err := p.command(map[string]any{"cmd": "streams"})
	if err != nil {
		return nil, 0, err
	}
	out := make([]Stream, 0, len(r.Streams))
	for _, s := range r.Streams {
		id, err := peer.Decode(s.Peer)
		if err != nil {
			return nil, 0, fmt.Errorf("js peer streams: %q: %w", s.Peer, err)
		}
		out = append(out, Stream{Peer: id, Protocol: protocol.ID(s.Protocol), Direction: s.Direction,
			Codec: s.Codec, Blocks: s.Blocks, RawBytes: s.RawBytes, WireBytes: s.WireBytes})
	}
	return out, r.StreamErrors, nil
}

// Stop stops the JS peer and returns every message it received, in arrival order. Calling
// it again returns the same result.
func (p *Peer) Stop() ([]Received, error) {
	p.stopOnce.Do(func() { p.stopErr = p.stop() })
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.received, p.stopErr
}

func (p *Peer) stop() error {
	p.cmdMu.Lock()
	_, werr := p.stdin.Write([]byte(`{"cmd":"stop"}` + "\n"))
	p.cmdMu.Unlock()
	if werr != nil && p.cmd.Process != nil {
		// The process may be gone already; SIGTERM asks it for the same exit report.
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		p.kill()
		return fmt.Errorf("js peer did not stop within %v (stderr: %s)", stopTimeout, p.stderr)
	}
	err := p.wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.readErr != nil:
		return p.readErr
	case err != nil:
		return fmt.Errorf("js peer: %w (stderr: %s)", err, p.stderr)
	case p.stopped == nil:
		return fmt.Errorf("js peer exited without its report (stderr: %s)", p.stderr)
	case *p.stopped != len(p.received):
		return fmt.Errorf("js peer reported %d messages but %d lines were read", *p.stopped, len(p.received))
	}
	return nil
}

func (p *Peer) wait() error {
	_ = p.stdin.Close()
	return p.cmd.Wait()
}

func (p *Peer) kill() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
	}
	<-p.done
	_ = p.wait()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := bytes.TrimSpace(t.buf)
	if len(s) == 0 {
		return "(empty)"
	}
	return string(s)
}
