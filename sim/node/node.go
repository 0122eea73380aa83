package node

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	snet "github.com/streamsim/streamsim/sim/network"

	"github.com/golang/snappy"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/trace"
)

const (
	// DefaultQueueSize is the per-peer outbound queue and the validation queue (Ethereum
	// clients use about 1000; pubsub's defaults of 32 drop under consensus load).
	DefaultQueueSize = 1000
)

// MaxMessageBytes is pubsub's max RPC size: the largest Snappy encoding of a maximal payload
// plus room for the topic and protobuf framing.
var MaxMessageBytes = snappy.MaxEncodedLen(gossip.MaxPayloadBytes) + 64<<10

// maxFrameBytes bounds one decoded RPC frame (length prefix included) on every stream.
var maxFrameBytes = MaxMessageBytes + binary.MaxVarintLen64

// config is what Options set; a Node never changes it after NewNode.
type config struct {
	codecs      []codec.Spec
	framing     gossip.Framing // how outbound RPCs are framed (framing.go)
	payloadSSZ  bool
	timeScale   float64
	client      topology.Client
	direct      []peer.AddrInfo
	tracers     []pubsub.RawTracer
	flowControl bool
	recorder    *trace.Writer
	log         *slog.Logger
	peerRole    func(peer.ID) string
	heartbeat   time.Duration // initial delay of the first heartbeat (stagger), real time
	queueSize   int
	lostLog     bool             // record the ids of lost messages (lostlog.go)
	pairReset   bool             // reset both gossip streams with a peer when one fails (linklog.go)
	validation  ValidationDelays // per-category validation delay (validation.go)
	nodeSeed    validationSeed   // seed of the node's own draws (validation.go)
	// virtual: the node runs on the virtual clock; chargeCPU: each frame's codec CPU
	// (cpuspan.go) is slept in simulated time on the sending and the receiving side.
	virtual, chargeCPU bool
	// metered: which peers' plain streams the node meters (nil: every peer's); see
	// WithMeteredPeers.
	metered func(peer.ID) bool
	// withhold: forward as rust-libp2p and nim-libp2p do (withhold.go).
	withhold bool
	// scoring: the node scores its peers (scoring.go), durations dilated by newConfig;
	// inspect, when set, gets every peer's score snapshot each inspectPeriod (real time).
	scoring       *Scoring
	inspect       pubsub.ExtendedPeerScoreInspectFn
	inspectPeriod time.Duration
}

// WithScoring makes the node score its peers with s (a client's parameters at mainnet time,
// ClientScoring): pubsub's peer scoring with s's thresholds and Dscore, s's parameters set on
// each topic as the node joins it, every duration divided by the node's time scale.
func WithScoring(s Scoring) Option {
	return func(c *config) error { c.scoring = &s; return nil }
}

// WithScoreInspect calls fn with every peer's score snapshot each period of mainnet time
// (divided by the time scale); it needs WithScoring.
func WithScoreInspect(fn pubsub.ExtendedPeerScoreInspectFn, period time.Duration) Option {
	return func(c *config) error {
		if period <= 0 {
			return fmt.Errorf("score inspect period %v: want a positive duration", period)
		}
		c.inspect, c.inspectPeriod = fn, period
		return nil
	}
}

// Option configures a Node, in go-libp2p-pubsub's style.
type Option func(*config) error

// WithCodecs sets the compressed stream codecs the node offers, in order of preference;
// plain /meshsub/1.2.0 is always offered last.
func WithCodecs(specs ...codec.Spec) Option {
	return func(c *config) error { c.codecs = append([]codec.Spec(nil), specs...); return nil }
}

// WithPayloadSSZ carries raw SSZ inside compressed streams (payload mode ssz). Every node of a
// run must agree; plain streams always carry ssz_snappy.
func WithPayloadSSZ(on bool) Option { return func(c *config) error { c.payloadSSZ = on; return nil } }

// WithTimeScale divides every GossipSub duration by scale (a speed-up over real time):
// heartbeat, fanout and seen TTLs, the backoffs and the rest (timing.go). Every node of a
// process must use the same scale.
func WithTimeScale(scale float64) Option {
	return func(c *config) error {
		if !(scale > 0) {
			return fmt.Errorf("time scale %g: want a positive number", scale)
		}
		c.timeScale = scale
		return nil
	}
}

