package analysis

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
)

// Fault accounting: in a run with a fault schedule, every message published on a receiver's
// topics by another node is accounted for at that receiver, from every node's message log
// (publish times, deliveries), link outages and lost-message log:
//
//   - received exactly once: fine;
//   - received twice or more, or a delivered id nobody published (a message altered on the
//     way, or invented): always a failure;
//   - missing, with a reason: "dropped" when pubsub dropped it for the receiver at a full
//     queue, could not deliver it or rejected it (the node says so, by id); "outage" when it
//     was exposed: a gossip link of the receiver or of the message's origin was down (its
//     connection closed or one of its two streams ended, until both were back and pubsub had
//     read the peer's hello) at some time within the exposure window W before or after the
//     message was published, W = max(1 s, 5 GossipSub heartbeats of the run's slowest
//     client). After: the message may have been queued for the link when it went down.
//     Before: pubsub drops a peer from its mesh and fanout when the peer's stream dies and
//     grafts it again only at a later heartbeat, and a message published into an emptied mesh
//     reaches nobody (a node gossips IHAVE only to peers outside its mesh, and the peers it
//     grafts at that heartbeat are in it);
//   - missing without a reason: a failure.
//
// Parity over the intervals both peers were connected: the messages that were not exposed
// must all be received exactly once, so per category the receiver's count and id digest of
// them equal the published ones'.

// FaultAccounting is a fault run's per-message account.
type FaultAccounting struct {
	Schedule string `json:"schedule"`
	// WindowMs is the exposure window before and after a message's publish time.
	WindowMs  float64           `json:"window_ms"`
	Faults    []FaultRow        `json:"faults"`
	Receivers []ReceiverAccount `json:"receivers"`
	Checks
}

// FaultRow is one fault as one node carried it out.
type FaultRow struct {
	Node    string  `json:"node"`
	AtS     float64 `json:"at_s"` // since the node's measured phase began
	Spec    string  `json:"spec"`
	Applied bool    `json:"applied"`
	Note    string  `json:"note,omitempty"`
}

// ReceiverAccount is one receiver's account.
type ReceiverAccount struct {
	Node  string `json:"node"` // group/instance
	Codec string `json:"codec,omitempty"`
	// Published is the messages published on its topics by other nodes.
	Published int64 `json:"published"`
	Once      int64 `json:"received_once"`
	// ExposedReceived: exposed to an outage, and received once all the same.
	ExposedReceived int64 `json:"exposed_received"`
	// MissingOutage and MissingDropped are missing messages with their reason.
	MissingOutage  int64            `json:"missing_outage"`
	MissingDropped map[string]int64 `json:"missing_dropped,omitempty"` // by "reason at node"
	Unexplained    int64            `json:"missing_unexplained"`
	Duplicates     int64            `json:"duplicate_deliveries"`
	Unknown        int64            `json:"unknown_ids"`
	Examples       []string         `json:"examples,omitempty"` // a few unexplained, duplicate or unknown messages
	// Connected is parity over the intervals both ends of the receiver's and the origins'
	// links were connected: published (not exposed) and received once, per category.
	Connected map[gossip.Category]ConnectedParity `json:"connected"`
	// Outages are the receiver's own link outages.
	Outages []OutageRow `json:"outages,omitempty"`
	OK      bool        `json:"ok"`
}

// ConnectedParity is one category of parity over connected intervals.
type ConnectedParity struct {
	Published int64 `json:"published"`
	Received  int64 `json:"received"`
	Identical bool  `json:"identical"` // same count and id digest
}

// OutageRow is one link outage as the report prints it.
type OutageRow struct {
	Peer   string  `json:"peer"` // group/instance, or the peer id of a stranger
	FromS  float64 `json:"from_s"`
	ToS    float64 `json:"to_s"` // -1: still down at the end
	DownMs float64 `json:"down_ms"`
	Cause  string  `json:"cause"`
}

// Faulted reports whether any node ran with a fault schedule.
func Faulted(nodes []*result.NodeSummary) bool {
	for _, n := range nodes {
		if n.FaultSchedule != "" {
			return true
		}
	}
	return false
}

