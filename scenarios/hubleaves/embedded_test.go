package hubleaves_test

import (
	"context"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsim/streamsim/scenarios/hubleaves"
	"github.com/streamsim/streamsim/scenarios/hubleaves/report"

	"github.com/streamsim/streamsim/sim/runner"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/result"
	"github.com/streamsim/streamsim/sim/node"
	"github.com/streamsim/streamsim/trace"
)

func runEmbedded(t *testing.T, leaves string, params map[string]string) (*report.RunReport, string) {
	t.Helper()
	specs, err := node.ParseCodecs(leaves)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	params[hubleaves.ParamPublishers] = "2"
	e := &runner.Embedded{Out: dir, Groups: hubleaves.HubLeavesGroups(2, specs), Params: params}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runErr := e.Run(ctx)
	r, err := report.LoadRun(dir)
	if err != nil {
		t.Fatalf("load run: %v (run: %v)", err, runErr)
	}
	if runErr != nil {
		t.Fatalf("run: %v\nproblems: %q\ndrops %v", runErr, r.Problems, r.DropsBy)
	}
	return r, dir
}

// Parity holds for every codec in both payload modes, and a compressed leaf's attestation
// wire bytes are below the plain leaf's.
func TestHubLeavesParity(t *testing.T) {
	t.Parallel() // beside TestCrashedInstanceFailsTheRunNamingIt's wait
	for _, payload := range []string{gossip.PayloadSSZSnappy, gossip.PayloadSSZ} {
		t.Run(payload, func(t *testing.T) {
			record := strconv.FormatBool(payload == gossip.PayloadSSZ)
			r, dir := runEmbedded(t, "plain,snappy-stream,zstd", map[string]string{
				runner.ParamProfile: "default", runner.ParamSlots: "1", runner.ParamTimeScale: "12", runner.ParamPayload: payload, runner.ParamSeed: "7",
				runner.ParamValidators: "32768", runner.ParamRecord: record,
			})
			// Timing depends on the machine's load; parity and drops do not.
			if !r.Parity.OK || r.Drops != 0 || r.Errors != 0 {
				t.Fatalf("run not OK: %v / %v", r.Parity.Message, r.Problems)
			}
			if len(r.Leaves) != 3 || r.Leaves[0].Codec != "plain" {
				t.Fatalf("leaves %+v", r.Leaves)
			}
			plain := r.Leaves[0]
			if plain.Messages[gossip.Attestation] == 0 {
				t.Fatal("no attestations delivered")
			}
			for _, l := range r.Leaves[1:] {
				pa, la := plain.Categories[gossip.Attestation].WireBytes, l.Categories[gossip.Attestation].WireBytes
				if la >= pa || la == 0 {
					t.Errorf("%s: attestation wire bytes %d, plain %d", l.Codec, la, pa)
				}
				if l.CPU.Decode.Blocks == 0 || l.CPU.HubEncode.Blocks == 0 {
					t.Errorf("%s: no codec work metered: %+v", l.Codec, l.CPU)
				}
			}
			// plain's codec CPU is today's per-message Snappy of its messages, on both ends.
			if plain.CPU.Decode.TimeMs <= 0 || plain.CPU.HubEncode.TimeMs <= 0 {
				t.Errorf("plain leaf: no per-message Snappy metered: %+v", plain.CPU)
			}
			if plain.WireBytes != plain.RawBytes {
				t.Errorf("plain leaf: wire %d != raw %d", plain.WireBytes, plain.RawBytes)
			}
			if record == "true" {
				checkRecording(t, dir, r, 1)
			}
			checkHubOutIsLeafIn(t, r)
			t.Logf("payload %s: plain %d B, %s %.1f %%, %s %.1f %%", payload, plain.WireBytes,
				r.Leaves[1].Codec, *r.Leaves[1].RelativeToPlain, r.Leaves[2].Codec, *r.Leaves[2].RelativeToPlain)
		})
	}
}

