package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Options configure a Run.
type Options struct {
	// Seed and Slots select the workload traffic the payloads come from.
	Seed  int64
	Slots int
	// Rounds timed rounds per figure (the median is reported), each at least RoundTime.
	Rounds    int
	RoundTime time.Duration
	// CategorySlots is the length of the all-subnets trace for the per-category table of
	// snappy-stream's levels; 0 leaves the table out.
	CategorySlots int
	// Impls and Payloads restrict the run by name; empty means all.
	Impls    []string
	Payloads []string
	// Progress, if set, is told before each measurement.
	Progress func(done, total int, what string)
}

// DefaultOptions is a run of about half a minute on an idle core.
func DefaultOptions() Options {
	return Options{Seed: 1, Slots: 8, Rounds: 5, RoundTime: 40 * time.Millisecond, CategorySlots: 2}
}

// Result is one implementation on one payload type. Times are per message.
type Result struct {
	Payload        string  `json:"payload"`
	Impl           string  `json:"impl"`
	Messages       int     `json:"messages"`
	RawBytes       int     `json:"raw_bytes"`
	WireBytes      int     `json:"wire_bytes"`
	SizePct        float64 `json:"size_pct"` // wire as a percentage of raw (result.PercentOf)
	EncodeNsPerMsg float64 `json:"encode_ns_per_msg"`
	DecodeNsPerMsg float64 `json:"decode_ns_per_msg"`
	EncodeMBps     float64 `json:"encode_mb_per_s"` // raw MB (1e6 bytes) per second
	DecodeMBps     float64 `json:"decode_mb_per_s"`
	// State bytes a stream codec holds across messages (encoder, decoder); 0 for the
	// per-message implementations.
	EncoderStateBytes int64 `json:"encoder_state_bytes,omitempty"`
	DecoderStateBytes int64 `json:"decoder_state_bytes,omitempty"`
}

// ImplInfo describes an implementation in a report.
type ImplInfo struct {
	Name   string `json:"name"`
	Label  string `json:"label"`
	Snappy bool   `json:"snappy"`
	Stream bool   `json:"stream"`
}

// Matrix is the cross-compatibility check: Cells[i][j] is "ok" when decoder j decoded
// every message of every payload type that encoder i encoded back to the same bytes,
// else the first error.
type Matrix struct {
	Encoders []string   `json:"encoders"`
	Decoders []string   `json:"decoders"`
	Cells    [][]string `json:"cells"`
}

// OK reports whether every cell is "ok".
func (m *Matrix) OK() bool {
	for _, row := range m.Cells {
		for _, c := range row {
			if c != "ok" {
				return false
			}
		}
	}
	return true
}

// Report is a whole run.
type Report struct {
	Seed     int64      `json:"seed"`
	Slots    int        `json:"slots"`
	Go       string     `json:"go"`
	Arch     string     `json:"arch"`
	CPUs     int        `json:"cpus"`
	Rounds   int        `json:"rounds"`
	Payloads []string   `json:"payloads"`
	Impls    []ImplInfo `json:"impls"`
	Matrix   Matrix     `json:"matrix"`
	Results  []Result   `json:"results"`
	// Categories: snappy-stream's levels per category of an all-subnets trace.
	CategorySlots int           `json:"category_slots,omitempty"`
	Categories    []CategoryRow `json:"categories,omitempty"`
	Notes         []string      `json:"notes,omitempty"`
	Generated     time.Time     `json:"generated"`
}

func selected(names []string, n string) bool { return len(names) == 0 || slices.Contains(names, n) }

