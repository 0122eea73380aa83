package codec

import (
	"fmt"
	"io"
	"strings"
)

// families is the table of codec families, in the order of help texts, the bench and the
// tests. Parse, String, Explicit, the protocol IDs, Forms, NewWriter and NewReader, the
// bench and the tests all range over it: a new codec is its own file defining a Family
// plus one entry here (docs/codecs.md, "Adding a codec").
var families = []*Family{
	&plainFamily,
	&snappyStreamFamily,
	&zstdFamily,
	&zstdCFamily,
}

// Family is one codec family: the first field of its specs, their syntax and their
// representative members, and the functions that parse, name and run them. (Spec.Family
// names the wire format, the Kind, which the zstd and zstd-c families share.)
type Family struct {
	// Name is the spec's first field, e.g. "snappy-stream".
	Name string
	// Form is the spec syntax with the options' ranges and defaults, for errors, help
	// texts and the manifest.
	Form string
	// Default is the spec that Name alone parses to.
	Default Spec
	// ProtocolID, if not empty, is the gossipsub protocol ID of Default (a fixed ID that
	// other implementations know). Every other spec gets a derived ID (see ProtocolID).
	ProtocolID string
	// Specs are representative specs, Name first: every test of the codec package that
	// ranges over codecs round-trips, meters and bounds each of them, and
	// testdata/specs.golden records their names and protocol IDs.
	Specs []string
	// Bench are the specs `streamsim bench` measures, under their benchmark names.
	Bench []BenchSpec

	// is reports whether s belongs to the family.
	is func(s Spec) bool
	// parse reads the parameters after the name (none for the bare name) into d, the
	// family's Default, and returns the spec.
	parse func(d Spec, params []string) (Spec, error)
	// canonical is String: trailing defaults omitted. explicit spells every parameter.
	canonical func(s Spec) string
	explicit  func(s Spec) string
	// dict reports that the family reads and writes with a dictionary (WithDict).
	dict      bool
	newWriter func(w io.Writer, s Spec, o options) io.WriteCloser
	newReader func(r io.Reader, s Spec, o options) io.ReadCloser
	// implementation names the library that runs the family in this build.
	implementation func(s Spec) string
	// available is nil when every build has the family, else it says why this one lacks it.
	available func() error
}

// BenchSpec is a spec the bench measures and the name its figures carry.
type BenchSpec struct {
	Name string // e.g. "snappy-stream-w0"
	Spec string // e.g. "snappy-stream:0"
}

// Families returns the codec families in table order.
func Families() []Family {
	out := make([]Family, len(families))
	for i, f := range families {
		out[i] = *f
	}
	return out
}

// Available returns an error if this build cannot run the family (zstd-c without cgo).
func (f Family) Available() error {
	if f.available == nil {
		return nil
	}
	return f.available()
}

// Forms lists the accepted spec forms, for errors and help texts: every family's Form,
// in table order.
var Forms = forms()

func forms() string {
	var fs []string
	for _, f := range families {
		fs = append(fs, f.Form)
	}
	return strings.Join(fs, ", ")
}

// ParamDescription is the description of a scenario's codec parameter, in the CLI's help
// and in manifest.toml (plans checks that the manifest carries it).
func ParamDescription() string { return "stream codec spec: " + Forms }

// familyNamed returns the family whose specs start with name, nil if none.
func familyNamed(name string) *Family {
	for _, f := range families {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// family returns the family s belongs to; a Spec no family claims (only a Kind made by
// hand) is treated as plain, as the zero Spec is.
func (s Spec) family() *Family {
	for _, f := range families {
		if f.is(s) {
			return f
		}
	}
	return &plainFamily
}

// Kind is a wire-format family: the zstd and zstd-c families share one (they read each
// other's streams). Each family's file declares its Kind.
type Kind uint8

// String returns the name of the first family of the kind: "plain", "snappy-stream" or
// "zstd".
func (k Kind) String() string {
	for _, f := range families {
		if f.Default.Kind == k {
			return f.Name
		}
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Protocol IDs of derived specs: "/streamsim/<canonical spec>/meshsub/1.2.0", so that one
// hub can serve leaves with different codecs.
const (
	derivedProtocolPrefix = "/streamsim/"
	derivedProtocolSuffix = "/meshsub/1.2.0"
)

// ProtocolID returns the gossipsub protocol ID of the spec: its family's fixed ID for the
// family's Default (plain: /meshsub/1.2.0; snappy-stream with a 64 KiB window: the
// proposal's /snappy-stream/meshsub/1.2.0), else "/streamsim/<canonical spec>/meshsub/1.2.0".
func (s Spec) ProtocolID() string {
	if f := s.family(); f.ProtocolID != "" && s.String() == f.Default.String() {
		return f.ProtocolID
	}
	return derivedProtocolPrefix + s.String() + derivedProtocolSuffix
}

// ParseProtocolID returns the spec a protocol ID stands for; ok is false for IDs that are
// not streamsim gossip protocols (a derived ID must spell its spec canonically).
func ParseProtocolID(id string) (spec Spec, ok bool) {
	for _, f := range families {
		if f.ProtocolID != "" && id == f.ProtocolID {
			return f.Default, true
		}
	}
	if !strings.HasPrefix(id, derivedProtocolPrefix) || !strings.HasSuffix(id, derivedProtocolSuffix) {
		return Spec{}, false
	}
	spec, err := Parse(strings.TrimSuffix(strings.TrimPrefix(id, derivedProtocolPrefix), derivedProtocolSuffix))
	if err != nil {
		return Spec{}, false
	}
	return spec, spec.ProtocolID() == id
}
