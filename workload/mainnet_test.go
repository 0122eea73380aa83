package workload

import (
	"bytes"
	"fmt"

	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/attestantio/go-eth2-client/spec/electra"
	"github.com/attestantio/go-eth2-client/spec/phase0"
	"github.com/golang/snappy"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/gossip"
)

// blockSample generates n consecutive blocks of p at mainnet committee sizes without the
// slots' attestations and columns (cheap): each block's SSZ.
func blockSample(t testing.TB, p Params, n int) [][]byte {
	t.Helper()
	p.BlockProbability = 1
	g, err := NewGenerator(p)
	if err != nil {
		t.Fatal(err)
	}
	g.skipColumns = true
	var out [][]byte
	for i := range uint64(n) {
		slot := phase0.Slot(p.FirstSlot + i)
		g.msgs = g.msgs[:0]
		parent := g.head
		if err := g.block(i, slot, 0); err != nil {
			t.Fatal(err)
		}
		for _, m := range g.msgs {
			if m.Category == gossip.Block {
				ssz, err := snappy.Decode(nil, m.Data)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, ssz)
			}
		}
		epoch := phase0.Epoch(uint64(slot) / slotsPerEpoch)
		if g.checkpoint[epoch] == (phase0.Root{}) {
			g.checkpoint[epoch] = g.head
		}
		datas, _ := g.attestationData(slot, epoch, parent)
		g.recentData = append(g.recentData, datas)
		if len(g.recentData) > 8 {
			g.recentData = g.recentData[1:]
		}
	}
	return out
}

// blockFigures are the figures the acceptance names, over a sample of blocks.
type blockFigures struct {
	wireP50, wireP99    float64 // Snappy-encoded block, bytes
	rawPerSnappy        float64 // median over blocks
	payloadRawPerSnappy float64
	zeroShare           float64 // zero bytes in transactions, %
	better64K, zstd2M   float64 // stream of consecutive payloads ÷ per-message Snappy
	txsPerBlock, meanTx float64
}

func measureBlocks(t testing.TB, blocks [][]byte) blockFigures {
	t.Helper()
	var f blockFigures
	var wire, ratios, pratios []float64
	var payloads [][]byte
	var zeros, txBytes, txs int64
	for _, b := range blocks {
		s := snappy.Encode(nil, b)
		wire = append(wire, float64(len(s)))
		ratios = append(ratios, float64(len(b))/float64(len(s)))
		var sb electra.SignedBeaconBlock
		if err := sb.UnmarshalSSZ(b); err != nil {
			t.Fatal(err)
		}
		pl, err := sb.Message.Body.ExecutionPayload.MarshalSSZ()
		if err != nil {
			t.Fatal(err)
		}
		payloads = append(payloads, pl)
		pratios = append(pratios, float64(len(pl))/float64(len(snappy.Encode(nil, pl))))
		for _, tx := range sb.Message.Body.ExecutionPayload.Transactions {
			txs++
			txBytes += int64(len(tx))
			zeros += int64(bytes.Count(tx, []byte{0}))
		}
	}
	slices.Sort(wire)
	slices.Sort(ratios)
	f.wireP50 = wire[len(wire)/2]
	f.wireP99 = wire[min(len(wire)-1, len(wire)*99/100)]
	f.rawPerSnappy = ratios[len(ratios)/2]
	slices.Sort(pratios)
	f.payloadRawPerSnappy = pratios[len(pratios)/2]
	f.zeroShare = 100 * float64(zeros) / float64(txBytes)
	f.txsPerBlock = float64(txs) / float64(len(blocks))
	f.meanTx = float64(txBytes) / float64(txs)
	f.better64K = streamRatio(t, "snappy-stream:64KiB:better", payloads)
	f.zstd2M = streamRatio(t, "zstd:3:2MiB", payloads)
	return f
}

// streamRatio is the wire bytes of the payloads written one by one to one stream of the
// codec, over the sum of their per-message Snappy sizes.
func streamRatio(t testing.TB, spec string, payloads [][]byte) float64 {
	t.Helper()
	s, err := codec.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	var sink bytes.Buffer
	w := s.NewWriter(&sink)
	var base int
	for _, p := range payloads {
		base += len(snappy.Encode(nil, p))
		if _, err := w.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return float64(sink.Len()) / float64(base)
}

func TestExploreEras(t *testing.T) {
	for _, era := range []string{"2023-09", "2026-05"} {
		p := DefaultParams()
		if err := p.ApplyEra(era); err != nil {
			t.Fatal(err)
		}
		if s := os.Getenv("SIGMA"); s != "" {
			p.BlockSigma, _ = strconv.ParseFloat(s, 64)
		}
		blocks := blockSample(t, p, 98)
		f := measureBlocks(t, blocks)
		c, z := 0.0, 0.0
		for k := 0; k < 98; k += 14 {
			g := measureBlocks(t, blocks[k:k+14])
			c += g.better64K / 7
			z += g.zstd2M / 7
		}
		var cs ContentStats
		for k := 0; k+ContentWindow <= len(blocks); k += ContentWindow {
			var msgs []Message
			for _, b := range blocks[k : k+ContentWindow] {
				msgs = append(msgs, Message{Category: gossip.Block, Data: snappy.Encode(nil, b)})
			}
			for _, m := range msgs {
				if err := cs.Add([]Message{m}); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, fig := range cs.Figures() {
			if fig.Category == gossip.Block && os.Getenv("STATS") != "" {
				fmt.Printf("  %s %.2f (target %.2f)\n", fig.Name, fig.Value, fig.Target)
			}
		}
		fmt.Printf("ERA %s wire %.0f/%.0f raw/snappy %.2f (payload %.2f) zeros %.1f better %.3f zstd %.3f txs %.0f meantx %.0f\n", era, f.wireP50, f.wireP99, f.rawPerSnappy, f.payloadRawPerSnappy, f.zeroShare, c, z, f.txsPerBlock, f.meanTx)
	}
}
