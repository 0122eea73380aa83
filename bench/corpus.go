// Package bench measures codec implementations side by side on consensus payloads from
// the workload: encode and decode speed and compressed size per payload type, and a
// cross-compatibility matrix of the Snappy implementations (`streamsim bench`, and the
// go test benchmarks kept as a regression baseline in bench/testdata).
package bench

import (
	"fmt"
	"strings"

	"github.com/golang/snappy"

	"github.com/streamsim/streamsim/gossip"
	"github.com/streamsim/streamsim/workload"
)

// Payload is one payload type's messages in publication order: their SSZ encoding, as a
// Snappy implementation or a stream codec in payload mode ssz sees them.
type Payload struct {
	Name string
	Msgs [][]byte
	Raw  int // total bytes
	// Framed: each message is an RPC frame with its length prefix (Trace, the gossip
	// streams). A stream codec's Reader then reads each as a node reads a frame
	// (gossip.ReadPooledFrame: the prefix a byte at a time, the frame into a pooled buffer),
	// so that bench times the work a node's codec does (docs/results-schema.md, "Codec CPU").
	Framed bool
}

// PayloadNames are the payload types, in table order.
var PayloadNames = []string{"attestation", "aggregate", "block", "data_column_sidecar", "sync_committee_message"}

// payloadCaps bound how many messages of a type a corpus keeps, so that one op stays
// between about 0.2 and 3 MB.
var payloadCaps = map[string]int{
	"attestation": 2000, "aggregate": 1000, "block": 16, "data_column_sidecar": 128, "sync_committee_message": 3000,
}

// payloadName returns the payload type of a workload message, "" for none of them
// (sync committee contributions).
func payloadName(m workload.Message) string {
	switch m.Category {
	case gossip.Attestation:
		return "attestation"
	case gossip.Aggregate:
		return "aggregate"
	case gossip.Block:
		return "block"
	case gossip.DataColumn:
		return "data_column_sidecar"
	case gossip.SyncCommittee:
		if strings.Contains(m.Topic, "/sync_committee_contribution_and_proof/") {
			return ""
		}
		return "sync_committee_message"
	}
	return ""
}

// Payloads generates slots of mainnet-shaped traffic from seed and returns each payload
// type's SSZ messages (at most payloadCaps of each).
func Payloads(seed int64, slots int) ([]Payload, error) {
	p := workload.DefaultParams()
	p.Seed = seed
	g, err := workload.NewGenerator(p)
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	byName := map[string]*Payload{}
	out := make([]Payload, len(PayloadNames))
	for i, n := range PayloadNames {
		out[i].Name = n
		byName[n] = &out[i]
	}
	for s := 0; s < slots; s++ {
		msgs, err := g.NextSlot()
		if err != nil {
			return nil, fmt.Errorf("workload slot %d: %w", s, err)
		}
		for _, m := range msgs {
			pl := byName[payloadName(m)]
			if pl == nil || len(pl.Msgs) >= payloadCaps[pl.Name] {
				continue
			}
			ssz, err := snappy.Decode(nil, m.Data)
			if err != nil {
				return nil, fmt.Errorf("workload slot %d: %s payload: %w", s, pl.Name, err)
			}
			pl.Msgs = append(pl.Msgs, ssz)
			pl.Raw += len(ssz)
		}
	}
	for _, pl := range out {
		if len(pl.Msgs) == 0 {
			return nil, fmt.Errorf("%d slots of seed %d hold no %s", slots, seed, pl.Name)
		}
	}
	return out, nil
}

// Trace returns the RPC frames an all-subnets node receives in slots of traffic, in
// publication order, each carrying one message: with ssz, its raw SSZ payload (the input
// of a stream codec in payload mode ssz, where the stream codec replaces per-message
// Snappy), else its ssz_snappy payload as on the network today (payload mode
// ssz_snappy). With only set, only messages of that payload type are kept (e.g.
// "attestation": attestation frames).
func Trace(seed int64, slots int, only string, ssz bool) (Payload, error) {
	p := workload.DefaultParams()
	p.Seed = seed
	g, err := workload.NewGenerator(p)
	if err != nil {
		return Payload{}, fmt.Errorf("workload: %w", err)
	}
	prof, err := workload.ParseProfile("all-subnets")
	if err != nil {
		return Payload{}, err
	}
	name := "all-subnets trace"
	if only != "" {
		name = only + " frames"
	}
	tr := Payload{Name: name, Framed: true}
	for s := 0; s < slots; s++ {
		msgs, err := g.NextSlot()
		if err != nil {
			return Payload{}, fmt.Errorf("workload slot %d: %w", s, err)
		}
		for _, m := range msgs {
			if !prof.Wants(m.Topic) || (only != "" && payloadName(m) != only) {
				continue
			}
			data := m.Data
			if ssz {
				if data, err = snappy.Decode(nil, m.Data); err != nil {
					return Payload{}, fmt.Errorf("workload slot %d: payload: %w", s, err)
				}
			}
			f, err := gossip.AppendPublishFrame(nil, m.Topic, data)
			if err != nil {
				return Payload{}, fmt.Errorf("workload slot %d: frame: %w", s, err)
			}
			tr.Msgs = append(tr.Msgs, f)
			tr.Raw += len(f)
		}
	}
	return tr, nil
}
