package report

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"text/tabwriter"

	"github.com/streamsim/streamsim/analysis/page"
	"github.com/streamsim/streamsim/result"
)

// HubCodecMemory is the hub's codec state on one codec: what the node meters per stream
// direction as the codec's state (its largest over the run: history, tables and buffers),
// encoders on its outbound streams plus decoders on its inbound ones, summed over every peer
// whose streams ran that codec.
type HubCodecMemory struct {
	Codec        string  `json:"codec"`
	Peers        int     `json:"peers"`
	EncoderBytes int64   `json:"encoder_bytes"`
	DecoderBytes int64   `json:"decoder_bytes"`
	Bytes        int64   `json:"bytes"`
	BytesPerPeer float64 `json:"bytes_per_peer"`
	// PerNode is the state of the first n of those peers (the leaves in run order, then any
	// other peer by peer ID) for each of page.MemoryPeers the hub had at least that many
	// peers of: a node's codec memory at n peers, summed over n measured peers.
	PerNode []PeersMemory `json:"per_node,omitempty"`
}

// PeersMemory is the codec state of n peers' streams.
type PeersMemory struct {
	Peers int   `json:"peers"`
	Bytes int64 `json:"bytes"`
}

// hubMemory sums the hub's codec state per codec over its peers, codecs in the order their
// first peer comes (leaves in run order first).
func hubMemory(hub *result.NodeSummary, leaves []LeafReport) []HubCodecMemory {
	rank := map[string]int{}
	for i, l := range leaves {
		rank[l.PeerID] = i
	}
	type peerState struct {
		peer     string
		enc, dec int64
	}
	byCodec := map[string]map[string]*peerState{}
	for _, s := range hub.Streams {
		c := s.Codec
		if c == "" {
			c = "plain"
		}
		if byCodec[c] == nil {
			byCodec[c] = map[string]*peerState{}
		}
		p := byCodec[c][s.Peer]
		if p == nil {
			p = &peerState{peer: s.Peer}
			byCodec[c][s.Peer] = p
		}
		if s.Direction == "out" {
			p.enc += s.CodecStats.StateBytes
		} else {
			p.dec += s.CodecStats.StateBytes
		}
	}
	before := func(a, b string) bool {
		ra, oka := rank[a]
		rb, okb := rank[b]
		switch {
		case oka && okb:
			return ra < rb
		case oka != okb:
			return oka
		}
		return a < b
	}
	var out []HubCodecMemory
	for c, peers := range byCodec {
		ps := make([]*peerState, 0, len(peers))
		for _, p := range peers {
			ps = append(ps, p)
		}
		sort.Slice(ps, func(i, j int) bool { return before(ps[i].peer, ps[j].peer) })
		m := HubCodecMemory{Codec: c, Peers: len(ps)}
		for i, p := range ps {
			m.EncoderBytes += p.enc
			m.DecoderBytes += p.dec
			if n := i + 1; slices.Contains(page.MemoryPeers, n) {
				m.PerNode = append(m.PerNode, PeersMemory{Peers: n, Bytes: m.EncoderBytes + m.DecoderBytes})
			}
		}
		m.Bytes = m.EncoderBytes + m.DecoderBytes
		m.BytesPerPeer = float64(m.Bytes) / float64(m.Peers)
		out = append(out, m)
	}
	first := func(m HubCodecMemory) string {
		best := ""
		for p := range byCodec[m.Codec] {
			if best == "" || before(p, best) {
				best = p
			}
		}
		return best
	}
	sort.Slice(out, func(i, j int) bool { return before(first(out[i]), first(out[j])) })
	return out
}

// writeHubMemory prints the hub's codec state per codec.
func writeHubMemory(w io.Writer, mem []HubCodecMemory) error {
	if len(mem) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nhub codec memory (encoders on its outbound streams + decoders on its inbound ones, each stream's largest state over the run):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "codec\tpeers\tencoders\tdecoders\ttotal\tper peer\t")
	for _, m := range mem {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t\n", m.Codec, m.Peers, kib(float64(m.EncoderBytes)), kib(float64(m.DecoderBytes)), kib(float64(m.Bytes)), kib(m.BytesPerPeer))
	}
	return tw.Flush()
}

func kib(b float64) string {
	if b >= 10<<20 {
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", b/1024)
}
