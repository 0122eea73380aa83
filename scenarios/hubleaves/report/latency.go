package report

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
)

// latency computes each leaf's delivery latency per category from the run's message logs
// (result.MessagesFile): from the publisher's publish call to the leaf's first delivery, in
// wall ms, through the hub, both codecs' work and flow control included. The times come from
// different nodes' clocks, so latency is computed only when every publisher and leaf ran in
// one host (an embedded run's one process); otherwise, or without logs, LatencyNote says why.
// paths are the nodes' summary files, parallel to nodes.
func (r *RunReport) latency(paths []string, nodes []*result.NodeSummary) error {
	hosts := map[string]bool{}
	var pubLogs []string
	leafLog := map[string]string{}
	for i, n := range nodes {
		if n.Role != result.RolePublisher && n.Role != result.RoleLeaf {
			continue
		}
		if n.Messages == "" {
			r.LatencyNote = fmt.Sprintf("not measured: %s %s/%d recorded no message times (a run from before the live check recorded them)", n.Role, n.Group, n.Instance)
			return nil
		}
		host := ""
		if n.Process != nil {
			host = n.Process.Host
		}
		hosts[host] = true
		log := filepath.Join(filepath.Dir(paths[i]), n.Messages)
		if n.Role == result.RolePublisher {
			pubLogs = append(pubLogs, log)
		} else {
			leafLog[fmt.Sprintf("%s/%d", n.Group, n.Instance)] = log
		}
	}
	if len(hosts) != 1 || hosts[""] {
		var names []string
		for h := range hosts {
			names = append(names, fmt.Sprintf("%q", h))
		}
		sort.Strings(names)
		r.LatencyNote = fmt.Sprintf("not measured: publishers and leaves ran on hosts %s, whose clocks are not one clock", strings.Join(names, ", "))
		return nil
	}
	if len(pubLogs) == 0 || len(leafLog) == 0 {
		r.LatencyNote = "not measured: the run has no publisher or no leaf with message times"
		return nil
	}
	// Publish time and category per message id (one entry per published message; the topic
	// string of each event is not kept).
	type pub struct {
		at  int64
		cat gossip.Category
	}
	pubs := map[[result.IDBytes]byte]pub{}
	for _, path := range pubLogs {
		if err := result.ScanMessages(path, func(e result.MessageEvent) {
			if e.Published {
				pubs[e.ID] = pub{e.At, gossip.TopicCategory(e.Topic)}
			}
		}); err != nil {
			return fmt.Errorf("live check latency: %w", err)
		}
	}
	for i := range r.Leaves {
		l := &r.Leaves[i]
		path, ok := leafLog[fmt.Sprintf("%s/%d", l.Group, l.Instance)]
		if !ok {
			continue
		}
		lat := map[gossip.Category][]float64{}
		if err := result.ScanMessages(path, func(e result.MessageEvent) {
			if p, ok := pubs[e.ID]; ok && !e.Published {
				lat[p.cat] = append(lat[p.cat], float64(e.At-p.at)/1e6)
			}
		}); err != nil {
			return fmt.Errorf("live check latency: %w", err)
		}
		for c, ms := range lat {
			if l.Latency == nil {
				l.Latency = map[gossip.Category]*result.LatencyDist{}
			}
			l.Latency[c] = result.LatencyOf(ms)
		}
	}
	return nil
}
