package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/streamsim/streamsim/analysis/page"
	"github.com/streamsim/streamsim/analysis/replay"
	"github.com/streamsim/streamsim/result"
)

// The HTML report's fixed inputs: small real runs made by testdata/html/make.sh (a live check,
// a mesh A/B, a neighbourhood A/B, a sweep).
var htmlInputs = []string{"live", "mesh-ab", "nb-ab", "sweep"}

func htmlInputPaths() []string {
	var out []string
	for _, in := range htmlInputs {
		out = append(out, filepath.Join("testdata", "html", in))
	}
	return out
}

// brokenLiveCheck copies the live check and makes one leaf's summary carry a failure: a run
// whose report has problems.
func brokenLiveCheck(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "live-failed")
	src := filepath.Join("testdata", "html", "live")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	paths, err := result.FindSummaries(dst)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		s, err := result.ReadSummary(p)
		if err != nil {
			t.Fatal(err)
		}
		if s.Role == result.RoleLeaf && s.Codec == "zstd" {
			s.Failure = &result.Failure{Kind: result.FailRun, Message: "injected by the test: the leaf lost its stream"}
			if err := result.WriteSummary(p, s); err != nil {
				t.Fatal(err)
			}
			return dst
		}
	}
	t.Fatal("no zstd leaf in the live check's testdata")
	return ""
}

// The page is written for every argument that holds a run, names the one that does not with
// what was expected, and puts a failed run's problems before its first chart.
func TestReportHTMLMissingAndFailedRuns(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report.html")
	empty := t.TempDir()
	broken := brokenLiveCheck(t)
	var buf bytes.Buffer
	archive := filepath.Join(fixtures, "hub-leaves-local.tgz") // a Testground collection
	err := runReport([]string{"--html", out, filepath.Join("testdata", "html", "sweep"), empty, broken, archive}, &buf)
	if err == nil {
		t.Fatal("want an error for the empty folder and the failed run")
	}
	for _, want := range []string{empty, "live-failed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	b, rerr := os.ReadFile(out)
	if rerr != nil {
		t.Fatalf("page not written: %v", rerr)
	}
	doc := string(b)
	miss := strings.Index(doc, `<section class="missing">`)
	if miss < 0 || !strings.Contains(doc[miss:], empty) || !strings.Contains(doc[miss:], "sweep.json") {
		t.Errorf("the page does not name %s with what was expected there", empty)
	}
	start := strings.Index(doc, "<h2>live-check: live-failed</h2>")
	if start < 0 {
		t.Fatal("no section for the failed live check")
	}
	sec := doc[start:]
	sec = sec[:strings.Index(sec, "</section>")]
	prob := strings.Index(sec, "injected by the test")
	chart := strings.Index(sec, "<svg")
	if prob < 0 || chart < 0 || prob > chart {
		t.Errorf("the failed run's problem (at %d) must come before its first chart (at %d)", prob, chart)
	}
	if !strings.Contains(doc, `<section id="sec2" class="run failed">`) {
		t.Error("the failed run's section is not marked failed")
	}
	if !strings.Contains(doc, "<h2>sweep: sweep</h2>") {
		t.Error("the sweep's section is missing")
	}
	tg := strings.Index(doc, "<h2>live-check: hub-leaves-local.tgz</h2>")
	if tg < 0 || !strings.Contains(doc[tg:], `data-path="leaves.1.relative_to_plain"`) {
		t.Error("the Testground archive's live check has no section with its figures")
	}
	if strings.Contains(err.Error(), "hub-leaves-local") {
		t.Errorf("the archive's run passed its checks, yet the error names it: %v", err)
	}
}

// pageDump is what the browser test reads from the rendered DOM.
type pageDump struct {
	Sources map[string]string `json:"src"`
	Figs    []struct {
		Src, Path, Text, Scale, Decimals, A, B string
	} `json:"figs"`
	Charts []struct {
		ID, Title string
		Ticks     []string
		Marks     []struct {
			Src, Path, Value string
			W, H             float64
		}
	} `json:"charts"`
	Sections []struct {
		ID, Title string
		Problems  []string
	} `json:"sections"`
	Height float64 `json:"height"`
}

const dumpJS = `(() => {
  const src = {};
  document.querySelectorAll('pre[id^="json-"]').forEach(p => { src[p.id.slice(5)] = p.textContent; });
  const figs = [...document.querySelectorAll('span.fig')].map(e => ({Src: e.dataset.src || '', Path: e.dataset.path || '',
    Text: e.textContent, Scale: e.dataset.scale || '', Decimals: e.dataset.decimals || '', A: e.dataset.diffA || '', B: e.dataset.diffB || ''}));
  const charts = [...document.querySelectorAll('svg.chart')].map(s => ({ID: s.id, Title: s.querySelector('text.title').textContent,
    Ticks: [...s.querySelectorAll('text.tick')].map(t => t.textContent),
    Marks: [...s.querySelectorAll('.mark')].map(m => { const b = m.getBBox(); return {Src: m.dataset.src || '', Path: m.dataset.path || '', Value: m.dataset.value || '', W: b.width, H: b.height}; })}));
  const sections = [...document.querySelectorAll('section.run')].map(s => ({ID: s.id, Title: s.querySelector('h2').textContent,
    Problems: [...s.querySelectorAll('.problems li')].map(l => l.textContent)}));
  return JSON.stringify({src, figs, charts, sections, height: document.documentElement.scrollHeight});
})()`

// chromium finds Debian's headless Chromium (scripts/chromium.sh installs it): the test skips
// without it, except in CI (CI=true), where it must run.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH (CI must run scripts/chromium.sh before go test)")
	}
	t.Skip("skipping the browser check of the HTML report: no chromium on PATH (scripts/chromium.sh installs it)")
	return ""
}