// WithClient sets the GossipSub parameters (a client profile: D, Dlo, Dhi, Dlazy, heartbeat,
// history, IDONTWANT threshold, flood publish). Default: the Ethereum spec's.
func WithClient(cl topology.Client) Option {
	return func(c *config) error { c.client = cl; return nil }
}

// WithDirectPeers sets GossipSub direct peers: they get every message of the topics they
// subscribe to and no gossip.
func WithDirectPeers(peers []peer.AddrInfo) Option {
	return func(c *config) error { c.direct = append([]peer.AddrInfo(nil), peers...); return nil }
}

// WithRawTracers adds pubsub RawTracers beside the node's own.
func WithRawTracers(t ...pubsub.RawTracer) Option {
	return func(c *config) error { c.tracers = append(c.tracers, t...); return nil }
}

// WithFlowControl turns flow control on or off (default on): with it, a node stops reading
// gossip streams while one of its outbound queues is more than half full, so overload becomes
// lag instead of drops. A mesh study of gossip timing turns it off.
func WithFlowControl(on bool) Option { return func(c *config) error { c.flowControl = on; return nil } }

// WithRecorder records every RPC frame of every stream direction.
func WithRecorder(w *trace.Writer) Option {
	return func(c *config) error { c.recorder = w; return nil }
}

// WithLogger sets the logger of stream errors (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) error { c.log = l; return nil } }

// WithMeteredPeers limits the node's stream meters to the peers for which metered is true
// (default: every peer). A plain (/meshsub/1.2.0) stream with any other peer is passed through
// as pubsub writes and reads it, framing and the link log kept, without metering its bytes per
// category, today's per-message Snappy cost or recording its frames: Stats, CategoryTotals and
// the recorder cover the metered peers only. A compressed stream is metered whatever the peer
// (its codec CPU is what a virtual run charges). A scenario whose reports read one node's
// links (the neighbourhood reads the observed node's) leaves the others' links to outside
// peers unmetered, where the meter's per-frame work was several percent of a run's CPU.
func WithMeteredPeers(metered func(peer.ID) bool) Option {
	return func(c *config) error { c.metered = metered; return nil }
}

// WithPeerRoles labels peers in the node's stream meters.
func WithPeerRoles(role func(peer.ID) string) Option {
	return func(c *config) error { c.peerRole = role; return nil }
}

// WithQueueSize sets pubsub's per-peer outbound queue and validation queue (default
// DefaultQueueSize). A full outbound queue drops RPCs.
func WithQueueSize(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("queue size %d: want at least 1", n)
		}
		c.queueSize = n
		return nil
	}
}

// WithHeartbeatDelay delays the first heartbeat (real time, scaled like the heartbeat), so
// that the heartbeats of a mesh's nodes are staggered as on a real network.
func WithHeartbeatDelay(d time.Duration) Option {
	return func(c *config) error { c.heartbeat = d; return nil }
}

// WithLostLog makes the node record the id of every message pubsub drops (full outbound
// queue), cannot deliver (full subscription buffer) or rejects, for per-message accounting.
// It costs a message-id computation per dropped message; runs with faults turn it on.
func WithLostLog(on bool) Option { return func(c *config) error { c.lostLog = on; return nil } }

// WithCodecCPUCharge decides, for a node whose host is on the virtual clock (a synctest
// bubble: network.Host.Virtual), whether codec work costs simulated time. Each frame's encode
// and decode CPU is measured on either clock as the codec's own work (cpuspan.go: the
// runtime's monotonic clock, which a bubble does not stop) and reported as its codec CPU; with
// the charge on it is also slept in simulated time, by the writer before the unit goes out and
// by the reader before pubsub gets the frame, so a slow codec delays delivery as on a real
// node. Each stream direction's codec work is serial, stream directions run in parallel (a
// node with a core per stream: the charge's lower bound). On the real clock CPU takes real
// time and the option does nothing.
func WithCodecCPUCharge(on bool) Option {
	return func(c *config) error { c.chargeCPU = on; return nil }
}

// WithPairReset turns the pair reset on or off (default on): when one gossip stream with a
// peer fails, the node resets its other gossip stream with that peer (see linkLog for why).
func WithPairReset(on bool) Option { return func(c *config) error { c.pairReset = on; return nil } }

