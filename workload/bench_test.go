package workload

import (
	"testing"
	"time"
)

// BenchmarkSlot generates mainnet slots (all topics, default parameters) on one goroutine and
// reports how many times faster than real time that is for an all-subnets node, which
// receives nearly all of it.
func BenchmarkSlot(b *testing.B) {
	g, err := NewGenerator(DefaultParams())
	if err != nil {
		b.Fatal(err)
	}
	var bytes int64
	b.ResetTimer()
	for range b.N {
		for _, m := range g.Next() {
			bytes += int64(len(m.Data))
		}
	}
	perSlot := b.Elapsed() / time.Duration(b.N)
	b.SetBytes(bytes / int64(b.N))
	b.ReportMetric(float64(SlotDuration)/float64(perSlot), "x_realtime")
}

// BenchmarkTransaction signs one transaction of the mix (go-ethereum, secp256k1).
func BenchmarkTransaction(b *testing.B) {
	g, err := NewGenerator(DefaultParams())
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := g.chain.txs.tx(1e9); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewGenerator measures setup: the sender keys.
func BenchmarkNewGenerator(b *testing.B) {
	for range b.N {
		if _, err := NewGenerator(DefaultParams()); err != nil {
			b.Fatal(err)
		}
	}
}
