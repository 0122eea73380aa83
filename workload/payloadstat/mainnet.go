package payloadstat

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/attestantio/go-eth2-client/spec/deneb"
)

//go:embed testdata/mainnet-*.ssz.gz
var mainnet embed.FS

// Sample is one real mainnet execution payload.
type Sample struct {
	Number uint64
	SSZ    []byte
	// Parent and Hash are the payload's parent hash and block hash; Time its timestamp.
	Parent, Hash [32]byte
	Time         time.Time
}

// LoadMainnet returns the real mainnet payloads held in testdata, by block number. They come
// from public test data (see README.md in testdata): portal-spec-tests' block data and
// eth-act/blob-encoding-experiments' payloads.
func LoadMainnet() ([]Sample, error) {
	sub, err := fs.Sub(mainnet, "testdata")
	if err != nil {
		return nil, err
	}
	return load(sub)
}

// LoadDir returns the mainnet-<number>.ssz.gz payloads of a directory, by block number: what
// importmainnet writes, for a run too large to keep in testdata.
func LoadDir(dir string) ([]Sample, error) {
	return load(os.DirFS(dir))
}

func load(fsys fs.FS) ([]Sample, error) {
	ents, err := fs.ReadDir(fsys, ".")
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
		b, err := fs.ReadFile(fsys, e.Name())
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
		var p deneb.ExecutionPayload
		if err := p.UnmarshalSSZ(ssz); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		if p.BlockNumber != n {
			return nil, fmt.Errorf("%s: payload of block %d", e.Name(), p.BlockNumber)
		}
		out = append(out, Sample{Number: n, SSZ: ssz, Parent: p.ParentHash, Hash: p.BlockHash, Time: time.Unix(int64(p.Timestamp), 0).UTC()})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no mainnet-<number>.ssz.gz payload")
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

// Mainnet2025 returns the 2025 payloads of LoadMainnet (after rollups moved their batches to
// blobs, at a gas limit of 36 M): the sample the workload's content model "2025" is fitted to.
func Mainnet2025() ([][]byte, error) {
	ss, err := LoadMainnet()
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, s := range ss {
		if s.Time.Year() == 2025 {
			out = append(out, s.SSZ)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no 2025 payload in testdata")
	}
	return out, nil
}

// Runs splits samples (by block number) into runs of consecutive blocks: within a run each
// payload's parent hash is the previous payload's block hash.
func Runs(ss []Sample) [][]Sample {
	var out [][]Sample
	for i, s := range ss {
		if i == 0 || s.Number != ss[i-1].Number+1 || s.Parent != ss[i-1].Hash {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], s)
	}
	return out
}

// LongestRun is the longest run of consecutive payloads of ss (the earliest of equal ones).
func LongestRun(ss []Sample) []Sample {
	var best []Sample
	for _, r := range Runs(ss) {
		if len(r) > len(best) {
			best = r
		}
	}
	return best
}