// Node is one simulated consensus node: GossipSub with Ethereum settings on a Host whose
// gossipsub streams pass through stream codecs, meters on every stream direction, pubsub event
// counters and an optional frame recorder. It is not changed after NewNode.
type Node struct {
	cfg     config
	host    *snet.Host
	wrapped *codecHost
	ps      *pubsub.PubSub
	ctx     context.Context
	cancel  context.CancelFunc
	log     *slog.Logger

	meter  meter
	tracer tracer

	recMu    sync.Mutex
	recStart time.Time
	recNext  uint32

	streamErrors atomic.Int64
	closeOnce    sync.Once
	releaseScale func()  // releases the process-wide time scale (timing.go)
	links        linkLog // per-peer link state and outages, fault actions (linklog.go, faultinject.go)

	topicsMu sync.Mutex
	topics   map[string]*pubsub.Topic

	heartbeat time.Duration // the heartbeat interval pubsub was given

	echoes *echoLog // WithEchoWithholding's record of the peers' copies (withhold.go); nil without
}

// Heartbeat is the GossipSub heartbeat interval the node's pubsub runs with (scaled).
func (n *Node) Heartbeat() time.Duration { return n.heartbeat }

// NewNode runs GossipSub on h with the options; the node owns h from then on (Close closes it).
func NewNode(h *snet.Host, opts ...Option) (*Node, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	cfg.virtual = h.Virtual() // the host's network decides the clock
	ctx, cancel := context.WithCancel(context.Background())
	n := &Node{cfg: cfg, host: h, ctx: ctx, cancel: cancel, log: cfg.log, recStart: time.Now()}
	if cfg.withhold {
		n.echoes = newEchoLog()
	}
	n.meter.sides = map[sideKey]*streamSide{}
	n.tracer.init(h)
	n.links.init(n, cfg.pairReset) // linklog.go
	n.tracer.links = &n.links
	if cfg.lostLog {
		n.tracer.lost = &lostLog{}
	}
	n.wrapped = &codecHost{Host: h.Host, node: n}

	// Every pubsub duration follows the time scale (timing.go), the process-wide backoff
	// slack included, held until Close.
	if err := acquireTimeScale(Dilate(cfg.client, cfg.timeScale)); err != nil {
		cancel()
		return nil, err
	}
	n.releaseScale = releaseTimeScale
	psOpts, params := gossipSubOptions(&cfg)
	psOpts = append(psOpts,
		pubsub.WithGossipSubProtocols(protocols(cfg.codecs), features),
		pubsub.WithRawTracer(&n.tracer),
	)
	for _, t := range cfg.tracers {
		psOpts = append(psOpts, pubsub.WithRawTracer(t))
	}
	ps, err := pubsub.NewGossipSub(ctx, n.wrapped, psOpts...)
	if err != nil {
		cancel()
		releaseTimeScale()
		return nil, fmt.Errorf("gossipsub: %w", err)
	}
	n.ps = ps
	n.heartbeat = params.HeartbeatInterval
	return n, nil
}

// newConfig applies opts over the defaults.
func newConfig(opts []Option) (config, error) {
	spec, _ := topology.ClientProfile("spec")
	cfg := config{timeScale: 1, client: spec, flowControl: true, log: slog.Default(), queueSize: DefaultQueueSize, pairReset: true}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return cfg, err
		}
	}
	if cfg.inspect != nil && cfg.scoring == nil {
		return cfg, fmt.Errorf("a score inspector needs peer scoring (WithScoring)")
	}
	if cfg.scoring != nil {
		d, err := cfg.scoring.Dilate(cfg.timeScale)
		if err != nil {
			return cfg, err
		}
		cfg.scoring = &d
	}
	return cfg, nil
}

