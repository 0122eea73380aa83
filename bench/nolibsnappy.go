//go:build !(cgo && libsnappy)

package bench

// Without the libsnappy build tag (or without cgo) the C++ library is not linked.
var (
	libsnappy       *Impl
	libsnappyDecode func(dst, src []byte) ([]byte, error)
)

// LibsnappyNote says how to include libsnappy.
const LibsnappyNote = "libsnappy (C++) not in this build: scripts/bench.sh libsnappy installs Debian's libsnappy-dev and runs with -tags libsnappy"
