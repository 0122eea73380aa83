package replay

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/streamsim/streamsim/gossip"
)

// Comparison is a measured relative figure next to the proposal's published one.
type Comparison struct {
	// Low and High bound the published figure in percent (equal unless it is a range such
	// as "76–79 %").
	Low  float64 `json:"low"`
	High float64 `json:"high"`
	// Diff is measured minus published in percentage points; 0 inside a published range.
	// Null when the sweep did not measure what the proposal's figure stands for (a category
	// the trace never had, or a total whose traffic lacks one of the proposal's categories):
	// Reason says why. Never a difference against nothing.
	Diff   *float64 `json:"diff"`
	Reason string   `json:"reason,omitempty"`
}

func (c Comparison) published() string {
	if c.Low == c.High {
		return trimFloat(c.Low)
	}
	return trimFloat(c.Low) + "–" + trimFloat(c.High)
}

func trimFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// pub is one row of the proposal's Results table (docs/inputs.md §1): totals for the
// default node and all subnets, one figure per category (the proposal gives one for both
// views), control per view. Zero means "not published".
type pub struct {
	defaultTotal, allTotal  float64
	att, agg                [2]float64
	block                   [2]float64
	column                  float64
	controlDefault, control float64
}

// published maps grid names to the proposal's rows. The proposal's LZ77 rows were one
// encoder that "hashes every position"; its figures stand next to both snappy-stream levels
// at 64 KiB. Its zstd-3 row (a stream context per peer stream, a 2 MiB window) names no
// implementation: its figures stand next to klauspost's (zstd) and libzstd's (zstd-c), which
// find different shares of far repeats. Data column sidecars "stay at ~96 % under every
// per-stream compressor".
var published = map[string]pub{
	"none":                       {138, 107, [2]float64{105, 105}, [2]float64{106, 106}, [2]float64{237, 237}, 0, 100, 100},
	"plain":                      {100, 100, [2]float64{100, 100}, [2]float64{100, 100}, [2]float64{100, 100}, 100, 100, 100},
	"zstd:3:2MiB":                {67.4, 51.2, [2]float64{40, 40}, [2]float64{62, 62}, [2]float64{76, 79}, 96, 60, 64},
	"zstd-c:3:2MiB":              {67.4, 51.2, [2]float64{40, 40}, [2]float64{62, 62}, [2]float64{76, 79}, 96, 60, 64},
	"snappy-stream:4KiB:fast":    {76.6, 65.0, [2]float64{42, 42}, [2]float64{64, 64}, [2]float64{94, 94}, 96, 82, 98},
	"snappy-stream:64KiB:fast":   {72.8, 63.1, [2]float64{42, 42}, [2]float64{63, 63}, [2]float64{93, 93}, 96, 62, 93},
	"snappy-stream:64KiB:better": {72.8, 63.1, [2]float64{42, 42}, [2]float64{63, 63}, [2]float64{93, 93}, 96, 62, 93},
	"snappy-stream:1MiB:fast":    {71.1, 54.3, [2]float64{42, 43}, [2]float64{64, 64}, [2]float64{85, 88}, 96, 64, 68},
}

func compare(r *Result) map[string]Comparison {
	p, ok := published[r.Config]
	if !ok || (r.View != "default" && r.View != "all-subnets") {
		return nil
	}
	out := map[string]Comparison{}
	add := func(key string, low, high, measured float64, reason string) {
		if low == 0 {
			return
		}
		c := Comparison{Low: low, High: high, Reason: reason}
		if reason == "" {
			var d float64
			switch {
			case measured < low:
				d = measured - low
			case measured > high:
				d = measured - high
			}
			d = math.Round(d*10) / 10
			c.Diff = &d
		}
		out[key] = c
	}
	total, control := p.allTotal, p.control
	if r.View == "default" {
		total, control = p.defaultTotal, p.controlDefault
	}
	// A category the trace never had is not measured: no difference against it. A total
	// whose traffic lacks one of the proposal's categories is another mix: no difference.
	notMeasured := func(c gossip.Category) string {
		if r.PlainBytes[c] > 0 {
			return ""
		}
		return "not measured: the trace has no " + c.String() + " frames"
	}
	add("total", total, total, r.RelativeTotal, TotalNotComparable(r))
	add(gossip.Attestation.String(), p.att[0], p.att[1], r.Relative[gossip.Attestation], notMeasured(gossip.Attestation))
	add(gossip.Aggregate.String(), p.agg[0], p.agg[1], r.Relative[gossip.Aggregate], notMeasured(gossip.Aggregate))
	add(gossip.Block.String(), p.block[0], p.block[1], r.Relative[gossip.Block], notMeasured(gossip.Block))
	add(gossip.DataColumn.String(), p.column, p.column, r.Relative[gossip.DataColumn], notMeasured(gossip.DataColumn))
	add(gossip.Control.String(), control, control, r.Relative[gossip.Control], notMeasured(gossip.Control))
	return out
}

