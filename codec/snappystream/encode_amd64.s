//go:build amd64 && gc && !noasm && !purego

#include "textflag.h"

// func encodeFastBlock(dst, win []byte, table []uint32, bs, lo int, base uint32, shift uint, gentle bool) (d int)
//
// encodeFastBlockGo (encode.go) in assembly, step for step: the same probes in the same
// order, the same table writes, the same elements. Every load is bounded as there: 8-byte
// loads only at indices ≤ sLimit = len(win) − 8, byte loads below len(win), literal
// copies within [nextEmit, s) or [nextEmit, len(win)) (the last bytes with overlapping
// loads inside the literal, never past it). Writes stay within the MaxEncodedLen room
// the caller gives dst.
//
// Registers, the whole function:
//	DX	&win[0]
//	R8	&table[0]
//	CX	shift − 8 (CL: the hash's variable shift)
//	R11	base
//	R13	sLimit
//	DI	&dst[d]
// in the skip loop:
//	SI	s
//	R15	nextS
//	R9	x = load64(win, s)
//	R10	skip
//	AX, BX, R12, R14 scratch (R12 the candidate c, R14 its distance)
// after a match: SI s, R12 c, AX length.
// Frame: 0(SP) nextEmit, 8(SP) lo, 16–48(SP) the re-probe's (below).
TEXT ·encodeFastBlock(SB), NOSPLIT, $56-120
	MOVQ dst_base+0(FP), DI
	MOVQ win_base+24(FP), DX
	MOVQ win_len+32(FP), R13
	SUBQ $8, R13
	MOVQ table_base+48(FP), R8
	MOVQ bs+72(FP), SI
	MOVQ SI, 0(SP)
	MOVQ lo+80(FP), AX
	MOVQ AX, 8(SP)
	MOVL base+88(FP), R11
	MOVQ shift+96(FP), CX
	SUBQ $8, CX

outer:
	// if s > sLimit { goto emitRemainder }; skip := 16; x := load64(win, s)
	CMPQ SI, R13
	JGT  remainder
	MOVQ $16, R10
	MOVQ (DX)(SI*1), R9

probe:
	// step := min(skip>>4, maxSkipStep), or min(1 + (s-nextEmit)>>gentleSkipShift,
	// maxGentleStep) when gentle
	// (the caps by a branch, fused with its compare: fewer µops than a conditional move,
	// and taken only through runs without a match)
	CMPB gentle+104(FP), $0
	JNE  gentleStep
	MOVQ R10, AX
	SHRQ $4, AX
	CMPQ AX, $5
	JLE  stepped
	MOVQ $5, AX
	JMP  stepped

gentleStep:
	MOVQ SI, AX
	SUBQ 0(SP), AX
	SHRQ $6, AX
	INCQ AX
	CMPQ AX, $16
	JLE  stepped
	MOVQ $16, AX

stepped:
	// nextS = s + step; skip += step
	LEAQ (SI)(AX*1), R15
	ADDQ AX, R10

	// h, tag := hash6(x, shift): t = ((x<<16)*prime) >> (shift-8); h = t>>8, tag = uint8(t)
	MOVQ  R9, AX
	SHLQ  $16, AX
	MOVQ  $227718039650203, BX
	IMULQ BX, AX
	SHRQ  CX, AX
	MOVQ  AX, BX
	SHRQ  $8, BX

	// v := table[h]; table[h] = tag<<24 | (base+s)&posMask
	SHLL $24, AX
	LEAL (R11)(SI*1), R14
	ANDL $0xffffff, R14
	ORL  R14, AX
	MOVL (R8)(BX*4), R12
	MOVL AX, (R8)(BX*4)

	// v's tag must be tag
	XORL R12, AX
	SHRL $24, AX
	JNZ  miss

	// dist := (base+s-v) & posMask, not 0; c := s - dist, not below lo
	SUBL R12, R14
	ANDL $0xffffff, R14
	JZ   miss
	MOVQ SI, R12
	SUBQ R14, R12
	CMPQ R12, 8(SP)
	JLT  miss

	// length := matchLen(win, c, s, x)
	MOVQ (DX)(R12*1), AX
	XORQ R9, AX
	JZ   long
	BSFQ AX, AX
	SHRQ $3, AX
	CMPQ AX, $4
	JLT  miss

	// A far match needs minFarMatch = 8 bytes: only the long path has them.
	CMPQ R14, $65535
	JLE  found

