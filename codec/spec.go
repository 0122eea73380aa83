package codec

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/streamsim/streamsim/codec/snappystream"
)

// Kind is a codec family.
type Kind uint8

const (
	Plain Kind = iota
	SnappyStream
	Zstd
)

// String returns the spec name of the family.
func (k Kind) String() string {
	switch k {
	case Plain:
		return "plain"
	case SnappyStream:
		return "snappy-stream"
	case Zstd:
		return "zstd"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Defaults and bounds of the spec parameters.
const (
	DefaultSnappyWindowBytes = snappystream.DefaultWindowBytes
	DefaultZstdLevel         = 3
	DefaultZstdWindowBytes   = 2 << 20
	MinZstdWindowBytes       = 1 << 10
	MaxZstdWindowBytes       = 16 << 20
	// MaxZstdCLevel is the highest libzstd level offered (levels above 19 need
	// windows beyond MaxZstdWindowBytes to pay).
	MaxZstdCLevel = 19
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

// ZstdImpl selects a zstd implementation.
type ZstdImpl uint8

const (
	// ZstdGo is github.com/klauspost/compress/zstd, pure Go: spec "zstd".
	ZstdGo ZstdImpl = iota
	// ZstdC is the reference C library, libzstd, through cgo (the sources that
	// github.com/DataDog/zstd carries): spec "zstd-c". Builds without cgo lack it.
	ZstdC
)

// Forms lists the accepted spec forms, for errors and help texts.
const Forms = "plain, snappy-stream[:<window>[:fast|better]] (window 0..16MiB, default 64KiB:fast), " +
	"zstd[:<level>[:<window>]] (klauspost/compress; level 1, 3, 7 or 11, default 3; window a power of two 1KiB..16MiB, default 2MiB), " +
	"zstd-c[:<level>[:<window>]] (libzstd through cgo; level 1..19, default 3; window as for zstd)"

// zstdLevels are the levels klauspost/compress/zstd implements, by the zstd level each matches.
var zstdLevels = []int{1, 3, 7, 11}

// Parse parses a codec spec.
func Parse(spec string) (Spec, error) {
	s, err := parse(spec)
	if err != nil {
		return Spec{}, fmt.Errorf("codec spec %q: %w (allowed: %s)", spec, err, Forms)
	}
	return s, nil
}

func parse(spec string) (Spec, error) {
	parts := strings.Split(spec, ":")
	switch parts[0] {
	case "plain":
		if len(parts) > 1 {
			return Spec{}, errors.New("plain takes no parameters")
		}
		return Spec{Kind: Plain}, nil
	case "snappy-stream":
		s := Spec{Kind: SnappyStream, WindowBytes: DefaultSnappyWindowBytes, SnappyLevel: snappystream.Fast}
		if len(parts) > 3 {
			return Spec{}, errors.New("too many parameters")
		}
		if len(parts) > 1 {
			w, err := ParseSize(parts[1])
			if err != nil {
				return Spec{}, fmt.Errorf("window: %w", err)
			}
			if w > snappystream.MaxWindowBytes {
				return Spec{}, fmt.Errorf("window %s above %s", FormatSize(w), FormatSize(snappystream.MaxWindowBytes))
			}
			s.WindowBytes = w
		}
		if len(parts) > 2 {
			l, err := snappystream.ParseLevel(parts[2])
			if err != nil {
				return Spec{}, fmt.Errorf("level %q is neither fast nor better", parts[2])
			}
			s.SnappyLevel = l
		}
		return s, nil
	case "zstd", "zstd-c":
		s := Spec{Kind: Zstd, ZstdLevel: DefaultZstdLevel, WindowBytes: DefaultZstdWindowBytes}
		if parts[0] == "zstd-c" {
			s.ZstdImpl = ZstdC
		}
		if len(parts) > 3 {
			return Spec{}, errors.New("too many parameters")
		}
		if len(parts) > 1 {
			l, err := strconv.Atoi(parts[1])
			if s.ZstdImpl == ZstdC {
				if err != nil || l < 1 || l > MaxZstdCLevel {
					return Spec{}, fmt.Errorf("zstd-c level %q is not an integer in 1..%d", parts[1], MaxZstdCLevel)
				}
			} else if err != nil || !slices.Contains(zstdLevels, l) {
				return Spec{}, fmt.Errorf("zstd level %q is not 1, 3, 7 or 11", parts[1])
			}
			s.ZstdLevel = l
		}
		if len(parts) > 2 {
			w, err := ParseSize(parts[2])
			if err != nil {
				return Spec{}, fmt.Errorf("window: %w", err)
			}
			if w < MinZstdWindowBytes || w > MaxZstdWindowBytes || w&(w-1) != 0 {
				return Spec{}, fmt.Errorf("zstd window %s is not a power of two in 1KiB..16MiB", parts[2])
			}
			s.WindowBytes = w
		}
		return s, nil
	}
	return Spec{}, fmt.Errorf("unknown codec %q", parts[0])
}

// String returns the canonical spec: trailing defaults are omitted, sizes are formatted
// by FormatSize. Parse(s.String()) gives s back.
func (s Spec) String() string {
	switch s.Kind {
	case SnappyStream:
		if s.SnappyLevel != snappystream.Fast {
			return "snappy-stream:" + FormatSize(s.WindowBytes) + ":" + s.SnappyLevel.String()
		}
		if s.WindowBytes != DefaultSnappyWindowBytes {
			return "snappy-stream:" + FormatSize(s.WindowBytes)
		}
		return "snappy-stream"
	case Zstd:
		name := s.zstdName()
		if s.WindowBytes != DefaultZstdWindowBytes {
			return fmt.Sprintf("%s:%d:%s", name, s.ZstdLevel, FormatSize(s.WindowBytes))
		}
		if s.ZstdLevel != DefaultZstdLevel {
			return fmt.Sprintf("%s:%d", name, s.ZstdLevel)
		}
		return name
	}
	return "plain"
}

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

func (s Spec) options(opts []Option) (options, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.maxUnitBytes < 0 {
		return o, fmt.Errorf("%s: maximum unit size %d is negative", s, o.maxUnitBytes)
	}
	if len(o.dict) > 0 && s.Kind != Zstd {
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
	switch s.Kind {
	case SnappyStream:
		return newSnappyWriter(w, s)
	case Zstd:
		return newZstdWriter(w, s, o)
	}
	return &plainWriter{w: w}
}

// NewReader returns a reader of what the matching Writer wrote. Close releases the
// decoder but does not close r. The reader implements Meter; its Stats count a unit's
// wire bytes once all of the unit's decoded bytes have been returned (see Stats).
func (s Spec) NewReader(r io.Reader, opts ...Option) io.ReadCloser {
	o, err := s.options(opts)
	if err != nil {
		return &failedReader{err: err}
	}
	switch s.Kind {
	case SnappyStream:
		return newSnappyReader(r, s, o)
	case Zstd:
		return newZstdReader(r, s, o)
	}
	return newPlainReader(r)
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
func (s Spec) Explicit() string {
	switch s.Kind {
	case SnappyStream:
		return "snappy-stream:" + FormatSize(s.WindowBytes) + ":" + s.SnappyLevel.String()
	case Zstd:
		return fmt.Sprintf("%s:%d:%s", s.zstdName(), s.ZstdLevel, FormatSize(s.WindowBytes))
	}
	return s.String()
}

func (s Spec) zstdName() string {
	if s.ZstdImpl == ZstdC {
		return "zstd-c"
	}
	return "zstd"
}

// Implementation names the library (and its version) that encodes and decodes the
// spec in this build, e.g. "klauspost/compress v1.20.4" or "libzstd 1.5.7", so that
// every CPU figure can say what produced it.
func (s Spec) Implementation() string {
	switch s.Kind {
	case SnappyStream:
		return "streamsim snappystream"
	case Zstd:
		if s.ZstdImpl == ZstdC {
			return zstdCImplementation()
		}
		return "klauspost/compress " + ModuleVersion("github.com/klauspost/compress")
	}
	return "none"
}

// Available returns an error if this build cannot encode or decode the spec (zstd-c in
// a build without cgo). Commands check it before starting anything.
func (s Spec) Available() error {
	if s.Kind == Zstd && s.ZstdImpl == ZstdC {
		return zstdCAvailable()
	}
	return nil
}

// SameExceptWindow reports whether s and o differ at most in their history window: the
// members of one history-size series.
func (s Spec) SameExceptWindow(o Spec) bool {
	s.WindowBytes = o.WindowBytes
	return s == o
}

// ParseSize parses a byte size: a plain integer or an integer with a KiB, MiB or GiB suffix.
func ParseSize(v string) (int, error) {
	num, mult := v, 1
	for _, u := range []struct {
		suffix string
		mult   int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if strings.HasSuffix(v, u.suffix) {
			num, mult = strings.TrimSuffix(v, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseUint(num, 10, 31)
	if err != nil || int(n) > (1<<31-1)/mult {
		return 0, fmt.Errorf("size %q is not a byte count like 4096, 4KiB, 64KiB or 1MiB", v)
	}
	return int(n) * mult, nil
}

// FormatSize formats n with the largest of GiB, MiB, KiB that divides it, else as a
// plain integer.
func FormatSize(n int) string {
	switch {
	case n > 0 && n%(1<<30) == 0:
		return strconv.Itoa(n>>30) + "GiB"
	case n > 0 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "MiB"
	case n > 0 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n)
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
