package analysis

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	gosync "sync"
	"text/tabwriter"

	"github.com/streamsim/streamsim/analysis/page"
	"github.com/streamsim/streamsim/result"
)

// Report is a run report of any kind: the table `streamsim run` and `streamsim report`
// print, its JSON form, and its verdict.
type Report interface {
	WriteTable(w io.Writer) error
	WriteJSON(w io.Writer) error
	Outcome() *Verdict
}

// Outcome returns the verdict itself: every report that embeds a Verdict is a Report's
// Outcome.
func (v *Verdict) Outcome() *Verdict { return v }

// Kind is a kind of run report. A scenario names the kind its outputs are read with
// (runner.Scenario.Report); the CLI and `streamsim report` look it up here and never switch on
// a scenario's name. A new report is a file that registers its Kind in init.
type Kind struct {
	Name result.ReportKind
	// Load reads one run's outputs (<group>/<instance>/summary.json below dir).
	Load func(dir string) (Report, error)
	// Compare joins runs of one scenario that differ only in codec, seed or links (an A/B).
	// Nil: such runs are printed one after another.
	Compare func(runs []ABRun, reports []Report) (Report, error)
	// WriteRuns prints several runs of this kind as one table, one row per run (a sweep
	// composition's [[runs]]). Nil: each run's table is printed.
	WriteRuns func(w io.Writer, labels []string, reports []Report) error
	// Section writes the kind's part of the HTML report (streamsim report --html): runs are
	// this kind's runs in argument order, joined is Compare's report over them (nil when they
	// were not compared). Every figure it shows is taken from a run's Source (its JSON) by
	// path. Nil: the page lists every figure of each run's JSON.
	Section func(s *page.Section, runs []SectionRun, joined *SectionRun) error
}

// SectionRun is one report on the HTML page: its label, the report, and its JSON as the
// page holds it.
type SectionRun struct {
	Label  string
	Report Report
	Src    *page.Source
}

// ABLabeler is a report that says which run of a comparison it is (seed, codec, links), so
// that `streamsim report` can join runs read back from their outputs as `streamsim run`
// joined them.
type ABLabeler interface {
	ABLabel() ABRun
}

// Charter is a report that also draws charts (PNG and SVG into dir), returning the files.
type Charter interface {
	WriteCharts(dir string) ([]string, error)
}

// NodesKind is the report every scenario gets when it names none: one row per node.
const NodesKind result.ReportKind = "nodes"

var kinds = struct {
	gosync.Mutex
	m map[result.ReportKind]Kind
}{m: map[result.ReportKind]Kind{}}

// RegisterKind adds a report kind; a second kind of the same name panics (a programming
// error).
func RegisterKind(k Kind) {
	kinds.Lock()
	defer kinds.Unlock()
	if _, dup := kinds.m[k.Name]; dup {
		panic("analysis: report kind " + string(k.Name) + " registered twice")
	}
	kinds.m[k.Name] = k
}

// KindOf returns a registered kind ("" is NodesKind), or an error listing the registered ones.
func KindOf(name result.ReportKind) (Kind, error) {
	if name == "" {
		name = NodesKind
	}
	kinds.Lock()
	defer kinds.Unlock()
	if k, ok := kinds.m[name]; ok {
		return k, nil
	}
	names := make([]string, 0, len(kinds.m))
	for n := range kinds.m {
		names = append(names, string(n))
	}
	sort.Strings(names)
	return Kind{}, fmt.Errorf("unknown report kind %q (kinds: %s)", name, strings.Join(names, ", "))
}

func init() {
	RegisterKind(Kind{Name: NodesKind, Load: func(dir string) (Report, error) { return LoadNodes(dir) }})
}

// NodesReport is the generic report: each node's traffic, what it received against what was
// published to it, and its failure. A scenario without a report of its own gets this one.
type NodesReport struct {
	Dir      string     `json:"dir"`
	Scenario string     `json:"scenario"`
	Nodes    []NodeLine `json:"nodes"`
	Verdict
}

// NodeLine is one node's row.
type NodeLine struct {
	Group    string `json:"group"`
	Instance int    `json:"instance"`
	Role     string `json:"role"`
	// Wire and raw bytes over all the node's gossip streams, inbound and outbound.
	InWire  int64 `json:"in_wire_bytes"`
	InRaw   int64 `json:"in_raw_bytes"`
	OutWire int64 `json:"out_wire_bytes"`
	OutRaw  int64 `json:"out_raw_bytes"`
	// Received and Expected messages (a receiver's; Expected is -1 when the node checks nothing).
	Received int64  `json:"received"`
	Expected int64  `json:"expected"`
	Failure  string `json:"failure,omitempty"`
}

// LoadNodes reads any run's outputs into the generic report.
func LoadNodes(dir string) (*NodesReport, error) {
	paths, err := result.FindSummaries(dir)
	if err != nil {
		return nil, err
	}
	r := &NodesReport{Dir: dir, Verdict: NewVerdict()}
	for _, p := range paths {
		n, err := result.ReadSummary(p)
		if err != nil {
			return nil, err
		}
		r.Scenario = n.Scenario
		r.TakeBuild(n.Build, n.Optimized)
		line := NodeLine{Group: n.Group, Instance: n.Instance, Role: n.Role, Expected: -1}
		for _, s := range n.Streams {
			if s.Direction == "in" {
				line.InWire += s.WireBytes
				line.InRaw += s.RawBytes
			} else {
				line.OutWire += s.WireBytes
				line.OutRaw += s.RawBytes
			}
		}
		if n.Parity != nil {
			line.Received = n.Parity.Total()
		}
		if n.Expected != nil {
			line.Expected = n.Expected.Total()
			got := n.Parity
			if got == nil {
				got = &result.Parity{}
			}
			if d := got.Diff(n.Expected); d != "" {
				r.Problem("%s/%d received other messages than were published to it: %s", n.Group, n.Instance, d)
			}
		}
		if n.Failure != nil {
			line.Failure = n.Failure.Error()
			r.Problem("%s/%d failed: %s", n.Group, n.Instance, n.Failure.Error())
		}
		r.Nodes = append(r.Nodes, line)
	}
	if len(r.Nodes) == 0 {
		return nil, errors.New("no node summaries")
	}
	r.NoteBuild()
	return r, nil
}

// SetDir labels the report with the run's name (streamsim report: the run's label).
func (r *NodesReport) SetDir(dir string) { r.Dir = dir }

// WriteJSON writes the report as one indented JSON object.
func (r *NodesReport) WriteJSON(w io.Writer) error { return WriteJSON(w, r) }

// WriteTable prints one row per node, then the verdict.
func (r *NodesReport) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "%s: %d nodes\n\n", r.Scenario, len(r.Nodes))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "node\trole\tin wire\tin raw\tout wire\tout raw\treceived\texpected\tfailure\t")
	for _, n := range r.Nodes {
		exp := "-"
		if n.Expected >= 0 {
			exp = fmt.Sprint(n.Expected)
		}
		fmt.Fprintf(tw, "%s/%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t\n", n.Group, n.Instance, n.Role, MB(n.InWire), MB(n.InRaw), MB(n.OutWire), MB(n.OutRaw), n.Received, exp, n.Failure)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return r.WriteFooter(w)
}