miss:
	// if nextS > sLimit { goto emitRemainder }; s = nextS
	CMPQ R15, R13
	JGT  remainder
	MOVQ R15, SI
	MOVQ (DX)(SI*1), R9
	JMP  probe

long:
	// length = 8 + commonPrefix(win[c+8:], win[s+8:]): BX = c+i, R14 = s+i
	LEAQ 8(R12), BX
	LEAQ 8(SI), R14

long8:
	CMPQ R14, R13
	JGT  long1
	MOVQ (DX)(R14*1), AX
	XORQ (DX)(BX*1), AX
	JNZ  longBsf
	ADDQ $8, BX
	ADDQ $8, R14
	JMP  long8

longBsf:
	BSFQ AX, AX
	SHRQ $3, AX
	ADDQ AX, R14
	JMP  longDone

long1:
	CMPQ R14, win_len+32(FP)
	JGE  longDone
	MOVB (DX)(R14*1), AX
	CMPB AX, (DX)(BX*1)
	JNE  longDone
	INCQ BX
	INCQ R14
	JMP  long1

longDone:
	MOVQ R14, AX
	SUBQ SI, AX

found:
	// Extend backwards: for s > nextEmit && c > lo && win[c-1] == win[s-1]
	MOVQ 0(SP), R14
	MOVQ 8(SP), BX

back:
	CMPQ SI, R14
	JLE  reprobeStart
	CMPQ R12, BX
	JLE  reprobeStart
	MOVB -1(DX)(SI*1), R9
	CMPB R9, -1(DX)(R12*1)
	JNE  reprobeStart
	DECQ SI
	DECQ R12
	INCQ AX
	JMP  back

reprobeStart:
	// For k = 2, then 1: a longer match through the entry of p = s+length-k. p > s
	// (length ≥ 4); p ≤ sLimit is needed for its load. Both hashes and table reads are
	// issued before either is checked, and the hashes kept (16 and 24(SP)): when nothing
	// longer is found they index s-2 and s-1 after the copy. 40(SP): k = 1 pending;
	// 48(SP): the kept hashes are those of the new s-2 and s-1.
	MOVQ $0, 48(SP)
	LEAQ -2(SI)(AX*1), R15
	CMPQ R15, R13
	JGT  emit
	MOVQ  (DX)(R15*1), BX
	SHLQ  $16, BX
	MOVQ  $227718039650203, R9
	IMULQ R9, BX
	SHRQ  CX, BX
	MOVQ  BX, 16(SP)
	MOVQ  $0, 40(SP)
	CMPQ  R15, R13
	JGE   reprobeOne
	MOVQ  1(DX)(R15*1), R10
	SHLQ  $16, R10
	IMULQ R9, R10
	SHRQ  CX, R10
	MOVQ  R10, 24(SP)
	MOVQ  R10, R14
	SHRQ  $8, R14
	MOVL  (R8)(R14*4), R14
	MOVL  R14, 32(SP)
	MOVQ  $1, 40(SP)
	MOVQ  $1, 48(SP)

reprobeOne:
	MOVQ BX, R9
	SHRQ $8, R9
	MOVL (R8)(R9*4), R9

reprobe:
	// R15 = p, BX = its hash t, R9 = v = table[t>>8]
	// v>>24 == tag
	MOVL R9, R14
	SHRL $24, R14
	CMPB R14, BX
	JNE  reprobeNext

	// c2 := s - (base+p-v)&posMask: not c, not below lo, below s
	LEAL (R11)(R15*1), R14
	SUBL R9, R14
	ANDL $0xffffff, R14
	MOVQ SI, R9
	SUBQ R14, R9
	CMPQ R9, R12
	JEQ  reprobeNext
	CMPQ R9, 8(SP)
	JLT  reprobeNext
	CMPQ R9, SI
	JGE  reprobeNext

	// s+length < len(win) && win[c2+length] == win[s+length]
	LEAQ (SI)(AX*1), R14
	CMPQ R14, win_len+32(FP)
	JGE  reprobeNext
	MOVB (DX)(R14*1), BX
	LEAQ (R9)(AX*1), R15
	CMPB BX, (DX)(R15*1)
	JNE  reprobeNext

	// n := commonPrefix(win[c2:], win[s:]): R15 = c2+i, R14 = s+i
	MOVQ R9, R15
	MOVQ SI, R14

