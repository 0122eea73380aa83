package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/attestantio/go-eth2-client/spec/deneb"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/streamsim/streamsim/workload/payloadstat"
)

// TestPayloadJSON: a real payload written as the Beacon API writes an execution payload
// (snake_case, decimal numbers) and as the engine API does (camelCase, 0x-hex numbers) reads
// back to the same SSZ, withdrawals included; without withdrawals and blob gas fields (as
// eth-act/blob-encoding-experiments gives them) it reads with none.
func TestPayloadJSON(t *testing.T) {
	ss, err := payloadstat.LoadMainnet()
	if err != nil {
		t.Fatal(err)
	}
	var orig deneb.ExecutionPayload
	for _, s := range ss {
		if s.Number == 22_431_084 {
			if err := orig.UnmarshalSSZ(s.SSZ); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(orig.Withdrawals) == 0 {
		t.Fatal("block 22 431 084 not found or without withdrawals")
	}
	want, _ := orig.MarshalSSZ()
	dir := t.TempDir()
	read := func(name string, v any) *deneb.ExecutionPayload {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := load(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return p
	}
	beacon := read("beacon.json", &orig) // go-eth2-client writes the Beacon API's form
	if got, _ := beacon.MarshalSSZ(); !bytes.Equal(got, want) {
		t.Error("Beacon API form: SSZ differs")
	}
	hexq := func(v uint64) string { return fmt.Sprintf("0x%x", v) }
	var txs []string
	for _, tx := range orig.Transactions {
		txs = append(txs, hexutil.Encode(tx))
	}
	var ws []map[string]string
	for _, w := range orig.Withdrawals {
		ws = append(ws, map[string]string{"index": hexq(uint64(w.Index)), "validatorIndex": hexq(uint64(w.ValidatorIndex)),
			"address": hexutil.Encode(w.Address[:]), "amount": hexq(uint64(w.Amount))})
	}
	engine := map[string]any{
		"parentHash": hexutil.Encode(orig.ParentHash[:]), "feeRecipient": hexutil.Encode(orig.FeeRecipient[:]),
		"stateRoot": hexutil.Encode(orig.StateRoot[:]), "receiptsRoot": hexutil.Encode(orig.ReceiptsRoot[:]),
		"logsBloom": hexutil.Encode(orig.LogsBloom[:]), "prevRandao": hexutil.Encode(orig.PrevRandao[:]),
		"blockNumber": hexq(orig.BlockNumber), "gasLimit": hexq(orig.GasLimit), "gasUsed": hexq(orig.GasUsed),
		"timestamp": hexq(orig.Timestamp), "extraData": hexutil.Encode(orig.ExtraData),
		"baseFeePerGas": orig.BaseFeePerGas.Hex(), "blockHash": hexutil.Encode(orig.BlockHash[:]),
		"transactions": txs, "withdrawals": ws,
		"blobGasUsed": hexq(orig.BlobGasUsed), "excessBlobGas": hexq(orig.ExcessBlobGas),
	}
	if got, _ := read("engine.json", engine).MarshalSSZ(); !bytes.Equal(got, want) {
		t.Error("engine API form: SSZ differs")
	}
	delete(engine, "withdrawals")
	delete(engine, "blobGasUsed")
	delete(engine, "excessBlobGas")
	bare := read("bare.json", engine)
	if len(bare.Withdrawals) != 0 || bare.BlobGasUsed != 0 || len(bare.Transactions) != len(orig.Transactions) || bare.BlockHash != orig.BlockHash {
		t.Errorf("without withdrawals: %d withdrawals, blob gas %d, %d transactions", len(bare.Withdrawals), bare.BlobGasUsed, len(bare.Transactions))
	}
	engine["gasUsed"] = "12x"
	if _, err := load(writeJSON(t, dir, engine)); err == nil {
		t.Error("a malformed number was read")
	}
}

func writeJSON(t *testing.T, dir string, v any) string {
	b, _ := json.Marshal(v)
	f := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}
