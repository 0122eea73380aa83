package snappystream

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	"github.com/streamsim/streamsim/internal/longtest"
)

// ihaveStream returns frames shaped like the IHAVE control a gossipsub peer sends: each
// frame carries a topic and message ids (20 bytes, each behind its protobuf field tag and
// length), batch k's new ids together with the ids of batches k−lag1 and k−lag2, shuffled
// per frame as pubsub shuffles them. Each id thus appears three times, the repeats
// lag1 and lag2 frames (about lag × 1.3 KiB of stream) after the first.
func ihaveStream(rng *rand.Rand, frames, idsPerBatch, lag1, lag2 int) [][]byte {
	topic := []byte("/eth2/4a26c58b/beacon_attestation_17/ssz_snappy")
	batches := make([][][]byte, frames)
	out := make([][]byte, frames)
	for k := range frames {
		batches[k] = make([][]byte, idsPerBatch)
		for i := range batches[k] {
			batches[k][i] = random(rng, 20)
		}
		var ids [][]byte
		for _, b := range []int{k, k - lag1, k - lag2} {
			if b >= 0 {
				ids = append(ids, batches[b]...)
			}
		}
		rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		f := []byte{0x12, 0, 0x0a, byte(len(topic))} // control, ihave: topic
		f = append(f, topic...)
		for _, id := range ids {
			f = append(f, 0x12, 20)
			f = append(f, id...)
		}
		out[k] = f
	}
	return out
}

// encodeRatio encodes msgs on one stream and decodes them back; it returns the stream's
// bytes over the input's, counting the frames after skip only (the history is warm then).
func encodeRatio(t *testing.T, enc *Encoder, window int, msgs [][]byte, skip int) float64 {
	t.Helper()
	dec := NewDecoder(window, 0)
	var in, wire int
	var block, out []byte
	for i, m := range msgs {
		block = enc.Encode(block[:0], m)
		var err error
		if out, err = dec.Decode(out[:0], block); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if string(out) != string(m) {
			t.Fatalf("frame %d decodes to different bytes", i)
		}
		if i >= skip {
			in += len(m)
			wire += len(block)
		}
	}
	return float64(wire) / float64(in)
}

// TestFarRepeats checks that ids recurring 130 KiB and 520 KiB back on an IHAVE-like stream
// are found with a 1 MiB window: a third of the ids are new (incompressible), two thirds
// repeat, so an encoder that finds every repeat sends about half the bytes. A table of
// 2^14 entries (the encoder's before its tables followed the window) forgets them.
func TestFarRepeats(t *testing.T) {
	msgs := ihaveStream(rand.New(rand.NewSource(25)), 1200, 20, 100, 400)
	const window = 1 << 20
	for _, tc := range []struct {
		level    Level
		bits     uint // 0: the encoder's own
		min, max float64
	}{
		{Fast, 0, 0, 0.60},
		{Better, 0, 0, 0.60},
		{Fast, 14, 0.85, 1}, // the test's control: a small table misses the repeats
	} {
		t.Run(fmt.Sprintf("%s/bits=%d", tc.level, tc.bits), func(t *testing.T) {
			enc := NewEncoder(window, tc.level)
			if tc.bits != 0 {
				enc.fastBits = tc.bits
				enc.fast = make([]uint32, 1<<tc.bits)
			}
			r := encodeRatio(t, enc, window, msgs, 500)
			t.Logf("%.1f %% of raw", 100*r)
			if r < tc.min || r > tc.max {
				t.Errorf("%.1f %% of raw, want %.0f–%.0f %%", 100*r, 100*tc.min, 100*tc.max)
			}
		})
	}
}

// TestStateBytes pins the memory one stream direction holds once its window is full of
// 240-byte messages (docs/codecs.md states these figures): the window plus room for the
// blocks to come (at least 16 KiB, at most 4 MiB) and one block, and the tables: 4 bytes
// per entry, 2^clamp(log2(window)−2, 14, 20) entries for fast, 2^clamp(…, 15, 20) + 2^14
// for better.
func TestStateBytes(t *testing.T) {
	const kib, mib = 1 << 10, 1 << 20
	msg := make([]byte, 240)
	for _, tc := range []struct {
		window             int
		fastTab, betterTab int
	}{
		{4 * kib, 64 * kib, 192 * kib},
		{64 * kib, 64 * kib, 192 * kib},
		{1 * mib, 1 * mib, 1*mib + 64*kib},
		{16 * mib, 4 * mib, 4*mib + 64*kib},
	} {
		if testing.Short() && tc.window > mib {
			continue
		}
		room := min(max(tc.window, 16*kib), 4*mib)
		for _, l := range levels {
			enc := NewEncoder(tc.window, l)
			dec := NewDecoder(tc.window, 0)
			var block, out []byte
			for i := 0; i < 2*(tc.window+room)/len(msg)+10; i++ {
				msg[0], msg[1] = byte(i), byte(i>>8)
				block = enc.Encode(block[:0], msg)
				var err error
				if out, err = dec.Decode(out[:0], block); err != nil {
					t.Fatal(err)
				}
			}
			tab := tc.fastTab
			if l == Better {
				tab = tc.betterTab
			}
			win := tc.window + room + len(msg)
			if got := enc.StateBytes(); got != win+tab {
				t.Errorf("window %d %s: encoder holds %d bytes, want %d (window and room %d, tables %d)", tc.window, l, got, win+tab, win, tab)
			}
			if got := dec.StateBytes(); got != win {
				t.Errorf("window %d: decoder holds %d bytes, want %d", tc.window, got, win)
			}
			t.Logf("window %d %s: encoder %d KiB, decoder %d KiB", tc.window, l, enc.StateBytes()>>10, dec.StateBytes()>>10)
		}
	}
}

