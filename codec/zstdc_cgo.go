//go:build cgo

package codec

// libzstd through cgo. github.com/DataDog/zstd compiles the reference C sources
// (libzstd 1.5.7) into this binary; its Go stream API cannot set the window (it follows
// the level) nor bound the decoder's window, so this file calls libzstd's stable
// streaming API (ZSTD_compressStream2, ZSTD_decompressStream) on those compiled sources
// directly. The declarations below are copied from that version's zstd.h (stable
// section); the enum values are part of its stable ABI. One cgo call encodes a unit
// (ZSTD_e_flush), as klauspost's Write+Flush does; the checksum is on, as in klauspost.

/*
#include <stddef.h>

typedef struct ZSTD_CCtx_s ZSTD_CCtx;
typedef struct ZSTD_DCtx_s ZSTD_DCtx;
typedef struct ZSTD_inBuffer_s { const void* src; size_t size; size_t pos; } ZSTD_inBuffer;
typedef struct ZSTD_outBuffer_s { void* dst; size_t size; size_t pos; } ZSTD_outBuffer;

ZSTD_CCtx* ZSTD_createCCtx(void);
size_t ZSTD_freeCCtx(ZSTD_CCtx* cctx);
size_t ZSTD_CCtx_setParameter(ZSTD_CCtx* cctx, int param, int value);
size_t ZSTD_CCtx_loadDictionary(ZSTD_CCtx* cctx, const void* dict, size_t dictSize);
size_t ZSTD_compressStream2(ZSTD_CCtx* cctx, ZSTD_outBuffer* output, ZSTD_inBuffer* input, int endOp);
size_t ZSTD_sizeof_CCtx(const ZSTD_CCtx* cctx);
size_t ZSTD_CCtx_reset(ZSTD_CCtx* cctx, int reset);
size_t ZSTD_compressBound(size_t srcSize);

ZSTD_DCtx* ZSTD_createDCtx(void);
size_t ZSTD_freeDCtx(ZSTD_DCtx* dctx);
size_t ZSTD_DCtx_setParameter(ZSTD_DCtx* dctx, int param, int value);
size_t ZSTD_DCtx_loadDictionary(ZSTD_DCtx* dctx, const void* dict, size_t dictSize);
size_t ZSTD_decompressStream(ZSTD_DCtx* zds, ZSTD_outBuffer* output, ZSTD_inBuffer* input);
size_t ZSTD_sizeof_DCtx(const ZSTD_DCtx* dctx);
size_t ZSTD_DCtx_reset(ZSTD_DCtx* dctx, int reset);

unsigned ZSTD_isError(size_t code);
const char* ZSTD_getErrorName(size_t code);
const char* ZSTD_versionString(void);

enum {
	streamsim_c_compressionLevel = 100, // ZSTD_c_compressionLevel
	streamsim_c_windowLog = 101,        // ZSTD_c_windowLog
	streamsim_c_checksumFlag = 201,     // ZSTD_c_checksumFlag
	streamsim_d_windowLogMax = 100,     // ZSTD_d_windowLogMax
	streamsim_reset_session_only = 1,   // ZSTD_reset_session_only
	streamsim_e_flush = 1,              // ZSTD_e_flush
	streamsim_e_end = 2                 // ZSTD_e_end
};

// streamsim_zstd_result reports one streaming call: the return code and how far the
// input and output buffers advanced.
typedef struct { size_t code; size_t in; size_t out; } streamsim_zstd_result;

static void streamsim_compress(ZSTD_CCtx* c, void* dst, size_t dstCap, const void* src, size_t srcSize, int op, streamsim_zstd_result* r) {
	ZSTD_outBuffer out = { dst, dstCap, 0 };
	ZSTD_inBuffer in = { src, srcSize, 0 };
	r->code = ZSTD_compressStream2(c, &out, &in, op);
	r->in = in.pos;
	r->out = out.pos;
}

static void streamsim_decompress(ZSTD_DCtx* d, void* dst, size_t dstCap, const void* src, size_t srcSize, streamsim_zstd_result* r) {
	ZSTD_outBuffer out = { dst, dstCap, 0 };
	ZSTD_inBuffer in = { src, srcSize, 0 };
	r->code = ZSTD_decompressStream(d, &out, &in);
	r->in = in.pos;
	r->out = out.pos;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"runtime"
	"unsafe"

	_ "github.com/DataDog/zstd" // compiles and links libzstd's C sources
)

func zstdCAvailable() error { return nil }

func zstdCImplementation() string { return "libzstd " + C.GoString(C.ZSTD_versionString()) }

func zstdCError(code C.size_t) error {
	if C.ZSTD_isError(code) == 0 {
		return nil
	}
	return fmt.Errorf("libzstd: %s", C.GoString(C.ZSTD_getErrorName(code)))
}

// bytesPtr returns a pointer to b's first byte, nil for an empty b.
func bytesPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(b))
}

// cctxHolder and dctxHolder hold a C context for a cleanup that frees it if the Go
// object is dropped without release.
type cctxHolder struct{ ctx *C.ZSTD_CCtx }
type dctxHolder struct{ ctx *C.ZSTD_DCtx }

// zstdCEncoder is a libzstd compression context.
type zstdCEncoder struct {
	ctx  *C.ZSTD_CCtx
	held *cctxHolder
	dict []byte // kept alive while the context refers to it
	last int64  // state bytes when released
	res  C.streamsim_zstd_result
}

func newZstdCEncoder(s Spec, o options) (zstdEncoder, error) {
	e := &zstdCEncoder{ctx: C.ZSTD_createCCtx()}
	if e.ctx == nil {
		return nil, errors.New("libzstd: cannot create a compression context")
	}
	set := func(param C.int, v int) error {
		return zstdCError(C.ZSTD_CCtx_setParameter(e.ctx, param, C.int(v)))
	}
	err := errors.Join(
		set(C.streamsim_c_compressionLevel, s.ZstdLevel),
		set(C.streamsim_c_windowLog, bits.Len(uint(s.WindowBytes))-1),
		set(C.streamsim_c_checksumFlag, 1),
	)
	if err == nil && len(o.dict) > 0 {
		// libzstd copies the dictionary.
		err = zstdCError(C.ZSTD_CCtx_loadDictionary(e.ctx, bytesPtr(o.dict), C.size_t(len(o.dict))))
	}
	if err != nil {
		e.release()
		return nil, err
	}
	e.held = &cctxHolder{e.ctx}
	runtime.AddCleanup(e, func(h *cctxHolder) {
		if h.ctx != nil {
			C.ZSTD_freeCCtx(h.ctx)
		}
	}, e.held)
	return e, nil
}

func (e *zstdCEncoder) stream(dst, p []byte, op C.int) ([]byte, error) {
	if e.ctx == nil {
		return dst, errors.New("libzstd: encoder released")
	}
	if need := len(dst) + int(C.ZSTD_compressBound(C.size_t(len(p)))) + 64; cap(dst) < need {
		nd := make([]byte, len(dst), need)
		copy(nd, dst)
		dst = nd
	}
	for {
		free := dst[len(dst):cap(dst)]
		C.streamsim_compress(e.ctx, bytesPtr(free), C.size_t(len(free)), bytesPtr(p), C.size_t(len(p)), op, &e.res)
		runtime.KeepAlive(p)
		if err := zstdCError(e.res.code); err != nil {
			return dst, err
		}
		dst = dst[:len(dst)+int(e.res.out)]
		p = p[int(e.res.in):]
		if e.res.code == 0 && len(p) == 0 {
			return dst, nil // all of p is in dst and flushed
		}
		// More to write than dst holds: grow by what libzstd says is left.
		nd := make([]byte, len(dst), 2*cap(dst)+int(e.res.code))
		copy(nd, dst)
		dst = nd
	}
}

func (e *zstdCEncoder) flush(dst, p []byte) ([]byte, error) {
	return e.stream(dst, p, C.streamsim_e_flush)
}

func (e *zstdCEncoder) end(dst []byte) ([]byte, error) {
	return e.stream(dst, nil, C.streamsim_e_end)
}

// stateBytes is libzstd's own count of the context's memory.
func (e *zstdCEncoder) stateBytes() int64 {
	if e.ctx == nil {
		return e.last
	}
	return int64(C.ZSTD_sizeof_CCtx(e.ctx))
}

// reset starts a new frame: libzstd's session reset keeps the parameters and dictionary.
func (e *zstdCEncoder) reset() error {
	if e.ctx == nil {
		return errors.New("libzstd: encoder released")
	}
	return zstdCError(C.ZSTD_CCtx_reset(e.ctx, C.streamsim_reset_session_only))
}

func (e *zstdCEncoder) release() {
	if e.ctx != nil {
		e.last = e.stateBytes()
		C.ZSTD_freeCCtx(e.ctx)
		e.ctx = nil
		if e.held != nil {
			e.held.ctx = nil
		}
	}
}

// zstdCDecoder is a libzstd decompression context reading from r (the block gate, which
// hands it at most one block at a time).
type zstdCDecoder struct {
	ctx     *C.ZSTD_DCtx
	held    *dctxHolder
	r       io.Reader
	in      []byte // in[pos:end] given by r, not yet consumed by libzstd
	pos     int
	end     int
	inFrame bool // libzstd has started a frame it has not finished
	last    int64
	res     C.streamsim_zstd_result
}

func newZstdCDecoder(r io.Reader, s Spec, o options) (zstdDecoder, error) {
	d := &zstdCDecoder{ctx: C.ZSTD_createDCtx(), r: r, in: make([]byte, zstdMaxBlockBytes+64)}
	if d.ctx == nil {
		return nil, errors.New("libzstd: cannot create a decompression context")
	}
	// The window bound: libzstd refuses frames needing a larger history.
	err := zstdCError(C.ZSTD_DCtx_setParameter(d.ctx, C.streamsim_d_windowLogMax, C.int(max(10, bits.Len(uint(s.WindowBytes))-1))))
	if err == nil && len(o.dict) > 0 {
		err = zstdCError(C.ZSTD_DCtx_loadDictionary(d.ctx, bytesPtr(o.dict), C.size_t(len(o.dict))))
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	d.held = &dctxHolder{d.ctx}
	runtime.AddCleanup(d, func(h *dctxHolder) {
		if h.ctx != nil {
			C.ZSTD_freeDCtx(h.ctx)
		}
	}, d.held)
	return d, nil
}

// Read returns the decoded bytes of at most one block (p must hold a whole block).
func (d *zstdCDecoder) Read(p []byte) (int, error) {
	if d.ctx == nil {
		return 0, errors.New("libzstd: read from closed decoder")
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if d.pos == d.end {
			n, err := d.r.Read(d.in)
			if n == 0 {
				if err == io.EOF && d.inFrame {
					return 0, fmt.Errorf("libzstd: stream ends inside a frame: %w", io.ErrUnexpectedEOF)
				}
				if err != nil {
					return 0, err
				}
				continue
			}
			d.pos, d.end = 0, n
		}
		in := d.in[d.pos:d.end]
		C.streamsim_decompress(d.ctx, bytesPtr(p), C.size_t(len(p)), bytesPtr(in), C.size_t(len(in)), &d.res)
		runtime.KeepAlive(p)
		runtime.KeepAlive(in)
		if err := zstdCError(d.res.code); err != nil {
			return 0, err
		}
		if d.res.in == 0 && d.res.out == 0 {
			return 0, errors.New("libzstd: decoder made no progress")
		}
		d.pos += int(d.res.in)
		// 0: a frame is complete and flushed; otherwise more input is expected.
		d.inFrame = d.res.code != 0
		if d.res.out > 0 {
			return int(d.res.out), nil
		}
	}
}

// stateBytes is libzstd's own count of the context's memory plus the input buffer.
func (d *zstdCDecoder) stateBytes() int64 {
	if d.ctx == nil {
		return d.last
	}
	return int64(C.ZSTD_sizeof_DCtx(d.ctx)) + int64(cap(d.in))
}

// reset reads a new stream from r: libzstd's session reset keeps the window bound and
// dictionary; the input buffer is kept, emptied.
func (d *zstdCDecoder) reset(r io.Reader) error {
	if d.ctx == nil {
		return errors.New("libzstd: decoder closed")
	}
	d.r, d.pos, d.end, d.inFrame = r, 0, 0, false
	return zstdCError(C.ZSTD_DCtx_reset(d.ctx, C.streamsim_reset_session_only))
}

func (d *zstdCDecoder) Close() {
	if d.ctx != nil {
		d.last = d.stateBytes()
		C.ZSTD_freeDCtx(d.ctx)
		d.ctx = nil
		if d.held != nil {
			d.held.ctx = nil
		}
	}
}
