package main

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/scenarios/hubleaves"

	"github.com/streamsim/streamsim/sim/runner"
)

// docFlagTables reads the flag tables of docs/running.md: the rows (`--name` and its default
// cell) under each "### Flags of …" heading.
func docFlagTables(t *testing.T) map[string]map[string]string {
	t.Helper()
	f, err := os.Open("../../docs/running.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| `--([a-z-]+)` \\|([^|]*)\\|")
	tables := map[string]map[string]string{}
	var cur map[string]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if h, ok := strings.CutPrefix(line, "### Flags of "); ok {
			cur = map[string]string{}
			tables[strings.Trim(h, "` ")] = cur
			continue
		}
		if strings.HasPrefix(line, "#") {
			cur = nil
		}
		if m := row.FindStringSubmatch(line); m != nil && cur != nil {
			cur[m[1]] = strings.Trim(strings.TrimSpace(m[2]), "`")
		}
	}
	return tables
}

// cliFlags is a flag set's flags and their defaults as docs/running.md writes them (a false
// boolean or an empty string: blank).
func cliFlags(fs *flag.FlagSet) map[string]string {
	out := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		d := f.DefValue
		if d == "false" {
			d = ""
		}
		out[f.Name] = d
	})
	return out
}

// docs/running.md's flag tables are the CLI's flags with the CLI's defaults: the common
// table is `streamsim run`'s own and the common parameters' flags, each scenario's table is
// what its Flags define.
func TestDocsFlagTablesAreTheCLI(t *testing.T) {
	tables := docFlagTables(t)
	common := cliFlags(newRunCommand(hubleaves.HubLeaves).fs)
	for _, sc := range runner.Scenarios() {
		if sc.Flags == nil || strings.HasPrefix(sc.Name, "throwaway") {
			continue
		}
		own := flag.NewFlagSet(sc.Name, flag.ContinueOnError)
		sc.Flags(own)
		scFlags := cliFlags(own)
		for name := range scFlags {
			delete(common, name)
		}
		compareFlags(t, "docs/running.md \"Flags of "+sc.Name+"\"", tables[sc.Name], scFlags)
	}
	compareFlags(t, "docs/running.md \"Flags of every scenario\"", tables["every scenario"], common)
}

func compareFlags(t *testing.T, where string, doc, cli map[string]string) {
	t.Helper()
	if doc == nil {
		t.Errorf("%s: no such table", where)
		return
	}
	var names []string
	for n := range cli {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d, ok := doc[n]
		switch {
		case !ok:
			t.Errorf("%s: --%s is a flag but not in the table", where, n)
		case d != cli[n]:
			t.Errorf("%s: --%s default %q, the CLI's is %q", where, n, d, cli[n])
		}
	}
	for n := range doc {
		if _, ok := cli[n]; !ok {
			t.Errorf("%s: --%s is in the table but not a flag", where, n)
		}
	}
}

// Every relative link of README.md and docs/*.md names a file of the repository.
func TestDocsLinksResolve(t *testing.T) {
	pages, _ := filepath.Glob("../../docs/*.md")
	pages = append(pages, "../../README.md")
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", strings.TrimPrefix(p, "../../"), target)
			}
		}
	}
}

// The README is the front door: the two commands first, at most about 200 lines.
func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if n := strings.Count(text, "\n"); n > 210 {
		t.Errorf("README.md has %d lines; keep it near 200 and move tables to docs/", n)
	}
	run, test := strings.Index(text, "go run ./cmd/streamsim"), strings.Index(text, "go test ./...")
	if run < 0 || test < 0 || run > 1200 || test > 1200 {
		t.Errorf("README.md must open with `go run ./cmd/streamsim` and `go test ./...` (at %d and %d)", run, test)
	}
}

