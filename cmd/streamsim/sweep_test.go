package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/analysis/replay"
)

// sweepTrace writes a 3-slot all-subnets workload trace with the workload command.
func sweepTrace(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "w.trace")
	if err := runWorkload([]string{"--profile", "all-subnets", "--slots", "3", "--validators", "50000", "--trace", path}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSweepOutputs(t *testing.T) {
	dir := t.TempDir()
	path := sweepTrace(t, dir)
	out := filepath.Join(dir, "out")
	var stdout, progress bytes.Buffer
	err := runSweep([]string{"--codecs", "none,plain,snappy-stream:4KiB,snappy-stream:64KiB,zstd:1:64KiB", "--format", "json",
		"--out", out, path}, &stdout, &bytes.Buffer{}, &progress)
	if err != nil {
		t.Fatal(err)
	}
	var rep replay.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("stdout is not the JSON report: %v", err)
	}
	// 2 views × (none + plain + 3 codecs × 2 payloads).
	if len(rep.Results) != 2*(2+3*2) {
		t.Fatalf("%d results", len(rep.Results))
	}
	if !strings.Contains(progress.String(), "configurations") {
		t.Errorf("no progress line: %q", progress.String())
	}

	// The CSV agrees with the JSON, row for row.
	f, err := os.Open(filepath.Join(out, "sweep.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(rep.Results) {
		t.Fatalf("%d CSV rows for %d results", len(rows), len(rep.Results))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for i, r := range rep.Results {
		row := rows[1+i]
		if row[col["config"]] != r.Config || row[col["view"]] != r.View {
			t.Errorf("row %d is %s/%s, JSON %s/%s", i, row[col["view"]], row[col["config"]], r.View, r.Config)
		}
		v, err := strconv.ParseFloat(row[col["relative_total"]], 64)
		if err != nil || v != round(r.RelativeTotal, 2) {
			t.Errorf("%s/%s: CSV total %q, JSON %v", r.View, r.Config, row[col["relative_total"]], r.RelativeTotal)
		}
		if r.Config == "plain" && row[col["relative_total"]] != "100.00" {
			t.Errorf("plain total %s", row[col["relative_total"]])
		}
		if r.View == "all-subnets" && r.Config == "snappy-stream:64KiB:fast" && row[col["proposal_total"]] != "63.1" {
			t.Errorf("all-subnets 64KiB proposal figure %q, want 63.1", row[col["proposal_total"]])
		}
	}

	md, err := os.ReadFile(filepath.Join(out, "sweep.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### View `all-subnets`", "### View `default`", "| plain | ssz_snappy | 100.0 % (100; +0.0) |", "snappy-stream:64KiB:fast | ssz |"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("sweep.md lacks %q", want)
		}
	}
	var fromFile replay.Report
	js, err := os.ReadFile(filepath.Join(out, "sweep.json"))
	if err != nil || json.Unmarshal(js, &fromFile) != nil || len(fromFile.Results) != len(rep.Results) {
		t.Errorf("sweep.json: %v", err)
	}

	for _, view := range []string{"all-subnets", "default"} {
		for _, name := range []string{"relative-" + view + "-ssz_snappy", "relative-" + view + "-ssz", "cpu-" + view} {
			pf, err := os.Open(filepath.Join(out, name+".png"))
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(pf)
			pf.Close()
			if err != nil {
				t.Errorf("%s.png: %v", name, err)
			} else if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 200 {
				t.Errorf("%s.png is %v", name, b)
			}
			svg, err := os.ReadFile(filepath.Join(out, name+".svg"))
			if err != nil {
				t.Fatal(err)
			}
			var root struct{ XMLName xml.Name }
			if err := xml.Unmarshal(svg, &root); err != nil || root.XMLName.Local != "svg" {
				t.Errorf("%s.svg: root %v, %v", name, root.XMLName, err)
			}
		}
	}
}

func round(v float64, prec int) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', prec, 64), 64)
	return r
}

func TestSweepUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "no trace"},
		{[]string{"--format", "xml", "t"}, "--format"},
		{[]string{"--codecs", "gzip", "t"}, "--codecs"},
		{[]string{"--payload", "raw", "t"}, "--payload"},
		{[]string{"--profile", "validator", "t"}, "--profile"},
		{[]string{"--train-split", "1", "t"}, "--train-split"},
		{[]string{"--direction", "inbound", "t"}, "--direction"},
		{[]string{"--layout", "per-topic", "t"}, "--layout: layout \"per-topic\": allowed one-stream, topic-streams"},
		{[]string{"--train-split", "0", "--codecs", "zstd+dict", "t"}, "--train-split is 0"},
		{[]string{"--memory-budget", "8GB", "t"}, "--memory-budget: size \"8GB\" is not a byte count like 8GiB, 512MiB"},
		{[]string{"--memory-budget", "0", "t"}, "--memory-budget: size \"0\" is not a byte count like 8GiB"},
		{[]string{"--memory-budget", "1.5GiB", "t"}, "--memory-budget"},
	} {
		err := runSweep(tc.args, &bytes.Buffer{}, &bytes.Buffer{}, nil)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error naming %q", tc.args, err, tc.want)
		}
	}
}

// A budget too small for one stream direction is refused before the replay, with the
// estimate and a budget that fits; that budget then runs, and says its plan on stderr.
func TestSweepMemoryBudgetRefused(t *testing.T) {
	dir := t.TempDir()
	path := sweepTrace(t, dir)
	args := []string{"--codecs", "plain,zstd:3:2MiB", "--payload", "ssz_snappy", "--profile", "all-subnets", "--format", "json"}
	var stdout, stderr bytes.Buffer
	err := runSweep(append(args, "--memory-budget", "8MiB", path), &stdout, &stderr, nil)
	re := regexp.MustCompile(`^--memory-budget 8MiB is too small for even one configuration: the smallest pass \(one stream direction of zstd:3:2MiB \(view all-subnets, payload ssz_snappy, layout one-stream\) beside what every pass holds\) needs an estimated ([0-9.]+MiB); --memory-budget ([0-9]+MiB) would fit \(--memory-budget [0-9]+MiB replays every configuration at once, estimated [0-9.]+MiB\)$`)
	m := re.FindStringSubmatch(fmt.Sprint(err))
	if m == nil {
		t.Fatalf("error %v, want the refusal with the estimate and the budget that fits", err)
	}
	if stdout.Len() != 0 {
		t.Errorf("a refused sweep wrote %d bytes of report", stdout.Len())
	}
	stdout.Reset()
	if err := runSweep(append(args, "--memory-budget", m[2], path), &stdout, &stderr, nil); err != nil {
		t.Fatalf("the budget the refusal suggests (%s): %v", m[2], err)
	}
	if !strings.Contains(stderr.String(), "sweep: memory budget "+m[2]+": estimated peak") {
		t.Errorf("stderr %q: no memory plan", stderr.String())
	}
}
