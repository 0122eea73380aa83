package sim

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang/snappy"
	"github.com/libp2p/go-libp2p"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/connmgr"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/metrics"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/trace"
)

// Ethereum consensus GossipSub settings (reference.md §5); durations are for real time and
// are divided by the time scale.
const (
	heartbeatInterval = 700 * time.Millisecond
	fanoutTTL         = 60 * time.Second
	seenTTL           = 768 * time.Second
	historyLength     = 6
	historyGossip     = 3
	// queueSize is the per-peer outbound queue and the validation queue (Ethereum clients
	// use about 1000; pubsub's defaults of 32 drop under consensus load).
	queueSize = 1000
)

// MaxMessageBytes is pubsub's max RPC size: the largest Snappy encoding of a maximal payload
// plus room for the topic and protobuf framing.
var MaxMessageBytes = snappy.MaxEncodedLen(gossip.MaxPayloadBytes) + 64<<10

// Config configures a Node.
type Config struct {
	// ListenIP is the IP to listen on (TCP, port chosen by the system). Default 127.0.0.1.
	ListenIP string
	// Codecs are the compressed stream codecs the node offers, in order of preference;
	// plain /meshsub/1.2.0 is always offered last.
	Codecs []codec.Spec
	// PayloadSSZ carries raw SSZ inside compressed streams (payload mode ssz). Every node of
	// a run must agree; plain streams always carry ssz_snappy.
	PayloadSSZ bool
	// TimeScale divides heartbeat, fanout TTL and seen TTL. Default 1.
	TimeScale float64
	// Recorder, when set, receives every RPC frame of every stream direction.
	Recorder *trace.Writer
	// Logger gets stream errors. Default slog.Default().
	Logger *slog.Logger
	// Role and PeerRole label the node and its peers in summaries (optional).
	Role     string
	PeerRole func(peer.ID) string
}

// Node is one simulated consensus node: a libp2p host whose gossipsub streams pass through
// stream codecs, GossipSub with Ethereum settings, meters on every stream direction, pubsub
// event counters and an optional frame recorder.
type Node struct {
	cfg           Config
	host          host.Host
	wrapped       *codecHost
	bw            *metrics.BandwidthCounter
	ps            *pubsub.PubSub
	ctx           context.Context
	cancel        context.CancelFunc
	log           *slog.Logger
	maxFrameBytes int

	meter  meter
	tracer tracer

	recMu    sync.Mutex
	recStart time.Time
	recNext  uint32

	streamErrors atomic.Int64
	closeOnce    sync.Once

	topicsMu sync.Mutex
	topics   map[string]*pubsub.Topic
}

// Topic returns the node's handle of a topic, joining it on first use (pubsub allows one
// Join per topic).
func (n *Node) Topic(name string) (*pubsub.Topic, error) {
	n.topicsMu.Lock()
	defer n.topicsMu.Unlock()
	if t := n.topics[name]; t != nil {
		return t, nil
	}
	t, err := n.ps.Join(name)
	if err != nil {
		return nil, fmt.Errorf("join %s: %w", name, err)
	}
	if n.topics == nil {
		n.topics = map[string]*pubsub.Topic{}
	}
	n.topics[name] = t
	return t, nil
}

