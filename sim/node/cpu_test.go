package node

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/golang/snappy"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-msgio"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"

	"github.com/streamsim/streamsim/analysis/replay"
	"github.com/streamsim/streamsim/bench"
	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/internal/timing"
)

// liveCPU writes frames through an outbound codecStream of spec into memory, as pubsub writes
// them, reads them back through an inbound one, as pubsub reads them, and returns what the
// meters report per frame byte: the codec CPU of encoding and of decoding and the meter's own
// (both directions), in ns. The streams run in the sweep's order (replay.Batches: a batch of
// frames written, then read), so that the live path and the sweep time the codecs in the
// same conditions. remote names the stream's peer (one per call: the meters add up per peer).
func liveCPU(t *testing.T, n *Node, spec codec.Spec, remote peer.ID, frames [][]byte) (enc, dec, meter float64) {
	t.Helper()
	var wire bytes.Buffer // what the outbound stream wrote and the inbound one has not read
	out := newCodecStream(n, &memStream{w: &wire, conn: &memConn{remote: remote}, dir: network.DirOutbound}, spec)
	in := newCodecStream(n, &memStream{r: &wire, conn: &memConn{remote: remote}, dir: network.DirInbound}, spec)
	r := msgio.NewVarintReaderSize(in, MaxMessageBytes)
	i := 0
	for _, batch := range replay.Batches(frames) {
		for k, f := range batch {
			if _, err := out.Write(f); err != nil {
				t.Fatalf("%s: write frame %d: %v", spec, i+k, err)
			}
		}
		for _, f := range batch {
			msg, err := r.ReadMsg()
			if err != nil {
				t.Fatalf("%s: read frame %d: %v", spec, i, err)
			}
			if body, _, _ := gossip.FrameBody(f); !bytes.Equal(msg, body) {
				t.Fatalf("%s: frame %d read back different", spec, i)
			}
			r.ReleaseMsg(msg)
			i++
		}
		if wire.Len() != 0 {
			t.Fatalf("%s: %d wire bytes left after a batch", spec, wire.Len())
		}
	}
	var raw [2]int64
	var ns [2]int64
	var meterNs int64
	for _, st := range n.meter.snapshot(nil, false) {
		if st.Peer != remote.String() {
			continue
		}
		d := 0
		if st.Direction == "in" {
			d = 1
		}
		raw[d], ns[d] = st.RawBytes, st.CodecStats.TimeNs
		meterNs += st.CodecStats.MeterNs
	}
	if raw[0] == 0 || raw[1] != raw[0] {
		t.Fatalf("%s: %d bytes out, %d in", spec, raw[0], raw[1])
	}
	return float64(ns[0]) / float64(raw[0]), float64(ns[1]) / float64(raw[1]), float64(meterNs) / float64(2*raw[0])
}

// messagePayloads returns the SSZ payloads of frames' messages (what today's per-message
// Snappy compresses), as one bench payload.
func messagePayloads(t *testing.T, frames [][]byte) bench.Payload {
	t.Helper()
	p := bench.Payload{Name: "attestation payloads"}
	for i, f := range frames {
		body, _, err := gossip.FrameBody(f)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		var rpc pb.RPC
		if err := proto.Unmarshal(body, &rpc); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		for _, m := range rpc.Publish {
			ssz, err := snappy.Decode(nil, m.Data)
			if err != nil {
				t.Fatalf("frame %d: %v", i, err)
			}
			p.Msgs = append(p.Msgs, ssz)
			p.Raw += len(ssz)
		}
	}
	return p
}

