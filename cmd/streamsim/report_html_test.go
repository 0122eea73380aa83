package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"html"
	"image"
	"image/png"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/streamsim/streamsim/analysis"
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
	// Answers are the answer's measured figures: where they come from, the runs they were
	// measured in, and whether their cell is flagged (with its row's text).
	Answers []struct {
		Src, Path, Text, Runs, Row string
		Flagged                    bool
	} `json:"answers"`
	Charts []struct {
		ID, Title string
		Ticks     []string
		Labels    []struct {
			Text       string
			X, Y, W, H float64
		}
		Marks []struct {
			Src, Path, Value, Codec, Color string
			// X and Y are a line's point (data-x, data-y), Class the mark's classes.
			X, Y, Class string
			W, H        float64
		}
	} `json:"charts"`
	Sections []struct {
		ID, Title string
		Problems  []string
	} `json:"sections"`
	// Verdicts are the answer's verdict tables: caption and how many measured figures.
	Verdicts []struct {
		Caption string
		Figures int
	} `json:"verdicts"`
	Height float64 `json:"height"`
}

const dumpJS = `(() => {
  const src = {};
  document.querySelectorAll('pre[id^="json-"]').forEach(p => { src[p.id.slice(5)] = p.textContent; });
  const figs = [...document.querySelectorAll('span.fig')].map(e => ({Src: e.dataset.src || '', Path: e.dataset.path || '',
    Text: e.textContent, Scale: e.dataset.scale || '', Decimals: e.dataset.decimals || '', A: e.dataset.diffA || '', B: e.dataset.diffB || ''}));
  const answers = [...document.querySelectorAll('#answer span.fig.answer')].map(e => ({Src: e.dataset.src || '', Path: e.dataset.path || '',
    Text: e.textContent, Runs: e.dataset.runs || '', Row: e.closest('tr').textContent, Flagged: e.closest('td').classList.contains('flagged')}));
  const charts = [...document.querySelectorAll('svg.chart')].map(s => ({ID: s.id, Title: s.querySelector('text.title').textContent,
    Ticks: [...s.querySelectorAll('text.tick')].map(t => t.textContent),
    Labels: [...s.querySelectorAll('text.marklabel')].map(t => { const b = t.getBBox(); return {Text: t.textContent, X: b.x, Y: b.y, W: b.width, H: b.height}; }),
    Marks: [...s.querySelectorAll('.mark')].map(m => { const b = m.getBBox(); return {Src: m.dataset.src || '', Path: m.dataset.path || '', Value: m.dataset.value || '',
      Codec: m.dataset.codec || '', Color: m.getAttribute('fill') || m.getAttribute('stroke') || '', X: m.dataset.x || '', Y: m.dataset.y || '',
      Class: m.getAttribute('class') || '', W: b.width, H: b.height}; })}));
  const sections = [...document.querySelectorAll('section.run')].map(s => ({ID: s.id, Title: s.querySelector('h2').textContent,
    Problems: [...s.querySelectorAll('.problems li')].map(l => l.textContent)}));
  const verdicts = [...document.querySelectorAll('#answer table')].filter(t => t.caption && t.caption.textContent.startsWith('Verdict: ')).map(t => ({
    Caption: t.caption.textContent, Figures: t.querySelectorAll('span.fig.answer').length}));
  return JSON.stringify({src, figs, answers, charts, sections, verdicts, height: document.documentElement.scrollHeight});
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

// browser is one headless Chromium the page checks share.
type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	requests []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	exe := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 2000), chromedp.Flag("disable-dev-shm-usage", true))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	b := &browser{ctx: bctx}
	if err := chromedp.Listen(bctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			b.mu.Lock()
			b.requests = append(b.requests, e.Request.URL)
			b.mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if _, err := chromedp.Call(bctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("chromium: network domain: %v", err)
	}
	return b
}

// render opens a page and reads its DOM.
func (b *browser) render(t *testing.T, path string) pageDump {
	t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate("file://"+path), chromedp.WaitReady(chromedp.CSS("#data"))); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	js, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](dumpJS))
	if err != nil {
		t.Fatalf("chromium: reading the DOM: %v", err)
	}
	var d pageDump
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// writePage writes the page of the given inputs and returns its path.
func writePage(t *testing.T, dir string, inputs []string) string {
	t.Helper()
	out := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := runReport(append([]string{"--html", out}, inputs...), &buf); err != nil && !strings.Contains(err.Error(), "failed their checks") {
		t.Fatalf("report --html: %v", err)
	}
	return out
}

// wantSources are the JSON documents a page of these inputs may hold, canonical: each run's
// `report --json`, each comparison of an argument's runs (its kind's Compare, as `report`
// joins them), and the proposal's published figures.
func wantSources(t *testing.T, inputs []string) map[string]string {
	t.Helper()
	want := map[string]string{}
	for _, in := range inputs {
		var jb bytes.Buffer
		if err := runReport([]string{"--json", in}, &jb); err != nil && !strings.Contains(err.Error(), "failed their checks") {
			t.Fatalf("report --json %s: %v", in, err)
		}
		dec := json.NewDecoder(&jb)
		for dec.More() {
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			want[canonical(t, v)] = "report --json " + in
		}
		if c := comparisonJSON(t, in); c != "" {
			want[canonical(t, decodeJSON(t, c))] = "the comparison of " + in
		}
	}
	pub, _ := json.Marshal(replay.PublishedFigures())
	want[canonical(t, decodeJSON(t, string(pub)))] = "the proposal's figures"
	return want
}

// comparisonJSON is the JSON of the comparison of an argument's runs, "" when they are not
// the runs of an A/B.
func comparisonJSON(t *testing.T, arg string) string {
	t.Helper()
	runs, err := findReportRuns(arg, t.TempDir())
	if err != nil || len(runs) < 2 {
		return ""
	}
	trimCommonLabelPrefix(runs)
	kind, err := reportKindOf(runs[0].dir)
	if err != nil || kind.Compare == nil {
		return ""
	}
	var labels []analysis.ABRun
	var reps []analysis.Report
	for _, r := range runs {
		rep, err := kind.Load(r.dir)
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := rep.(interface{ SetDir(string) }); ok {
			d.SetDir(r.label)
		}
		l, ok := rep.(analysis.ABLabeler)
		if !ok {
			return ""
		}
		labels, reps = append(labels, l.ABLabel()), append(reps, rep)
	}
	cmp, err := kind.Compare(labels, reps)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := cmp.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// answerForbidden are the JSON keys that hold the proposal's figures, or arithmetic on its
// published shares, inside a report's JSON: an answer cell bound below one of them shows a
// figure that was not measured.
var answerForbidden = []string{"proposal", "at_proposal_mix"}

// pageCheck is what the browser test asserts of a rendered page, as a list of failures (so
// that the mutation tests can show that each kind of wrong page fails it).
type pageCheck struct {
	checked int
	fails   []string
}

func (c *pageCheck) fail(format string, args ...any) {
	c.fails = append(c.fails, fmt.Sprintf(format, args...))
}

// check asserts: every source is a run's report --json, a comparison of the page's runs or
// the proposal's figures; every figure is bound to a path its JSON has and shows its value;
// no answer cell is the proposal's figure (or arithmetic on it); every answer cell from a
// run with problems or flags is marked with them, and no other is; every codec has one
// colour on every chart; every chart has data.
func (c *pageCheck) check(d pageDump, want map[string]string) map[string]any {
	trees := map[string]any{}
	var proposal string
	for id, js := range d.Sources {
		dec := json.NewDecoder(strings.NewReader(js))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			c.fail("source %s: %v", id, err)
			continue
		}
		trees[id] = v
		canon, err := canonicalErr(v)
		if err != nil {
			c.fail("source %s: %v", id, err)
			continue
		}
		what, ok := want[canon]
		if !ok {
			c.fail("source %s is neither a run's report --json, a comparison of the page's runs, nor the proposal's figures", id)
		}
		if what == "the proposal's figures" {
			proposal = id
		}
	}

	// Every figure shown equals its JSON value at the shown precision; a figure's path is
	// in its JSON (null there shows "not measured").
	for _, f := range d.Figs {
		if f.A != "" {
			a, aok := c.resolve(trees, f.A)
			b, bok := c.resolve(trees, f.B)
			if aok && bok {
				c.shown(f.Text, a-b, 1, f.Decimals, f.A+" − "+f.B)
			}
			continue
		}
		if f.Src == "" {
			c.fail("figure %q is bound to no JSON", f.Text)
			continue
		}
		v, there := page.Present(trees[f.Src], f.Path)
		if !there {
			c.fail("%s %s: shows %q, and the JSON has no such path", f.Src, f.Path, f.Text)
			continue
		}
		if v == nil {
			if f.Text != page.NotMeasured {
				c.fail("%s %s: the JSON holds null (not measured), the page shows %q", f.Src, f.Path, f.Text)
			}
			continue
		}
		n, ok := number(v)
		if !ok {
			c.fail("%s %s: shows %q, the JSON holds %v", f.Src, f.Path, f.Text, v)
			continue
		}
		scale, _ := strconv.ParseFloat(f.Scale, 64)
		c.shown(f.Text, n, scale, f.Decimals, f.Src+" "+f.Path)
	}

	// The answer holds measured figures only, marked when their runs had problems.
	for _, a := range d.Answers {
		if a.Src == proposal {
			c.fail("answer cell %q is bound to the proposal's figures (%s)", a.Text, a.Path)
		}
		for _, part := range strings.Split(a.Path, ".") {
			if slices.Contains(answerForbidden, part) {
				c.fail("answer cell %q (%s %s) shows the proposal's figure or arithmetic on its shares, not a measurement", a.Text, a.Src, a.Path)
			}
		}
		// A row of a comparison whose category is a total at a published mix (the
		// neighbourhood's "total at recording's mix") is arithmetic on shares too.
		if parts := strings.Split(a.Path, "."); len(parts) > 2 {
			if cat, ok := page.Lookup(trees[a.Src], parts[0]+"."+parts[1]+".category"); ok {
				if name, _ := cat.(string); strings.Contains(name, "mix") {
					c.fail("answer cell %q (%s %s) is the row %q: arithmetic on published shares, not a measurement", a.Text, a.Src, a.Path, name)
				}
			}
		}
		if a.Runs == "" {
			c.fail("answer cell %q (%s %s) names no run", a.Text, a.Src, a.Path)
		}
		var reasons []string
		for _, id := range strings.Split(a.Runs, ",") {
			reasons = append(reasons, runReasons(trees[id])...)
		}
		switch {
		case len(reasons) > 0 && !a.Flagged:
			c.fail("answer cell %q (%s %s) comes from a run with problems (%s) and is not marked", a.Text, a.Src, a.Path, strings.Join(reasons, "; "))
		case len(reasons) == 0 && a.Flagged:
			c.fail("answer cell %q (%s %s) is marked, its runs have no problem", a.Text, a.Src, a.Path)
		}
		for _, r := range reasons {
			if !strings.Contains(a.Row, r) {
				c.fail("answer cell %q (%s %s): its row does not state %q", a.Text, a.Src, a.Path, r)
			}
		}
		if len(reasons) > 0 && strings.Contains(a.Row, "difference") {
			c.fail("answer cell %q (%s %s) from a run with problems states a difference", a.Text, a.Src, a.Path)
		}
	}

	// Every chart has data: marks equal to their JSON, some bar or point above zero with a
	// drawn size, and labelled ticks; each codec one colour on every chart.
	colour := map[string]string{}
	for _, ch := range d.Charts {
		drawn := 0
		inChart := map[string]string{}
		for _, m := range ch.Marks {
			v, _ := strconv.ParseFloat(m.Value, 64)
			if m.Src == "" {
				c.fail("chart %q: a mark bound to no JSON (value %s)", ch.Title, m.Value)
			} else {
				j, ok := page.Lookup(trees[m.Src], m.Path)
				n, isNum := number(j)
				if !ok || !isNum || n != v {
					c.fail("chart %q: mark %s %s = %s, the JSON holds %v", ch.Title, m.Src, m.Path, m.Value, j)
				}
			}
			if v > 0 && (m.W > 0 || m.H > 0) {
				drawn++
			}
			if m.Codec != "" {
				if prev, ok := colour[m.Codec]; ok && prev != m.Color {
					c.fail("codec %s is %s on chart %q and %s on another", m.Codec, m.Color, ch.Title, prev)
				}
				colour[m.Codec] = m.Color
				if other, ok := inChart[m.Color]; ok && other != m.Codec {
					c.fail("chart %q: codecs %s and %s share the colour %s", ch.Title, other, m.Codec, m.Color)
				}
				inChart[m.Color] = m.Codec
			}
		}
		if drawn == 0 {
			c.fail("chart %q (%s) has no drawn data", ch.Title, ch.ID)
		}
		if len(ch.Ticks) < 2 {
			c.fail("chart %q has %d tick labels", ch.Title, len(ch.Ticks))
		}
		for i, a := range ch.Labels {
			for _, b := range ch.Labels[i+1:] {
				if a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H {
					c.fail("chart %q: labels %q and %q overlap", ch.Title, a.Text, b.Text)
				}
			}
		}
		if strings.Contains(ch.Title, "entries") { // a y axis of counts
			for _, tk := range ch.Ticks {
				if strings.Contains(tk, ".") {
					c.fail("chart %q counts, yet has the tick %q", ch.Title, tk)
				}
			}
		}
	}
	return trees
}

// runReasons are the reasons a run's JSON gives to keep its figures out of the answer: its
// flags ("kind: reason") and its problems ("failed: problem"), as the page states them.
func runReasons(tree any) []string {
	src, _ := (&page.Page{}).AddSource("run", mustJSON(tree))
	return src.Reasons()
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func (c *pageCheck) resolve(trees map[string]any, ref string) (float64, bool) {
	src, path, _ := strings.Cut(ref, ":")
	v, ok := page.Lookup(trees[src], path)
	n, isNum := number(v)
	if !ok || !isNum {
		c.fail("difference operand %s is not a number in the JSON", ref)
		return 0, false
	}
	return n, true
}

// shown asserts that text (a number, optionally signed, then a unit) is v/scale rounded to
// decimals.
func (c *pageCheck) shown(text string, v, scale float64, decimals, what string) {
	c.checked++
	fields := strings.Fields(text)
	if len(fields) == 0 {
		c.fail("%s: empty figure", what)
		return
	}
	shown, err := strconv.ParseFloat(strings.TrimPrefix(fields[0], "+"), 64)
	if err != nil {
		c.fail("%s: shows %q, not a number", what, text)
		return
	}
	d, _ := strconv.Atoi(decimals)
	if scale == 0 {
		scale = 1
	}
	if tol := 0.5*math.Pow(10, -float64(d)) + 1e-9; math.Abs(shown-v/scale) > tol {
		c.fail("%s: shows %q, the JSON holds %v (÷%g = %s)", what, text, v, scale, fmt.Sprintf("%.*f", d, v/scale))
	}
}

// The page from the fixed inputs, rendered in headless Chromium: it fetches nothing, every
// source is a run's JSON, a comparison of them or the proposal's, every figure shown equals
// the JSON it came from, the answer holds measured figures only, marked where their runs had
// problems, each codec has one colour, and the screenshot is a real image. The same checks
// must fail on a page with a failed run left unmarked and on each mutation of
// TestReportHTMLCheckCatches. STREAMSIM_REPORT_SCREENSHOT=path keeps the screenshot of the
// page's top (docs/report-example.png is made so: scripts/report-example.sh).
// fullScale is the scale of TestReportHTMLInBrowser's capture of the whole page.
const fullScale = 0.25

func TestReportHTMLInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the browser check in -short mode (it starts Chromium)")
	}
	br := newBrowser(t)
	out := writePage(t, t.TempDir(), htmlInputPaths())
	d := br.render(t, out)
	top, err := chromedp.Run(br.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("chromium: screenshot: %v", err)
	}
	// The whole page, beyond the viewport, at a quarter of its size: a full-size capture of
	// a page ~50 000 px tall costs several seconds of Chromium's CPU for the same check.
	full, err := chromedp.Run(br.ctx, chromedp.ScreenshotScale(chromedp.CSS("html"), fullScale))
	if err != nil {
		t.Fatalf("chromium: full screenshot: %v", err)
	}
	br.mu.Lock()
	for _, r := range br.requests {
		if r != "file://"+out {
			t.Errorf("the page fetched %s (it must open offline)", r)
		}
	}
	br.mu.Unlock()
	for name, img := range map[string][]byte{"top": top, "full": full} {
		cfg, err := png.DecodeConfig(bytes.NewReader(img))
		if err != nil {
			t.Fatalf("%s screenshot: %v", name, err)
		}
		w, h := cfg.Width, cfg.Height
		if name == "full" {
			// The full capture is the whole page scaled: back to page pixels, it is as wide
			// as the window and as tall as the page.
			w, h = int(math.Round(float64(w)/fullScale)), int(math.Round(float64(h)/fullScale))
			if w != 1280 || math.Abs(float64(h)-d.Height) > 2/fullScale {
				t.Errorf("full screenshot is %d×%d at scale %g: it covers %d×%d px of a page %.0f px tall in a 1280 px window", cfg.Width, cfg.Height, fullScale, w, h, d.Height)
			}
		}
		if w < 1000 || h < 1000 {
			t.Errorf("%s screenshot is %d×%d", name, cfg.Width, cfg.Height)
		}
	}
	pageHash := fileHash(t, out)
	if p := os.Getenv("STREAMSIM_REPORT_SCREENSHOT"); p != "" {
		stamped, err := stampPNG(top, pageHash)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, stamped, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// docs/report-example.png (the README's picture of the page) is this page's screenshot:
	// it carries the hash of the page it shows, and the page must still be that page.
	example := filepath.Join("..", "..", "docs", "report-example.png")
	if b, err := os.ReadFile(example); err != nil {
		t.Errorf("%s: %v", example, err)
	} else if got := pngStamp(b); got != pageHash {
		t.Errorf("docs/report-example.png shows another page (its page hash %q, this page's %q): run scripts/report-example.sh", got, pageHash)
	}

	var c pageCheck
	want := wantSources(t, htmlInputPaths())
	trees := c.check(d, want)
	for _, f := range c.fails {
		t.Error(f)
	}
	// 1 live check + 2 mesh runs + 2 neighbourhood runs + 1 sweep + 2 comparisons + the proposal.
	if len(trees) != 9 {
		t.Errorf("%d sources, want 9", len(trees))
	}
	if c.checked < 500 {
		t.Errorf("only %d figures checked: the page lost its tables", c.checked)
	}
	if len(d.Charts) < 15 {
		t.Errorf("%d charts, want at least 15", len(d.Charts))
	}
	codecMarks := map[string]int{}
	for _, ch := range d.Charts {
		for _, m := range ch.Marks {
			if m.Codec != "" {
				codecMarks[m.Codec]++
			}
		}
	}
	if len(codecMarks) < 5 {
		t.Errorf("marks of %d codecs carry their codec (%v), want at least 5: the colour check checks nothing", len(codecMarks), codecMarks)
	}
	// The verdict per configuration and the history-size chart are there, bound to JSON (their
	// figures and marks are checked with the others above).
	if len(d.Verdicts) < 2 {
		t.Errorf("%d verdict tables, want one per measured configuration (at least 2)", len(d.Verdicts))
	}
	for _, v := range d.Verdicts {
		if v.Figures == 0 {
			t.Errorf("verdict %q holds no measured figure", v.Caption)
		}
	}
	history := 0
	for _, ch := range d.Charts {
		if strings.HasPrefix(ch.Title, "History size: ") {
			history++
			if len(ch.Marks) < 4 {
				t.Errorf("history-size chart %q has %d marks", ch.Title, len(ch.Marks))
			}
		}
	}
	if history < 2 {
		t.Errorf("%d history-size charts, want one per view and category of the sweep", history)
	}
	if len(d.Answers) < 10 {
		t.Errorf("%d answer cells, want at least 10 (live check, mesh A/B, neighbourhood A/B, sweep)", len(d.Answers))
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
	t.Logf("%d figures, %d answer cells and %d charts checked against %d JSON sources; page %.0f px tall", c.checked, len(d.Answers), len(d.Charts), len(trees), d.Height)

	checkCDFCharts(t, d)
	checkOfRawCharts(t, d)
	checkSlotCharts(t, d, trees)

	// A page with a failed run: its answer cells are marked, the checks pass; the same page
	// with the mark removed fails them.
	failedDir := t.TempDir()
	broken := brokenLiveCheck(t)
	inputs := []string{broken, filepath.Join("testdata", "html", "sweep")}
	fout := writePage(t, failedDir, inputs)
	fwant := wantSources(t, inputs)
	var fc pageCheck
	fd := br.render(t, fout)
	fc.check(fd, fwant)
	for _, f := range fc.fails {
		t.Errorf("page with a failed run: %s", f)
	}
	marked := 0
	for _, a := range fd.Answers {
		if a.Flagged {
			marked++
		}
	}
	if marked == 0 {
		t.Error("page with a failed run: no answer cell is marked")
	}

	// Each mutation of a correct page must fail the checks.
	for _, m := range htmlMutations {
		t.Run(m.name, func(t *testing.T) {
			src, want := out, want
			if m.failedPage {
				src, want = fout, fwant
			}
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			mutated, ok := m.apply(string(b))
			if !ok {
				t.Fatalf("mutation %s found nothing to change on the page", m.name)
			}
			path := filepath.Join(t.TempDir(), "mutated.html")
			if err := os.WriteFile(path, []byte(mutated), 0o644); err != nil {
				t.Fatal(err)
			}
			var mc pageCheck
			mc.check(br.render(t, path), want)
			caught := false
			for _, f := range mc.fails {
				caught = caught || strings.Contains(f, m.caughtBy)
			}
			if !caught {
				t.Errorf("the checks accept the page with %s (failures: %q)", m.name, mc.fails)
			}
		})
	}
}

// checkCDFCharts: the live check, the mesh and the neighbourhood each have delivery-latency
// CDFs, one curve per codec in the codec's colour; each curve's points are bound to one
// cdf_ms array, run from 0 to 100 % of deliveries, with latency never falling as the share
// rises, and its p50, p90 and p99 marks are bound to the same distribution.
func checkCDFCharts(t *testing.T, d pageDump) {
	t.Helper()
	perSection := map[string]int{}
	for _, ch := range d.Charts {
		if !strings.HasPrefix(ch.Title, "Delivery latency CDF") {
			continue
		}
		section := ch.ID[:strings.LastIndex(ch.ID, "-c")]
		perSection[section]++
		type curve struct {
			codec string
			xs    []float64
			ys    []float64
		}
		curves := map[string]*curve{}
		var order []string
		for _, m := range ch.Marks {
			if !strings.Contains(m.Class, "point") {
				continue
			}
			i := strings.LastIndex(m.Path, ".cdf_ms.")
			if i < 0 {
				t.Errorf("chart %q: point bound to %s, not to a cdf_ms element", ch.Title, m.Path)
				continue
			}
			key := m.Src + ":" + m.Path[:i]
			cu := curves[key]
			if cu == nil {
				cu = &curve{codec: m.Codec}
				curves[key] = cu
				order = append(order, key)
			}
			if m.Codec == "" || m.Codec != cu.codec {
				t.Errorf("chart %q, curve %s: points of codecs %q and %q", ch.Title, key, cu.codec, m.Codec)
			}
			x, _ := strconv.ParseFloat(m.X, 64)
			y, _ := strconv.ParseFloat(m.Y, 64)
			if v, _ := strconv.ParseFloat(m.Value, 64); v != x {
				t.Errorf("chart %q, curve %s: point at x %v shows the value %v", ch.Title, key, x, v)
			}
			cu.xs, cu.ys = append(cu.xs, x), append(cu.ys, y)
		}
		codecs := map[string]bool{}
		for _, key := range order {
			cu := curves[key]
			codecs[cu.codec] = true
			n := len(cu.ys)
			if n < 2 || cu.ys[0] != 0 || cu.ys[n-1] != 100 {
				t.Errorf("chart %q, curve %s: %d points from %v %% to %v %%, want 0 to 100", ch.Title, key, n, cu.ys[0], cu.ys[n-1])
			}
			for i := 1; i < n; i++ {
				if cu.ys[i] <= cu.ys[i-1] || cu.xs[i] < cu.xs[i-1] {
					t.Errorf("chart %q, curve %s: point %d (%v ms, %v %%) after (%v ms, %v %%)", ch.Title, key, i, cu.xs[i], cu.ys[i], cu.xs[i-1], cu.ys[i-1])
					break
				}
			}
			marks := 0
			for _, m := range ch.Marks {
				if strings.Contains(m.Class, "ref") && m.Src+":"+m.Path[:max(0, strings.LastIndex(m.Path, "."))] == key {
					marks++
				}
			}
			if marks != 3 {
				t.Errorf("chart %q, curve %s: %d percentile marks bound to its distribution, want p50, p90, p99", ch.Title, key, marks)
			}
		}
		if len(codecs) != len(order) || len(codecs) < 2 {
			t.Errorf("chart %q: %d curves of %d codecs, want one curve per codec and at least two", ch.Title, len(order), len(codecs))
		}
	}
	for _, s := range d.Sections {
		if s.ID == "answer" || strings.HasPrefix(s.Title, "sweep") {
			continue
		}
		if perSection[s.ID] == 0 {
			t.Errorf("section %s has no delivery-latency CDF", s.Title)
		}
	}
}

// checkOfRawCharts: the mesh's A/B and per-run byte charts are relative to each run's own raw
// bytes (bound to wire_of_raw_pct), beside the A/B relative to plain; the neighbourhood's
// likewise (wire_of_raw_pct in its A/B, relative_pct per run).
func checkOfRawCharts(t *testing.T, d pageDump) {
	t.Helper()
	found := map[string]int{}
	for _, ch := range d.Charts {
		if !strings.Contains(ch.Title, "% of the same run's raw bytes") {
			continue
		}
		section := ch.ID[:strings.LastIndex(ch.ID, "-c")]
		for _, m := range ch.Marks {
			if !strings.Contains(m.Path, "wire_of_raw_pct") && !strings.HasSuffix(m.Path, ".relative_pct") {
				t.Errorf("chart %q: bar bound to %s, not to a %% of raw bytes", ch.Title, m.Path)
			}
		}
		found[section]++
	}
	for _, s := range d.Sections {
		if strings.HasPrefix(s.Title, "gossip-mesh") || strings.HasPrefix(s.Title, "neighbourhood") {
			// An A/B chart and one per direction (in, out) per section.
			if found[s.ID] < 3 {
				t.Errorf("section %s: %d charts relative to raw bytes, want at least 3 (the A/B, in, out)", s.Title, found[s.ID])
			}
		}
	}
}

// checkSlotCharts: the live check and the mesh have bytes-per-slot charts; every point is
// bound to one interval's wire bytes of a by_slot series, its x is that interval's slot as the
// JSON holds it, and x rises along each line.
func checkSlotCharts(t *testing.T, d pageDump, trees map[string]any) {
	t.Helper()
	perSection := map[string]int{}
	for _, ch := range d.Charts {
		if !strings.Contains(ch.Title, "wire bytes per slot: ") {
			continue
		}
		section := ch.ID[:strings.LastIndex(ch.ID, "-c")]
		perSection[section]++
		last := map[string]float64{}
		points := 0
		for _, m := range ch.Marks {
			if !strings.Contains(m.Class, "point") {
				continue
			}
			points++
			i := strings.Index(m.Path, ".by_slot.")
			if i < 0 || !strings.HasSuffix(m.Path, ".wire_bytes") {
				t.Errorf("chart %q: point bound to %s, not to a by_slot interval's wire bytes", ch.Title, m.Path)
				continue
			}
			rest := m.Path[i+len(".by_slot."):]
			interval := m.Path[:i+len(".by_slot.")] + rest[:strings.Index(rest, ".")]
			dir := strings.Split(rest, ".")[1]
			slot, ok := page.Lookup(trees[m.Src], interval+".slot")
			want, isNum := number(slot)
			x, _ := strconv.ParseFloat(m.X, 64)
			if !ok || !isNum || want != x {
				t.Errorf("chart %q: point %s at x %v, the JSON's slot is %v", ch.Title, m.Path, x, slot)
			}
			line := m.Src + ":" + m.Path[:i] + ":" + dir
			if prev, ok := last[line]; ok && x <= prev {
				t.Errorf("chart %q, line %s: slot %v after %v", ch.Title, line, x, prev)
			}
			last[line] = x
		}
		if points < 2 {
			t.Errorf("chart %q: %d points", ch.Title, points)
		}
	}
	for _, s := range d.Sections {
		if (strings.HasPrefix(s.Title, "live-check") || strings.HasPrefix(s.Title, "gossip-mesh")) && perSection[s.ID] == 0 {
			t.Errorf("section %s has no bytes-per-slot chart", s.Title)
		}
	}
}

// htmlMutations are wrong pages the browser test's checks must reject, each made from a
// correct page by one edit.
var htmlMutations = []struct {
	name       string
	failedPage bool // made from the page with a failed run
	apply      func(string) (string, bool)
	caughtBy   string // a phrase of the failure that must catch it
}{
	{
		name: "the sweep's answer bound to proposal.total.low",
		apply: func(html string) (string, bool) {
			re := regexp.MustCompile(`(<span class="fig answer" data-src="s\d+" data-path="results\.\d+\.)relative_total("[^>]*>)[^<]*(</span>)`)
			loc := re.FindStringSubmatchIndex(html)
			if loc == nil {
				return html, false
			}
			m := re.FindStringSubmatch(html)
			// The text is the proposal's total as the JSON holds it, so that only the
			// answer's own check can catch the binding.
			var sweep replay.Report
			b, err := os.ReadFile(filepath.Join("testdata", "html", "sweep", replay.SweepFile))
			if err != nil || json.Unmarshal(b, &sweep) != nil {
				return html, false
			}
			i, _ := strconv.Atoi(strings.TrimSuffix(m[1][strings.LastIndex(m[1][:len(m[1])-1], ".")+1:], "."))
			low := sweep.Results[i].Proposal["total"].Low
			return html[:loc[0]] + m[1] + "proposal.total.low" + m[2] + fmt.Sprintf("%.1f %%", low) + m[3] + html[loc[1]:], true
		},
		caughtBy: "not a measurement",
	},
	{
		name: "a figure whose JSON path is missing, shown as –",
		apply: func(html string) (string, bool) {
			re := regexp.MustCompile(`(<span class="fig" data-src="s\d+" data-path=")([^"]+)("[^>]*>)[^<]*(</span>)`)
			loc := re.FindStringSubmatchIndex(html)
			if loc == nil {
				return html, false
			}
			m := re.FindStringSubmatch(html)
			return html[:loc[0]] + m[1] + m[2] + "_missing" + m[3] + "–" + m[4] + html[loc[1]:], true
		},
		caughtBy: "no such path",
	},
	{
		name: "a source with a rows key that is no comparison of the runs",
		apply: func(html string) (string, bool) {
			re := regexp.MustCompile(`comparison of [^<]*</summary><pre id="json-s\d+">\{`)
			loc := re.FindStringIndex(html)
			if loc == nil {
				return html, false
			}
			return html[:loc[1]] + "&#34;forged&#34;: 1," + html[loc[1]:], true
		},
		caughtBy: "neither a run's report --json",
	},
	{
		name: "the neighbourhood's answer bound to its total at the recording's mix",
		apply: func(page string) (string, bool) {
			// The neighbourhood comparison's JSON, as the page embeds it.
			pre := regexp.MustCompile(`neighbourhood comparison of [^<]*</summary><pre id="json-(s\d+)">([^<]*)</pre>`).FindStringSubmatch(page)
			if pre == nil {
				return page, false
			}
			var ab struct {
				Rows []struct {
					Codec, Category string
					OfRaw           struct{ Mean float64 } `json:"wire_of_raw_pct"`
				} `json:"rows"`
			}
			if json.Unmarshal([]byte(html.UnescapeString(pre[2])), &ab) != nil {
				return page, false
			}
			total, mix := -1, -1
			for i, r := range ab.Rows {
				switch {
				case r.Category == "total" && total < 0:
					total = i
				case strings.Contains(r.Category, "mix") && mix < 0:
					mix = i
				}
			}
			if total < 0 || mix < 0 {
				return page, false
			}
			re := regexp.MustCompile(`(<span class="fig answer" data-src="` + pre[1] + `" data-path="rows\.)` + strconv.Itoa(total) + `(\.wire_of_raw_pct\.mean"[^>]*>)[^<]*(</span>)`)
			loc := re.FindStringSubmatchIndex(page)
			if loc == nil {
				return page, false
			}
			m := re.FindStringSubmatch(page)
			return page[:loc[0]] + m[1] + strconv.Itoa(mix) + m[2] + fmt.Sprintf("%.1f %%", ab.Rows[mix].OfRaw.Mean) + m[3] + page[loc[1]:], true
		},
		caughtBy: "arithmetic on published shares",
	},
	{
		name: "a codec drawn in another colour on one chart",
		apply: func(html string) (string, bool) {
			re := regexp.MustCompile(`(<rect class="mark bar"[^>]* fill=")(#[0-9a-f]{6})("[^>]* data-codec="snappy-stream:64KiB:fast")`)
			locs := re.FindAllStringSubmatchIndex(html, -1)
			if len(locs) == 0 {
				return html, false
			}
			l := locs[len(locs)-1]
			return html[:l[4]] + "#123456" + html[l[5]:], true
		},
		caughtBy: "codec snappy-stream:64KiB:fast is",
	},
	{
		name:       "a failed run's answer cell left unmarked",
		failedPage: true,
		apply: func(html string) (string, bool) {
			n := strings.Count(html, `<tr class="flagged">`)
			if n == 0 {
				return html, false
			}
			html = strings.ReplaceAll(html, `<tr class="flagged">`, "<tr>")
			return strings.ReplaceAll(html, `<td class="num flagged">`, `<td class="num">`), true
		},
		caughtBy: "is not marked",
	},
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
	s, err := canonicalErr(v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func canonicalErr(v any) (string, error) {
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
	return string(b), err
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

// pageStampKey names the PNG text chunk holding the hash of the page a screenshot shows.
const pageStampKey = "streamsim-page-sha256"

func fileHash(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// stampPNG inserts a tEXt chunk (pageStampKey, hash) after the PNG's header chunk.
func stampPNG(img []byte, hash string) ([]byte, error) {
	const sigLen, ihdrLen = 8, 8 + 13 + 4
	if len(img) < sigLen+ihdrLen || string(img[12:16]) != "IHDR" {
		return nil, fmt.Errorf("not a PNG with a header chunk")
	}
	data := append([]byte(pageStampKey+"\x00"), hash...)
	var chunk bytes.Buffer
	binary.Write(&chunk, binary.BigEndian, uint32(len(data)))
	typed := append([]byte("tEXt"), data...)
	chunk.Write(typed)
	binary.Write(&chunk, binary.BigEndian, crc32.ChecksumIEEE(typed))
	out := append([]byte{}, img[:sigLen+ihdrLen]...)
	out = append(out, chunk.Bytes()...)
	return append(out, img[sigLen+ihdrLen:]...), nil
}

// pngStamp reads the page hash a screenshot carries ("" without one).
func pngStamp(img []byte) string {
	for i := 8; i+8 <= len(img); {
		n := int(binary.BigEndian.Uint32(img[i:]))
		if i+12+n > len(img) {
			return ""
		}
		if string(img[i+4:i+8]) == "tEXt" {
			if k, v, ok := strings.Cut(string(img[i+8:i+8+n]), "\x00"); ok && k == pageStampKey {
				return v
			}
		}
		i += 12 + n
	}
	return ""
}

// The stamp survives a round trip and leaves the image readable.
func TestPNGStamp(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	stamped, err := stampPNG(buf.Bytes(), "abc123")
	if err != nil {
		t.Fatal(err)
	}
	if got := pngStamp(stamped); got != "abc123" {
		t.Errorf("stamp %q, want abc123", got)
	}
	if _, err := png.Decode(bytes.NewReader(stamped)); err != nil {
		t.Errorf("the stamped PNG does not decode: %v", err)
	}
	if got := pngStamp(buf.Bytes()); got != "" {
		t.Errorf("an unstamped PNG reads %q", got)
	}
}
