package codec

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// goldenSpec is one line of testdata/specs.golden: a spec as typed and what streamsim
// derives from it. The file was written by the code before codecs became a table of
// families; every name in it is on the wire (protocol IDs) or in reports, so it must not
// change.
type goldenSpec struct {
	in, canonical, explicit, family, protocolID string
}

func readGolden(t *testing.T) []goldenSpec {
	t.Helper()
	f, err := os.Open("testdata/specs.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []goldenSpec
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 5 {
			t.Fatalf("specs.golden: line %q has %d fields, want 5", sc.Text(), len(c))
		}
		out = append(out, goldenSpec{c[0], c[1], c[2], c[3], c[4]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGoldenNames: canonical and explicit names and families of the representative specs
// are those of testdata/specs.golden.
func TestGoldenNames(t *testing.T) {
	for _, g := range readGolden(t) {
		s, err := Parse(g.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", g.in, err)
			continue
		}
		if s.String() != g.canonical || s.Explicit() != g.explicit || s.Family() != g.family {
			t.Errorf("%s: canonical %q, explicit %q, family %q; golden %q, %q, %q",
				g.in, s.String(), s.Explicit(), s.Family(), g.canonical, g.explicit, g.family)
		}
	}
}

// goldenForms is Forms as it was before the table of families, when it held plain,
// snappy-stream, zstd and zstd-c.
const goldenForms = "plain, snappy-stream[:<window>[:fast|better]] (window 0..16MiB, default 64KiB:fast), " +
	"zstd[:<level>[:<window>]] (klauspost/compress; level 1, 3, 7 or 11, default 3; window a power of two 1KiB..16MiB, default 2MiB), " +
	"zstd-c[:<level>[:<window>]] (libzstd through cgo; level 1..19, default 3; window as for zstd)"

// TestGoldenForms: Forms lists every family's Form in table order, and those of the four
// original families read as they did.
func TestGoldenForms(t *testing.T) {
	var all, original []string
	for _, f := range Families() {
		all = append(all, f.Form)
		switch f.Name {
		case "plain", "snappy-stream", "zstd", "zstd-c":
			original = append(original, f.Form)
		}
	}
	if Forms != strings.Join(all, ", ") {
		t.Errorf("Forms = %q, want the families' forms %q", Forms, all)
	}
	if got := strings.Join(original, ", "); got != goldenForms {
		t.Errorf("forms of plain, snappy-stream, zstd, zstd-c:\n%q\nwant %q", got, goldenForms)
	}
}