// nodeRun is one node's summary and, when it wrote one, its message log's path.
type nodeRun struct {
	s   *result.NodeSummary
	log string
}

// loadNodeRuns reads every summary under dir with its message log's path.
func loadNodeRuns(dir string) ([]nodeRun, error) {
	paths, err := result.FindSummaries(dir)
	if err != nil {
		return nil, err
	}
	var out []nodeRun
	for _, p := range paths {
		s, err := result.ReadSummary(p)
		if err != nil {
			return nil, err
		}
		nr := nodeRun{s: s}
		if s.Messages != "" {
			nr.log = filepath.Join(filepath.Dir(p), s.Messages)
		}
		out = append(out, nr)
	}
	// An instance that crashed wrote no summary, but its message log may hold what it
	// published: keep it as a source of publish events.
	logs, _ := filepath.Glob(filepath.Join(dir, "*", "*", result.MessagesFile))
	for _, l := range logs {
		if _, err := os.Stat(filepath.Join(filepath.Dir(l), result.SummaryFile)); err != nil {
			rel, _ := filepath.Rel(dir, filepath.Dir(l))
			out = append(out, nodeRun{s: &result.NodeSummary{PeerID: "no summary: " + rel}, log: l})
		}
	}
	return out, nil
}

// LoadFaultAccounting accounts for every message of a fault run's outputs under dir.
func LoadFaultAccounting(dir string) (*FaultAccounting, error) {
	runs, err := loadNodeRuns(dir)
	if err != nil {
		return nil, err
	}
	return accountFaults(runs)
}

type interval struct{ from, to int64 } // to = max int64 while still down

