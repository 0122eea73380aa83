//go:build !cgo

package codec

import (
	"errors"
	"io"
)

// errZstdCNeedsCgo is what selecting zstd-c gives in a build without cgo.
var errZstdCNeedsCgo = errors.New("zstd-c (libzstd) needs a build with cgo: CGO_ENABLED=1 and a C compiler; this binary was built without cgo (use zstd, klauspost/compress, instead)")

func zstdCAvailable() error { return errZstdCNeedsCgo }

func zstdCImplementation() string { return "libzstd (not in this build: no cgo)" }

func newZstdCEncoder(Spec, options) (zstdEncoder, error) { return nil, errZstdCNeedsCgo }

func newZstdCDecoder(io.Reader, Spec, options) (zstdDecoder, error) { return nil, errZstdCNeedsCgo }