// TotalNotComparable says why a result's total is not the peer of the proposal's total for
// its view ("" when it is): its traffic lacks a category the proposal's total includes (a
// workload trace has no control, 35 % of the proposal's all-subnets bytes). Read from the
// result's bytes, so that a sweep written before its JSON carried the reason is judged alike.
func TotalNotComparable(r *Result) string {
	if r.Config == "plain" {
		return "" // 100 % of itself on any traffic
	}
	var lacking []string
	for _, c := range gossip.Categories() {
		if proposalTraffic[r.View][c] > 0 && r.PlainBytes[c] == 0 {
			lacking = append(lacking, c.String())
		}
	}
	if len(lacking) == 0 {
		return ""
	}
	return "not comparable: the trace has no " + strings.Join(lacking, ", ") + " frames, which the proposal's total includes"
}

// atProposalMix weights r's per-category figures with the proposal's traffic and control
// figure (Result.AtProposalMix).
func atProposalMix(r *Result) float64 {
	p, ok := published[r.Config]
	mix, ok2 := proposalTraffic[r.View]
	if !ok || !ok2 {
		return 0
	}
	control := p.control
	if r.View == "default" {
		control = p.controlDefault
	}
	if control == 0 {
		return 0
	}
	var sum, weight float64
	for c, mib := range mix {
		if mib == 0 {
			continue
		}
		rel := r.Relative[c]
		if gossip.Category(c) == gossip.Control {
			rel = control
		} else if r.PlainBytes[c] == 0 {
			return 0 // a category the proposal has and this traffic lacks
		}
		sum += mib * rel
		weight += mib
	}
	return math.Round(sum/weight*10) / 10
}

// proposalTraffic is the proposal's inbound MiB per hour (docs/inputs.md §1), default node
// then all subnets, per category (0: not published).
var proposalTraffic = map[string][gossip.NumCategories]float64{
	"default":     {gossip.Attestation: 107, gossip.Aggregate: 138, gossip.Block: 154, gossip.DataColumn: 109, gossip.SyncCommittee: 7.5, gossip.Control: 92},
	"all-subnets": {gossip.Attestation: 3188, gossip.Aggregate: 138, gossip.Block: 154, gossip.DataColumn: 109, gossip.SyncCommittee: 45, gossip.Control: 1946},
}

