package replay

import (
	"fmt"
	"runtime"
	"testing"
	"weak"

	"github.com/golang/snappy"

	"github.com/streamsim/streamsim/gossip"
)

// A finished job keeps its figures only: the streams of its last batch, which its memory
// meter followed, are released with the rest, so a later pass of the sweep does not carry a
// finished configuration's codec state (zstd with a 2 MiB window: about 6 MiB per stream
// direction) beside its own.
func TestFinishedJobReleasesStreams(t *testing.T) {
	for _, spec := range []string{"zstd:3:2MiB", "snappy-stream:64KiB:fast", "plain"} {
		cfg, err := ParseConfig(spec)
		if err != nil {
			t.Fatal(err)
		}
		const streams = 8
		base := heapLive()
		j := newJob(cfg, corpusKey{payload: "ssz_snappy", layout: LayoutOneStream}, "test")
		frames := calibrationData(64<<10, 3)
		var batch []frameIn
		for i, f := range frames[:64] {
			// A published message (plain re-encodes its data as today's Snappy).
			data, err := gossip.AppendPublishFrame(nil, "/eth2/00000000/beacon_block/ssz_snappy", snappy.Encode(nil, f))
			if err != nil {
				t.Fatal(err)
			}
			batch = append(batch, frameIn{stream: fmt.Sprintf("s%d", i%streams), data: data})
		}
		if err := j.frames(batch); err != nil {
			t.Fatal(err)
		}
		var held []weak.Pointer[streamReplay]
		for _, name := range j.order {
			held = append(held, weak.Make(j.streams[name]))
		}
		open := heapLive() - base
		if err := j.finish(TrafficSummary{}); err != nil {
			t.Fatal(err)
		}
		after := heapLive() - base
		kept := 0
		for _, p := range held {
			if p.Value() != nil {
				kept++
			}
		}
		runtime.KeepAlive(j)
		t.Logf("%s: %d streams open %d B live, finished %d B live, %d streams still reachable", spec, streams, open, after, kept)
		if kept > 0 {
			t.Errorf("%s: %d of %d streams still reachable from the finished job", spec, kept, streams)
		}
		if after > 1<<20 {
			t.Errorf("%s: the finished job holds %d B (%d B with its streams open)", spec, after, open)
		}
	}
}