rp8:
	CMPQ R14, R13
	JGT  rp1
	MOVQ (DX)(R14*1), BX
	XORQ (DX)(R15*1), BX
	JNZ  rpBsf
	ADDQ $8, R15
	ADDQ $8, R14
	JMP  rp8

rpBsf:
	BSFQ BX, BX
	SHRQ $3, BX
	ADDQ BX, R14
	JMP  rpDone

rp1:
	CMPQ R14, win_len+32(FP)
	JGE  rpDone
	MOVB (DX)(R14*1), BX
	CMPB BX, (DX)(R15*1)
	JNE  rpDone
	INCQ R15
	INCQ R14
	JMP  rp1

rpDone:
	// n > length && (s-c2 <= 65535 || s-c > 65535)
	SUBQ SI, R14
	CMPQ R14, AX
	JLE  reprobeNext
	MOVQ SI, BX
	SUBQ R9, BX
	CMPQ BX, $65535
	JLE  rpTake
	MOVQ SI, BX
	SUBQ R12, BX
	CMPQ BX, $65535
	JLE  reprobeNext

rpTake:
	MOVQ R9, R12
	MOVQ R14, AX
	MOVQ $0, 48(SP)
	JMP  emit

reprobeNext:
	CMPQ 40(SP), $0
	JEQ  emit
	MOVQ $0, 40(SP)
	LEAQ -1(SI)(AX*1), R15
	MOVQ 24(SP), BX
	MOVL 32(SP), R9
	JMP  reprobe

emit:
	// The literal win[nextEmit:s], then (AX ≠ 0) the copy.
	MOVQ 0(SP), R10
	MOVQ SI, R15
	SUBQ R10, R15
	JMP  literal

remainder:
	// The literal win[nextEmit:], then return (AX = 0: no copy).
	XORL AX, AX
	MOVQ 0(SP), R10
	MOVQ win_len+32(FP), R15
	SUBQ R10, R15

literal:
	// emitLiteral: R10 = nextEmit, R15 = n bytes; BX, R9, R14 scratch.
	TESTQ R15, R15
	JZ    litDone
	LEAQ  (DX)(R10*1), R10
	MOVQ  R15, BX
	DECQ  BX
	CMPQ  BX, $60
	JGE   litHdr2
	SHLB  $2, BX
	MOVB  BX, (DI)
	INCQ  DI
	JMP   litCopy

litHdr2:
	CMPQ BX, $256
	JGE  litHdr3
	MOVB $0xf0, (DI)
	MOVB BX, 1(DI)
	ADDQ $2, DI
	JMP  litCopy

litHdr3:
	CMPQ BX, $65536
	JGE  litHdr4
	MOVB $0xf4, (DI)
	MOVW BX, 1(DI)
	ADDQ $3, DI
	JMP  litCopy

litHdr4:
	CMPQ BX, $16777216
	JGE  litHdr5
	MOVB $0xf8, (DI)
	MOVW BX, 1(DI)
	SHRQ $16, BX
	MOVB BX, 3(DI)
	ADDQ $4, DI
	JMP  litCopy

litHdr5:
	MOVB $0xfc, (DI)
	MOVL BX, 1(DI)
	ADDQ $5, DI

litCopy:
	// 16 bytes at a time; the last 1–15 with loads that end at the literal's end.
	CMPQ R15, $16
	JLT  litShort

litLoop:
	MOVOU (R10), X0
	MOVOU X0, (DI)
	ADDQ  $16, R10
	ADDQ  $16, DI
	SUBQ  $16, R15
	CMPQ  R15, $16
	JGE   litLoop
	TESTQ R15, R15
	JZ    litDone
	MOVOU -16(R10)(R15*1), X0
	MOVOU X0, -16(DI)(R15*1)
	ADDQ  R15, DI
	JMP   litDone

litShort:
	CMPQ R15, $8
	JLT  lit4
	MOVQ (R10), BX
	MOVQ -8(R10)(R15*1), R9
	MOVQ BX, (DI)
	MOVQ R9, -8(DI)(R15*1)
	ADDQ R15, DI
	JMP  litDone

lit4:
	CMPQ R15, $4
	JLT  lit1
	MOVL (R10), BX
	MOVL -4(R10)(R15*1), R9
	MOVL BX, (DI)
	MOVL R9, -4(DI)(R15*1)
	ADDQ R15, DI
	JMP  litDone

