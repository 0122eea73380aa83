package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/trace"
	"github.com/streamsim/streamsim/workload"
)

func TestWorkloadJSON(t *testing.T) {
	var out bytes.Buffer
	if err := runWorkload([]string{"--profile", "default", "--slots", "2", "--seed", "3", "--json", "--validators", "65536"}, &out); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Profile    string
		Slots      int
		Seed       int64
		Era        string
		Categories map[string]map[string]float64
	}
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Profile != "default" || got.Slots != 2 || got.Seed != 3 || got.Era != workload.DefaultEra || len(got.Categories) != 5 {
		t.Fatalf("%+v", got)
	}
	for _, c := range []gossip.Category{gossip.Attestation, gossip.Aggregate, gossip.Block, gossip.DataColumn, gossip.SyncCommittee} {
		fields := got.Categories[c.String()]
		for _, k := range []string{"messages_per_slot", "mean_ssz_bytes", "mean_snappy_bytes", "mib_per_hour"} {
			if _, ok := fields[k]; !ok || len(fields) != 4 {
				t.Fatalf("category %s: fields %v", c, fields)
			}
		}
	}
	if a := got.Categories["attestation"]; a["mean_ssz_bytes"] != 240 || a["messages_per_slot"] <= 0 {
		t.Fatalf("attestation figures %v", a)
	}
}

func TestWorkloadTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.trace.gz")
	var out bytes.Buffer
	if err := runWorkload([]string{"--profile", "default", "--slots", "1", "--validators", "65536", "--trace", path}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "attestation") || !strings.Contains(out.String(), "wrote ") {
		t.Fatalf("output:\n%s", out.String())
	}
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if h := r.Header(); h.Source != "workload" || h.Params["profile"] != "default" || h.Params["Validators"] != "65536" {
		t.Fatalf("header %+v", h)
	}
	n := 0
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		parts, err := gossip.SplitFrame(f.Data)
		if err != nil || parts.Dominant() != f.Category {
			t.Fatalf("frame %d: %v, category %v", n, err, f.Category)
		}
		n++
	}
	if n == 0 || !strings.Contains(out.String(), "wrote "+itoa(n)+" frames") {
		t.Fatalf("%d frames read; output says %q", n, out.String())
	}
}

func TestWorkloadBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--profile", "validator"}, {"--slots", "0"}, {"--custody", "200"}, {"--fork-digest", "zz"}, {"extra"}, {"--era", "2024-13"}} {
		err := runWorkload(args, io.Discard)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// TestWorkloadEra: a bad era is refused naming the known ones; a known one reaches the
// trace header; --help names every era with its sources.
func TestWorkloadEra(t *testing.T) {
	err := runWorkload([]string{"--era", "2024-13"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "known eras are 2023-09, 2025-06, 2025-12, 2026-02, 2026-05") {
		t.Fatalf("bad era: %v", err)
	}
	path := filepath.Join(t.TempDir(), "w.trace")
	if err := runWorkload([]string{"--era", "2025-12", "--slots", "1", "--validators", "65536", "--blobs-max", "11", "--trace", path}, io.Discard); err != nil {
		t.Fatal(err)
	}
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := r.Header()
	if h.Params["Era"] != "2025-12" || h.Params["MaxBlobsPerBlock"] != "15" || h.Params["BlobsMax"] != "11" || h.Params["Validators"] != "65536" {
		t.Errorf("trace params: era %q, max blobs %q, blobs max %q, validators %q", h.Params["Era"], h.Params["MaxBlobsPerBlock"], h.Params["BlobsMax"], h.Params["Validators"])
	}
	var help bytes.Buffer
	writeEras(&help)
	for _, e := range workload.Eras() {
		if !strings.Contains(help.String(), e.Name+": gas limit") || !strings.Contains(help.String(), e.Source) {
			t.Errorf("--help lacks era %s or its sources:\n%s", e.Name, help.String())
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestWorkloadStats checks --stats: the table names every statistic with value, target and
// verdict, and --json carries the same figures.
func TestWorkloadStats(t *testing.T) {
	var out bytes.Buffer
	if err := runWorkload([]string{"--stats", "--slots", "14", "--validators", "65536", "--seed", "2"}, &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"content statistics over 14 slots", "met (±10 %)", "to seen in an earlier block",
		"calldata words repeated", "raw/Snappy per block (median)", "type-3 transactions", "aggregates propagated per committee",
		"contributions propagated per subcommittee", "zero bytes in transactions: the sample's 41.4 % counts its rollup batches", "block on the wire, p99"} {
		if !strings.Contains(text, want) {
			t.Errorf("--stats output lacks %q:\n%s", want, text)
		}
	}
	out.Reset()
	if err := runWorkload([]string{"--stats", "--json", "--slots", "14", "--validators", "65536", "--seed", "2"}, &out); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Content []struct {
			Category, Statistic, Unit, Source, Conflict string
			Value, Target                               float64
			Within                                      bool
		}
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Content) < 20 {
		t.Fatalf("%d content figures", len(got.Content))
	}
	for _, f := range got.Content {
		if f.Source == "" || f.Category == "" {
			t.Errorf("figure %+v without source or category", f)
		}
		if f.Statistic == "mean transaction" && (f.Value < 500 || f.Target != 1074) {
			t.Errorf("mean transaction %+v", f)
		}
		if f.Statistic == "zero bytes in transactions" && f.Conflict == "" {
			t.Error("zero bytes figure does not name its conflict")
		}
	}
}
