package payloadstat

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

//go:embed testdata/mainnet-*.ssz.gz
var mainnet embed.FS

// Sample is one real mainnet execution payload.
type Sample struct {
	Number uint64
	SSZ    []byte
}

// LoadMainnet returns the real mainnet payloads held in testdata, by block number. They come
// from public test data (see README.md in testdata): portal-spec-tests' block data and
// go-ethereum's beacon test block.
func LoadMainnet() ([]Sample, error) {
	ents, err := mainnet.ReadDir("testdata")
	if err != nil {
		return nil, err
	}
	var out []Sample
	for _, e := range ents {
		num, ok := strings.CutPrefix(strings.TrimSuffix(e.Name(), ".ssz.gz"), "mainnet-")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(num, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		b, err := mainnet.ReadFile("testdata/" + e.Name())
		if err != nil {
			return nil, err
		}
		z, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		ssz, err := io.ReadAll(z)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out = append(out, Sample{Number: n, SSZ: ssz})
	}
	slices.SortFunc(out, func(a, b Sample) int { return cmp(a.Number, b.Number) })
	return out, nil
}

func cmp(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Mainnet2025 returns the 2025 payloads of LoadMainnet (blocks from 22 000 000 on, after
// rollups moved their batches to blobs and at a gas limit of 36 M): the sample the workload's
// content model "2025" is fitted to.
func Mainnet2025() ([][]byte, error) {
	ss, err := LoadMainnet()
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, s := range ss {
		if s.Number >= 22_000_000 {
			out = append(out, s.SSZ)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no 2025 payload in testdata")
	}
	return out, nil
}