// Run builds the payloads, checks the cross-compatibility matrix and times every
// implementation on every payload type.
func Run(o Options) (*Report, error) {
	if o.Rounds < 1 || o.RoundTime <= 0 || o.Slots < 1 {
		return nil, fmt.Errorf("bench options: rounds %d, round time %v and slots %d must be positive", o.Rounds, o.RoundTime, o.Slots)
	}
	impls := Impls()
	for _, n := range o.Impls {
		if !slices.ContainsFunc(impls, func(im Impl) bool { return im.Name == n }) {
			var names []string
			for _, im := range impls {
				names = append(names, im.Name)
			}
			return nil, fmt.Errorf("implementation %q is not in this build (allowed: %s)", n, strings.Join(names, ", "))
		}
	}
	for _, n := range o.Payloads {
		if !slices.Contains(PayloadNames, n) {
			return nil, fmt.Errorf("payload %q unknown (allowed: %s)", n, strings.Join(PayloadNames, ", "))
		}
	}
	payloads, err := Payloads(o.Seed, o.Slots)
	if err != nil {
		return nil, err
	}
	rep := &Report{Seed: o.Seed, Slots: o.Slots, Go: runtime.Version(), Arch: runtime.GOARCH, CPUs: runtime.NumCPU(),
		Rounds: o.Rounds, Generated: time.Now().UTC()}
	if LibsnappyNote != "" {
		rep.Notes = append(rep.Notes, LibsnappyNote)
	}
	for _, im := range impls {
		rep.Impls = append(rep.Impls, ImplInfo{im.Name, im.Label, im.Snappy, im.Stream})
	}
	rep.Matrix = CrossMatrix(impls, SnappyDecoders(), payloads)
	var todo []Impl
	for _, im := range impls {
		if selected(o.Impls, im.Name) {
			todo = append(todo, im)
		}
	}
	var pls []Payload
	for _, p := range payloads {
		if selected(o.Payloads, p.Name) {
			pls = append(pls, p)
			rep.Payloads = append(rep.Payloads, p.Name)
		}
	}
	done, total := 0, len(todo)*len(pls)
	for _, p := range pls {
		for _, im := range todo {
			if o.Progress != nil {
				o.Progress(done, total, p.Name+" × "+im.Name)
			}
			r, err := measure(im, p, o)
			if err != nil {
				return nil, err
			}
			rep.Results = append(rep.Results, r)
			done++
		}
	}
	if o.CategorySlots > 0 {
		if o.Progress != nil {
			o.Progress(done, total, "snappy-stream levels per category")
		}
		if rep.Categories, err = Categories(o.Seed, o.CategorySlots, o.Rounds); err != nil {
			return nil, err
		}
		rep.CategorySlots = o.CategorySlots
	}
	if o.Progress != nil {
		o.Progress(done, total, "")
	}
	return rep, nil
}

// Measure times one implementation on one payload as streamsim bench does, after checking its
// round trip: the median of rounds rounds of at least roundTime each.
func Measure(im Impl, p Payload, rounds int, roundTime time.Duration) (Result, error) {
	return measure(im, p, Options{Rounds: rounds, RoundTime: roundTime})
}

// measure times one implementation on one payload after checking its round trip.
func measure(im Impl, p Payload, o Options) (Result, error) {
	enc := im.Encode(p.Msgs)
	enc.framed = p.Framed
	c := im.new()
	var bad error
	if err := c.decode(enc, func(i int, m []byte) {
		if bad == nil && !bytes.Equal(m, p.Msgs[i]) {
			bad = fmt.Errorf("%s on %s: message %d decodes to different bytes", im.Name, p.Name, i)
		}
	}); err != nil {
		return Result{}, fmt.Errorf("%s on %s: %w", im.Name, p.Name, err)
	}
	if bad != nil {
		return Result{}, bad
	}
	var encNs, decNs float64
	var es, ds int64
	if sc, ok := c.(*specCoder); ok && im.Stream {
		// A stream codec: a long-lived Writer and Reader, the batch's decoding after its
		// encoding, as a node runs a stream (streamPair).
		sp := &streamPair{spec: sc.spec}
		var err error
		if encNs, decNs, err = timePair(sp, p, o); err != nil {
			return Result{}, fmt.Errorf("%s on %s: %w", im.Name, p.Name, err)
		}
		es, ds = sp.encState, sp.decState
	} else {
		encNs = timeOp(func() { c.encode(p.Msgs, nil) }, o)
		var decErr error
		decNs = timeOp(func() {
			if err := c.decode(enc, nil); err != nil && decErr == nil {
				decErr = err
			}
		}, o)
		if decErr != nil {
			return Result{}, fmt.Errorf("%s on %s: %w", im.Name, p.Name, decErr)
		}
		if st, ok := c.(stater); ok {
			es, ds = st.stateBytes()
		}
	}
	n := float64(len(p.Msgs))
	return Result{
		EncoderStateBytes: es, DecoderStateBytes: ds,
		Payload: p.Name, Impl: im.Name, Messages: len(p.Msgs), RawBytes: p.Raw, WireBytes: enc.WireBytes(),
		SizePct:        percentOf(enc.WireBytes(), p.Raw),
		EncodeNsPerMsg: encNs / n, DecodeNsPerMsg: decNs / n,
		EncodeMBps: float64(p.Raw) / encNs * 1e3, DecodeMBps: float64(p.Raw) / decNs * 1e3,
	}, nil
}

