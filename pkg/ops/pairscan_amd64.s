//go:build !purego

#include "textflag.h"

// func pairScanSIMD(p *byte, n int, c1, c1alt, c2, c2alt byte, d int) int
TEXT ·pairScanSIMD(SB), NOSPLIT, $0-40
	MOVQ    p+0(FP), SI
	MOVQ    n+8(FP), CX
	MOVBLZX c1+16(FP), AX
	MOVQ    AX, X0
	VPBROADCASTB X0, Y0
	MOVBLZX c1alt+17(FP), AX
	MOVQ    AX, X4
	VPBROADCASTB X4, Y4
	MOVBLZX c2+18(FP), AX
	MOVQ    AX, X1
	VPBROADCASTB X1, Y1
	MOVBLZX c2alt+19(FP), AX
	MOVQ    AX, X5
	VPBROADCASTB X5, Y5
	MOVQ    d+24(FP), DX
	LEAQ    (SI)(DX*1), R8 // p + d
	XORQ    DI, DI         // i

loop:
	LEAQ    32(DI), R9
	CMPQ    R9, CX
	JA      notfound
	VMOVDQU (SI)(DI*1), Y6
	VMOVDQU (R8)(DI*1), Y7
	VPCMPEQB Y6, Y0, Y2
	VPCMPEQB Y6, Y4, Y6
	VPOR    Y6, Y2, Y2
	VPCMPEQB Y7, Y1, Y3
	VPCMPEQB Y7, Y5, Y7
	VPOR    Y7, Y3, Y3
	VPAND   Y2, Y3, Y3
	VPMOVMSKB Y3, R10
	TESTL   R10, R10
	JNZ     found
	MOVQ    R9, DI
	JMP     loop

found:
	BSFL    R10, R10
	ADDQ    R10, DI
	VZEROUPPER
	MOVQ    DI, ret+32(FP)
	RET

notfound:
	VZEROUPPER
	MOVQ    $-1, ret+32(FP)
	RET

// func multiPairSIMD(p *byte, n int, tab *pairEntry, k int) int
//
// Each of the k entries (160 bytes: off1, off2, 16 bytes of padding, then
// the broadcast bytes c1, c1alt, c2, c2alt, 32 each) tests p[i+off1] and
// p[i+off2]; a position passes when any entry's two bytes do.
TEXT ·multiPairSIMD(SB), NOSPLIT, $0-40
	MOVQ    p+0(FP), SI
	MOVQ    n+8(FP), CX
	MOVQ    tab+16(FP), BX
	MOVQ    k+24(FP), R11
	XORQ    DI, DI         // i

mloop:
	LEAQ    32(DI), R9
	CMPQ    R9, CX
	JA      mnotfound
	LEAQ    (SI)(DI*1), R14 // p + i
	MOVQ    BX, R12         // the entry
	MOVQ    R11, R13        // entries left
	VPXOR   Y8, Y8, Y8

mentry:
	MOVQ    0(R12), AX
	MOVQ    8(R12), DX
	VMOVDQU (R14)(AX*1), Y6
	VMOVDQU (R14)(DX*1), Y7
	VPCMPEQB 32(R12), Y6, Y2
	VPCMPEQB 64(R12), Y6, Y6
	VPOR    Y6, Y2, Y2
	VPCMPEQB 96(R12), Y7, Y3
	VPCMPEQB 128(R12), Y7, Y7
	VPOR    Y7, Y3, Y3
	VPAND   Y2, Y3, Y3
	VPOR    Y3, Y8, Y8
	ADDQ    $160, R12
	DECQ    R13
	JNZ     mentry
	VPMOVMSKB Y8, R10
	TESTL   R10, R10
	JNZ     mfound
	MOVQ    R9, DI
	JMP     mloop

mfound:
	BSFL    R10, R10
	ADDQ    R10, DI
	VZEROUPPER
	MOVQ    DI, ret+32(FP)
	RET

mnotfound:
	VZEROUPPER
	MOVQ    $-1, ret+32(FP)
	RET
