// Package page writes streamsim's decision report: one self-contained HTML page (inline CSS
// and SVG, no script, nothing fetched when it opens) made of sections that report kinds fill
// with tables and charts. Every figure on the page is bound to the JSON it came from: a report
// is added as a Source (its --json form, embedded in the page), and tables and charts take
// figures by their path in that JSON, so the page cannot show a number its report does not
// hold, and a browser test can check each one (data-src, data-path on every figure).
package page

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
)

// Page is the whole report.
type Page struct {
	Title string
	// Intro is a paragraph under the title.
	Intro string
	// Answer is the first section (the proposal's table beside the measured rows); nil: none.
	Answer   *Section
	Sections []*Section
	// Missing lists arguments that held no run, each with what was expected there.
	Missing []string
	sources []*Source
}

// Source is one report's JSON, as its kind's WriteJSON printed it.
type Source struct {
	ID    string
	Label string
	raw   []byte
	tree  any
}

// AddSource adds a report's JSON (the bytes its WriteJSON wrote) under a label.
func (p *Page) AddSource(label string, js []byte) (*Source, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("report %s: its JSON: %w", label, err)
	}
	s := &Source{ID: fmt.Sprintf("s%d", len(p.sources)+1), Label: label, raw: js, tree: tree}
	p.sources = append(p.sources, s)
	return s, nil
}

// JSON returns the source's JSON as it was added.
func (s *Source) JSON() []byte { return s.raw }

// Lookup returns the value at a dotted path ("leaves.1.relative_to_plain": object keys and
// array indexes), and whether it is there and not null.
func (s *Source) Lookup(path string) (any, bool) {
	return Lookup(s.tree, path)
}

// Lookup resolves a dotted path in a decoded JSON tree.
func Lookup(tree any, path string) (any, bool) {
	v, _ := Present(tree, path)
	return v, v != nil
}

