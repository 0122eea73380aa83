package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/bench"
)

func TestBenchJSON(t *testing.T) {
	var out bytes.Buffer
	err := runBench([]string{"--slots", "3", "--rounds", "1", "--round-time", "1ms", "--category-slots", "1",
		"--payloads", "attestation,block", "--impls", "golang-snappy,snappy-stream,zstd", "--json"}, &out, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rep bench.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Matrix.OK() || len(rep.Matrix.Encoders) < 4 || len(rep.Matrix.Decoders) < 4 {
		t.Errorf("matrix %+v", rep.Matrix)
	}
	if len(rep.Results) != 6 {
		t.Fatalf("%d results, want 2 payloads x 3 implementations", len(rep.Results))
	}
	for _, r := range rep.Results {
		if r.EncodeNsPerMsg <= 0 || r.DecodeNsPerMsg <= 0 || r.WireBytes <= 0 || r.Messages <= 0 {
			t.Errorf("result %+v", r)
		}
		// History pays on attestations: snappy-stream sends less than per-message Snappy.
		if r.Payload == "attestation" && r.Impl == "snappy-stream" {
			for _, g := range rep.Results {
				if g.Payload == "attestation" && g.Impl == "golang-snappy" && r.WireBytes >= g.WireBytes {
					t.Errorf("snappy-stream %d bytes, golang/snappy %d", r.WireBytes, g.WireBytes)
				}
			}
		}
	}
	if len(rep.Categories) == 0 {
		t.Error("no per-category table")
	}
}

func TestBenchMarkdownAndErrors(t *testing.T) {
	var out bytes.Buffer
	if err := runBench([]string{"--slots", "3", "--rounds", "1", "--round-time", "1ms", "--category-slots", "0",
		"--payloads", "sync_committee_message", "--impls", "s2-snappy", "--markdown"}, &out, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| encoder \\ decoder |", "**sync_committee_message**", "klauspost/compress"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, out.String())
		}
	}
	for _, args := range [][]string{
		{"--impls", "brotli"}, {"--payloads", "blob"}, {"--rounds", "0"}, {"--markdown", "--json"},
	} {
		var ue usageError
		if err := runBench(args, &out, nil); !errors.As(err, &ue) {
			t.Errorf("%v: error %v, want a usage error", args, err)
		}
	}
}
