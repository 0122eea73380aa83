package codec

import (
	"fmt"
	"io"
)

// MaxZstdCLevel is the highest libzstd level offered (levels above 19 need windows beyond
// MaxZstdWindowBytes to pay).
const MaxZstdCLevel = 19

// zstdCFamily is zstd through libzstd, the reference C library (zstdc_cgo.go); a build
// without cgo parses and names its specs but cannot run them (zstdc_nocgo.go).
var zstdCFamily = Family{
	Name:    "zstd-c",
	Form:    "zstd-c[:<level>[:<window>]] (libzstd through cgo; level 1..19, default 3; window as for zstd)",
	Default: Spec{Kind: Zstd, ZstdImpl: ZstdC, ZstdLevel: DefaultZstdLevel, WindowBytes: DefaultZstdWindowBytes},
	Specs:   []string{"zstd-c", "zstd-c:1:64KiB", "zstd-c:19:1MiB"},
	Bench:   []BenchSpec{{"zstd-c", "zstd-c"}},
	is:      func(s Spec) bool { return s.Kind == Zstd && s.ZstdImpl == ZstdC },
	parse: func(d Spec, params []string) (Spec, error) {
		return parseZstd(d, params, func(l int, err error) error {
			if err != nil || l < 1 || l > MaxZstdCLevel {
				return fmt.Errorf("zstd-c level %q is not an integer in 1..%d", params[0], MaxZstdCLevel)
			}
			return nil
		})
	},
	canonical: func(s Spec) string { return zstdCanonical("zstd-c", s) },
	explicit:  func(s Spec) string { return zstdExplicit("zstd-c", s) },
	dict:      true,
	newWriter: func(w io.Writer, s Spec, o options) io.WriteCloser {
		return newZstdWriter(w, s, o, newZstdCEncoder)
	},
	newReader: func(r io.Reader, s Spec, o options) io.ReadCloser {
		return newZstdReader(r, s, o, newZstdCDecoder)
	},
	implementation: func(Spec) string { return zstdCImplementation() },
	available:      zstdCAvailable,
}
