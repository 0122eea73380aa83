// Command importmainnet turns real mainnet blocks held in public test data into the execution
// payloads of workload/payloadstat/testdata: each payload's SSZ (Deneb/Electra layout),
// gzip-compressed, one file per block, named mainnet-<number>.ssz.gz.
//
// Sources it reads:
//   - portal-spec-tests' tests/mainnet/history/block_data/block-data-<n>.yaml (an RLP header
//     and an RLP body per block);
//   - go-ethereum's beacon/types/testdata/block_deneb.json (a Beacon API Deneb block).
//
// Usage: go run ./workload/payloadstat/importmainnet -out DIR FILE...
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/attestantio/go-eth2-client/spec/bellatrix"
	"github.com/attestantio/go-eth2-client/spec/capella"
	"github.com/attestantio/go-eth2-client/spec/deneb"
	"github.com/attestantio/go-eth2-client/spec/phase0"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rlp"
	"github.com/holiman/uint256"
)

func main() {
	out := flag.String("out", "", "directory to write mainnet-<number>.ssz.gz into (required)")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: importmainnet -out DIR FILE... (block-data-<n>.yaml or a Beacon API Deneb block JSON)")
		os.Exit(2)
	}
	for _, f := range flag.Args() {
		p, err := load(f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", f, err)
			os.Exit(1)
		}
		ssz, err := p.MarshalSSZ()
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", f, err)
			os.Exit(1)
		}
		name := filepath.Join(*out, fmt.Sprintf("mainnet-%d.ssz.gz", p.BlockNumber))
		if err := writeGz(name, ssz); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%s: block %d, %d transactions, payload %d B\n", name, p.BlockNumber, len(p.Transactions), len(ssz))
	}
}

func writeGz(name string, b []byte) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	z, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	if _, err := z.Write(b); err != nil {
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	return f.Close()
}

func load(name string) (*deneb.ExecutionPayload, error) {
	if strings.HasSuffix(name, ".json") {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var blk deneb.BeaconBlock
		if err := json.Unmarshal(b, &blk); err != nil {
			return nil, err
		}
		return blk.Body.ExecutionPayload, nil
	}
	return fromPortal(name)
}

// fromPortal reads a portal-spec-tests block-data YAML: "header: 0x…", "body: 0x…".
func fromPortal(name string) (*deneb.ExecutionPayload, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fields := map[string][]byte{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			continue
		}
		b, err := hexutil.Decode(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		fields[k] = b
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if fields["header"] == nil || fields["body"] == nil {
		return nil, errors.New("no header or body line")
	}
	var h types.Header
	if err := rlp.DecodeBytes(fields["header"], &h); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	var body types.Body
	if err := rlp.DecodeBytes(fields["body"], &body); err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	p := &deneb.ExecutionPayload{
		ParentHash:    phase0.Hash32(h.ParentHash),
		FeeRecipient:  bellatrix.ExecutionAddress(h.Coinbase),
		StateRoot:     phase0.Root(h.Root),
		ReceiptsRoot:  phase0.Root(h.ReceiptHash),
		LogsBloom:     h.Bloom,
		PrevRandao:    h.MixDigest,
		BlockNumber:   h.Number.Uint64(),
		GasLimit:      h.GasLimit,
		GasUsed:       h.GasUsed,
		Timestamp:     h.Time,
		ExtraData:     h.Extra,
		BaseFeePerGas: uint256.MustFromBig(h.BaseFee),
		BlockHash:     phase0.Hash32(h.Hash()),
	}
	if h.BlobGasUsed != nil {
		p.BlobGasUsed = *h.BlobGasUsed
	}
	if h.ExcessBlobGas != nil {
		p.ExcessBlobGas = *h.ExcessBlobGas
	}
	for _, tx := range body.Transactions {
		b, err := tx.MarshalBinary()
		if err != nil {
			return nil, err
		}
		p.Transactions = append(p.Transactions, bellatrix.Transaction(b))
	}
	p.Withdrawals = []*capella.Withdrawal{}
	for _, w := range body.Withdrawals {
		p.Withdrawals = append(p.Withdrawals, &capella.Withdrawal{
			Index:          capella.WithdrawalIndex(w.Index),
			ValidatorIndex: phase0.ValidatorIndex(w.Validator),
			Address:        bellatrix.ExecutionAddress(w.Address),
			Amount:         phase0.Gwei(w.Amount),
		})
	}
	return p, nil
}