// TestCodecCPUAgrees holds the three codec CPU figures streamsim reports to each other on the
// same frames (the workload's attestation frames, ssz_snappy, one stream direction): the live
// path's meters (codecStream, as a node runs it), streamsim sweep's replay
// (replay.Stream.CPU) and streamsim bench's timing (bench.Measure). All three are the codec's
// own work per frame byte, their meters' cost taken out (docs/results-schema.md, "Codec CPU");
// for plain it is today's per-message Snappy (bench: golang/snappy on the messages' SSZ).
//
// All three run the same code per frame: a stream codec's Writer per frame, and its Reader
// through gossip.ReadPooledFrame (the length prefix a byte at a time, the frame into a pooled
// buffer), as a node reads a frame; the live path and the sweep in the same order (the
// sweep's batches, each encoded, then decoded: replay.Batches). The live path and the sweep
// are held within 1.5× of each other, both ops, every configuration; bench within 1.5× of both
// where the codec's state fits this VM's L2 (plain, a 64 KiB window). Beside a 1 MiB window
// bench decodes one direction alone: zstd-3's Reader over the same wire read 1.42× slower
// with the encoder run over each batch before it (as the live path and the sweep do) than
// alone (2026-12-05), and bench's fresh coder per op faults 2 000–8 000 pages a round; those
// pairs are logged (1.5–2.1× apart in 3 of 5 strict runs). What still moves them apart is the heap: a 1 MiB window
// holds about 8 MB of codec state per stream pair, and on this VM a page first touched costs
// about 5 µs (a fault; page-table isolation without PCID). With the default GOGC the runtime
// handed the sweep's replay, which holds its frames' layout beside the state, freshly mapped
// pages on every call (about 2 000 faults, 1.6 ns/B) and the other paths recycled ones, which
// read 1.6–1.8× apart (2026-12-05). The test gives the collector headroom (GOGC 400) so that
// every path recycles pages after the first round, and logs each path's faults: the figures
// compare the codecs' steady-state work, which is what a node's long-lived stream pays per
// byte (a stream's setup is reported apart, codec_stats.first_frame_ns).
//
// The figures logged are the least of five alternating rounds; what is held is each pair's
// ratio within a round, its median over the rounds. On a machine busier than its cores (load
// average), where shared caches move the figures apart, a miss is a skip that says so unless
// STREAMSIM_TIMING_STRICT is set (.ci/run runs it alone, strict).
func TestCodecCPUAgrees(t *testing.T) {
	if testing.Short() {
		t.Skip("times codecs on 6 MB of frames three ways")
	}
	if _, ok := bench.ThreadCPU(); !ok {
		t.Skip("no thread CPU clock")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	att, err := bench.Trace(1, 1, "attestation", false)
	if err != nil {
		t.Fatal(err)
	}
	payloads := messagePayloads(t, att.Msgs)
	sweep, err := replay.OneStream(att.Msgs)
	if err != nil {
		t.Fatal(err)
	}
	var golang bench.Impl
	for _, im := range bench.Impls() {
		if im.Name == "golang-snappy" {
			golang = im
		}
	}
	n := benchNode(t)
	t.Logf("meter: %v per monotonic span, %v per thread-clock span (empty, median); bench clock %v per read", costOf(false), costOf(true), bench.ClockCost())
	t.Logf("%s at the start", timing.Describe())
	calls := 0
	var misses []string
	for _, name := range cpuAgreeConfigs {
		spec, err := codec.Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		im, p := bench.SpecImpl(name, spec), att
		if spec.IsPlain() {
			im, p = golang, payloads
		}
		var least [3][2]float64 // live, sweep, bench × encode, decode ns/B
		var rounds [cpuAgreeRounds][3][2]float64
		var faults [3][cpuAgreeRounds]int64 // page faults (the process's) while each path ran
		var liveMeter float64
		for round := range cpuAgreeRounds {
			calls++
			var got [3][2]float64
			var lm float64
			paths := [3]func(){
				func() {
					got[0][0], got[0][1], lm = liveCPU(t, n, spec, peer.ID(fmt.Sprintf("peer-%d", calls)), att.Msgs)
				},
				func() {
					if got[1][0], got[1][1], _, err = sweep.CPU(name); err != nil {
						t.Fatal(err)
					}
				},
				func() {
					b, err := bench.Measure(im, p, 1, 50*time.Millisecond)
					if err != nil {
						t.Fatal(err)
					}
					perB := float64(len(p.Msgs)) / float64(att.Raw) // bench's per-message times per frame byte
					got[2] = [2]float64{b.EncodeNsPerMsg * perB, b.DecodeNsPerMsg * perB}
				},
			}
			for w, run := range paths {
				f0 := pageFaults()
				run()
				faults[w][round] = pageFaults() - f0
			}
			rounds[round] = got
			for w := range got {
				for op := range 2 {
					if round == 0 || got[w][op] < least[w][op] {
						least[w][op] = got[w][op]
					}
				}
			}
			if round == 0 || lm < liveMeter {
				liveMeter = lm
			}
		}
		if liveMeter <= 0 {
			t.Errorf("%s: the live meter reports no cost of its own", name)
		}
		t.Logf("%s: page faults per round, live %v, sweep %v, bench %v", name, faults[0], faults[1], faults[2])
		for op, opName := range []string{"encode", "decode"} {
			l, s, b := least[0][op], least[1][op], least[2][op]
			msg := fmt.Sprintf("%s %s: live %.3f, sweep %.3f, bench %.3f ns/B (live meter %.3f ns/B apart)", name, opName, l, s, b, liveMeter)
			t.Log(msg)
			pairs := [][2]int{{0, 1}} // live 0, sweep 1, bench 2
			if spec.HistoryBytes() <= 64<<10 {
				pairs = append(pairs, [2]int{0, 2}, [2]int{1, 2})
			}
			for _, pr := range pairs {
				// The ratio within each round (the two measured back to back), its median over
				// the rounds: a VM's slow and fast spells move both sides of a round alike.
				var ratios [cpuAgreeRounds]float64
				for i, got := range rounds {
					ratios[i] = got[pr[0]][op] / got[pr[1]][op]
				}
				slices.Sort(ratios[:])
				r := ratios[cpuAgreeRounds/2]
				t.Logf("%s %s: %s/%s %.2f, median of rounds (held within 1.5×)", name, opName, who[pr[0]], who[pr[1]], r)
				if !(r <= 1.5 && r >= 1/1.5) {
					misses = append(misses, fmt.Sprintf("%s: %s/%s %.2f (median of rounds), outside 1.5×", msg, who[pr[0]], who[pr[1]], r))
				}
			}
		}
	}
	t.Logf("%s at the end", timing.Describe())
	timing.Judge(t, misses)
}

// pageFaults is the process's minor and major page faults so far.
func pageFaults() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Minflt + ru.Majflt
}