// The page from the fixed inputs, rendered in headless Chromium: it fetches nothing, every
// figure shown equals the JSON it came from (and that JSON is the run's `report --json`),
// every chart has data, and the screenshot is a real image. STREAMSIM_REPORT_SCREENSHOT=path
// keeps the screenshot of the page's top (docs/report-example.png).
func TestReportHTMLInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the browser check in -short mode (it starts Chromium)")
	}
	exe := chromium(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := runReport(append([]string{"--html", out}, htmlInputPaths()...), &buf); err != nil {
		t.Fatalf("report --html: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 2000), chromedp.Flag("disable-dev-shm-usage", true))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	var mu sync.Mutex
	var requests []string
	if err := chromedp.Listen(bctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if _, err := chromedp.Call(bctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("chromium: network domain: %v", err)
	}
	url := "file://" + out
	if err := chromedp.Do(bctx, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("#data"))); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	dumpJSON, err := chromedp.Run(bctx, chromedp.Evaluate[string](dumpJS))
	if err != nil {
		t.Fatalf("chromium: reading the DOM: %v", err)
	}
	top, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("chromium: screenshot: %v", err)
	}
	full, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("chromium: full screenshot: %v", err)
	}
	mu.Lock()
	for _, r := range requests {
		if r != url {
			t.Errorf("the page fetched %s (it must open offline)", r)
		}
	}
	mu.Unlock()
	for name, img := range map[string][]byte{"top": top, "full": full} {
		cfg, err := png.DecodeConfig(bytes.NewReader(img))
		if err != nil {
			t.Fatalf("%s screenshot: %v", name, err)
		}
		if cfg.Width < 1000 || cfg.Height < 1000 {
			t.Errorf("%s screenshot is %d×%d", name, cfg.Width, cfg.Height)
		}
	}
	if p := os.Getenv("STREAMSIM_REPORT_SCREENSHOT"); p != "" {
		if err := os.WriteFile(p, top, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var d pageDump
	if err := json.Unmarshal([]byte(dumpJSON), &d); err != nil {
		t.Fatal(err)
	}

	// The sources on the page are the runs' own JSON: each run's equals `report --json` of
	// it, the proposal's equals the published figures.
	trees := map[string]any{}
	for id, js := range d.Sources {
		trees[id] = decodeJSON(t, js)
	}
	want := map[string]bool{}
	for _, in := range htmlInputPaths() {
		var jb bytes.Buffer
		if err := runReport([]string{"--json", in}, &jb); err != nil {
			t.Fatalf("report --json %s: %v", in, err)
		}
		dec := json.NewDecoder(&jb)
		for dec.More() {
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			want[canonical(t, v)] = true
		}
	}
	pub, _ := json.Marshal(replay.PublishedFigures())
	want[canonical(t, decodeJSON(t, string(pub)))] = true
	matched := 0
	for id, tree := range trees {
		if want[canonical(t, tree)] {
			matched++
			continue
		}
		if _, isAB := page.Lookup(tree, "rows"); !isAB {
			t.Errorf("source %s is neither a run's report --json nor the proposal's figures", id)
		}
	}
	// 1 live check + 2 mesh runs + 2 neighbourhood runs + 1 sweep + the proposal; the two
	// comparisons are joined from the runs on the page.
	if matched != 7 || len(trees) != 9 {
		t.Errorf("%d sources, %d of them a run's report --json or the proposal's; want 9 and 7", len(trees), matched)
	}

	// Every figure shown equals its JSON value at the shown precision.
	checked := 0
	for _, f := range d.Figs {
		if f.A != "" {
			a, b := resolve(t, trees, f.A), resolve(t, trees, f.B)
			checkShown(t, f.Text, a-b, 1, f.Decimals, f.A+" − "+f.B)
			checked++
			continue
		}
		if f.Src == "" {
			t.Errorf("figure %q is bound to no JSON", f.Text)
			continue
		}
		v, ok := page.Lookup(trees[f.Src], f.Path)
		if !ok {
			if f.Text != "–" {
				t.Errorf("%s %s: shows %q, the JSON has nothing there", f.Src, f.Path, f.Text)
			}
			continue
		}
		n, ok := number(v)
		if !ok {
			t.Errorf("%s %s: shows %q, the JSON holds %v", f.Src, f.Path, f.Text, v)
			continue
		}
		scale, _ := strconv.ParseFloat(f.Scale, 64)
		checkShown(t, f.Text, n, scale, f.Decimals, f.Src+" "+f.Path)
		checked++
	}
	if checked < 500 {
		t.Errorf("only %d figures checked: the page lost its tables", checked)
	}

	// Every chart has data: marks equal to their JSON, some bar or point above zero with a
	// drawn size, and labelled ticks.
	if len(d.Charts) < 15 {
		t.Errorf("%d charts, want at least 15", len(d.Charts))
	}
	for _, c := range d.Charts {
		drawn := 0
		for _, m := range c.Marks {
			v, _ := strconv.ParseFloat(m.Value, 64)
			if m.Src == "" {
				t.Errorf("chart %q: a mark bound to no JSON (value %s)", c.Title, m.Value)
			} else {
				j, ok := page.Lookup(trees[m.Src], m.Path)
				n, isNum := number(j)
				if !ok || !isNum || n != v {
					t.Errorf("chart %q: mark %s %s = %s, the JSON holds %v", c.Title, m.Src, m.Path, m.Value, j)
				}
			}
			if v > 0 && (m.W > 0 || m.H > 0) {
				drawn++
			}
		}
		if drawn == 0 {
			t.Errorf("chart %q (%s) has no drawn data", c.Title, c.ID)
		}
		if len(c.Ticks) < 2 {
			t.Errorf("chart %q has %d tick labels", c.Title, len(c.Ticks))
		}
	}

	// The answer first, then one section per argument and kind, none of them failed.
	var titles []string
	for _, s := range d.Sections {
		titles = append(titles, s.Title)
		for _, p := range s.Problems {
			t.Errorf("section %s: problem %s", s.Title, p)
		}
	}
	wantTitles := "The answer: the proposal's results beside streamsim's|live-check: live|gossip-mesh: mesh-ab|neighbourhood: nb-ab|sweep: sweep"
	if got := strings.Join(titles, "|"); got != wantTitles {
		t.Errorf("sections %s, want %s", got, wantTitles)
	}
	t.Logf("%d figures and %d charts checked against %d JSON sources; page %.0f px tall", checked, len(d.Charts), len(trees), d.Height)
}

func decodeJSON(t *testing.T, js string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// canonical is a JSON value in one textual form (numbers as their shortest float).
func canonical(t *testing.T, v any) string {
	t.Helper()
	var norm func(any) any
	norm = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = norm(e)
			}
		case []any:
			for i, e := range x {
				x[i] = norm(e)
			}
		case json.Number:
			f, _ := x.Float64()
			return f
		}
		return v
	}
	b, err := json.Marshal(norm(v))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func resolve(t *testing.T, trees map[string]any, ref string) float64 {
	t.Helper()
	src, path, _ := strings.Cut(ref, ":")
	v, ok := page.Lookup(trees[src], path)
	n, isNum := number(v)
	if !ok || !isNum {
		t.Errorf("difference operand %s is not a number in the JSON", ref)
	}
	return n
}

// checkShown asserts that text (a number, optionally signed, then a unit) is v/scale rounded
// to decimals.
func checkShown(t *testing.T, text string, v, scale float64, decimals, what string) {
	t.Helper()
	fields := strings.Fields(text)
	if len(fields) == 0 {
		t.Errorf("%s: empty figure", what)
		return
	}
	shown, err := strconv.ParseFloat(strings.TrimPrefix(fields[0], "+"), 64)
	if err != nil {
		t.Errorf("%s: shows %q, not a number", what, text)
		return
	}
	d, _ := strconv.Atoi(decimals)
	if scale == 0 {
		scale = 1
	}
	if tol := 0.5*math.Pow(10, -float64(d)) + 1e-9; math.Abs(shown-v/scale) > tol {
		t.Errorf("%s: shows %q, the JSON holds %v (÷%g = %s)", what, text, v, scale, fmt.Sprintf("%.*f", d, v/scale))
	}
}

// A sweep's --out directory is a report kind like a run's outputs: `report` prints its table.
func TestReportReadsSweepOutputs(t *testing.T) {
	var buf bytes.Buffer
	if err := runReport([]string{filepath.Join("testdata", "html", "sweep")}, &buf); err != nil {
		t.Fatalf("report: %v", err)
	}
	for _, want := range []string{"snappy-stream:64KiB:fast", "zstd:3:2MiB", "all-subnets"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the sweep's table lacks %q", want)
		}
	}
	var js bytes.Buffer
	if err := runReport([]string{"--json", filepath.Join("testdata", "html", "sweep")}, &js); err != nil {
		t.Fatal(err)
	}
	var rep replay.Report
	if err := json.Unmarshal(js.Bytes(), &rep); err != nil || len(rep.Results) == 0 || rep.Origin == nil {
		t.Errorf("report --json of a sweep: %v, %d results, origin %v", err, len(rep.Results), rep.Origin)
	}
}

