//go:build !purego

#include "textflag.h"

// func pairScanSIMD(p *byte, n int, c1, c2 byte, d int) int
TEXT ·pairScanSIMD(SB), NOSPLIT, $0-40
	MOVQ    p+0(FP), SI
	MOVQ    n+8(FP), CX
	MOVBLZX c1+16(FP), AX
	MOVBLZX c2+17(FP), BX
	MOVQ    d+24(FP), DX
	MOVQ    AX, X0
	VPBROADCASTB X0, Y0
	MOVQ    BX, X1
	VPBROADCASTB X1, Y1
	LEAQ    (SI)(DX*1), R8 // p + d
	XORQ    DI, DI         // i

loop:
	LEAQ    32(DI), R9
	CMPQ    R9, CX
	JA      notfound
	VPCMPEQB (SI)(DI*1), Y0, Y2
	VPCMPEQB (R8)(DI*1), Y1, Y3
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