lit1:
	MOVB (R10), BX
	MOVB BX, (DI)
	CMPQ R15, $2
	JLT  lit1Done
	MOVW -2(R10)(R15*1), BX
	MOVW BX, -2(DI)(R15*1)

lit1Done:
	ADDQ R15, DI

litDone:
	TESTQ AX, AX
	JZ    done

	// emitCopy(dst, s-c, length): R9 = offset, R10 = length; s += length; nextEmit = s
	MOVQ SI, R9
	SUBQ R12, R9
	MOVQ AX, R10
	ADDQ AX, SI
	MOVQ SI, 0(SP)
	CMPQ R9, $65535
	JLE  cpNear

cpFar:
	// 4-byte-offset copies of at most 64 bytes
	MOVQ R10, BX
	CMPQ BX, $63
	JLE  cpFar1
	MOVQ $64, BX

cpFar1:
	SUBQ  BX, R10
	DECQ  BX
	SHLQ  $2, BX
	ORQ   $3, BX
	MOVB  BX, (DI)
	MOVL  R9, 1(DI)
	ADDQ  $5, DI
	TESTQ R10, R10
	JNZ   cpFar
	JMP   copied

cpNear:
	CMPQ R10, $68
	JLT  cp64
	MOVB $0xfe, (DI)
	MOVW R9, 1(DI)
	ADDQ $3, DI
	SUBQ $64, R10
	JMP  cpNear

cp64:
	CMPQ R10, $64
	JLE  cpLast
	MOVB $0xee, (DI)
	MOVW R9, 1(DI)
	ADDQ $3, DI
	SUBQ $60, R10

cpLast:
	CMPQ R10, $12
	JGE  cp3
	CMPQ R9, $2048
	JGE  cp3
	CMPQ R10, $4
	JLT  cp3

	// 1-byte offset: (offset>>8)<<5 | (length-4)<<2 | tagCopy1, offset
	MOVQ R9, BX
	SHRQ $8, BX
	SHLQ $5, BX
	LEAQ -4(R10), R14
	SHLQ $2, R14
	ORQ  R14, BX
	ORQ  $1, BX
	MOVB BX, (DI)
	MOVB R9, 1(DI)
	ADDQ $2, DI
	JMP  copied

cp3:
	LEAQ -1(R10), BX
	SHLQ $2, BX
	ORQ  $2, BX
	MOVB BX, (DI)
	MOVW R9, 1(DI)
	ADDQ $3, DI

copied:
	// if s > sLimit { goto emitRemainder }; index s-2 and s-1
	CMPQ SI, R13
	JGT  remainder
	CMPQ 48(SP), $0
	JEQ  indexHash
	MOVQ 16(SP), AX
	MOVQ AX, BX
	SHRQ $8, BX
	SHLL $24, AX
	LEAL -2(R11)(SI*1), R14
	ANDL $0xffffff, R14
	ORL  R14, AX
	MOVL AX, (R8)(BX*4)
	MOVQ 24(SP), AX
	MOVQ AX, BX
	SHRQ $8, BX
	SHLL $24, AX
	LEAL -1(R11)(SI*1), R14
	ANDL $0xffffff, R14
	ORL  R14, AX
	MOVL AX, (R8)(BX*4)
	JMP  outer

indexHash:
	MOVQ  -2(DX)(SI*1), AX
	SHLQ  $16, AX
	MOVQ  $227718039650203, BX
	IMULQ BX, AX
	SHRQ  CX, AX
	MOVQ  AX, BX
	SHRQ  $8, BX
	SHLL  $24, AX
	LEAL  -2(R11)(SI*1), R14
	ANDL  $0xffffff, R14
	ORL   R14, AX
	MOVL  AX, (R8)(BX*4)

	MOVQ  -1(DX)(SI*1), AX
	SHLQ  $16, AX
	MOVQ  $227718039650203, BX
	IMULQ BX, AX
	SHRQ  CX, AX
	MOVQ  AX, BX
	SHRQ  $8, BX
	SHLL  $24, AX
	LEAL  -1(R11)(SI*1), R14
	ANDL  $0xffffff, R14
	ORL   R14, AX
	MOVL  AX, (R8)(BX*4)
	JMP   outer

done:
	SUBQ dst_base+0(FP), DI
	MOVQ DI, d+112(FP)
	RET