// timeOp returns the median time of one op in ns over o.Rounds rounds of at least
// o.RoundTime each, after a warm-up op. The time is the thread's CPU (ThreadCPU, less the
// clock's own ClockCost per round) where there is a thread clock, so that it is the codec's
// own CPU however busy the machine is, the figure streamsim sweep reports too; elsewhere
// the wall clock.
func timeOp(op func(), o Options) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	op()
	one := time.Since(start)
	k := max(1, int(o.RoundTime/max(one, time.Microsecond)))
	per := make([]float64, o.Rounds)
	for r := range per {
		runtime.GC()
		start := time.Now()
		cpu0, ok := ThreadCPU()
		for range k {
			op()
		}
		cpu1, _ := ThreadCPU()
		d := time.Since(start)
		if ok {
			d = cpu1 - cpu0 - ClockCost()
		}
		per[r] = float64(d.Nanoseconds()) / float64(k)
	}
	sort.Float64s(per)
	return per[len(per)/2]
}

// CrossMatrix decodes every Snappy implementation's blocks with every Snappy decoder.
func CrossMatrix(impls []Impl, decs []SnappyDecoder, payloads []Payload) Matrix {
	var m Matrix
	for _, d := range decs {
		m.Decoders = append(m.Decoders, d.Name)
	}
	for _, im := range impls {
		if !im.Snappy {
			continue
		}
		m.Encoders = append(m.Encoders, im.Name)
		row := make([]string, len(decs))
		for j := range row {
			row[j] = "ok"
		}
		for _, p := range payloads {
			enc := im.Encode(p.Msgs)
			for j, d := range decs {
				if row[j] != "ok" {
					continue
				}
				for i, u := range enc.Units {
					got, err := d.Decode(nil, u)
					if err != nil {
						row[j] = fmt.Sprintf("%s message %d: %v", p.Name, i, err)
						break
					}
					if !bytes.Equal(got, p.Msgs[i]) {
						row[j] = fmt.Sprintf("%s message %d: different bytes", p.Name, i)
						break
					}
				}
			}
		}
		m.Cells = append(m.Cells, row)
	}
	return m
}

// JSON writes the report as indented JSON.
func (r *Report) JSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func (r *Report) label(name string) string {
	for _, im := range r.Impls {
		if im.Name == name {
			return im.Label
		}
	}
	return name
}