// TestPositionsWrap runs streams past 2^24 bytes, where table entries (positions modulo
// 2^24) alias positions of other contents, with repeats near the 16 MiB window's edge: every
// block must still decode to its message (a candidate is used only after its bytes and its
// distance are checked).
func TestPositionsWrap(t *testing.T) {
	longtest.Skip(t, "positions past 4 GiB of stream")
	if testing.Short() {
		t.Skip("streams of 40 MiB")
	}
	rng := rand.New(rand.NewSource(24))
	const msgBytes = 64 << 10
	base := structured(rng, 1<<24+3*msgBytes) // 16 MiB of content, then its start again
	var msgs [][]byte
	for off := 0; len(msgs) < (40<<20)/msgBytes; off += msgBytes {
		if off+msgBytes > len(base) {
			off = rng.Intn(7) // repeats 2^24 − 6 … 2^24 + 3×64 KiB back
		}
		msgs = append(msgs, base[off:off+msgBytes])
	}
	for _, window := range []int{64 << 10, MaxWindowBytes} {
		for _, l := range levels {
			r := encodeRatio(t, NewEncoder(window, l), window, msgs, 0)
			t.Logf("window %d %s: %.1f %% of raw", window, l, 100*r)
		}
	}
}

// FuzzEncode checks that the encoder's output, for arbitrary messages, windows and both
// levels, decodes to the messages with the package's decoder and with the reference.
func FuzzEncode(f *testing.F) {
	f.Add([]byte("/eth2/4a26c58b/beacon_attestation_12/ssz_snappy attestation data attestation data"), uint8(3), uint8(1))
	f.Add(bytes.Repeat([]byte{0x12, 20, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 40), uint8(7), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, split, windowSel uint8) {
		window := []int{0, 16, 4 << 10, 64 << 10, 1 << 20}[int(windowSel)%5]
		var msgs [][]byte
		for n := int(split)%97 + 1; len(data) > 0; n = n*7%97 + 1 {
			n = min(n, len(data))
			msgs = append(msgs, data[:n])
			data = data[n:]
		}
		for _, l := range levels {
			enc := NewEncoder(window, l)
			var stream []byte
			for _, m := range msgs {
				stream = enc.Encode(stream, m)
			}
			got, err := decodeAll(stream, window, 1<<16)
			if err != nil || !bytes.Equal(got, bytes.Join(msgs, nil)) {
				t.Fatalf("window %d %s: decode: %v", window, l, err)
			}
			checkAgainstReference(t, stream, window, 1<<16)
		}
	})
}

// TestRepeatsAfterRandom: frames of kilobytes of incompressible bytes (signatures, blob
// cells) followed by 120 IHAVE ids, a third of them repeated from the frame before, as
// go-libp2p-pubsub writes a frame's control after its messages. fast must still be finding
// the repeats when the ids come (within 2 points of better on the ids' bytes) after any
// length of the random part at 1 MiB, after up to 8 KiB at 64 KiB (after 32 KiB, the
// probes through the random part have overwritten a share of the 2^14 entries that held
// the previous frame's ids, 35 KB back).
func TestRepeatsAfterRandom(t *testing.T) {
	for _, window := range []int{64 << 10, 1 << 20} {
		for _, prefix := range []int{0, 2 << 10, 8 << 10, 32 << 10} {
			var sizes [2]float64
			for li, l := range levels {
				rng := rand.New(rand.NewSource(36))
				enc := NewEncoder(window, l)
				var prev [][]byte
				var idBytes, wire int
				for k := range 40 {
					ids := make([][]byte, 120)
					for i := range ids {
						if i%3 == 0 && prev != nil {
							ids[i] = prev[rng.Intn(len(prev))]
						} else {
							ids[i] = random(rng, 20)
						}
					}
					prev = ids
					f := random(rng, prefix)
					for _, id := range ids {
						f = append(append(f, 0x12, 20), id...)
					}
					n := len(enc.Encode(nil, f))
					if k >= 10 {
						// The random part costs its size plus a few literal headers.
						wire += n - prefix
						idBytes += len(f) - prefix
					}
				}
				sizes[li] = 100 * float64(wire) / float64(idBytes)
			}
			t.Logf("window %d, %5d random bytes before: ids at %.1f %% (fast), %.1f %% (better)", window, prefix, sizes[0], sizes[1])
			if sizes[0] > sizes[1]+2 && (window > DefaultWindowBytes || prefix <= 8<<10) {
				t.Errorf("window %d, %d random bytes before the ids: fast sends them at %.1f %%, better at %.1f %%", window, prefix, sizes[0], sizes[1])
			}
		}
	}
}
