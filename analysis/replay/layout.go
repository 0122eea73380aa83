package replay

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/trace"
)

// Stream layouts: how a peer's gossipsub traffic is laid out on streams, each stream with its
// own codec state.
//
//   - one-stream: today's, one stream per direction per peer, as recorded.
//   - topic-streams: the Topic Streams extension (libp2p/specs PR #729, not released): each
//     recorded stream direction becomes its control stream (subscriptions, control, every
//     field the spec leaves there) and one stream per topic, opened by the sender's
//     TopicRPCHeader when the direction first carries a message of that topic, carrying one
//     TopicRPC per message with no topic field (gossip.SplitTopicStreams). Every topic stream
//     stays open to the end of the trace: the spec closes a topic stream when the peer
//     unsubscribes or the publisher stops publishing, and lets IWANT replies use
//     short-lived streams; the replay keeps one long-lived stream per topic and direction,
//     the layout whose histories cost the most memory.
const (
	LayoutOneStream    = "one-stream"
	LayoutTopicStreams = "topic-streams"
)

// Layouts lists the stream layouts a sweep can replay.
var Layouts = []string{LayoutOneStream, LayoutTopicStreams}

// ParseLayouts parses a comma-separated list of layouts.
func ParseLayouts(list string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(Layouts, s) {
			return nil, fmt.Errorf("layout %q: allowed %s", s, strings.Join(Layouts, ", "))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no layout given: allowed %s", strings.Join(Layouts, ", "))
	}
	return out, nil
}

// owner is the node and peer a recorded stream direction belongs to, and its direction.
type owner struct {
	node, peer string // "<trace index>/<node>", node + "→" + peer
	out        bool   // the node writes it (it holds the encoder)
}

func newOwner(ti int, s trace.Stream) *owner {
	node := fmt.Sprintf("%d/%s", ti, s.Node)
	return &owner{node: node, peer: node + "→" + s.Peer, out: s.Direction == trace.DirectionOut}
}

// dirIndex is a Result's per-direction index: 0 inbound, 1 outbound (the recording node's view).
func (o *owner) dirIndex() int {
	if o != nil && o.out {
		return 1
	}
	return 0
}

// Skipped counts the frames a view leaves out because it cannot read them (a malformed or
// cut-short RPC) or a layout cannot carry them (a published message without a topic or
// data): they are left out of every configuration and of the view's baseline alike, so no
// figure compares different frames.
type Skipped struct {
	Frames int64    `json:"frames"`
	Bytes  int64    `json:"bytes"` // plain bytes of the skipped frames
	First  []string `json:"first,omitempty"`
}

const skippedExamples = 5

// topicSplit returns the frames a topic-streams layout writes for one frame: the control
// stream's part (under the recorded stream's name) and a TopicRPC per application message on
// its topic's stream, each with its category split.
func topicSplit(in frameIn) ([]frameIn, error) {
	main, topics, err := gossip.SplitTopicStreams(in.data)
	if err != nil {
		return nil, err
	}
	out := make([]frameIn, 0, len(topics)+1)
	if main != nil {
		parts, err := gossip.SplitFrame(main)
		if err != nil {
			return nil, err
		}
		out = append(out, frameIn{stream: in.stream, data: main, parts: parts.Bytes, owner: in.owner})
	}
	for _, tf := range topics {
		f := frameIn{stream: in.stream + "/" + tf.Topic, topic: tf.Topic, data: tf.Frame, owner: in.owner}
		f.parts[gossip.TopicCategory(tf.Topic)] = len(tf.Frame)
		out = append(out, f)
	}
	return out, nil
}

// open marks the topic streams of frames that the view has not opened yet as open and
// returns them.
func (v *view) open(frames []frameIn) map[string]bool {
	var fresh map[string]bool
	for _, f := range frames {
		if f.topic != "" && !v.opened[f.stream] {
			v.opened[f.stream] = true
			if fresh == nil {
				fresh = map[string]bool{}
			}
			fresh[f.stream] = true
		}
	}
	return fresh
}

// withHeaders puts the TopicRPCHeader frame that opens each fresh stream before its first
// frame; the header counts in the topic's category.
func withHeaders(frames []frameIn, fresh map[string]bool) []frameIn {
	if len(fresh) == 0 {
		return frames
	}
	out := make([]frameIn, 0, len(frames)+len(fresh))
	done := map[string]bool{}
	for _, f := range frames {
		if fresh[f.stream] && !done[f.stream] {
			done[f.stream] = true
			h := frameIn{stream: f.stream, topic: f.topic, data: gossip.AppendTopicHeaderFrame(nil, f.topic), owner: f.owner}
			h.parts[gossip.TopicCategory(f.topic)] = len(h.data)
			out = append(out, h)
		}
		out = append(out, f)
	}
	return out
}

