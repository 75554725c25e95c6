//go:build !purego

#include "textflag.h"

// The 2×2, stride-2 max pool kernels of pool_amd64.go, four
// windows (eight float32s of each of the two input rows) per AVX2 step.
// They work on negated values: Go's max(a, b) is −min(−a, −b), min(x, y)
// being VMINPS(x, y) | VMINPS(y, x) (a NaN or −0 wins whichever operand
// it is), the bits of the compiler's lowering of max. The ties of a window
// (pool.go) are its elements equal to the maximum, or its NaNs
// when the maximum is NaN.

DATA poolSign<>+0(SB)/4, $0x80000000
GLOBL poolSign<>(SB), RODATA|NOPTR, $4

DATA poolOne<>+0(SB)/4, $0x3f800000
GLOBL poolOne<>(SB), RODATA|NOPTR, $4

// poolEvens selects elements 0, 2, 4, 6 into the low half.
DATA poolEvens<>+0(SB)/4, $0
DATA poolEvens<>+4(SB)/4, $2
DATA poolEvens<>+8(SB)/4, $4
DATA poolEvens<>+12(SB)/4, $6
DATA poolEvens<>+16(SB)/4, $0
DATA poolEvens<>+20(SB)/4, $0
DATA poolEvens<>+24(SB)/4, $0
DATA poolEvens<>+28(SB)/4, $0
GLOBL poolEvens<>(SB), RODATA|NOPTR, $32

// WINMIN leaves in Y4 the negated maxima of the four windows whose rows,
// negated, are Y0 = (−a −b …) and Y1 = (−c −d …), each twice (elements 2k
// and 2k+1 for window k), taken in Go's order, min(min(min(−a, −b), −c),
// −d), so that even a NaN's payload is the Go loop's; Y2, Y3 and Y5 are
// clobbered.
#define WINMIN \
	VPERMILPS $0xB1, Y0, Y2 \
	VMINPS Y2, Y0, Y3 \
	VMINPS Y0, Y2, Y4 \
	VORPS Y4, Y3, Y3 \
	VMOVSLDUP Y1, Y2 \
	VMINPS Y2, Y3, Y4 \
	VMINPS Y3, Y2, Y5 \
	VORPS Y5, Y4, Y3 \
	VMOVSHDUP Y1, Y2 \
	VMINPS Y2, Y3, Y4 \
	VMINPS Y3, Y2, Y5 \
	VORPS Y5, Y4, Y4

// func maxPool22FwdF32AVX2(out, x *float32, w, ow, oh, groups int)
// out [oh ow] gets the maxima of the first 4·groups windows of each row.
TEXT ·maxPool22FwdF32AVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), R8
	SHLQ $2, R8
	MOVQ ow+24(FP), R9
	SHLQ $2, R9
	MOVQ oh+32(FP), R10
	MOVQ groups+40(FP), R11
	VBROADCASTSS poolSign<>(SB), Y15
	VMOVDQU poolEvens<>(SB), Y14
	TESTQ R10, R10
	JLE fwd_done
	TESTQ R11, R11
	JLE fwd_done

fwd_y:
	MOVQ SI, R12
	LEAQ (SI)(R8*1), R13
	MOVQ DI, R14
	MOVQ R11, CX

fwd_g:
	VXORPS (R12), Y15, Y0
	VXORPS (R13), Y15, Y1
	WINMIN
	VPERMPS Y4, Y14, Y4
	VXORPS Y15, Y4, Y4
	VMOVUPS X4, (R14)
	ADDQ $32, R12
	ADDQ $32, R13
	ADDQ $16, R14
	DECQ CX
	JNZ fwd_g

	LEAQ (SI)(R8*2), SI
	ADDQ R9, DI
	DECQ R10
	JNZ fwd_y

fwd_done:
	VZEROUPPER
	RET

// func maxPool22BackF32AVX2(back, x, cot *float32, w, ow, oh, groups int)
// back's elements under the first 4·groups windows of each row of g [oh
// ow] get the window's cotangent divided by its count of ties where they
// tie, else 0, as wt·(g/count) + 0 (the bits of maxPlane22).
TEXT ·maxPool22BackF32AVX2(SB), NOSPLIT, $0-56
	MOVQ back+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ cot+16(FP), DX
	MOVQ w+24(FP), R8
	SHLQ $2, R8
	MOVQ ow+32(FP), R9
	SHLQ $2, R9
	MOVQ oh+40(FP), R10
	MOVQ groups+48(FP), R11
	VBROADCASTSS poolSign<>(SB), Y15
	VBROADCASTSS poolOne<>(SB), Y14
	VXORPS Y13, Y13, Y13
	TESTQ R10, R10
	JLE back_done
	TESTQ R11, R11
	JLE back_done

back_y:
	MOVQ SI, R12
	LEAQ (SI)(R8*1), R13
	MOVQ DI, R14
	LEAQ (DI)(R8*1), BX
	MOVQ DX, AX
	MOVQ R11, CX

back_g:
	VXORPS (R12), Y15, Y0
	VXORPS (R13), Y15, Y1
	WINMIN
	VCMPPS $3, Y4, Y4, Y5 // the maximum is NaN
	VCMPPS $3, Y0, Y0, Y6
	VCMPPS $3, Y1, Y1, Y7
	VANDPS Y5, Y6, Y6
	VANDPS Y5, Y7, Y7
	VCMPPS $0, Y4, Y0, Y8
	VCMPPS $0, Y4, Y1, Y9
	VORPS Y6, Y8, Y8
	VORPS Y7, Y9, Y9
	VANDPS Y14, Y8, Y8 // 1 where the upper row's element ties, else 0
	VANDPS Y14, Y9, Y9 // the lower row's
	VADDPS Y9, Y8, Y10
	VPERMILPS $0xB1, Y10, Y11
	VADDPS Y11, Y10, Y10 // the window's count of ties, twice
	VMOVUPS (AX), X11
	VUNPCKHPS X11, X11, X12
	VUNPCKLPS X11, X11, X11
	VINSERTF128 $1, X12, Y11, Y11 // each window's cotangent, twice
	VDIVPS Y10, Y11, Y11
	VMULPS Y11, Y8, Y8
	VADDPS Y13, Y8, Y8
	VMULPS Y11, Y9, Y9
	VADDPS Y13, Y9, Y9
	VMOVUPS Y8, (R14)
	VMOVUPS Y9, (BX)
	ADDQ $32, R12
	ADDQ $32, R13
	ADDQ $32, R14
	ADDQ $32, BX
	ADDQ $16, AX
	DECQ CX
	JNZ back_g

	LEAQ (SI)(R8*2), SI
	LEAQ (DI)(R8*2), DI
	ADDQ R9, DX
	DECQ R10
	JNZ back_y

back_done:
	VZEROUPPER
	RET