// gossipSubOptions are the pubsub options of a node with cfg: the client's GossipSub
// parameters and Ethereum's message rules, every duration dilated by the time scale
// (timing.go; NewNode also holds the process-wide backoff slack for the scale). NewNode adds
// the protocols and tracers; the overhead benchmark runs bare pubsub with exactly these. It
// returns the GossipSub parameters too (the heartbeat the summary reports is the one pubsub
// was given).
func gossipSubOptions(cfg *config) ([]pubsub.Option, pubsub.GossipSubParams) {
	cl := cfg.client
	params := pubsub.DefaultGossipSubParams()
	params.D, params.Dlo, params.Dhi, params.Dlazy = cl.D, cl.Dlo, cl.Dhi, cl.Dlazy
	params.Dscore, params.Dout, params.GossipFactor = cl.Dscore, cl.Dout, cl.GossipFactor
	params.HistoryLength, params.HistoryGossip = cl.HistoryLength, cl.HistoryGossip
	dil := Dilate(cl, cfg.timeScale)
	dil.apply(&params, cfg.heartbeat)
	if cl.IDontWantThresholdBytes > 0 {
		params.IDontWantMessageThreshold = cl.IDontWantThresholdBytes
	}
	var scoring []pubsub.Option
	if s := cfg.scoring; s != nil {
		params.Dscore = s.Dscore
		sp, th := s.Params, s.Thresholds
		sp.Topics = map[string]*pubsub.TopicScoreParams{}
		scoring = append(scoring, pubsub.WithPeerScore(&sp, &th))
		if cfg.inspect != nil {
			scoring = append(scoring, pubsub.WithPeerScoreInspect(cfg.inspect, time.Duration(float64(cfg.inspectPeriod)/cfg.timeScale)))
		}
	}
	return append([]pubsub.Option{
		pubsub.WithGossipSubParams(params),
		pubsub.WithMessageSignaturePolicy(pubsub.StrictNoSign),
		pubsub.WithNoAuthor(),
		pubsub.WithMessageIdFn(gossip.PubsubMsgID),
		pubsub.WithSeenMessagesTTL(dil.SeenTTL),
		pubsub.WithFloodPublish(cl.FloodPublish),
		pubsub.WithMaxMessageSize(MaxMessageBytes),
		pubsub.WithPeerOutboundQueueSize(cfg.queueSize),
		pubsub.WithValidateQueueSize(cfg.queueSize),
		pubsub.WithDirectPeers(cfg.direct),
	}, scoring...), params
}

// Topic returns the node's handle of a topic, joining it on first use (pubsub allows one
// Join per topic).
func (n *Node) Topic(name string) (*pubsub.Topic, error) {
	n.topicsMu.Lock()
	defer n.topicsMu.Unlock()
	if t := n.topics[name]; t != nil {
		return t, nil
	}
	if err := n.registerValidator(name); err != nil { // validation.go
		return nil, err
	}
	t, err := n.ps.Join(name)
	if err != nil {
		return nil, fmt.Errorf("join %s: %w", name, err)
	}
	if n.cfg.scoring != nil {
		if tp := n.cfg.scoring.TopicParams(name); tp != nil {
			if err := t.SetScoreParams(tp); err != nil {
				return nil, fmt.Errorf("score parameters of %s: %w", name, err)
			}
		}
	}
	if n.topics == nil {
		n.topics = map[string]*pubsub.Topic{}
	}
	n.topics[name] = t
	return t, nil
}

// Host is the node's libp2p host (unwrapped).
func (n *Node) Host() host.Host { return n.host.Host }

// PubSub is the node's GossipSub instance.
func (n *Node) PubSub() *pubsub.PubSub { return n.ps }

// ID is the node's peer id.
func (n *Node) ID() peer.ID { return n.host.ID() }

// AddrInfo is the node's id and listen addresses.
func (n *Node) AddrInfo() peer.AddrInfo { return n.host.AddrInfo() }

// Protocols lists the gossipsub protocol IDs the node offers, in preference order.
func (n *Node) Protocols() []protocol.ID { return protocols(n.cfg.codecs) }

// OutboundBacklog is the number of RPCs waiting in the node's longest outbound queue.
func (n *Node) OutboundBacklog() int64 { return n.tracer.maxBacklog("") }

// backlogLimit is the outbound backlog above which a node stops reading gossip streams (and a
// publisher stops publishing) until it drains: half of pubsub's per-peer queue.
const backlogLimit = DefaultQueueSize / 2

// backlogWait bounds one wait in AwaitBacklog, so that flow control between nodes that send
// each other heavy traffic in a cycle stalls for a while at worst instead of deadlocking.
const backlogWait = 2 * time.Second

