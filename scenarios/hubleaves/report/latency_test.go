package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
)

// writeLiveRun writes liveRun's summaries under dir, each node on host and, when logs is set,
// with a message log: publisher 0 publishes an attestation at t=0 and a block at t=0 (ids 1
// and 2), publisher 1 an attestation at t=10 ms (id 3); the plain leaf receives them 2, 30
// and 14 ms later, the compressed leaf 4, 50 and 13 ms later.
func writeLiveRun(t *testing.T, dir string, host func(i int) string, logs bool) {
	t.Helper()
	const ms = int64(1e6)
	id := func(b byte) string { return strings.Repeat(string(rune('a'+b)), result.IDBytes) }
	att, blk := "/eth2/00000000/beacon_attestation_1/ssz_snappy", "/eth2/00000000/beacon_block/ssz_snappy"
	type ev struct {
		id        byte
		at        int64
		published bool
		topic     string
	}
	events := map[string][]ev{
		"publishers/0":           {{1, 0, true, att}, {2, 0, true, blk}},
		"publishers/1":           {{3, 10 * ms, true, att}},
		"leaf-0-plain/0":         {{1, 2 * ms, false, ""}, {3, 24 * ms, false, ""}, {2, 30 * ms, false, ""}},
		"leaf-1-snappy-stream/0": {{1, 4 * ms, false, ""}, {3, 23 * ms, false, ""}, {2, 50 * ms, false, ""}},
	}
	for i, n := range liveRun() {
		d := filepath.Join(dir, n.Group, string(rune('0'+n.Instance)))
		n.Process = &result.Process{Host: host(i)}
		if evs, ok := events[n.Group+"/"+string(rune('0'+n.Instance))]; ok && logs {
			l, err := result.CreateMessageLog(filepath.Join(mkdir(t, d), result.MessagesFile))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				l.Add(id(e.id), e.at, e.published, e.topic)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			n.Messages = result.MessagesFile
		}
		if err := result.WriteSummary(filepath.Join(mkdir(t, d), "summary.json"), n); err != nil {
			t.Fatal(err)
		}
	}
}

func mkdir(t *testing.T, d string) string {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestLiveCheckLatency(t *testing.T) {
	dir := t.TempDir()
	writeLiveRun(t, dir, func(int) string { return "vm" }, true)
	r, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.LatencyNote != "" {
		t.Fatalf("latency not measured: %s", r.LatencyNote)
	}
	want := map[string]map[gossip.Category][]float64{
		"plain":         {gossip.Attestation: {2, 14}, gossip.Block: {30}},
		"snappy-stream": {gossip.Attestation: {4, 13}, gossip.Block: {50}},
	}
	for _, l := range r.Leaves {
		for c, ms := range want[l.Codec] {
			d := l.Latency[c]
			if d == nil {
				t.Fatalf("%s: no %s latency", l.Codec, c)
			}
			if d.Deliveries != int64(len(ms)) || d.P50Ms != ms[0] || d.MaxMs != ms[len(ms)-1] {
				t.Errorf("%s %s: %+v, want deliveries %v", l.Codec, c, d, ms)
			}
			// The CDF runs from the least to the greatest latency, sorted, one point every
			// result.CDFStepPct percent.
			if len(d.CDFMs) != 100/result.CDFStepPct+1 || d.CDFMs[0] != ms[0] || d.CDFMs[len(d.CDFMs)-1] != ms[len(ms)-1] || !slices.IsSorted(d.CDFMs) {
				t.Errorf("%s %s: CDF %v", l.Codec, c, d.CDFMs)
			}
		}
	}

	// Nodes on different hosts have different clocks: no latency, and the note says why.
	other := t.TempDir()
	writeLiveRun(t, other, func(i int) string { return []string{"a", "b"}[i%2] }, true)
	if r, err = LoadRun(other); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.LatencyNote, "not one clock") || r.Leaves[0].Latency != nil {
		t.Errorf("two hosts: note %q, latency %v", r.LatencyNote, r.Leaves[0].Latency)
	}
	// A run without message logs: the note says so.
	old := t.TempDir()
	writeLiveRun(t, old, func(int) string { return "vm" }, false)
	if r, err = LoadRun(old); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.LatencyNote, "recorded no message times") || r.Leaves[0].Latency != nil {
		t.Errorf("no logs: note %q", r.LatencyNote)
	}
}