// cpuMeter: a frame's codec CPU is its spans less the spans' own cost, which is reported
// apart; the first frame and large encoded frames are timed by the thread clock; a frame
// whose monotonic spans ran far longer than codec work takes (descheduled) counts at the rate
// of the direction's frames that were not, and is flagged; one descheduled before there was a
// rate is added at the first rate.
func TestCPUMeterTake(t *testing.T) {
	mono, thread := costOf(false), costOf(true)
	check := func(what string, m *cpuMeter, n int, wantThread bool, spans []time.Duration, want time.Duration, wantPre bool) {
		t.Helper()
		m.begin(n)
		if m.thread != wantThread {
			t.Errorf("%s: thread clock %v, want %v", what, m.thread, wantThread)
		}
		cost := mono
		if wantThread {
			cost = thread
		}
		for _, d := range spans {
			m.add(cost + d)
		}
		cpu, meter := m.take(n)
		if cpu != want || meter.cpu != time.Duration(len(spans))*cost || meter.preempted != wantPre {
			t.Errorf("%s: codec %v, meter %+v; want %v, %v, preempted %v", what, cpu, meter, want, time.Duration(len(spans))*cost, wantPre)
		}
	}
	var m cpuMeter
	check("first frame", &m, 100, true, []time.Duration{5 * time.Millisecond}, 5*time.Millisecond, false)
	check("two spans", &m, 100, false, []time.Duration{1000, 500}, 1500, false)
	check("descheduled", &m, 200, false, []time.Duration{preemptedAbove(200)}, 3000, true)
	check("large frame", &m, threadSpanBytes, true, []time.Duration{5 * time.Millisecond}, 5*time.Millisecond, false)
	check("no spans", &m, 50, false, nil, 0, false)

	var p cpuMeter
	check("first frame", &p, 100, true, []time.Duration{1000}, 1000, false)
	check("descheduled, no rate yet", &p, 200, false, []time.Duration{time.Second}, 0, true)
	check("the first rate", &p, 100, false, []time.Duration{1000}, 3000, false)

	var f cpuMeter
	for i, want := range []bool{true, false} {
		f.begin(10)
		f.add(costOf(f.thread) + 5)
		if _, mc := f.take(10); mc.first != want {
			t.Errorf("frame %d: first %v, want %v", i, mc.first, want)
		}
	}

	var d chargeDebt
	if got := d.due(-100); got != 0 {
		t.Errorf("debt: slept %v for a frame below 0", got)
	}
	if got := d.due(300); got != 200 {
		t.Errorf("debt: slept %v, want the sum 200ns", got)
	}
}

// cpuAgreeRounds: TestCodecCPUAgrees's alternating measurements of each configuration.
const cpuAgreeRounds = 5

var who = [3]string{"live", "sweep", "bench"}

var cpuAgreeConfigs = []string{"plain", "snappy-stream:64KiB:fast", "snappy-stream:1MiB:fast", "zstd:3:1MiB"}