// A run's provenance line comes from its summary (origin, clock and transport), a sweep's
// from the origin in its JSON.
func TestRunMeta(t *testing.T) {
	dir := t.TempDir()
	origin := &result.Origin{Command: "streamsim run --scenario mesh", Commit: "abc123", Host: "box", GoVersion: "go1.26", OS: "linux/amd64", Cores: 8}
	path := filepath.Join(dir, "nodes", "0", result.SummaryFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := result.WriteSummary(path, &result.NodeSummary{Scenario: "mesh", Role: "node", Group: "nodes", Clock: "virtual", Transport: "quic+simnet", Origin: origin}); err != nil {
		t.Fatal(err)
	}
	want := page.RunMeta{Label: "mesh", Dir: dir, Command: origin.Command, Commit: "abc123", Machine: "box, 8 cores, linux/amd64, go1.26", Clock: "virtual (quic+simnet)"}
	if got := runMeta(reportRun{label: "mesh", dir: dir}, nil); got != want {
		t.Errorf("run: %+v, want %+v", got, want)
	}
	js, err := json.Marshal(map[string]any{"origin": origin})
	if err != nil {
		t.Fatal(err)
	}
	src, err := (&page.Page{}).AddSource("sweep", js)
	if err != nil {
		t.Fatal(err)
	}
	sweepDir := t.TempDir()
	want = page.RunMeta{Label: "sweep", Dir: sweepDir, Command: origin.Command, Commit: "abc123", Machine: "box, 8 cores, linux/amd64, go1.26"}
	if got := runMeta(reportRun{label: "sweep", dir: sweepDir}, src); got != want {
		t.Errorf("sweep: %+v, want %+v", got, want)
	}
}
