//go:build linux

package snappystream

import (
	"bytes"
	"math/rand"
	"slices"
	"syscall"
	"testing"
	"unsafe"
)

// guarded is memory between two inaccessible pages: a load or store one byte outside a
// slice that ends at the page after it (atEnd) or starts after the page before (atStart)
// faults.
type guarded struct{ mem []byte }

func newGuarded(t *testing.T, n int) *guarded {
	ps := syscall.Getpagesize()
	pages := (n + ps - 1) / ps
	mem, err := syscall.Mmap(-1, 0, (pages+2)*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	for _, g := range [][]byte{mem[:ps], mem[(pages+1)*ps:]} {
		if err := syscall.Mprotect(g, syscall.PROT_NONE); err != nil {
			t.Fatal(err)
		}
	}
	return &guarded{mem: mem[ps : (pages+1)*ps]}
}

// atEnd returns n bytes ending at the guard page after them; atStart, starting after the one before.
func (g *guarded) atEnd(n int) []byte   { return g.mem[len(g.mem)-n:] }
func (g *guarded) atStart(n int) []byte { return g.mem[:n:n] }

func unsafeUint32s(b []byte) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}

// TestEncodeFastBlockBounds runs encodeFastBlock with the window, the table and dst each
// placed against an inaccessible page, the window ending right at it (blocks of every
// length from 12 to 300 bytes and around 4 KiB) or starting right after one: any load past
// win, or below it, any table index out of range and any store past the MaxEncodedLen
// room faults. Contents: random (the skip loop reaches the end), one byte repeated and a
// repeat of the history (matches run to the last byte), text-like.
func TestEncodeFastBlockBounds(t *testing.T) {
	const histBytes = 3000
	const maxBlock = 4200
	bits := uint(minFastTableBits)
	winMem := newGuarded(t, histBytes+maxBlock)
	tableMem := newGuarded(t, 4<<bits)
	dstMem := newGuarded(t, MaxEncodedLen(maxBlock))
	rng := rand.New(rand.NewSource(4096))
	hist := structured(rng, histBytes)
	contents := map[string]func(n int) []byte{
		"random":     func(n int) []byte { return random(rng, n) },
		"one-byte":   func(n int) []byte { return bytes.Repeat([]byte{hist[histBytes-1]}, n) },
		"repeat":     func(n int) []byte { return bytes.Repeat(hist, n/histBytes+1)[:n] },
		"structured": func(n int) []byte { return structured(rng, n) },
	}
	var lengths []int
	for n := 12; n <= 300; n++ {
		lengths = append(lengths, n)
	}
	for n := 4096 - 20; n <= 4096+20; n++ {
		lengths = append(lengths, n)
	}
	for name, gen := range contents {
		for _, window := range []int{0, 64 << 10, 1 << 20} {
			for _, n := range lengths {
				msg := gen(n)
				var src []byte
				bs := 0
				if window > 0 {
					src = append(slices.Clone(hist), msg...)
					bs = histBytes
				} else {
					src = msg
				}
				for _, end := range []bool{true, false} {
					win := winMem.atStart(len(src))
					if end {
						win = winMem.atEnd(len(src))
					}
					copy(win, src)
					table := tableMem.atEnd(4 << bits)
					tbl := unsafeUint32s(table)
					clear(tbl)
					base := uint32(1<<24 - 1000)
					shift := 64 - bits
					gentle := window > DefaultWindowBytes
					if bs > 0 {
						// The history indexed as the block before.
						encodeFastBlockGo(make([]byte, MaxEncodedLen(bs)), win[:bs], tbl, 0, 0, base, shift, gentle)
					}
					wantTable := slices.Clone(tbl)
					want := make([]byte, MaxEncodedLen(n))
					want = want[:encodeFastBlockGo(want, win, wantTable, bs, 0, base, shift, gentle)]
					room := MaxEncodedLen(n) - uvarintLen(n)
					dst := dstMem.atEnd(room)
					got := dst[:encodeFastBlock(dst, win, tbl, bs, 0, base, shift, gentle)]
					if !bytes.Equal(got, want) || !slices.Equal(tbl, wantTable) {
						t.Fatalf("%s, window %d, %d bytes, window at the page's end %v: differs from the portable encoder", name, window, n, end)
					}
				}
			}
		}
	}
}