// Memory is the codec state a configuration's streams hold, from the recording nodes' view:
// a node holds the encoder of each stream it writes and the decoder of each it reads.
type Memory struct {
	Streams int `json:"streams"` // live stream directions at the end of the trace
	Peers   int `json:"peers"`   // node–peer pairs
	Nodes   int `json:"nodes"`
	// MaxStreamsPerPeer is the most stream directions one node has with one peer.
	MaxStreamsPerPeer int `json:"max_streams_per_peer"`
	// Per node–peer pair at the end: encoders (streams to the peer) and decoders (from it).
	MeanPeerEncoderBytes float64 `json:"mean_peer_encoder_bytes"`
	MeanPeerDecoderBytes float64 `json:"mean_peer_decoder_bytes"`
	MaxPeerBytes         int64   `json:"max_peer_bytes"` // encoders + decoders
	// Per node at the end (mean over nodes) and the largest encoders + decoders total any
	// node held at any point of the replay (sampled after every batch of frames).
	MeanNodeEncoderBytes float64 `json:"mean_node_encoder_bytes"`
	MeanNodeDecoderBytes float64 `json:"mean_node_decoder_bytes"`
	PeakNodeBytes        int64   `json:"peak_node_bytes"`
	// MeanNodeHistoryBytes is the history a node's streams hold at the end, whatever the
	// implementation allocates: for each stream it writes or reads, the bytes through it up
	// to the window (mean over nodes). It is the least any encoder or decoder with that
	// window must keep; the state above adds tables and allocation slack.
	MeanNodeHistoryBytes float64 `json:"mean_node_history_bytes"`
}

// memoryMeter follows a job's per-node codec state as the replay goes.
type memoryMeter struct {
	node    map[string]int64 // node → encoders + decoders now
	peak    int64
	touched []*streamReplay
	// series is, for a job replayed in groups, each node's state after every batch of the
	// corpus, summed over the groups: its largest is the peak of the streams held together.
	series map[string][]int64
}

// record adds the nodes' state now to the series at batch b.
func (m *memoryMeter) record(b int) {
	if m.series == nil {
		m.series = map[string][]int64{}
	}
	for node, t := range m.node {
		s := m.series[node]
		if len(s) <= b {
			s = append(s, make([]int64, b+1-len(s))...)
		}
		s[b] += t
		m.series[node] = s
	}
}

// seriesPeak is the largest state any node holds at any batch of the series.
func (m *memoryMeter) seriesPeak() int64 {
	var peak int64
	for _, s := range m.series {
		for _, t := range s {
			peak = max(peak, t)
		}
	}
	return peak
}

// touch marks s for the next sample.
func (m *memoryMeter) touch(s *streamReplay) {
	if !s.touched {
		s.touched = true
		m.touched = append(m.touched, s)
	}
}

// sample updates the nodes' totals with the touched streams' state and the peak.
func (m *memoryMeter) sample() {
	if m.node == nil {
		m.node = map[string]int64{}
	}
	for _, s := range m.touched {
		s.touched = false
		now := s.heldBytes()
		if s.owner != nil {
			t := m.node[s.owner.node] + now - s.held
			m.node[s.owner.node] = t
			m.peak = max(m.peak, t)
		}
		s.held = now
	}
	// Cleared, not only cut: the slice's array outlives the batch (and the job's pass, the
	// job lives to the end of the sweep), and a stream it points to keeps its encoder and
	// decoder reachable after the job has closed and dropped it.
	clear(m.touched)
	m.touched = m.touched[:0]
}

// summary totals the streams' state at the end by peer and node.
func (m *memoryMeter) summary(streams map[string]*streamReplay, order []string, windowBytes int64) Memory {
	type acc struct {
		enc, dec, hist int64
		streams        int
	}
	peers, nodes := map[string]*acc{}, map[string]*acc{}
	get := func(mp map[string]*acc, k string) *acc {
		a := mp[k]
		if a == nil {
			a = &acc{}
			mp[k] = a
		}
		return a
	}
	var mem Memory
	for _, name := range order {
		s := streams[name]
		if s == nil || s.owner == nil {
			continue
		}
		mem.Streams++
		enc, dec := s.enc, s.dec
		if s.owner.out {
			dec = 0 // the peer holds it
		} else {
			enc = 0
		}
		p, n := get(peers, s.owner.peer), get(nodes, s.owner.node)
		p.enc, p.dec, p.streams = p.enc+enc, p.dec+dec, p.streams+1
		n.enc, n.dec, n.hist = n.enc+enc, n.dec+dec, n.hist+min(s.rawBytes, windowBytes)
	}
	mem.Peers, mem.Nodes, mem.PeakNodeBytes = len(peers), len(nodes), m.peak
	// Integer sums, divided once: the maps' order must not change the figures.
	var all acc
	for _, p := range peers {
		all.enc, all.dec = all.enc+p.enc, all.dec+p.dec
		mem.MaxPeerBytes = max(mem.MaxPeerBytes, p.enc+p.dec)
		mem.MaxStreamsPerPeer = max(mem.MaxStreamsPerPeer, p.streams)
	}
	if len(peers) > 0 {
		mem.MeanPeerEncoderBytes = float64(all.enc) / float64(len(peers))
		mem.MeanPeerDecoderBytes = float64(all.dec) / float64(len(peers))
	}
	for _, n := range nodes {
		all.hist += n.hist
	}
	if len(nodes) > 0 {
		mem.MeanNodeEncoderBytes = float64(all.enc) / float64(len(nodes))
		mem.MeanNodeDecoderBytes = float64(all.dec) / float64(len(nodes))
		mem.MeanNodeHistoryBytes = float64(all.hist) / float64(len(nodes))
	}
	return mem
}
