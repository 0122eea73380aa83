//go:build cgo && libsnappy

package bench

// Google's C++ Snappy through its C binding (snappy-c.h), from Debian's libsnappy-dev:
// scripts/bench.sh libsnappy installs it and builds with -tags libsnappy.

/*
#cgo LDFLAGS: -lsnappy
#include <snappy-c.h>
int streamsim_snappy_version(void);
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// LibsnappyNote says that libsnappy is in this build.
const LibsnappyNote = ""

var libsnappy = &Impl{
	Name:   "libsnappy",
	Label:  libsnappyLabel(),
	Snappy: true,
	new:    func() coder { return &perMessage{enc: libsnappyEncode, dec: libsnappyDecode} },
}

var libsnappyDecode = func(dst, src []byte) ([]byte, error) {
	if len(src) == 0 {
		return nil, errors.New("libsnappy: empty block")
	}
	var n C.size_t
	if C.snappy_uncompressed_length((*C.char)(unsafe.Pointer(&src[0])), C.size_t(len(src)), &n) != C.SNAPPY_OK {
		return nil, errors.New("libsnappy: corrupt length header")
	}
	if cap(dst) < int(n) {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	out := unsafe.Pointer(unsafe.SliceData(dst))
	if st := C.snappy_uncompress((*C.char)(unsafe.Pointer(&src[0])), C.size_t(len(src)), (*C.char)(out), &n); st != C.SNAPPY_OK {
		return nil, fmt.Errorf("libsnappy: uncompress status %d", int(st))
	}
	return dst[:n], nil
}

func libsnappyEncode(dst, src []byte) []byte {
	bound := int(C.snappy_max_compressed_length(C.size_t(len(src))))
	if cap(dst) < bound {
		dst = make([]byte, bound)
	}
	dst = dst[:bound]
	n := C.size_t(bound)
	var in *C.char
	if len(src) > 0 {
		in = (*C.char)(unsafe.Pointer(&src[0]))
	}
	if st := C.snappy_compress(in, C.size_t(len(src)), (*C.char)(unsafe.Pointer(&dst[0])), &n); st != C.SNAPPY_OK {
		panic(fmt.Sprintf("libsnappy: compress status %d", int(st))) // only for a short dst
	}
	return dst[:n]
}

func libsnappyLabel() string {
	v := int(C.streamsim_snappy_version())
	return fmt.Sprintf("libsnappy %d.%d.%d (C++, cgo)", v>>16, v>>8&0xff, v&0xff)
}