// checkRecording reads a leaf's frame trace and compares it with the leaf's meters.
func checkRecording(t *testing.T, dir string, r *report.RunReport, leaf int) {
	t.Helper()
	l := r.Leaves[leaf]
	tr, err := trace.Open(filepath.Join(dir, l.Group, "0", runner.TraceFile))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	frames := map[string]int64{}
	var attestations int64
	for {
		f, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		st, ok := tr.Stream(f.Stream)
		if !ok {
			t.Fatalf("frame of undeclared stream %d", f.Stream)
		}
		frames[st.Direction]++
		if st.Direction == trace.DirectionIn {
			parts, err := gossip.SplitFrame(f.Data)
			if err != nil {
				t.Fatal(err)
			}
			attestations += int64(parts.Messages[gossip.Attestation])
			if st.Codec != l.Codec || st.Protocol != l.Protocol {
				t.Errorf("stream %+v, leaf codec %s protocol %s", st, l.Codec, l.Protocol)
			}
		}
	}
	var metered int64
	for _, n := range r.Nodes {
		if n.Group == l.Group {
			for _, s := range n.Streams {
				if s.Direction == "in" {
					metered += s.Frames
				}
			}
		}
	}
	if frames["in"] != metered || attestations != l.Messages[gossip.Attestation] {
		t.Errorf("trace: %d inbound frames with %d attestations; meters %d frames, %d attestations delivered",
			frames["in"], attestations, metered, l.Messages[gossip.Attestation])
	}
}

// One instance failing (here a leaf with a bad codec parameter) makes the run fail quickly
// with that instance's error instead of leaving the others waiting until their timeout.
func TestHubLeavesFailsFast(t *testing.T) {
	specs, _ := node.ParseCodecs("plain,snappy-stream")
	groups := hubleaves.HubLeavesGroups(2, specs)
	groups[3].Params[runner.ParamCodec] = "snappy-stream:3KiB:turbo"
	e := &runner.Embedded{
		Out: t.TempDir(), Groups: groups,
		Params: map[string]string{runner.ParamProfile: "default", runner.ParamSlots: "1", runner.ParamTimeScale: "12", runner.ParamValidators: "32768", hubleaves.ParamPublishers: "2"},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	err := e.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "turbo") {
		t.Fatalf("run error %v, want the leaf's codec error", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("failing took %v", d)
	}
}

// checkHubOutIsLeafIn: what the hub's meters say it sent to each leaf, per category, is what
// the leaf's meters say it received, byte for byte (codec readers report each unit's wire
// bytes, so inbound attribution does not depend on how the transport split reads).
func checkHubOutIsLeafIn(t *testing.T, r *report.RunReport) {
	t.Helper()
	var hub *result.NodeSummary
	for _, n := range r.Nodes {
		if n.Role == result.RoleHub {
			hub = n
		}
	}
	for _, leaf := range r.Nodes {
		if leaf.Role != result.RoleLeaf {
			continue
		}
		var out, in *result.StreamStats
		for i := range hub.Streams {
			if s := &hub.Streams[i]; s.Peer == leaf.PeerID && s.Direction == "out" {
				out = s
			}
		}
		for i := range leaf.Streams {
			if s := &leaf.Streams[i]; s.Peer == hub.PeerID && s.Direction == "in" {
				in = s
			}
		}
		if out == nil || in == nil {
			t.Fatalf("leaf %s: hub out %v, leaf in %v", leaf.Codec, out, in)
		}
		if out.WireBytes != in.WireBytes || out.RawBytes != in.RawBytes {
			t.Errorf("leaf %s: hub sent %d wire / %d raw bytes, leaf received %d / %d", leaf.Codec, out.WireBytes, out.RawBytes, in.WireBytes, in.RawBytes)
		}
		for c, ob := range out.Categories {
			if ib := in.Categories[c]; ib != ob {
				t.Errorf("leaf %s %s: hub sent %+v, leaf received %+v", leaf.Codec, c, ob, ib)
			}
		}
	}
}