// AwaitBacklog blocks, when flow control is on, while the node's longest outbound queue to a
// peer other than from is above backlogLimit. Reads from peer from wait here, so a node takes
// messages in no faster than it can forward them and a burst the machine cannot absorb turns
// into flow control back to the publishers (who report it as lag) instead of pubsub dropping
// RPCs at a full queue. The queue to from itself does not count: that peer's reading does not
// wait for us, and counting it would deadlock two nodes sending each other heavy traffic.
func (n *Node) AwaitBacklog(from peer.ID) {
	if !n.cfg.flowControl || n.tracer.maxBacklog(from) <= backlogLimit {
		// The common case, every frame: no clock read.
		return
	}
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

// Context is the node's context: done once the node is closed.
func (n *Node) Context() context.Context { return n.ctx }

// Close stops pubsub and the host.
func (n *Node) Close() error {
	var err error
	n.closeOnce.Do(func() {
		n.cancel()
		n.tracer.close()
		n.links.close()
		err = n.host.Close()
		if n.releaseScale != nil {
			n.releaseScale()
		}
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
	if n.cfg.recorder == nil {
		return
	}
	n.recMu.Lock()
	if *id == 0 {
		n.recNext++
		*id = n.recNext
		err := n.cfg.recorder.AddStream(trace.Stream{
			ID: *id, Node: n.host.ID().String(), Peer: s.Conn().RemotePeer().String(),
			Direction: dir, Protocol: string(s.Protocol()), Codec: spec.String(),
		})
		if err != nil {
			n.log.Error("frame recorder", "err", err)
		}
	}
	at := time.Since(n.recStart)
	n.recMu.Unlock()
	if err := n.cfg.recorder.WriteFrame(trace.Frame{At: at, Stream: *id, Category: cat, Data: frame}); err != nil {
		n.log.Error("frame recorder", "err", err)
	}
}

// Stats returns the meters of every stream direction, sorted by peer and direction.
func (n *Node) Stats() []result.StreamStats { return n.meter.snapshot(n.cfg.peerRole, false) }

// FreezeStats returns the meters as Stats does and stops metering and recording frames from
// then on: a frame is metered and recorded in one step under its stream side's lock
// (streamSide.add), so what the summary holds is exactly what the recording holds.
func (n *Node) FreezeStats() []result.StreamStats { return n.meter.snapshot(n.cfg.peerRole, true) }

// CategoryTotals returns the node's gossip stream bytes so far per category, inbound and
// outbound, summed over every stream direction: the totals Stats' directions add up to
// (since the node started; no longer growing once frozen). Categories with no bytes are
// left out.
func (n *Node) CategoryTotals() (in, out map[gossip.Category]result.CategoryBytes) {
	return n.meter.totals()
}

// PubsubStats returns pubsub's event counters.
func (n *Node) PubsubStats() result.Pubsub { return n.tracer.snapshot() }

// Bandwidth returns go-libp2p's BandwidthCounter totals per protocol (nil on a host without
// one).
func (n *Node) Bandwidth() map[string]result.Traffic {
	if n.host.BandwidthCounter() == nil {
		return nil
	}
	out := map[string]result.Traffic{}
	for id, s := range n.host.BandwidthCounter().GetBandwidthByProtocol() {
		out[string(id)] = result.Traffic{In: int64(s.TotalIn), Out: int64(s.TotalOut)}
	}
	return out
}

// codecHost is the node's host as pubsub sees it: streams of streamsim gossip protocols are
// wrapped in codecStreams. pubsub uses only NewStream and SetStreamHandler(Match) for streams
// (docs/inputs.md §6); everything else passes through.
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

// BareGossipSubOptions are the GossipSub options a Node made with opts runs pubsub with
// (client parameters, dilation, message ids, queues, direct peers), for a bare pubsub beside
// it (the overhead benchmark); it holds the process-wide time scale as NewNode does until
// release. A Node validates through its own validators, which a bare pubsub has none of, so
// options with validation delays are refused.
func BareGossipSubOptions(opts ...Option) (popts []pubsub.Option, release func(), err error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, nil, err
	}
	if len(cfg.validation) > 0 {
		return nil, nil, fmt.Errorf("validation delays %v: a bare pubsub runs no validators", cfg.validation)
	}
	if err := acquireTimeScale(Dilate(cfg.client, cfg.timeScale)); err != nil {
		return nil, nil, err
	}
	popts, _ = gossipSubOptions(&cfg)
	return popts, releaseTimeScale, nil
}
