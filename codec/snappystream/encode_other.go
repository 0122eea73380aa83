//go:build !amd64 || !gc || noasm || purego

package snappystream

// encodeFastBlock is the portable encodeFastBlockGo where there is no assembly.
func encodeFastBlock(dst, win []byte, table []uint32, bs, lo int, base uint32, shift uint, gentle bool) (d int) {
	return encodeFastBlockGo(dst, win, table, bs, lo, base, shift, gentle)
}

const fastBlockAsm = false
