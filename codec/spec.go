package codec

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/streamsim/streamsim/codec/snappystream"
)

// Spec is a parsed codec spec: the identity of a stream codec, comparable with ==, and
// what both ends of a stream must agree on. Runtime settings of one end (bounds, a zstd
// dictionary) are Options of NewWriter and NewReader. The zero value is plain.
type Spec struct {
	Kind Kind
	// WindowBytes is the history window (snappy-stream, zstd).
	WindowBytes int
	// SnappyLevel is the snappy-stream encoder level.
	SnappyLevel snappystream.Level
	// ZstdLevel is the zstd level: 1, 3, 7 or 11 (klauspost), 1..19 (libzstd).
	ZstdLevel int
	// ZstdImpl is the zstd implementation. Both write standard zstd and read each
	// other's streams; they differ in speed and memory.
	ZstdImpl ZstdImpl
}

// Parse parses a codec spec: a family's name, then its parameters separated by colons.
func Parse(spec string) (Spec, error) {
	s, err := parse(spec)
	if err != nil {
		return Spec{}, fmt.Errorf("codec spec %q: %w (allowed: %s)", spec, err, Forms)
	}
	return s, nil
}

func parse(spec string) (Spec, error) {
	name, rest, hasParams := strings.Cut(spec, ":")
	f := familyNamed(name)
	if f == nil {
		return Spec{}, fmt.Errorf("unknown codec %q", name)
	}
	var params []string
	if hasParams {
		params = strings.Split(rest, ":")
	}
	return f.parse(f.Default, params)
}

// String returns the canonical spec: trailing defaults are omitted, sizes are formatted
// by units.FormatSize. Parse(s.String()) gives s back.
func (s Spec) String() string { return s.family().canonical(s) }

// MarshalText implements encoding.TextMarshaler with the canonical spec.
func (s Spec) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with Parse.
func (s *Spec) UnmarshalText(b []byte) error {
	p, err := Parse(string(b))
	if err != nil {
		return err
	}
	*s = p
	return nil
}

// Option sets a runtime setting of one Writer or Reader. Options are not part of the
// spec's identity: both ends of a stream must agree on the spec, and each end chooses
// its own bounds.
type Option func(*options)

type options struct {
	maxUnitBytes int
	dict         []byte
	clock        meterClock
}

// WithMaxUnitBytes bounds the decoded size of one unit a Reader accepts: for
// snappy-stream the declared length of a block, checked before anything is allocated.
// 0 (the default) means snappystream.DefaultMaxBlockBytes. zstd's blocks are bounded by
// the format (128 KiB) and its history by the spec's window; plain ignores it.
func WithMaxUnitBytes(n int) Option { return func(o *options) { o.maxUnitBytes = n } }

// WithDict makes a zstd Writer or Reader load the dictionary d before the stream starts
// (both ends need the same one; offline replays with a trained dictionary). Any other
// codec given a non-empty dictionary fails on its first Write or Read.
func WithDict(d []byte) Option { return func(o *options) { o.dict = d } }

// WithoutTiming makes a Writer or Reader leave Stats.Time at 0 and read no clock: a
// caller that times its own batches of units (streamsim sweep) then measures the codec
// without the two clock reads per unit that Stats.Time costs (docs/codecs.md, "Codec CPU").
func WithoutTiming() Option { return func(o *options) { o.clock = meterClock{off: true} } }

func (s Spec) options(opts []Option) (options, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.maxUnitBytes < 0 {
		return o, fmt.Errorf("%s: maximum unit size %d is negative", s, o.maxUnitBytes)
	}
	if len(o.dict) > 0 && !s.family().dict {
		return o, fmt.Errorf("%s: a dictionary is a zstd option", s)
	}
	return o, nil
}

// NewWriter returns a writer that turns each Write into one compressed unit, written
// with a single Write on w. Close ends the stream (zstd writes its frame end) but does
// not close w. The writer implements Meter.
func (s Spec) NewWriter(w io.Writer, opts ...Option) io.WriteCloser {
	o, err := s.options(opts)
	if err != nil {
		return &failedWriter{err: err}
	}
	return s.family().newWriter(w, s, o)
}

// NewReader returns a reader of what the matching Writer wrote. Close releases the
// decoder but does not close r. The reader implements Meter; its Stats count a unit's
// wire bytes once all of the unit's decoded bytes have been returned (see Stats).
func (s Spec) NewReader(r io.Reader, opts ...Option) io.ReadCloser {
	o, err := s.options(opts)
	if err != nil {
		return &failedReader{err: err}
	}
	return s.family().newReader(r, s, o)
}

// Family returns the wire-format family: "plain", "snappy-stream" or "zstd".
func (s Spec) Family() string { return s.Kind.String() }

// IsPlain reports whether the spec is the uncompressed baseline.
func (s Spec) IsPlain() bool { return s.Kind == Plain }

// HistoryBytes returns the history window a stream keeps across units: the
// snappy-stream window, the zstd window, 0 for plain.
func (s Spec) HistoryBytes() int {
	if s.Kind == Plain {
		return 0
	}
	return s.WindowBytes
}

// Explicit returns the spec with every parameter spelled out (String omits defaults),
// so that a table of windows and levels reads without knowing the defaults. Parse
// accepts it.
func (s Spec) Explicit() string { return s.family().explicit(s) }

// Implementation names the library (and its version) that encodes and decodes the
// spec in this build, e.g. "klauspost/compress v1.20.4" or "libzstd 1.5.7", so that
// every CPU figure can say what produced it.
func (s Spec) Implementation() string { return s.family().implementation(s) }

// Available returns an error if this build cannot encode or decode the spec (zstd-c in
// a build without cgo). Commands check it before starting anything.
func (s Spec) Available() error { return s.family().Available() }

// SameExceptWindow reports whether s and o differ at most in their history window: the
// members of one history-size series.
func (s Spec) SameExceptWindow(o Spec) bool {
	s.WindowBytes = o.WindowBytes
	return s == o
}

// ModuleVersion returns the version of a module linked into this binary (its replacement's
// when replaced), "unknown" where the binary carries no build information or not the module.
func ModuleVersion(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, m := range bi.Deps {
		if m.Path == path {
			if m.Replace != nil {
				return m.Replace.Version
			}
			return m.Version
		}
	}
	return "unknown"
}
