package replay

import (
	"io"
	"math/rand"
	"runtime"
	"sync"

	"github.com/streamsim/streamsim/codec"
)

// stateCurve is one configuration's codec state per stream direction, measured: the Go heap
// an encoder and its decoder hold (with the feed between them) after a given number of
// bytes went through the stream, at a few fill levels up to well past the window. Nothing
// here comes from a codec's own report of its state (codec.Stats.StateBytes is partly an
// estimate for zstd): the heap is read before and after.
type stateCurve struct {
	at    []int64 // bytes through the stream, increasing
	bytes []int64 // the state at that fill, made non-decreasing
}

// of returns the state of a stream that carried n bytes: the measured state at the first
// fill level at or above n (the state grows with the bytes, so this bounds it from above),
// or at the last level for longer streams (the last level is past the window and its
// buffers, where the state stops growing).
func (c stateCurve) of(n int64) int64 {
	for i, at := range c.at {
		if n <= at {
			return c.bytes[i]
		}
	}
	return c.bytes[len(c.bytes)-1]
}

// calibrationPairs is how many encoder–decoder pairs a measurement holds at once: the heap
// delta is divided by it, which averages out the allocator's size classes.
const calibrationPairs = 4

// calibrationFrame is the size of the frames the calibration writes. Buffers sized to the
// largest frame a stream carried are added apart (frameBuffers), from each stream's largest
// frame.
const calibrationFrame = 320

var (
	curvesMu sync.Mutex
	curves   = map[string]stateCurve{}
)

// measuredState returns cfg's state curve, measured once per process and configuration
// (dictionary configurations with a dictionary of dictMaxBytes trained on the calibration's
// frames).
func measuredState(cfg Config) stateCurve {
	curvesMu.Lock()
	defer curvesMu.Unlock()
	if c, ok := curves[cfg.Name]; ok {
		return c
	}
	c := measureState(cfg)
	curves[cfg.Name] = c
	return c
}

// calibrationData returns frames of n bytes in all with the mix of repeats a gossip stream
// has: each frame a random share of a slot's common bytes and a random tail (a signature).
// Frames are calibrationFrame bytes up to bigAfter bytes, then calibrationBigFrame bytes (a
// codec's per-frame work, not its state, grows with the number of frames).
func calibrationData(n int, seed int64) [][]byte {
	rng := rand.New(rand.NewSource(seed))
	common := make([]byte, 4*calibrationBigFrame)
	rng.Read(common)
	var frames [][]byte
	for total := 0; total < n; {
		size := calibrationFrame
		if total >= calibrationBigAfter {
			size = calibrationBigFrame
		}
		f := make([]byte, size)
		if len(frames)%64 == 0 {
			rng.Read(common) // a new slot
		}
		shared := size * 5 / 8
		off := rng.Intn(len(common) - shared)
		copy(f, common[off:off+shared])
		rng.Read(f[shared:])
		frames = append(frames, f)
		total += size
	}
	return frames
}

const (
	calibrationBigAfter = 80 << 10
	calibrationBigFrame = 16 << 10
)

// fillLevels are the bytes through a stream at which the state is measured: powers of 4
// from one frame up to twice the window plus a megabyte, where every buffer has reached its
// size.
func fillLevels(cfg Config) []int64 {
	top := int64(2*cfg.Spec.HistoryBytes()) + 1<<20
	var at []int64
	for n := int64(calibrationFrame); ; n *= 4 {
		at = append(at, min(n, top))
		if n >= top {
			return at
		}
	}
}

func heapLive() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// measureState measures cfg's state curve: calibrationPairs streams are filled side by side
// and the heap read at every fill level, after a collection, less what the frames and the
// heap held before.
func measureState(cfg Config) stateCurve {
	if cfg.None {
		return stateCurve{at: []int64{0}, bytes: []int64{0}}
	}
	levels := fillLevels(cfg)
	var dictMargin int64
	data := calibrationData(int(levels[len(levels)-1]), 1)
	var opts []codec.Option
	if cfg.Dict {
		// A dictionary of the largest size trained on frames like the streams'.
		d, err := trainDict(calibrationData(256<<10, 2), cfg.Spec.ZstdLevel)
		if err != nil {
			panic("calibration: " + cfg.Name + ": " + err.Error())
		}
		opts = append(opts, codec.WithDict(d))
		// Both ends hold the dictionary: a trained one may be larger than this one.
		dictMargin = 2 * int64(max(0, dictMaxBytes-len(d)))
	}
	type pair struct {
		feed *feed
		w    io.WriteCloser
		rd   io.ReadCloser
	}
	base := heapLive()
	pairs := make([]pair, calibrationPairs)
	for i := range pairs {
		f := &feed{}
		pairs[i] = pair{feed: f, w: cfg.Spec.NewWriter(f, opts...), rd: cfg.Spec.NewReader(f, opts...)}
	}
	c := stateCurve{}
	buf := make([]byte, calibrationBigFrame)
	done, through := 0, int64(0)
	for _, level := range levels {
		for ; through < level && done < len(data); done++ {
			f := data[done]
			through += int64(len(f))
			for _, p := range pairs {
				if _, err := p.w.Write(f); err != nil {
					panic("calibration: " + cfg.Name + ": " + err.Error())
				}
				if _, err := io.ReadFull(p.rd, buf[:len(f)]); err != nil {
					panic("calibration: " + cfg.Name + ": " + err.Error())
				}
			}
		}
		per := max(0, heapLive()-base)/calibrationPairs + dictMargin
		if n := len(c.bytes); n > 0 {
			per = max(per, c.bytes[n-1])
		}
		c.at, c.bytes = append(c.at, level), append(c.bytes, per)
	}
	runtime.KeepAlive(pairs)
	runtime.KeepAlive(data)
	for _, p := range pairs {
		p.w.Close()
		p.rd.Close()
	}
	return c
}
