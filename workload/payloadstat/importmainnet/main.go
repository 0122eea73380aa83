// Command importmainnet turns real mainnet blocks held in public test data into the execution
// payloads of workload/payloadstat/testdata: each payload's SSZ (Deneb/Electra layout),
// gzip-compressed, one file per block, named mainnet-<number>.ssz.gz.
//
// Sources it reads:
//   - portal-spec-tests' tests/mainnet/history/block_data/block-data-<n>.yaml (an RLP header
//     and an RLP body per block);
//   - go-ethereum's beacon/types/testdata/block_deneb.json (a Beacon API Deneb block: a JSON
//     object with a "body");
//   - an execution payload alone in JSON (a JSON object with "transactions"), as the Beacon
//     API's execution_payload or the engine API's ExecutionPayload carry it: field names in
//     snake_case or camelCase, numbers in decimal or 0x-hex, withdrawals and the blob gas
//     fields optional (absent, they stay empty or zero). eth-act/blob-encoding-experiments'
//     payloads/block_<n>.json are of this kind.
//
// Given several files, it says which of the blocks follow one another (a block's parent hash
// is the previous block's hash) and where the chain breaks, so a run of consecutive blocks can
// be told from a set of single ones.
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
	"strconv"
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
		fmt.Fprintln(os.Stderr, "usage: importmainnet -out DIR FILE... (block-data-<n>.yaml, a Beacon API Deneb block JSON or an execution payload JSON)")
		os.Exit(2)
	}
	var prev *deneb.ExecutionPayload
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
		link := ""
		if prev != nil {
			link = ", not the child of the previous file's block"
			if p.ParentHash == prev.BlockHash && p.BlockNumber == prev.BlockNumber+1 {
				link = ", child of the previous file's block"
			}
		}
		fmt.Printf("%s: block %d, %d transactions, payload %d B%s\n", name, p.BlockNumber, len(p.Transactions), len(ssz), link)
		prev = p
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
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(b, &probe); err != nil {
			return nil, err
		}
		if _, ok := probe["transactions"]; ok {
			return fromPayloadJSON(probe)
		}
		var blk deneb.BeaconBlock
		if err := json.Unmarshal(b, &blk); err != nil {
			return nil, err
		}
		return blk.Body.ExecutionPayload, nil
	}
	return fromPortal(name)
}