// Every figure of the README's headline results has a source in the repository: each block of
// the section (a paragraph opened by a bold title, with its table and commands) links the
// docs pages it summarises, and every measured figure in it (a number with a decimal point, or
// one followed by %, ×, ms, kB/KB, MB/s, MiB or GiB) appears in one of those pages or in a
// measurements log they link. Commands (code blocks and `inline code`) are not figures.
func TestReadmeHeadlineFiguresHaveASource(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "## Headline results")
	if start < 0 {
		t.Fatal("README.md has no \"## Headline results\" section")
	}
	section := text[start+len("## Headline results"):]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	section = regexp.MustCompile("(?s)```.*?```").ReplaceAllString(section, "")
	section = regexp.MustCompile("`[^`]*`").ReplaceAllString(section, "")
	link := regexp.MustCompile(`\]\((docs/[^)#\s]+\.md)(#[^)]*)?\)`)
	num := `(?:\d{1,3}(?: \d{3})+|\d+)(?:\.\d+)?`
	figure := regexp.MustCompile(num + `\s?(?:%|×|ms|kB|KB|MB/s|MiB|GiB)|\d+\.\d+`)
	number := regexp.MustCompile(num)
	blocks := regexp.MustCompile(`(?m)^\*\*`).Split(section, -1)
	checked := 0
	for _, block := range blocks[1:] {
		title := strings.SplitN(block, "**", 2)[0]
		// Link targets and image paths are not figures.
		body := regexp.MustCompile(`\]\([^)]*\)`).ReplaceAllString(block, "]")
		figs := figure.FindAllString(body, -1)
		if len(figs) == 0 {
			continue
		}
		var sources []string
		for _, m := range link.FindAllStringSubmatch(block, -1) {
			sources = append(sources, readSources(t, "../../"+m[1])...)
		}
		if len(sources) == 0 {
			t.Errorf("README headline %q gives figures (%s) but links no docs page holding them", title, strings.Join(figs, ", "))
			continue
		}
		corpus := strings.Join(sources, "\n")
		for _, f := range figs {
			n := strings.ReplaceAll(number.FindString(f), " ", "")
			checked++
			if !containsNumber(corpus, n) {
				t.Errorf("README headline %q: %s appears in none of the pages it links nor their measurements logs", title, f)
			}
		}
	}
	if checked < 40 {
		t.Errorf("only %d headline figures found; the section's parsing is broken", checked)
	}
}

// readSources is a docs page's text and that of every measurements log it links.
func readSources(t *testing.T, page string) []string {
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatalf("README links %s: %v", page, err)
	}
	out := []string{string(b)}
	log := regexp.MustCompile(`\]\(([^)#\s]*measurements/[^)#\s]+\.md)`)
	seen := map[string]bool{}
	for _, m := range log.FindAllStringSubmatch(string(b), -1) {
		p := filepath.Clean(filepath.Join(filepath.Dir(page), m[1]))
		if seen[p] || p == filepath.Clean(page) {
			continue
		}
		seen[p] = true
		if lb, err := os.ReadFile(p); err == nil {
			out = append(out, string(lb))
		}
	}
	return out
}

// containsNumber reports whether n (digits, maybe a decimal point) occurs in text as a whole
// number: not inside a longer one. Thousands written with a space or comma match too.
func containsNumber(text, n string) bool {
	variants := []string{n}
	if i := strings.IndexByte(n, '.'); i < 0 && len(n) > 3 || i > 3 {
		intPart, rest := n, ""
		if i >= 0 {
			intPart, rest = n[:i], n[i:]
		}
		for _, sep := range []string{" ", ",", " "} {
			var sb strings.Builder
			for j, c := range intPart {
				if j > 0 && (len(intPart)-j)%3 == 0 {
					sb.WriteString(sep)
				}
				sb.WriteRune(c)
			}
			variants = append(variants, sb.String()+rest)
		}
	}
	for _, v := range variants {
		re := regexp.MustCompile(`(^|[^\d.])` + regexp.QuoteMeta(v) + `($|[^\d]|\.[^\d])`)
		if re.MatchString(text) {
			return true
		}
	}
	return false
}