func accountFaults(runs []nodeRun) (*FaultAccounting, error) {
	a := &FaultAccounting{Checks: Checks{OK: true}}
	name := map[string]string{} // peer id → group/instance
	role := map[string]string{}
	lostPeers := false
	windowNs := int64(time.Second)
	for _, r := range runs {
		s := r.s
		name[s.PeerID] = fmt.Sprintf("%s/%d", s.Group, s.Instance)
		role[s.PeerID] = s.Role
		lostPeers = lostPeers || len(s.LostPeers) > 0
		if s.FaultSchedule != "" {
			a.Schedule = s.FaultSchedule
		}
		windowNs = max(windowNs, exposureHeartbeats*s.HeartbeatNs)
	}
	a.WindowMs = float64(windowNs) / 1e6
	// Outages touching each node, from both ends' records.
	down := map[string][]interval{}
	for _, r := range runs {
		for _, o := range r.s.Outages {
			iv := interval{o.FromNs, o.ToNs}
			if iv.to == 0 {
				iv.to = 1<<63 - 1
			}
			down[r.s.PeerID] = append(down[r.s.PeerID], iv)
			down[o.Peer] = append(down[o.Peer], iv)
		}
		for _, f := range r.s.Faults {
			a.Faults = append(a.Faults, FaultRow{Node: name[r.s.PeerID], AtS: float64(f.AtNs-r.s.Start.UnixNano()) / 1e9,
				Spec: f.Spec, Applied: f.Applied, Note: f.Note})
		}
	}
	sort.SliceStable(a.Faults, func(i, j int) bool { return a.Faults[i].AtS < a.Faults[j].AtS })
	exposed := func(node string, at int64) bool {
		for _, iv := range down[node] {
			if iv.from <= at+windowNs && iv.to >= at-windowNs {
				return true
			}
		}
		return false
	}
	// Lost messages by id: dropped for a peer, or lost at a node.
	type lostAt struct{ reason, node, peer string }
	lost := map[[result.IDBytes]byte][]lostAt{}
	for _, r := range runs {
		for _, lm := range r.s.LostMessages {
			for _, h := range lm.IDs {
				var id [result.IDBytes]byte
				b, err := hex.DecodeString(h)
				if err != nil {
					return nil, fmt.Errorf("%s: lost message id %q: %w", name[r.s.PeerID], h, err)
				}
				copy(id[:], b)
				lost[id] = append(lost[id], lostAt{lm.Reason, r.s.PeerID, lm.Peer})
			}
		}
	}
	// Published messages and every node's deliveries.
	type pub struct {
		at     int64
		topic  string
		origin string
	}
	pubs := map[[result.IDBytes]byte]pub{}
	deliveries := make([]map[[result.IDBytes]byte]int, len(runs))
	for i, r := range runs {
		if r.log == "" {
			if r.s.Receiver {
				a.Problem("%s: no message log; the accounting needs every node's", name[r.s.PeerID])
			}
			continue
		}
		evs, err := result.ReadMessages(r.log)
		if err != nil {
			return nil, err
		}
		deliveries[i] = map[[result.IDBytes]byte]int{}
		for _, e := range evs {
			if e.Published {
				pubs[e.ID] = pub{e.At, e.Topic, r.s.PeerID}
			} else {
				deliveries[i][e.ID]++
			}
		}
	}
	for i, r := range runs {
		s := r.s
		if !s.Receiver || deliveries[i] == nil {
			continue
		}
		me := s.PeerID
		ra := ReceiverAccount{Node: name[me], Codec: s.Codec, MissingDropped: map[string]int64{},
			Connected: map[gossip.Category]ConnectedParity{}, OK: true}
		topics := map[string]bool{}
		for _, t := range s.Topics {
			topics[t] = true
		}
		var pubDigest, recvDigest = map[gossip.Category]result.Tally{}, map[gossip.Category]result.Tally{}
		example := func(format string, args ...any) {
			if len(ra.Examples) < 5 {
				ra.Examples = append(ra.Examples, fmt.Sprintf(format, args...))
			}
		}
		for id, p := range pubs {
			if !topics[p.topic] || p.origin == me {
				continue
			}
			ra.Published++
			got := deliveries[i][id]
			isExposed := exposed(me, p.at) || exposed(p.origin, p.at)
			if got > 1 {
				ra.Duplicates += int64(got - 1)
				example("%x delivered %d times", id[:8], got)
			}
			if got >= 1 {
				ra.Once++
				if isExposed {
					ra.ExposedReceived++
				}
			}
			if !isExposed {
				c := gossip.TopicCategory(p.topic)
				one := tallyOf(id)
				x := pubDigest[c]
				x.Add(one)
				pubDigest[c] = x
				if got == 1 {
					y := recvDigest[c]
					y.Add(one)
					recvDigest[c] = y
				}
			}
			if got > 0 {
				continue
			}
			reason := ""
			for _, l := range lost[id] {
				// An RPC dropped for this receiver; a message this receiver could not deliver or
				// rejected; a message the hub (hub-leaves' one relay) rejected.
				if (l.reason == result.LostDropped && l.peer == me) || (l.reason != result.LostDropped && (l.node == me || role[l.node] == result.RoleHub)) {
					reason = l.reason + " at " + name[l.node]
					break
				}
			}
			switch {
			case reason != "":
				ra.MissingDropped[reason]++
			case isExposed:
				ra.MissingOutage++
			default:
				ra.Unexplained++
				example("%x on %s published by %s at +%.3f s: missing, no outage or drop explains it", id[:8], p.topic, name[p.origin],
					float64(p.at-s.Start.UnixNano())/1e9)
			}
		}
		for id, n := range deliveries[i] {
			if _, ok := pubs[id]; !ok {
				ra.Unknown += int64(n)
				why := "altered or invented"
				if lostPeers {
					why += ", or published by a lost instance whose log is incomplete"
				}
				example("%x delivered but never published (%s)", id[:8], why)
			}
		}
		for c, pt := range pubDigest {
			rt := recvDigest[c]
			ra.Connected[c] = ConnectedParity{Published: pt.Messages, Received: rt.Messages, Identical: pt == rt}
		}
		stuck := 0
		for _, o := range s.Outages {
			row := OutageRow{Peer: cmpOr(name[o.Peer], o.Peer), FromS: float64(o.FromNs-s.Start.UnixNano()) / 1e9, ToS: -1, Cause: o.Cause}
			if o.ToNs != 0 {
				row.ToS = float64(o.ToNs-s.Start.UnixNano()) / 1e9
				row.DownMs = float64(o.ToNs-o.FromNs) / 1e6
			} else {
				stuck++
			}
			ra.Outages = append(ra.Outages, row)
		}
		ra.OK = ra.Unexplained == 0 && ra.Duplicates == 0 && ra.Unknown == 0 && stuck == 0
		if ra.Unexplained+ra.Duplicates+ra.Unknown > 0 {
			a.Problem("%s: %d missing without a reason, %d duplicate deliveries, %d unknown ids (e.g. %s)", ra.Node, ra.Unexplained,
				ra.Duplicates, ra.Unknown, strings.Join(ra.Examples, "; "))
		}
		if stuck > 0 {
			// Everything after is exposed, so nothing would show as missing: the link's
			// failure to come back is the finding.
			a.Problem("%s: %d link(s) went down and never came back", ra.Node, stuck)
		}
		a.Receivers = append(a.Receivers, ra)
	}
	sort.Slice(a.Receivers, func(i, j int) bool { return a.Receivers[i].Node < a.Receivers[j].Node })
	if len(a.Receivers) == 0 {
		a.Problem("no receiver with a message log")
	}
	return a, nil
}