// reportCategories are the categories a report shows: every category with plain bytes in
// some view, in report order.
func (rep *Report) reportCategories() []gossip.Category {
	var out []gossip.Category
	for _, c := range gossip.Categories() {
		for _, v := range rep.Views {
			if v.Bytes[c] > 0 {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// WriteJSON writes the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("sweep json: %w", err)
	}
	return nil
}

// WriteCSV writes one row per view, payload and configuration.
func (rep *Report) WriteCSV(w io.Writer) error {
	cats := rep.reportCategories()
	cw := csv.NewWriter(w)
	head := []string{"view", "payload", "config", "layout", "streams", "frames", "input_bytes", "plain_bytes", "wire_bytes",
		"relative_total", "proposal_total", "diff_total", "at_proposal_mix"}
	for _, c := range cats {
		head = append(head, "relative_"+c.String(), "proposal_"+c.String(), "diff_"+c.String())
	}
	head = append(head, "encode_ns_per_byte", "encode_mb_per_s", "decode_ns_per_byte", "decode_mb_per_s",
		"encode_thread_cpu_ns_per_byte", "decode_thread_cpu_ns_per_byte", "meter_thread_cpu_ns_per_byte",
		"encoder_state_bytes", "decoder_state_bytes", "dict_bytes", "verified",
		"relative_inbound", "relative_outbound", "live_streams", "peers", "nodes", "max_streams_per_peer",
		"mean_peer_encoder_bytes", "mean_peer_decoder_bytes", "max_peer_bytes", "mean_node_encoder_bytes", "mean_node_decoder_bytes", "peak_node_bytes",
		"mean_node_history_bytes")
	if err := cw.Write(head); err != nil {
		return fmt.Errorf("sweep csv: %w", err)
	}
	f := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	cmp := func(r *Result, key string) (string, string) {
		c, ok := r.Proposal[key]
		if !ok {
			return "", ""
		}
		if c.Diff == nil {
			return strings.ReplaceAll(c.published(), "–", "-"), ""
		}
		return strings.ReplaceAll(c.published(), "–", "-"), f(*c.Diff, 1)
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		pt, dt := cmp(r, "total")
		row := []string{r.View, r.Payload, r.Config, r.Layout, strconv.Itoa(r.Streams), strconv.FormatInt(r.Frames, 10),
			strconv.FormatInt(r.InputBytes, 10), strconv.FormatInt(r.PlainTotal, 10), f(r.Total, 0),
			f(r.RelativeTotal, 2), pt, dt, ""}
		if r.AtProposalMix != 0 {
			row[len(row)-1] = f(r.AtProposalMix, 1)
		}
		for _, c := range cats {
			p, d := cmp(r, c.String())
			rel := ""
			if r.PlainBytes[c] > 0 {
				rel = f(r.Relative[c], 2)
			}
			row = append(row, rel, p, d)
		}
		row = append(row, f(r.EncodeNsPerB, 3), f(r.EncodeMBPerSec, 1), f(r.DecodeNsPerB, 3), f(r.DecodeMBPerSec, 1),
			f(r.EncodeCPUNsPerB, 3), f(r.DecodeCPUNsPerB, 3), f(r.MeterCPUNsPerB, 4),
			strconv.FormatInt(r.EncoderStateBytes, 10), strconv.FormatInt(r.DecoderStateBytes, 10),
			strconv.Itoa(r.DictBytes), strconv.FormatBool(r.Verified))
		m := r.Memory
		row = append(row, f(r.DirRelativeTotal[0], 2), f(r.DirRelativeTotal[1], 2), strconv.Itoa(m.Streams), strconv.Itoa(m.Peers),
			strconv.Itoa(m.Nodes), strconv.Itoa(m.MaxStreamsPerPeer), f(m.MeanPeerEncoderBytes, 0), f(m.MeanPeerDecoderBytes, 0),
			strconv.FormatInt(m.MaxPeerBytes, 10), f(m.MeanNodeEncoderBytes, 0), f(m.MeanNodeDecoderBytes, 0), strconv.FormatInt(m.PeakNodeBytes, 10),
			f(m.MeanNodeHistoryBytes, 0))
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("sweep csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("sweep csv: %w", err)
	}
	return nil
}

// WriteMarkdown writes, per view, the traffic it replays and the results table in the shape
// of the proposal's: a row per configuration, relative bytes per category and in total, each
// with the proposal's figure and the difference in parentheses, then codec CPU and memory.
func (rep *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	cats := rep.reportCategories()
	fmt.Fprintf(&b, "Sweep of %d trace(s): ", len(rep.Traces))
	for i, t := range rep.Traces {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "`%s` (%s, %d streams, %d frames, %.1f MiB, %.0f s)", t.Path, traceLabel(t), t.Streams, t.Frames,
			float64(t.Bytes)/(1<<20), t.Duration.Seconds())
	}
	if rep.Direction != "" {
		fmt.Fprintf(&b, ". Only %s stream directions", map[string]string{"in": "inbound", "out": "outbound"}[rep.Direction])
	}
	fmt.Fprintf(&b, ". The first %.0f %% of each trace's time trains dictionaries only; every configuration is measured on the rest, "+
		"streams starting empty. Build: %s, %d workers, %.1f s.", 100*rep.TrainSplit, rep.Build, rep.Workers, rep.Elapsed.Seconds())
	if rep.Memory != nil {
		fmt.Fprintf(&b, " Within a %s.", rep.Memory)
	}
	b.WriteString("\n\n")
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "**Note:** %s.\n\n", n)
	}
	for _, v := range rep.Views {
		fmt.Fprintf(&b, "### View `%s`: %d stream direction(s), %d frames, %.1f MiB today\n\n", v.View, v.Streams, v.Frames, float64(v.Total)/(1<<20))
		if v.Skipped.Frames > 0 {
			fmt.Fprintf(&b, "Left out (cannot be read, or laid out as topic streams): %d frames, %.2f MiB today; none of the figures below includes them.\n\n",
				v.Skipped.Frames, float64(v.Skipped.Bytes)/(1<<20))
		}
		pt, hasPT := proposalTraffic[v.View]
		b.WriteString("| category | messages | MiB today | MiB raw SSZ | MiB/h | share |")
		if hasPT {
			b.WriteString(" proposal MiB/h | proposal share |")
		}
		b.WriteString("\n|---|---:|---:|---:|---:|---:|")
		if hasPT {
			b.WriteString("---:|---:|")
		}
		b.WriteString("\n")
		var ptTotal float64
		for _, x := range pt {
			ptTotal += x
		}
		for _, c := range cats {
			fmt.Fprintf(&b, "| %s | %d | %.2f | %.2f | %.0f | %.1f %% |", c, v.Messages[c], float64(v.Bytes[c])/(1<<20),
				float64(v.SSZBytes[c])/(1<<20), v.PerHour[c], 100*float64(v.Bytes[c])/float64(v.Total))
			if hasPT {
				if pt[c] > 0 {
					fmt.Fprintf(&b, " %s | %.1f %% |", trimFloat(pt[c]), 100*pt[c]/ptTotal)
				} else {
					b.WriteString(" | |")
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
		writeRecurrence(&b, v.IHave)
		hasCmp := false
		for i := range rep.Results {
			hasCmp = hasCmp || (rep.Results[i].View == v.View && len(rep.Results[i].Proposal) > 0)
		}
		if hasCmp {
			b.WriteString("Relative bytes, % of today's; in parentheses the proposal's figure and the difference in points " +
				"(0 inside a published range).\n\n")
		} else {
			b.WriteString("Relative bytes, % of today's (the proposal published no figures for this view).\n\n")
		}
		layouts := rep.hasLayouts()
		b.WriteString("| configuration | payload | total |")
		if layouts {
			b.WriteString(" layout |")
		}
		for _, c := range cats {
			fmt.Fprintf(&b, " %s |", c)
		}
		b.WriteString(" encode ns/B | encode MB/s | decode ns/B | decode MB/s | thread CPU ns/B enc / dec | state per direction (enc + dec) |\n|---|---|---:|")
		if layouts {
			b.WriteString("---|")
		}
		for range cats {
			b.WriteString("---:|")
		}
		b.WriteString("---:|---:|---:|---:|---:|---:|\n")
		for i := range rep.Results {
			r := &rep.Results[i]
			if r.View != v.View {
				continue
			}
			payload := payloadLabel(r.Payload)
			fmt.Fprintf(&b, "| %s | %s | %s |", r.Config, payload, cell(r.RelativeTotal, r.Proposal, "total", r.PlainTotal > 0))
			if layouts {
				fmt.Fprintf(&b, " %s |", r.Layout)
			}
			for _, c := range cats {
				fmt.Fprintf(&b, " %s |", cell(r.Relative[c], r.Proposal, c.String(), r.PlainBytes[c] > 0))
			}
			if r.Config == "none" {
				b.WriteString(" – | – | – | – | – | 0 |\n")
				continue
			}
			state := kib(r.EncoderStateBytes) + " + " + kib(r.DecoderStateBytes)
			if r.EncoderStateBytes+r.DecoderStateBytes == 0 {
				state = "0"
			}
			if r.DictBytes > 0 {
				state += fmt.Sprintf(" (incl. %s dictionary each)", kib(int64(r.DictBytes)))
			}
			fmt.Fprintf(&b, " %.2f | %.0f | %.2f | %.0f | %.2f / %.2f | %s |\n", r.EncodeNsPerB, r.EncodeMBPerSec, r.DecodeNsPerB, r.DecodeMBPerSec,
				r.EncodeCPUNsPerB, r.DecodeCPUNsPerB, state)
		}
		meter := 0.0
		for i := range rep.Results {
			if rep.Results[i].View == v.View {
				meter = max(meter, rep.Results[i].MeterCPUNsPerB)
			}
		}
		fmt.Fprintf(&b, "\nns/B and MB/s: wall clock of the loops that only encode or decode; thread CPU: the codecs' own, "+
			"less the meter's thread-clock reads (at most %.4f ns/B here, meter_thread_cpu_ns_per_byte).\n\n", meter)
		mixTable(&b, rep, v.View)
		if layouts {
			layoutTables(&b, rep, v, cats)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("sweep markdown: %w", err)
	}
	return nil
}

// kib formats a byte count in KiB (MiB from 10 MiB), one decimal.
func kib(n int64) string {
	if n >= 10<<20 {
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
}

// mixTable writes, for the configurations the proposal published, the total at the
// proposal's traffic mix next to the measured and the published totals.
func mixTable(b *strings.Builder, rep *Report, view string) {
	first := true
	for i := range rep.Results {
		r := &rep.Results[i]
		if r.View != view || r.AtProposalMix == 0 {
			continue
		}
		if first {
			b.WriteString("Totals at the proposal's traffic mix: this sweep's per-category figures weighted by the proposal's " +
				"MiB/h per category, control at the proposal's control figure (arithmetic on published shares, not a measurement).\n\n" +
				"| configuration | payload | measured total | at the proposal's mix | proposal's total |\n|---|---|---:|---:|---:|\n")
			first = false
		}
		payload := payloadLabel(r.Payload)
		pub := "–"
		if c, ok := r.Proposal["total"]; ok {
			pub = c.published() + " %"
		}
		fmt.Fprintf(b, "| %s | %s | %.1f %% | %.1f %% | %s |\n", r.Config, payload, r.RelativeTotal, r.AtProposalMix, pub)
	}
	if !first {
		b.WriteString("\n")
	}
}

func traceLabel(t TraceInfo) string {
	s := t.Source
	if p := t.Params["profile"]; p != "" {
		s += ", profile " + p
	}
	if n := t.Params["slots"]; n != "" {
		s += ", " + n + " slots"
	}
	return s
}

func cell(v float64, cmp map[string]Comparison, key string, has bool) string {
	if !has {
		return "–"
	}
	s := strconv.FormatFloat(v, 'f', 1, 64) + " %"
	if c, ok := cmp[key]; ok {
		if c.Diff != nil {
			s += fmt.Sprintf(" (%s; %+.1f)", c.published(), *c.Diff)
		} else {
			s += fmt.Sprintf(" (%s; not comparable)", c.published())
		}
	}
	return s
}

// hasLayouts reports whether the report has a layout other than today's.
func (rep *Report) hasLayouts() bool {
	for _, l := range rep.Layouts {
		if l != LayoutOneStream {
			return true
		}
	}
	return false
}

// layoutTables writes, for one view, each configuration under each layout: bytes in total
// and by direction against today's plain bytes on one stream, what the codec adds on top of
// its layout's plain bytes, and the codec state the recording nodes hold.
func layoutTables(b *strings.Builder, rep *Report, v TrafficSummary, cats []gossip.Category) {
	plainOf := map[string]*Result{}
	for i := range rep.Results {
		r := &rep.Results[i]
		if r.View == v.View && r.Config == "plain" {
			plainOf[r.Layout] = r
		}
	}
	fmt.Fprintf(b, "Stream layouts, view `%s`: %% of today's plain bytes on one stream (in %.1f MiB, out %.1f MiB); "+
		"\"on its layout's plain\" is the codec's own gain, the layout's plain bytes being 100 %%; \"control stream only\" is "+
		"topic streams with the codec on the control stream alone (its frames are the control and other categories, each stream having its own codec, so the figure is exact).\n\n",
		v.View, float64(v.DirTotal[0])/(1<<20), float64(v.DirTotal[1])/(1<<20))
	b.WriteString("| configuration | payload | layout | total | inbound | outbound |")
	for _, c := range cats {
		fmt.Fprintf(b, " %s |", c)
	}
	b.WriteString(" on its layout's plain | control stream only |\n|---|---|---|---:|---:|---:|")
	for range cats {
		b.WriteString("---:|")
	}
	b.WriteString("---:|---:|\n")
	pct := func(v float64, has bool) string {
		if !has {
			return "–"
		}
		return strconv.FormatFloat(v, 'f', 1, 64) + " %"
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		if r.View != v.View || r.Config == "none" {
			continue
		}
		payload := payloadLabel(r.Payload)
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |", r.Config, payload, r.Layout, pct(r.RelativeTotal, r.PlainTotal > 0),
			pct(r.DirRelativeTotal[0], r.DirPlainTotal[0] > 0), pct(r.DirRelativeTotal[1], r.DirPlainTotal[1] > 0))
		for _, c := range cats {
			fmt.Fprintf(b, " %s |", pct(r.Relative[c], r.PlainBytes[c] > 0))
		}
		p := plainOf[r.Layout] // nil when the grid has no plain
		if p != nil && p.Total > 0 {
			fmt.Fprintf(b, " %s |", pct(100*r.Total/p.Total, true))
		} else {
			b.WriteString(" – |")
		}
		if r.Layout == LayoutTopicStreams && p != nil && r.PlainTotal > 0 {
			ctl := p.Total
			for _, c := range []gossip.Category{gossip.Control, gossip.Other} {
				ctl += r.Bytes[c] - p.Bytes[c]
			}
			fmt.Fprintf(b, " %s |\n", pct(100*ctl/float64(r.PlainTotal), true))
		} else {
			b.WriteString(" – |\n")
		}
	}
	b.WriteString("\nCodec state as the recording node(s) hold it (the encoder of each stream a node writes, the decoder of each it reads), " +
		"at the end of the trace, and the largest a node's total reaches during the replay (sampled every batch of frames); " +
		"\"history in use\" is, over the same streams, the bytes through each up to its window: the least any implementation keeps:\n\n" +
		"| configuration | payload | layout | streams | peers | most streams with one peer | per peer, encoders + decoders (mean) | largest peer | per node at the end, encoders + decoders | largest a node reaches | history in use per node |\n" +
		"|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i := range rep.Results {
		r := &rep.Results[i]
		if r.View != v.View || r.Config == "none" || r.Config == "plain" {
			continue
		}
		m := r.Memory
		payload := payloadLabel(r.Payload)
		fmt.Fprintf(b, "| %s | %s | %s | %d | %d | %d | %s + %s | %s | %s + %s | %s | %s |\n", r.Config, payload, r.Layout, m.Streams, m.Peers,
			m.MaxStreamsPerPeer, kib(int64(m.MeanPeerEncoderBytes)), kib(int64(m.MeanPeerDecoderBytes)), kib(m.MaxPeerBytes),
			kib(int64(m.MeanNodeEncoderBytes)), kib(int64(m.MeanNodeDecoderBytes)), kib(m.PeakNodeBytes), kib(int64(m.MeanNodeHistoryBytes)))
	}
	b.WriteString("\n")
}

// writeRecurrence writes the line on how IHAVE ids recur on a view's streams, when it has any.
func writeRecurrence(b *strings.Builder, r IHaveRecurrence) {
	if r.Mentions == 0 {
		return
	}
	fmt.Fprintf(b, "IHAVE ids: %d mentions; %.1f %% repeat an id the same stream direction carried before, by distance back (bytes today):",
		r.Mentions, 100*r.RepeatShare(r.Distances[len(r.Distances)-1]))
	for i, d := range r.Distances {
		if i > 0 {
			b.WriteString(",")
		}
		label := strconv.FormatInt(d>>10, 10) + " KiB"
		if d%(1<<20) == 0 {
			label = strconv.FormatInt(d>>20, 10) + " MiB"
		}
		fmt.Fprintf(b, " ≤ %s %.1f %%", label, 100*r.RepeatShare(d))
	}
	b.WriteString(" of mentions (farther back counts as a first mention). Only repeats compress: an id is 20 random bytes.\n\n")
}