// Markdown writes the matrix and one table per payload type.
func (r *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Seed %d, %d slots of workload traffic; %s %s, %d CPUs; median of %d rounds. Times per message (thread CPU: the codec's own, however busy the machine); MB/s of uncompressed bytes; size = compressed / uncompressed.\n\n",
		r.Seed, r.Slots, r.Go, r.Arch, r.CPUs, r.Rounds)
	b.WriteString("Cross-compatibility (rows encode, columns decode; every message of every payload type):\n\n")
	b.WriteString("| encoder \\ decoder | " + strings.Join(r.Matrix.Decoders, " | ") + " |\n")
	b.WriteString("|---" + strings.Repeat("|---", len(r.Matrix.Decoders)) + "|\n")
	for i, e := range r.Matrix.Encoders {
		b.WriteString("| " + e + " | " + strings.Join(r.Matrix.Cells[i], " | ") + " |\n")
	}
	for _, p := range r.Payloads {
		var rs []Result
		for _, x := range r.Results {
			if x.Payload == p {
				rs = append(rs, x)
			}
		}
		if len(rs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n**%s** (%d messages, %d bytes on average)\n\n", p, rs[0].Messages, rs[0].RawBytes/rs[0].Messages)
		b.WriteString("| implementation | encode ns/msg | encode MB/s | decode ns/msg | decode MB/s | size | state (enc + dec) |\n|---|--:|--:|--:|--:|--:|--:|\n")
		for _, x := range rs {
			state := "—"
			if x.EncoderStateBytes > 0 {
				state = fmt.Sprintf("%d + %d KiB", x.EncoderStateBytes>>10, x.DecoderStateBytes>>10)
			}
			fmt.Fprintf(&b, "| %s | %.0f | %.0f | %.0f | %.0f | %.1f %% | %s |\n", r.label(x.Impl), x.EncodeNsPerMsg, x.EncodeMBps, x.DecodeNsPerMsg, x.DecodeMBps, x.SizePct, state)
		}
	}
	if len(r.Categories) > 0 {
		fmt.Fprintf(&b, "\n**snappy-stream levels per category** (64 KiB window, %d slots of all-subnets frames; size relative to the frames sent plain; best of %d rounds)\n\n", r.CategorySlots, r.Rounds)
		b.WriteString("| payloads | category | frames | fast size | better size | fast MB/s | better MB/s | better ns/B − fast ns/B |\n|---|---|--:|--:|--:|--:|--:|--:|\n")
		for _, f := range r.Categories {
			if f.Level != "fast" {
				continue
			}
			for _, g := range r.Categories {
				if g.Level == "better" && g.Payload == f.Payload && g.Category == f.Category {
					fmt.Fprintf(&b, "| %s | %s | %d | %.1f %% | %.1f %% | %.0f | %.0f | %+.2f |\n", f.Payload, f.Category, f.Frames,
						f.Relative, g.Relative, f.EncodeMBps, g.EncodeMBps, g.EncodeNsB-f.EncodeNsB)
				}
			}
		}
	}
	for _, n := range r.Notes {
		b.WriteString("\nNote: " + n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Text writes the matrix and the results as aligned columns.
func (r *Report) Text(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "seed %d, %d slots; %s %s, %d CPUs; median of %d rounds\t\n\n", r.Seed, r.Slots, r.Go, r.Arch, r.CPUs, r.Rounds)
	fmt.Fprintf(tw, "encoder \\ decoder\t%s\t\n", strings.Join(r.Matrix.Decoders, "\t"))
	for i, e := range r.Matrix.Encoders {
		fmt.Fprintf(tw, "%s\t%s\t\n", e, strings.Join(r.Matrix.Cells[i], "\t"))
	}
	fmt.Fprintf(tw, "\npayload\timplementation\tmsgs\tenc ns/msg\tenc MB/s\tdec ns/msg\tdec MB/s\tsize\t\n")
	for _, x := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%.0f\t%.0f\t%.0f\t%.1f %%\t\n", x.Payload, x.Impl, x.Messages, x.EncodeNsPerMsg, x.EncodeMBps, x.DecodeNsPerMsg, x.DecodeMBps, x.SizePct)
	}
	if len(r.Categories) > 0 {
		fmt.Fprintf(tw, "\nsnappy-stream 64KiB, %d slots all-subnets\tpayloads\tcategory\tframes\tsize\tenc MB/s\t\n", r.CategorySlots)
		for _, f := range r.Categories {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1f %%\t%.0f\t\n", f.Level, f.Payload, f.Category, f.Frames, f.Relative, f.EncodeMBps)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, im := range r.Impls {
		fmt.Fprintf(w, "%-24s %s\n", im.Name, im.Label)
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
	return nil
}