// fromPayloadJSON reads an execution payload given as a JSON object: each field under its
// snake_case or its camelCase name, numbers as decimal strings, 0x-hex strings or JSON numbers.
func fromPayloadJSON(m map[string]json.RawMessage) (*deneb.ExecutionPayload, error) {
	var err error
	field := func(snake string) json.RawMessage {
		if v, ok := m[snake]; ok {
			return v
		}
		parts := strings.Split(snake, "_")
		for i := 1; i < len(parts); i++ {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
		return m[strings.Join(parts, "")]
	}
	bytesOf := func(name string, size int) []byte {
		v := field(name)
		if v == nil || err != nil {
			if v == nil && size > 0 && err == nil {
				err = fmt.Errorf("no field %s", name)
			}
			return nil
		}
		var s string
		if e := json.Unmarshal(v, &s); e != nil {
			err = fmt.Errorf("%s: %w", name, e)
			return nil
		}
		b, e := hexutil.Decode(s)
		if e != nil {
			err = fmt.Errorf("%s: %w", name, e)
			return nil
		}
		if size > 0 && len(b) != size {
			err = fmt.Errorf("%s: %d bytes, want %d", name, len(b), size)
			return nil
		}
		return b
	}
	num := func(name string, required bool) *uint256.Int {
		v := field(name)
		if v == nil || err != nil {
			if v == nil && required && err == nil {
				err = fmt.Errorf("no field %s", name)
			}
			return new(uint256.Int)
		}
		s := strings.Trim(string(v), `"`)
		var n *uint256.Int
		var e error
		if strings.HasPrefix(s, "0x") {
			n, e = uint256.FromHex(s)
		} else {
			n, e = uint256.FromDecimal(s)
		}
		if e != nil {
			err = fmt.Errorf("%s %q: %w", name, s, e)
			return new(uint256.Int)
		}
		return n
	}
	u64 := func(name string, required bool) uint64 {
		n := num(name, required)
		if !n.IsUint64() && err == nil {
			err = fmt.Errorf("%s: %s does not fit 64 bits", name, n)
		}
		return n.Uint64()
	}
	p := &deneb.ExecutionPayload{
		BlockNumber:   u64("block_number", true),
		GasLimit:      u64("gas_limit", true),
		GasUsed:       u64("gas_used", true),
		Timestamp:     u64("timestamp", true),
		BaseFeePerGas: num("base_fee_per_gas", true),
		BlobGasUsed:   u64("blob_gas_used", false),
		ExcessBlobGas: u64("excess_blob_gas", false),
		ExtraData:     bytesOf("extra_data", 0),
	}
	copy(p.ParentHash[:], bytesOf("parent_hash", 32))
	copy(p.FeeRecipient[:], bytesOf("fee_recipient", 20))
	copy(p.StateRoot[:], bytesOf("state_root", 32))
	copy(p.ReceiptsRoot[:], bytesOf("receipts_root", 32))
	copy(p.LogsBloom[:], bytesOf("logs_bloom", 256))
	copy(p.PrevRandao[:], bytesOf("prev_randao", 32))
	copy(p.BlockHash[:], bytesOf("block_hash", 32))
	if err != nil {
		return nil, err
	}
	if p.ExtraData == nil {
		p.ExtraData = []byte{}
	}
	var txs []string
	if err := json.Unmarshal(field("transactions"), &txs); err != nil {
		return nil, fmt.Errorf("transactions: %w", err)
	}
	for i, s := range txs {
		b, err := hexutil.Decode(s)
		if err != nil {
			return nil, fmt.Errorf("transaction %d: %w", i, err)
		}
		var tx types.Transaction
		if err := tx.UnmarshalBinary(b); err != nil {
			return nil, fmt.Errorf("transaction %d: %w", i, err)
		}
		p.Transactions = append(p.Transactions, bellatrix.Transaction(b))
	}
	p.Withdrawals = []*capella.Withdrawal{}
	if v := field("withdrawals"); v != nil {
		var ws []map[string]json.RawMessage
		if err := json.Unmarshal(v, &ws); err != nil {
			return nil, fmt.Errorf("withdrawals: %w", err)
		}
		for i, w := range ws {
			sub, err := fromWithdrawalJSON(w)
			if err != nil {
				return nil, fmt.Errorf("withdrawal %d: %w", i, err)
			}
			p.Withdrawals = append(p.Withdrawals, sub)
		}
	}
	return p, nil
}

// fromWithdrawalJSON reads one withdrawal: index, validator_index (validatorIndex), address,
// amount, numbers decimal or 0x-hex.
func fromWithdrawalJSON(m map[string]json.RawMessage) (*capella.Withdrawal, error) {
	n := func(names ...string) (uint64, error) {
		for _, k := range names {
			if v, ok := m[k]; ok {
				s := strings.Trim(string(v), `"`)
				if strings.HasPrefix(s, "0x") {
					return hexutil.DecodeUint64(s)
				}
				return strconv.ParseUint(s, 10, 64)
			}
		}
		return 0, fmt.Errorf("no field %s", names[0])
	}
	idx, err := n("index")
	if err != nil {
		return nil, err
	}
	val, err := n("validator_index", "validatorIndex")
	if err != nil {
		return nil, err
	}
	amount, err := n("amount")
	if err != nil {
		return nil, err
	}
	var s string
	if err := json.Unmarshal(m["address"], &s); err != nil {
		return nil, fmt.Errorf("address: %w", err)
	}
	a, err := hexutil.Decode(s)
	if err != nil || len(a) != 20 {
		return nil, fmt.Errorf("address %q", s)
	}
	w := &capella.Withdrawal{Index: capella.WithdrawalIndex(idx), ValidatorIndex: phase0.ValidatorIndex(val), Amount: phase0.Gwei(amount)}
	copy(w.Address[:], a)
	return w, nil
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