// tallyOf is one message's tally (the digest lanes are the id's leading little-endian words,
// as publishers and receivers compute them).
// exposureHeartbeats is the exposure window in heartbeats (see the package's fault
// accounting comment).
const exposureHeartbeats = 5

func tallyOf(id [result.IDBytes]byte) result.Tally {
	return result.Tally{Messages: 1, Digest: [2]uint64{binary.LittleEndian.Uint64(id[:8]), binary.LittleEndian.Uint64(id[8:16])}}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// WriteFaultAccounting prints the faults that were carried out and each receiver's account.
func WriteFaultAccounting(w io.Writer, a *FaultAccounting) error {
	fmt.Fprintf(w, "\nfaults (schedule %q; a message is exposed when a link of its receiver or origin was down within %.0f ms before or after it was published):\n", a.Schedule, a.WindowMs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  at\tnode\tfault\tapplied\twhat happened\t")
	for _, f := range a.Faults {
		fmt.Fprintf(tw, "  +%.2f s\t%s\t%s\t%v\t%s\t\n", f.AtS, f.Node, f.Spec, f.Applied, f.Note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nevery message at every receiver: received once, or missing with a reason")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "receiver\tpublished\treceived once\t(of them exposed)\tmissing: outage\tdropped\tunexplained\tduplicates\tunknown ids\tconnected parity\t")
	for _, r := range a.Receivers {
		var dropped int64
		for _, n := range r.MissingDropped {
			dropped += n
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", r.Node, r.Published, r.Once, r.ExposedReceived, r.MissingOutage, dropped,
			r.Unexplained, r.Duplicates, r.Unknown, connectedVerdict(r))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range a.Receivers {
		for reason, n := range r.MissingDropped {
			fmt.Fprintf(w, "  %s: %d missing: %s\n", r.Node, n, reason)
		}
		for _, o := range r.Outages {
			to := "the end"
			if o.ToS >= 0 {
				to = fmt.Sprintf("+%.3f s (%.0f ms)", o.ToS, o.DownMs)
			}
			fmt.Fprintf(w, "  %s: link to %s down from +%.3f s to %s: %s\n", r.Node, o.Peer, o.FromS, to, o.Cause)
		}
	}
	for _, p := range a.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	if a.OK {
		fmt.Fprintln(w, "accounting: OK (no duplicate, no altered or invented message, nothing missing without a reason)")
	} else {
		fmt.Fprintln(w, "accounting: FAIL")
	}
	return nil
}

// connectedVerdict is the parity over connected intervals in one cell.
func connectedVerdict(r ReceiverAccount) string {
	var pub, got int64
	ok := true
	for _, c := range r.Connected {
		pub += c.Published
		got += c.Received
		ok = ok && c.Identical
	}
	if ok {
		return fmt.Sprintf("identical (%d)", pub)
	}
	return fmt.Sprintf("DIFFERENT (%d of %d)", got, pub)
}