// NewNode starts a host; Start adds GossipSub once the direct peers are known.
func NewNode(cfg Config) (*Node, error) {
	if cfg.ListenIP == "" {
		cfg.ListenIP = "127.0.0.1"
	}
	if cfg.TimeScale <= 0 {
		cfg.TimeScale = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	maxFrame := MaxMessageBytes + binary.MaxVarintLen64
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("node key: %w", err)
	}
	bw := metrics.NewBandwidthCounter()
	h, err := libp2p.New(
		libp2p.Identity(key),
		libp2p.ListenAddrStrings(fmt.Sprintf("/ip4/%s/tcp/0", cfg.ListenIP)),
		libp2p.Transport(tcp.NewTCPTransport),
		libp2p.Security(noise.ID, noise.New),
		libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
		libp2p.ResourceManager(&network.NullResourceManager{}),
		// Keep every simulated peer. The null manager never trims, and it does not support
		// decaying tags, which spares pubsub's tag tracer a failed (fmt.Errorf) tag bump
		// per delivered message once the decayer's queue is full.
		libp2p.ConnectionManager(&connmgr.NullConnMgr{}),
		libp2p.BandwidthReporter(bw),
		libp2p.DisableRelay(),
		libp2p.DisableMetrics(),
		libp2p.Ping(false),
	)
	if err != nil {
		return nil, fmt.Errorf("libp2p host: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &Node{
		cfg: cfg, host: h, bw: bw, ctx: ctx, cancel: cancel, log: cfg.Logger,
		maxFrameBytes: maxFrame, recStart: time.Now(),
	}
	n.meter.sides = map[sideKey]*streamSide{}
	n.wrapped = &codecHost{Host: h, node: n}
	return n, nil
}

// Start runs GossipSub on the node with Ethereum settings; direct peers get every message on
// the topics they subscribe to and no gossip.
func (n *Node) Start(direct []peer.AddrInfo) error {
	scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) / n.cfg.TimeScale) }
	params := pubsub.DefaultGossipSubParams()
	params.D, params.Dlo, params.Dhi, params.Dlazy = 8, 6, 12, 6
	params.HistoryLength, params.HistoryGossip = historyLength, historyGossip
	params.HeartbeatInterval = scale(heartbeatInterval)
	params.FanoutTTL = scale(fanoutTTL)
	ps, err := pubsub.NewGossipSub(n.ctx, n.wrapped,
		pubsub.WithGossipSubParams(params),
		pubsub.WithGossipSubProtocols(protocols(n.cfg.Codecs), features),
		pubsub.WithMessageSignaturePolicy(pubsub.StrictNoSign),
		pubsub.WithNoAuthor(),
		pubsub.WithMessageIdFn(gossip.PubsubMsgID),
		pubsub.WithSeenMessagesTTL(scale(seenTTL)),
		pubsub.WithFloodPublish(false),
		pubsub.WithMaxMessageSize(MaxMessageBytes),
		pubsub.WithPeerOutboundQueueSize(queueSize),
		pubsub.WithValidateQueueSize(queueSize),
		pubsub.WithDirectPeers(direct),
		pubsub.WithRawTracer(&n.tracer),
	)
	if err != nil {
		return fmt.Errorf("gossipsub: %w", err)
	}
	n.ps = ps
	return nil
}

// Host is the node's libp2p host (unwrapped).
func (n *Node) Host() host.Host { return n.host }

// PubSub is the node's GossipSub instance (nil before Start).
func (n *Node) PubSub() *pubsub.PubSub { return n.ps }

// ID is the node's peer id.
func (n *Node) ID() peer.ID { return n.host.ID() }

// AddrInfo is the node's id and listen addresses.
func (n *Node) AddrInfo() peer.AddrInfo {
	return peer.AddrInfo{ID: n.host.ID(), Addrs: n.host.Addrs()}
}

// Protocols lists the gossipsub protocol IDs the node offers, in preference order.
func (n *Node) Protocols() []protocol.ID { return protocols(n.cfg.Codecs) }

// OutboundBacklog is the number of RPCs waiting in the node's longest outbound queue.
func (n *Node) OutboundBacklog() int64 { return n.tracer.maxBacklog("") }

// backlogLimit is the outbound backlog above which a node stops reading gossip streams (and a
// publisher stops publishing) until it drains: half of pubsub's per-peer queue.
const backlogLimit = queueSize / 2

// backlogWait bounds one wait in awaitBacklog, so that flow control between nodes that send
// each other heavy traffic in a cycle stalls for a while at worst instead of deadlocking.
const backlogWait = 2 * time.Second

