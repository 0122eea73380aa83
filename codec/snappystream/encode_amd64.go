//go:build amd64 && gc && !noasm && !purego

package snappystream

// encodeFastBlock is encodeFastBlockGo in amd64 assembly (encode_amd64.s): the same
// output and the same table, with the loop's state held in registers, which the Go
// compiler's loop spills at every probe (docs/measurements/codecs.md, "Encode speed at
// 64 KiB after the match finder").
//
//go:noescape
func encodeFastBlock(dst, win []byte, table []uint32, bs, lo int, base uint32, shift uint, gentle bool) (d int)

// fastBlockAsm says whether encodeFastBlock is the assembly (the differential tests
// compare it with encodeFastBlockGo).
const fastBlockAsm = true

// The assembly writes these constants as literals: a far match needs the 8 bytes of one
// load, positions and tags split entries at bit 24, the gentle step shifts by 6, the
// steps are capped at 5 and 16.
var (
	_ = [1]struct{}{}[minFarMatch-8]
	_ = [1]struct{}{}[posBits-24]
	_ = [1]struct{}{}[gentleSkipShift-6]
	_ = [1]struct{}{}[maxSkipStep-5]
	_ = [1]struct{}{}[maxGentleStep-16]
)
