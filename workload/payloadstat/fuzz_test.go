package payloadstat

import (
	"testing"

	"github.com/attestantio/go-eth2-client/spec/capella"
	"github.com/attestantio/go-eth2-client/spec/deneb"
	"github.com/holiman/uint256"
)

// FuzzMeasure: any bytes as a payload give statistics or an error, never a panic.
func FuzzMeasure(f *testing.F) {
	empty := &deneb.ExecutionPayload{BaseFeePerGas: uint256.NewInt(1), ExtraData: []byte{}, Withdrawals: []*capella.Withdrawal{}}
	b, err := empty.MarshalSSZ()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	ss, err := LoadMainnet()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ss[0].SSZ)
	f.Fuzz(func(t *testing.T, payload []byte) {
		s, err := Measure([][]byte{payload})
		if err == nil && (s.Txs == 0 || s.ZeroShareAll < 0 || s.ZeroShareAll > 100) {
			t.Fatalf("no error but %d transactions, %.1f %% zeros", s.Txs, s.ZeroShareAll)
		}
	})
}