// awaitBacklog blocks while the node's longest outbound queue, to a peer other than from,
// is above backlogLimit. Reads from peer from wait here, so a node takes messages in no
// faster than it can forward them and a burst the machine cannot absorb turns into flow
// control back to the publishers (who report it as lag) instead of pubsub dropping RPCs at
// a full queue. The queue to from itself does not count: that peer's reading does not wait
// for us, and counting it would deadlock two nodes sending each other heavy traffic.
func (n *Node) awaitBacklog(from peer.ID) {
	deadline := time.Now().Add(backlogWait)
	for n.tracer.maxBacklog(from) > backlogLimit && time.Now().Before(deadline) {
		select {
		case <-n.ctx.Done():
			return
		case <-time.After(200 * time.Microsecond):
		}
	}
}

// StreamErrors counts streams reset after a codec or framing error.
func (n *Node) StreamErrors() int64 { return n.streamErrors.Load() }

// Close stops pubsub and the host.
func (n *Node) Close() error {
	var err error
	n.closeOnce.Do(func() {
		n.cancel()
		err = n.host.Close()
	})
	return err
}

func (n *Node) streamError(s network.Stream, err error) {
	n.streamErrors.Add(1)
	n.log.Error("gossip stream reset", "node", n.host.ID(), "peer", s.Conn().RemotePeer(),
		"protocol", s.Protocol(), "err", err)
}

// record writes one frame to the recorder; *id is the trace stream id of the stream direction,
// declared on first use.
func (n *Node) record(id *uint32, dir string, s network.Stream, spec codec.Spec, cat gossip.Category, frame []byte) {
	if n.cfg.Recorder == nil {
		return
	}
	n.recMu.Lock()
	if *id == 0 {
		n.recNext++
		*id = n.recNext
		err := n.cfg.Recorder.AddStream(trace.Stream{
			ID: *id, Node: n.host.ID().String(), Peer: s.Conn().RemotePeer().String(),
			Direction: dir, Protocol: string(s.Protocol()), Codec: spec.String(),
		})
		if err != nil {
			n.log.Error("frame recorder", "err", err)
		}
	}
	at := time.Since(n.recStart)
	n.recMu.Unlock()
	if err := n.cfg.Recorder.WriteFrame(trace.Frame{At: at, Stream: *id, Category: cat, Data: frame}); err != nil {
		n.log.Error("frame recorder", "err", err)
	}
}

// Stats returns the meters of every stream direction, sorted by peer and direction.
func (n *Node) Stats() []analysis.StreamStats { return n.meter.snapshot(n.cfg.PeerRole) }

// PubsubStats returns pubsub's event counters.
func (n *Node) PubsubStats() analysis.Pubsub { return n.tracer.snapshot() }

// Bandwidth returns go-libp2p's BandwidthCounter totals per protocol.
func (n *Node) Bandwidth() map[string]analysis.Traffic {
	out := map[string]analysis.Traffic{}
	for id, s := range n.bw.GetBandwidthByProtocol() {
		out[string(id)] = analysis.Traffic{In: int64(s.TotalIn), Out: int64(s.TotalOut)}
	}
	return out
}

// codecHost is the node's host as pubsub sees it: streams of streamsim gossip protocols are
// wrapped in codecStreams. pubsub uses only NewStream and SetStreamHandler(Match) for streams
// (reference.md §6); everything else passes through.
type codecHost struct {
	host.Host
	node *Node
}

func (h *codecHost) NewStream(ctx context.Context, p peer.ID, pids ...protocol.ID) (network.Stream, error) {
	s, err := h.Host.NewStream(ctx, p, pids...)
	if err != nil {
		return nil, err
	}
	return h.wrap(s), nil
}

func (h *codecHost) SetStreamHandler(pid protocol.ID, handler network.StreamHandler) {
	h.Host.SetStreamHandler(pid, func(s network.Stream) { handler(h.wrap(s)) })
}

func (h *codecHost) SetStreamHandlerMatch(pid protocol.ID, m func(protocol.ID) bool, handler network.StreamHandler) {
	h.Host.SetStreamHandlerMatch(pid, m, func(s network.Stream) { handler(h.wrap(s)) })
}

func (h *codecHost) wrap(s network.Stream) network.Stream {
	spec, ok := SpecFor(s.Protocol())
	if !ok {
		return s
	}
	return newCodecStream(h.node, s, spec)
}
