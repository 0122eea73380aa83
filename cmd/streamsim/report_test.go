package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	livecheck "github.com/streamsim/streamsim/scenarios/hubleaves/report"
)

// The fixtures under testdata/testground/ come from real Testground runs on this project's
// machine (scripts/testground.sh, testground v0.6.0, local:exec, exec:go):
//   - hub-leaves-local.tgz: the archive `testground run … --collect` wrote for
//     compositions/hub-leaves-local.toml, unmodified;
//   - sweep/: the six archives of compositions/history-sweep-local.toml, unmodified;
//   - failed-parity/<task>/: the outputs directory of a hub-leaves-local run whose publisher
//     dropped RPCs (the first composition ran mainnet's million validators at 4× real time),
//     so leaves missed attestations; only summary.json and results.out of each instance kept.
// Regenerate them with scripts/testground.sh when the summary schema changes.

const fixtures = "testdata/testground"

func runReportOutput(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := runReport(args, &out)
	return out.String(), err
}

func TestReportArchiveIsTheLiveTable(t *testing.T) {
	archive := filepath.Join(fixtures, "hub-leaves-local.tgz")
	out, err := runReportOutput(t, archive)
	if err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	// Same code as `streamsim run`: analysis.LoadRun + WriteLiveTable on the extracted run.
	dir := t.TempDir()
	tops, err := extractTarGz(archive, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(tops) != 1 {
		t.Fatalf("archive holds %v, want one task directory", tops)
	}
	r, err := livecheck.LoadRun(filepath.Join(dir, tops[0]))
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := r.WriteTable(&want); err != nil {
		t.Fatal(err)
	}
	if out != want.String() {
		t.Errorf("report output differs from WriteLiveTable:\n%s\nwant:\n%s", out, want.String())
	}
	for _, s := range []string{
		"1 publishers, 1 hub, 3 leaves",
		"parity: every leaf received exactly the 288 published messages",
		"build: unoptimized (-gcflags=all=-N -l)",
		"CPU figures come from an unoptimized (-gcflags=all=-N -l) build and are inflated",
		"result: OK",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("report lacks %q:\n%s", s, out)
		}
	}
	if !regexp.MustCompile(`(?m)^\s+plain\s+snappy-stream\s+zstd\s*$`).MatchString(out) {
		t.Errorf("report's columns are not plain, snappy-stream, zstd:\n%s", out)
	}
}

func TestReportJSON(t *testing.T) {
	out, err := runReportOutput(t, "-json", filepath.Join(fixtures, "hub-leaves-local.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	var r livecheck.RunReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not one JSON report: %v\n%s", err, out)
	}
	if !r.OK || !r.Parity.OK || len(r.Leaves) != 3 || r.Dir != "hub-leaves-local" {
		t.Errorf("ok %v, parity %v, %d leaves, dir %q; want true, true, 3, hub-leaves-local", r.OK, r.Parity.OK, len(r.Leaves), r.Dir)
	}
}

func TestReportFailedRunFromOutputsDir(t *testing.T) {
	out, err := runReportOutput(t, filepath.Join(fixtures, "failed-parity", "dc6s9vdqmd2tk6mmjdr0"))
	if err == nil || !strings.Contains(err.Error(), "1 of 1 runs failed") {
		t.Fatalf("error %v, want the run to fail its checks", err)
	}
	var ue usageError
	if errors.As(err, &ue) {
		t.Errorf("a failed run is not a usage error: %v", err)
	}
	for _, s := range []string{"attestation 1305 messages, published 1504", "pubsub drops: 7174", "result: FAIL"} {
		if !strings.Contains(out, s) {
			t.Errorf("report lacks %q:\n%s", s, out)
		}
	}
}

// sweepRows returns the run labels and codecs of the runs table, in order.
func sweepRows(out string) (labels, codecs []string) {
	for _, m := range regexp.MustCompile(`(?m)^\s*(w\d-\S+)\s+(\S+)\s`).FindAllStringSubmatch(out, -1) {
		labels = append(labels, m[1])
		codecs = append(codecs, m[2])
	}
	return labels, codecs
}

func TestReportSweepOneRowPerRun(t *testing.T) {
	archives, err := filepath.Glob(filepath.Join(fixtures, "sweep", "*.tgz"))
	if err != nil || len(archives) != 6 {
		t.Fatalf("sweep fixtures %v, %v; want 6 archives", archives, err)
	}
	wantLabels := "w1-4KiB w2-16KiB w3-64KiB w4-256KiB w5-1MiB w6-zstd"
	wantCodecs := "snappy-stream:4KiB snappy-stream:16KiB snappy-stream snappy-stream:256KiB snappy-stream:1MiB zstd"
	for _, args := range [][]string{archives, {filepath.Join(fixtures, "sweep")}} {
		out, err := runReportOutput(t, args...)
		if err != nil {
			t.Fatalf("report %v: %v\n%s", args, err, out)
		}
		labels, codecs := sweepRows(out)
		if strings.Join(labels, " ") != wantLabels || strings.Join(codecs, " ") != wantCodecs {
			t.Errorf("rows %v %v, want %s / %s:\n%s", labels, codecs, wantLabels, wantCodecs, out)
		}
		if !strings.Contains(out, "hub-leaves: 6 runs") || !strings.Contains(out, "build: unoptimized (-gcflags=all=-N -l)") {
			t.Errorf("runs table header or build line missing:\n%s", out)
		}
		if strings.Count(out, "CPU figures come from an unoptimized") != 1 {
			t.Errorf("the unoptimized-build note should appear once:\n%s", out)
		}
	}
}

func TestReportRejects(t *testing.T) {
	dir := t.TempDir()
	notArchive := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notArchive, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()

	// An archive whose entry climbs out of the extraction directory.
	evil := filepath.Join(dir, "evil.tgz")
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	body := []byte("{}")
	if err := tw.WriteHeader(&tar.Header{Name: "task/../../escaped.json", Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write(body)
	tw.Close()
	gz.Close()
	if err := os.WriteFile(evil, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name  string
		args  []string
		usage bool
		msg   string
	}{
		{"no arguments", nil, true, "no collected archive"},
		{"bad flag", []string{"-bogus"}, true, "bogus"},
		{"not an archive", []string{notArchive}, true, "want a .tgz archive"},
		{"missing", []string{filepath.Join(dir, "missing.tgz")}, false, "no such file"},
		{"empty dir", []string{empty}, false, "no summary.json"},
		{"escaping entry", []string{evil}, false, "leaves the archive's directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := runReportOutput(t, c.args...)
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %v, want one containing %q", err, c.msg)
			}
			var ue usageError
			if errors.As(err, &ue) != c.usage {
				t.Errorf("usage error %v, want %v (%v)", !c.usage, c.usage, err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "escaped.json")); err == nil {
		t.Error("an archive entry was written outside the extraction directory")
	}
}

func TestTrimCommonLabelPrefix(t *testing.T) {
	runs := []reportRun{{label: "history-sweep-local-w1-4KiB"}, {label: "history-sweep-local-w2-16KiB"}, {label: "history-sweep-local-w6-zstd"}}
	trimCommonLabelPrefix(runs)
	if runs[0].label != "w1-4KiB" || runs[1].label != "w2-16KiB" || runs[2].label != "w6-zstd" {
		t.Errorf("labels %v", runs)
	}
	one := []reportRun{{label: "hub-leaves-local"}}
	trimCommonLabelPrefix(one)
	if one[0].label != "hub-leaves-local" {
		t.Errorf("a single run keeps its label, got %q", one[0].label)
	}
}