// Present resolves a dotted path in a decoded JSON tree and says whether the path is there
// at all (a null counts as there: a figure its report says was not measured).
func Present(tree any, path string) (any, bool) {
	v := tree
	if path == "" {
		return v, true
	}
	for _, part := range strings.Split(path, ".") {
		switch t := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = t[part]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(t) {
				return nil, false
			}
			v = t[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// Number is the numeric value at path.
func (s *Source) Number(path string) (float64, bool) {
	v, ok := s.Lookup(path)
	if !ok {
		return 0, false
	}
	return toFloat(v)
}

func toFloat(v any) (float64, bool) {
	switch t := v.(type) {
	case json.Number:
		f, err := t.Float64()
		return f, err == nil
	case float64:
		return t, true
	case bool:
		if t {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// Format is how a figure is shown: its value divided by Scale, with Decimals, then Unit.
type Format struct {
	Unit     string
	Scale    float64
	Decimals int
}

// The formats reports use.
var (
	Pct   = Format{Unit: "%", Scale: 1, Decimals: 1}
	MB    = Format{Unit: "MB", Scale: 1e6, Decimals: 2}
	KiB   = Format{Unit: "KiB", Scale: 1024, Decimals: 1}
	MiB   = Format{Unit: "MiB", Scale: 1 << 20, Decimals: 2}
	MiBh  = Format{Unit: "MiB/h", Scale: 1, Decimals: 1}
	Ms    = Format{Unit: "ms", Scale: 1, Decimals: 0}
	Ms1   = Format{Unit: "ms", Scale: 1, Decimals: 1}
	Count = Format{Scale: 1}
	Ratio = Format{Scale: 1, Decimals: 2}
	Micro = Format{Unit: "µs", Scale: 1, Decimals: 2}
	NsB   = Format{Unit: "ns/B", Scale: 1, Decimals: 2}
	Sec   = Format{Unit: "s", Scale: 1, Decimals: 1}
	Share = Format{Unit: "%", Scale: 0.01, Decimals: 0} // a 0..1 share shown in percent
)

// Figure is one number on the page: where it came from, and how it is shown.
type Figure struct {
	Src   *Source // nil for a constant (an axis position, not a measured figure)
	Path  string
	Value float64
	Found bool
	// Null: the report's JSON holds null at Path, its way of saying "not measured".
	Null   bool
	Format Format
	// A and B make a difference the page states (A − B, same unit): an answer row's
	// measured figure minus the proposal's. Both stay bound to their JSON.
	A, B *Figure
}

// Difference is a − b, shown in the given format (percentage points for two percentages).
func Difference(a, b Figure, f Format) Figure {
	return Figure{Value: a.Value - b.Value, Found: a.Found && b.Found, Format: f, A: &a, B: &b}
}

// Fig takes the figure at path; a missing one shows as "–" (still bound to its path, so the
// test can check the JSON has nothing there).
func (s *Source) Fig(path string, f Format) Figure {
	v, ok := s.Number(path)
	raw, there := Present(s.tree, path)
	return Figure{Src: s, Path: path, Value: v, Found: ok, Null: there && raw == nil, Format: f}
}

// NotMeasured is how a figure its JSON holds as null is shown.
const NotMeasured = "not measured"

// Cell is the figure at path as a table cell, or the text absent where the JSON has no
// such path (a figure its report leaves out: never a dash bound to nothing).
func (s *Source) Cell(path string, f Format, absent string) Cell {
	if _, there := Present(s.tree, path); !there {
		return T(absent)
	}
	return F(s.Fig(path, f))
}

// Const is a number that is not a measured figure (a percentile's rank on a CDF's axis).
func Const(v float64, f Format) Figure { return Figure{Value: v, Found: true, Format: f} }

// Text is the figure as shown.
func (f Figure) Text() string {
	if f.Null {
		return NotMeasured
	}
	if !f.Found {
		return "–"
	}
	s := strconv.FormatFloat(f.Value/f.Format.scale(), 'f', f.Format.Decimals, 64)
	if f.Format.Unit != "" {
		s += " " + f.Format.Unit
	}
	return s
}

func (f Format) scale() float64 {
	if f.Scale == 0 {
		return 1
	}
	return f.Scale
}

// attrs are the data attributes that bind a figure to its JSON.
func (f Figure) attrs() string {
	if f.A != nil && f.B != nil && f.A.Src != nil && f.B.Src != nil {
		return fmt.Sprintf(` data-diff-a="%s:%s" data-diff-b="%s:%s" data-decimals="%d"`, f.A.Src.ID, esc(f.A.Path), f.B.Src.ID, esc(f.B.Path), f.Format.Decimals)
	}
	if f.Src == nil {
		return ""
	}
	return fmt.Sprintf(` data-src="%s" data-path="%s" data-scale="%s" data-decimals="%d"`, f.Src.ID, esc(f.Path),
		strconv.FormatFloat(f.Format.scale(), 'g', -1, 64), f.Format.Decimals)
}

// Section is one part of the page: a run, or several runs of one kind.
type Section struct {
	ID, Title string
	// Runs describe where the figures come from: one line per run (command, commit, machine,
	// clock).
	Runs     []RunMeta
	Problems []string
	Notes    []string
	blocks   []string
	// answer rows a section contributes to the page's first section.
	answers  []AnswerRow
	charts   int
	proposal *Source
}

// SetProposal gives the section the page's source of the proposal's published figures, for
// charts that overlay them.
func (s *Section) SetProposal(src *Source) { s.proposal = src }

// ProposalSource is the page's source of the proposal's figures, nil when it has none.
func (s *Section) ProposalSource() *Source { return s.proposal }

// RunMeta is one run's provenance.
type RunMeta struct {
	Label, Dir, Command, Commit, Machine, Clock string
}

// H3 adds a sub-heading.
func (s *Section) H3(title string) { s.blocks = append(s.blocks, "<h3>"+esc(title)+"</h3>") }

// Para adds a paragraph of text.
func (s *Section) Para(text string) { s.blocks = append(s.blocks, "<p>"+esc(text)+"</p>") }

// Pre adds preformatted text under a caption: a report's own table where its figures have
// no JSON of their own (shown as the terminal prints them, not bound to a path).
func (s *Section) Pre(caption, text string) {
	s.blocks = append(s.blocks, "<figure><figcaption>"+esc(caption)+"</figcaption><pre class=\"table\">"+esc(text)+"</pre></figure>")
}

// List adds a bulleted list of text.
func (s *Section) List(items []string) {
	var b strings.Builder
	b.WriteString("<ul>")
	for _, it := range items {
		b.WriteString("<li>" + esc(it) + "</li>")
	}
	b.WriteString("</ul>")
	s.blocks = append(s.blocks, b.String())
}

// Cell is a table cell: text, or a figure.
type Cell struct {
	Text string
	Fig  *Figure
	// High, when set, is the top of a published range (Fig its bottom).
	High *Figure
	// Paren, when set, follows Fig in parentheses, signed (a difference).
	Paren *Figure
	// Diff shows Fig with its sign (a difference).
	Diff bool
	// Class marks the figure's span (the answer's measured figures are "answer") and Runs
	// names the sources of the runs it came from (data-runs: their flags must mark it).
	Class string
	Runs  []*Source
	// TDClass is the cell's class ("flagged": from a run with problems).
	TDClass string
	// Sub are lines under the figure (the proposal's peer, the reasons a cell is flagged);
	// Prefix is text before the figure, SubClass the line's class.
	Sub      []Cell
	Prefix   string
	SubClass string
	// Details folds the Sub lines under a summary naming how many there are.
	Details bool
}

// writeFig writes a figure as a span bound to its JSON.
func writeFig(b *strings.Builder, f Figure, signed bool) { writeFigClass(b, f, signed, "", nil) }

func writeFigClass(b *strings.Builder, f Figure, signed bool, class string, runs []*Source) {
	text := f.Text()
	if signed && f.Found && f.Value > 0 {
		text = "+" + text
	}
	cls := "fig"
	if class != "" {
		cls += " " + class
	}
	var extra string
	if len(runs) > 0 {
		var ids []string
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
		extra = ` data-runs="` + esc(strings.Join(ids, ",")) + `"`
	}
	fmt.Fprintf(b, `<span class="%s"%s%s>%s</span>`, cls, f.attrs(), extra, esc(text))
}

// writeCell writes a cell's content (not its td).
func writeCell(b *strings.Builder, c Cell) {
	if c.Prefix != "" {
		b.WriteString(esc(c.Prefix) + " ")
	}
	if c.Fig == nil {
		b.WriteString(esc(c.Text))
	} else {
		writeFigClass(b, *c.Fig, c.Diff, c.Class, c.Runs)
		if c.High != nil && c.High.Found && c.High.Value != c.Fig.Value {
			b.WriteString("–")
			writeFig(b, *c.High, c.Diff)
		}
		if c.Paren != nil {
			b.WriteString(" (")
			writeFig(b, *c.Paren, true)
			b.WriteString(")")
		}
		if c.Text != "" {
			b.WriteString(" " + esc(c.Text))
		}
	}
	if c.Details && len(c.Sub) > 0 {
		fmt.Fprintf(b, `<details><summary>%d reason(s)</summary>`, len(c.Sub))
	}
	for _, sub := range c.Sub {
		b.WriteString(`<div class="sub ` + esc(sub.SubClass) + `">`)
		writeCell(b, sub)
		b.WriteString("</div>")
	}
	if c.Details && len(c.Sub) > 0 {
		b.WriteString("</details>")
	}
}

// Row is a table row with a class.
type Row struct {
	Class string
	Cells []Cell
}

// T is a text cell.
func T(s string) Cell { return Cell{Text: s} }

// F is a figure cell.
func F(f Figure) Cell { return Cell{Fig: &f} }

// Table adds a table; rows shorter than the head are padded.
func (s *Section) Table(caption string, head []string, rows [][]Cell) {
	var rs []Row
	for _, r := range rows {
		rs = append(rs, Row{Cells: r})
	}
	s.TableRows(caption, head, rs)
}

// TableRows adds a table whose rows carry a class.
func (s *Section) TableRows(caption string, head []string, rows []Row) {
	var b strings.Builder
	b.WriteString(`<div class="tw"><table>`)
	if caption != "" {
		b.WriteString("<caption>" + esc(caption) + "</caption>")
	}
	b.WriteString("<thead><tr>")
	for _, h := range head {
		b.WriteString("<th>" + esc(h) + "</th>")
	}
	b.WriteString("</tr></thead><tbody>")
	for _, r := range rows {
		if r.Class != "" {
			b.WriteString(`<tr class="` + esc(r.Class) + `">`)
		} else {
			b.WriteString("<tr>")
		}
		for i := range head {
			if i >= len(r.Cells) {
				b.WriteString("<td></td>")
				continue
			}
			c := r.Cells[i]
			var cls []string
			if c.Fig != nil {
				cls = append(cls, "num")
			}
			if c.TDClass != "" {
				cls = append(cls, c.TDClass)
			}
			if len(cls) > 0 {
				b.WriteString(`<td class="` + esc(strings.Join(cls, " ")) + `">`)
			} else {
				b.WriteString("<td>")
			}
			writeCell(&b, c)
			b.WriteString("</td>")
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table></div>")
	s.blocks = append(s.blocks, b.String())
}

// AnswerRow is what a section offers the page's answer: one configuration measured in one
// view, direction and payload mode by one run (or one A/B over seeds), relative to what Of
// names, in total and per category; the page sets each beside the proposal's figure for the
// same payload, view and direction, or beside nothing.
type AnswerRow struct {
	Config    string // the codec configuration, explicit (snappy-stream:64KiB:fast)
	View      string // the receiving node's profile: "all-subnets", "default" (the proposal's views) or another
	Direction string // "in", "out" or "in+out"
	Payload   string // the payloads inside the stream: "ssz_snappy" or "ssz"
	// By names the measurement (its run), Measured says what was measured, in words.
	By, Measured string
	// Of is what 100 % is: OfPlain or OfRaw.
	Of string
	// Seeds is how many seeds (or runs) the figures come from.
	Seeds Cell
	// Cells by "total" or category name.
	Cells map[string]AnswerCell
	// NotComparable says, per "total" or category, why the proposal's figure is not this
	// cell's peer although view, direction and payload match (another traffic mix).
	NotComparable map[string]string
	// Runs are the sources of the runs the figures come from: their flags and problems mark
	// every cell of the row.
	Runs []*Source
	// LiveCheck: the row stands beside the proposal's live check, not its results table.
	LiveCheck bool
	// Facts are what the row's runs measured beyond bytes, for the configuration's verdict:
	// bytes by direction, codec CPU against today's, codec state, latency against plain.
	Facts []Fact
}

// Fact is one measured figure of a configuration's verdict: what it is (in words, one
// definition per kind of fact across scenarios), the figure, and beside it today's figure
// (plain in the same run) or its spread over seeds.
type Fact struct {
	Kind, What string
	Value      Figure
	// Today is plain's figure in the same run (CPU); Low and High the range over seeds.
	Today, Low, High *Figure
	// Seeds, when set, is how many seeds the figure is over, where that is not its row's (a
	// latency difference counts only seeds with a plain run).
	Seeds *Figure
	// Reasons, each "kind: reason" as Source.Reasons gives them, keep the figure out of the
	// verdict though its runs carry no problem (a latency difference whose runs had the
	// machine saturated): it is shown marked with them, not as a measured figure of the verdict.
	Reasons []string
}

// The kinds of verdict fact, in the order a verdict lists them.
const (
	FactBytes   = "bytes on the wire"
	FactCPU     = "codec CPU"
	FactMemory  = "codec memory"
	FactLatency = "p99 delivery latency change"
)

// MemoryPeers are the peer counts a verdict asks a node's codec memory at. A report states
// the memory at n peers as a FactMemory fact whose What starts with PerNodeWhat(n), measured
// over n peers, and the most peers it measured as one whose What starts with "peers" (its
// value the count): the verdict says "not measured" at a count above every run's most.
var MemoryPeers = []int{50, 100, 200}

// PerNodeWhat is the start of the What of a node's codec memory at n peers.
func PerNodeWhat(n int) string { return fmt.Sprintf("per node at %d peers", n) }

// CPULabel is the one label codec CPU has on the page, and CPUDefinition what it is, as
// docs/results-schema.md ("Codec CPU") defines it: the core time of the codec's own work on a
// stream direction's frames, encoding or decoding, its meter's cost taken out, per input
// (uncompressed stream) byte; for plain, today's per-message Snappy of the frames' messages
// (gossip.MessageSnappy). The page reads it from the per-byte codec CPU field each report's
// JSON has (a sweep's thread CPU of its codec loops, encode_thread_cpu_ns_per_byte /
// decode_thread_cpu_ns_per_byte; a live check's codec timer on each end, cpu.hub_encode /
// cpu.decode .ns_per_byte), plain's beside it measured the same way in the same run.
const (
	CPULabel      = "codec CPU, ns/B"
	CPUDefinition = "codec CPU: the core time of the codec's own work on a stream direction's frames, encoding or decoding, per input (uncompressed stream) byte, in ns/B, with the cost of measuring it taken out; for plain, today's per-message Snappy of the frames' messages (encoding each message's SSZ as its publisher did, decoding each message's data as a receiver does before it computes the message id), counted per frame sent like every codec's, so an upper bound of a forwarding node's outbound. A codec in payload mode ssz_snappy carries those Snappy blocks too; its figure is its stream work alone. From the per-byte codec CPU field of each report's JSON (a sweep's thread CPU of its codec loops; a live check's codec timer on each end), beside plain's figure measured the same way in the same run; a run whose JSON holds 0 for plain predates plain's metering, and the page says so rather than show 0"
)

// What an answer row's 100 % is.
const (
	OfPlain = "today's wire bytes (per-message Snappy) of the same traffic"
	OfRaw   = "the same run's raw (decoded) bytes"
)

// AnswerCell is one measured figure of an answer row, with its spread over seeds.
type AnswerCell struct {
	Value     Figure
	Low, High *Figure
}

// Reasons are the reasons a run's figures are kept out of the answer's verdicts, from its
// report's JSON: each flag ("kind: reason"), then each problem no flag names ("failed: ...");
// "failed" alone when the run is not ok without a problem stated.
func (s *Source) Reasons() []string {
	var out []string
	named := map[string]bool{}
	if fl, ok := s.Lookup("flags"); ok {
		if list, ok := fl.([]any); ok {
			for _, f := range list {
				m, _ := f.(map[string]any)
				kind, _ := m["kind"].(string)
				reason, _ := m["reason"].(string)
				named[reason] = true
				out = append(out, kind+": "+reason)
			}
		}
	}
	if pr, ok := s.Lookup("problems"); ok {
		if list, ok := pr.([]any); ok {
			for _, p := range list {
				if t, _ := p.(string); !named[t] {
					out = append(out, "failed: "+t)
				}
			}
		}
	}
	if ok, there := s.Lookup("ok"); there && ok == false && len(out) == 0 {
		out = append(out, "failed: the run failed its checks")
	}
	return out
}

// Answer offers a row to the page's first section.
func (s *Section) Answer(r AnswerRow) { s.answers = append(s.answers, r) }

// Answers returns the rows the page's sections offered.
func (p *Page) Answers() []AnswerRow {
	var out []AnswerRow
	for _, s := range p.Sections {
		out = append(out, s.answers...)
	}
	return out
}

// Write writes the page.
func (p *Page) Write(w io.Writer) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	b.WriteString(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">` + "\n")
	b.WriteString("<title>" + esc(p.Title) + "</title>\n<style>" + css + "</style></head><body>\n")
	b.WriteString("<h1>" + esc(p.Title) + "</h1>\n")
	if p.Intro != "" {
		b.WriteString("<p class=\"intro\">" + esc(p.Intro) + "</p>\n")
	}
	b.WriteString("<nav><ol>")
	all := p.Sections
	if p.Answer != nil {
		all = append([]*Section{p.Answer}, all...)
	}
	for _, s := range all {
		fmt.Fprintf(&b, `<li><a href="#%s">%s</a>%s</li>`, esc(s.ID), esc(s.Title), badge(s))
	}
	b.WriteString("</ol></nav>\n")
	if len(p.Missing) > 0 {
		b.WriteString(`<section class="missing"><h2>Arguments without a run</h2><ul>`)
		for _, m := range p.Missing {
			b.WriteString("<li class=\"problem\">" + esc(m) + "</li>")
		}
		b.WriteString("</ul></section>\n")
	}
	for _, s := range all {
		writeSection(&b, s)
	}
	b.WriteString("<section id=\"data\"><h2>Data</h2><p>Each report's JSON, as <code>streamsim report --json</code> prints it; every figure above names its path in one of these (data-src, data-path).</p>\n")
	for _, src := range p.sources {
		fmt.Fprintf(&b, "<details><summary>%s: %s</summary><pre id=\"json-%s\">%s</pre></details>\n",
			src.ID, esc(src.Label), src.ID, esc(string(src.raw)))
	}
	b.WriteString("</section>\n</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func badge(s *Section) string {
	if len(s.Problems) > 0 {
		return ` <span class="bad">problems</span>`
	}
	return ""
}

func writeSection(b *strings.Builder, s *Section) {
	cls := "run"
	if len(s.Problems) > 0 {
		cls += " failed"
	}
	fmt.Fprintf(b, "<section id=\"%s\" class=\"%s\"><h2>%s</h2>\n", esc(s.ID), cls, esc(s.Title))
	// Problems first: a failed run's charts are never read without them.
	if len(s.Problems) > 0 {
		b.WriteString(`<div class="problems"><strong>This run failed its checks; read every figure below with these problems:</strong><ul>`)
		for _, p := range s.Problems {
			b.WriteString("<li class=\"problem\">" + esc(p) + "</li>")
		}
		b.WriteString("</ul></div>\n")
	}
	if len(s.Runs) > 0 {
		b.WriteString(`<table class="meta"><thead><tr><th>run</th><th>command</th><th>commit</th><th>machine</th><th>clock</th></tr></thead><tbody>`)
		for _, r := range s.Runs {
			fmt.Fprintf(b, "<tr><td>%s</td><td><code>%s</code></td><td><code>%s</code></td><td>%s</td><td>%s</td></tr>",
				esc(r.Label), esc(orNone(r.Command)), esc(orNone(r.Commit)), esc(orNone(r.Machine)), esc(orNone(r.Clock)))
		}
		b.WriteString("</tbody></table>\n")
	}
	if len(s.Notes) > 0 {
		b.WriteString(`<ul class="notes">`)
		for _, n := range s.Notes {
			b.WriteString("<li>note: " + esc(n) + "</li>")
		}
		b.WriteString("</ul>\n")
	}
	for _, blk := range s.blocks {
		b.WriteString(blk)
		b.WriteString("\n")
	}
	b.WriteString("</section>\n")
}

func orNone(s string) string {
	if s == "" {
		return "not recorded"
	}
	return s
}

func esc(s string) string { return html.EscapeString(s) }

func fnum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

const css = `
body{font:15px/1.45 system-ui,-apple-system,"DejaVu Sans",sans-serif;margin:0 auto;max-width:1100px;padding:1em 1.5em;color:#1b1b1b}
h1{font-size:1.6em;margin:.3em 0}h2{border-top:2px solid #444;padding-top:.6em;margin-top:2em}h3{margin:1.4em 0 .4em}
.tw{overflow-x:auto;max-width:100%}table{border-collapse:collapse;margin:.6em 0;font-size:.9em}th,td{border:1px solid #ccc;padding:.2em .5em;vertical-align:top}
th{background:#f2f2f2;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
caption{text-align:left;font-weight:600;padding:.2em 0}
table.meta{font-size:.8em;color:#333}table.meta code{word-break:break-all}
.problems{background:#fde8e8;border:2px solid #c00;padding:.4em .8em;margin:.6em 0}.problem{color:#900}
.notes{background:#fff8e0;border-left:4px solid #d9a400;padding:.4em .4em .4em 1.6em;font-size:.9em}
.flagged{background:#fde8e8}.sub{font-size:.8em;color:#444;white-space:normal}.flagged .sub.reason{color:#900}
.bad{background:#c00;color:#fff;border-radius:3px;padding:0 .3em;font-size:.8em}
section.failed>h2{color:#900}.missing{border:2px dashed #c00;padding:0 1em}
figure{margin:1em 0}figcaption{font-size:.9em;color:#333}svg.chart{max-width:100%;height:auto;background:#fff}
pre{max-height:20em;overflow:auto;background:#f7f7f7;font-size:.75em}nav ol{columns:2}
`
