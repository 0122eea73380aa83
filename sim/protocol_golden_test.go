package sim

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestGoldenProtocolIDs: the protocol ID of every representative spec in
// codec/testdata/specs.golden is the one recorded there.
func TestGoldenProtocolIDs(t *testing.T) {
	f, err := os.Open("../codec/testdata/specs.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		c := strings.Split(sc.Text(), "\t")
		if strings.HasPrefix(sc.Text(), "#") || len(c) != 5 {
			continue
		}
		n++
		if id := ProtocolFor(mustParse(c[0])); string(id) != c[4] {
			t.Errorf("%s: protocol %s, golden %s", c[0], id, c[4])
		}
	}
	if n == 0 {
		t.Fatal("no specs in specs.golden")
	}
}
