package codec

import (
	"slices"
	"strings"
	"testing"
)

// tableSpecs returns the representative specs of every family this build runs, in table
// order: the specs the tests that range over codecs use.
func tableSpecs() []string {
	var out []string
	for _, f := range Families() {
		if f.Available() == nil {
			out = append(out, f.Specs...)
		}
	}
	return out
}

// familyNames returns the name (the default spec) of every family this build runs.
func familyNames() []string {
	var out []string
	for _, f := range Families() {
		if f.Available() == nil {
			out = append(out, f.Name)
		}
	}
	return out
}

// TestFamilyTable: each family's name, default and specs agree with each other, and the
// families do not overlap.
func TestFamilyTable(t *testing.T) {
	fs := Families()
	if len(fs) < 4 || fs[0].Name != "plain" {
		t.Fatalf("families %d, first %q: want plain first and at least plain, snappy-stream, zstd, zstd-c", len(fs), fs[0].Name)
	}
	seen := map[string]bool{}
	for _, f := range fs {
		if seen[f.Name] || strings.Contains(f.Name, ":") || f.Name == "" {
			t.Errorf("family name %q: empty, repeated or with a colon", f.Name)
		}
		seen[f.Name] = true
		d, err := Parse(f.Name)
		if err != nil || d != f.Default || d.String() != f.Name {
			t.Errorf("%s: Parse gives %+v (%v), canonical %q; Default %+v", f.Name, d, err, d.String(), f.Default)
		}
		if !strings.HasPrefix(f.Form, f.Name) || !strings.Contains(Forms, f.Form) {
			t.Errorf("%s: form %q does not start with the name or is not in Forms", f.Name, f.Form)
		}
		if len(f.Specs) == 0 || f.Specs[0] != f.Name {
			t.Errorf("%s: representative specs %v do not start with the name", f.Name, f.Specs)
		}
		for _, in := range append(slices.Clone(f.Specs), benchSpecs(f)...) {
			s, err := Parse(in)
			if err != nil {
				t.Errorf("%s: spec %q: %v", f.Name, in, err)
				continue
			}
			// Exactly one family claims the spec, and it is f.
			var claims []string
			for _, g := range families {
				if g.is(s) {
					claims = append(claims, g.Name)
				}
			}
			if len(claims) != 1 || claims[0] != f.Name {
				t.Errorf("%s: spec %q claimed by %v", f.Name, in, claims)
			}
		}
	}
	if _, err := Parse("lz4"); err == nil || !strings.Contains(err.Error(), "unknown codec \"lz4\"") {
		t.Errorf("unknown family: %v", err)
	}
}

func benchSpecs(f Family) []string {
	var out []string
	for _, b := range f.Bench {
		out = append(out, b.Spec)
	}
	return out
}

// TestGoldenCoversTable: every representative and bench spec of the table has its names
// and protocol ID recorded in testdata/specs.golden, so that a family's file cannot change
// a name on the wire or in a report unnoticed.
func TestGoldenCoversTable(t *testing.T) {
	golden := map[string]bool{}
	for _, g := range readGolden(t) {
		golden[g.in] = true
	}
	for _, f := range Families() {
		for _, in := range append(slices.Clone(f.Specs), benchSpecs(f)...) {
			if !golden[in] {
				t.Errorf("%s: spec %q is not in testdata/specs.golden", f.Name, in)
				golden[in] = true // once
			}
		}
	}
}

// TestGoldenProtocolIDs: the protocol ID of every golden spec is the recorded one, and
// ParseProtocolID reads it back to the same canonical spec.
func TestGoldenProtocolIDs(t *testing.T) {
	for _, g := range readGolden(t) {
		s, err := Parse(g.in)
		if err != nil {
			t.Fatal(err)
		}
		if id := s.ProtocolID(); id != g.protocolID {
			t.Errorf("%s: protocol ID %s, golden %s", g.in, id, g.protocolID)
		}
		back, ok := ParseProtocolID(g.protocolID)
		if !ok || back.String() != g.canonical {
			t.Errorf("ParseProtocolID(%s) = %v, %v; want %s", g.protocolID, back, ok, g.canonical)
		}
	}
	for _, id := range []string{
		"/meshsub/1.1.0", "/streamsim/zstd:3/meshsub/1.2.0", "/streamsim/plain/meshsub/1.2.0",
		"/streamsim/snappy-stream/meshsub/1.2.0", "/streamsim/brotli/meshsub/1.2.0", "/snappy-stream/meshsub/1.1.0",
	} {
		if s, ok := ParseProtocolID(id); ok {
			t.Errorf("%s accepted as %v", id, s)
		}
	}
}

func TestParamDescription(t *testing.T) {
	if got, want := ParamDescription(), "stream codec spec: "+Forms; got != want || !strings.Contains(got, goldenForms) {
		t.Errorf("ParamDescription() = %q\nwant %q", got, want)
	}
}
