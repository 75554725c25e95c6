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

// The window masks' bits (poolmask.go), per float32 lane of a row pair's
// eight elements: lane 2k is window k's left element, lane 2k+1 its right.
DATA poolBitTie0<>+0(SB)/4, $1 // upper row's ties: bits 0 (left) and 1 (right)
DATA poolBitTie0<>+4(SB)/4, $2
DATA poolBitTie0<>+8(SB)/4, $1
DATA poolBitTie0<>+12(SB)/4, $2
DATA poolBitTie0<>+16(SB)/4, $1
DATA poolBitTie0<>+20(SB)/4, $2
DATA poolBitTie0<>+24(SB)/4, $1
DATA poolBitTie0<>+28(SB)/4, $2
GLOBL poolBitTie0<>(SB), RODATA|NOPTR, $32

DATA poolBitTie1<>+0(SB)/4, $4 // lower row's ties: bits 2 and 3
DATA poolBitTie1<>+4(SB)/4, $8
DATA poolBitTie1<>+8(SB)/4, $4
DATA poolBitTie1<>+12(SB)/4, $8
DATA poolBitTie1<>+16(SB)/4, $4
DATA poolBitTie1<>+20(SB)/4, $8
DATA poolBitTie1<>+24(SB)/4, $4
DATA poolBitTie1<>+28(SB)/4, $8
GLOBL poolBitTie1<>(SB), RODATA|NOPTR, $32

DATA poolBitPos0<>+0(SB)/4, $16 // upper row's positives: bits 4 and 5
DATA poolBitPos0<>+4(SB)/4, $32
DATA poolBitPos0<>+8(SB)/4, $16
DATA poolBitPos0<>+12(SB)/4, $32
DATA poolBitPos0<>+16(SB)/4, $16
DATA poolBitPos0<>+20(SB)/4, $32
DATA poolBitPos0<>+24(SB)/4, $16
DATA poolBitPos0<>+28(SB)/4, $32
GLOBL poolBitPos0<>(SB), RODATA|NOPTR, $32

DATA poolBitPos1<>+0(SB)/4, $64 // lower row's positives: bits 6 and 7
DATA poolBitPos1<>+4(SB)/4, $128
DATA poolBitPos1<>+8(SB)/4, $64
DATA poolBitPos1<>+12(SB)/4, $128
DATA poolBitPos1<>+16(SB)/4, $64
DATA poolBitPos1<>+20(SB)/4, $128
DATA poolBitPos1<>+24(SB)/4, $64
DATA poolBitPos1<>+28(SB)/4, $128
GLOBL poolBitPos1<>(SB), RODATA|NOPTR, $32

// poolPairs spreads four dwords to lane pairs: 0 0 1 1 2 2 3 3.
DATA poolPairs<>+0(SB)/4, $0
DATA poolPairs<>+4(SB)/4, $0
DATA poolPairs<>+8(SB)/4, $1
DATA poolPairs<>+12(SB)/4, $1
DATA poolPairs<>+16(SB)/4, $2
DATA poolPairs<>+20(SB)/4, $2
DATA poolPairs<>+24(SB)/4, $3
DATA poolPairs<>+28(SB)/4, $3
GLOBL poolPairs<>(SB), RODATA|NOPTR, $32

// func poolMask22F32AVX2(out *float32, wins *uint8, x *float32, w, pw, ph, groups int)
// out [ph pw] gets the maxima of the first 4·groups windows of each row
// (maxPool22FwdF32AVX2's bits), wins [ph pw] their masks: the ties as
// maxPool22BackF32AVX2 finds them, and the positive elements (−e < 0).
TEXT ·poolMask22F32AVX2(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ wins+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ w+24(FP), R8
	SHLQ $2, R8
	MOVQ pw+32(FP), R15
	MOVQ R15, R9
	SHLQ $2, R9
	MOVQ ph+40(FP), R10
	MOVQ groups+48(FP), R11
	VBROADCASTSS poolSign<>(SB), Y15
	VMOVDQU poolEvens<>(SB), Y14
	VXORPS Y13, Y13, Y13
	TESTQ R10, R10
	JLE mask_done
	TESTQ R11, R11
	JLE mask_done

mask_y:
	MOVQ SI, R12
	LEAQ (SI)(R8*1), R13
	MOVQ DI, R14
	MOVQ DX, BX
	MOVQ R11, CX

mask_g:
	VXORPS (R12), Y15, Y0
	VXORPS (R13), Y15, Y1
	WINMIN
	VPERMPS Y4, Y14, Y2
	VXORPS Y15, Y2, Y2
	VMOVUPS X2, (R14)
	VCMPPS $3, Y4, Y4, Y5 // the maximum is NaN
	VCMPPS $3, Y0, Y0, Y6
	VCMPPS $3, Y1, Y1, Y7
	VANDPS Y5, Y6, Y6
	VANDPS Y5, Y7, Y7
	VCMPPS $0, Y4, Y0, Y8
	VCMPPS $0, Y4, Y1, Y9
	VORPS Y6, Y8, Y8 // the upper row's ties
	VORPS Y7, Y9, Y9 // the lower row's
	VCMPPS $1, Y13, Y0, Y10 // −e < 0: the upper row's positives
	VCMPPS $1, Y13, Y1, Y11 // the lower row's
	VPAND poolBitTie0<>(SB), Y8, Y8
	VPAND poolBitTie1<>(SB), Y9, Y9
	VPAND poolBitPos0<>(SB), Y10, Y10
	VPAND poolBitPos1<>(SB), Y11, Y11
	VPOR Y9, Y8, Y8
	VPOR Y11, Y10, Y10
	VPOR Y10, Y8, Y8
	VPSHUFD $0xB1, Y8, Y9
	VPOR Y9, Y8, Y8 // lane 2k: window k's byte
	VPERMD Y8, Y14, Y8
	VPACKUSDW X8, X8, X8
	VPACKUSWB X8, X8, X8
	VMOVD X8, (BX)
	ADDQ $32, R12
	ADDQ $32, R13
	ADDQ $16, R14
	ADDQ $4, BX
	DECQ CX
	JNZ mask_g

	LEAQ (SI)(R8*2), SI
	ADDQ R9, DI
	ADDQ R15, DX
	DECQ R10
	JNZ mask_y

mask_done:
	VZEROUPPER
	RET

// func unpool22F32AVX2(back, cot *float32, wins *uint8, w, pw, ph, groups, relu int)
// back's elements under the first 4·groups windows of each row of cot [ph
// pw] get the window's cotangent divided by its count of ties where the
// mask flags a tie, else 0, as wt·(g/count) + 0 (maxPool22BackF32AVX2's
// bits), and with relu ≠ 0, 0 where it flags the element not positive.
TEXT ·unpool22F32AVX2(SB), NOSPLIT, $0-64
	MOVQ back+0(FP), DI
	MOVQ cot+8(FP), DX
	MOVQ wins+16(FP), SI
	MOVQ w+24(FP), R8
	SHLQ $2, R8
	MOVQ pw+32(FP), R15
	MOVQ R15, R9
	SHLQ $2, R9
	MOVQ ph+40(FP), R10
	MOVQ groups+48(FP), R11
	VMOVDQU poolPairs<>(SB), Y15
	VBROADCASTSS poolOne<>(SB), Y14
	VXORPS Y13, Y13, Y13
	VPCMPEQD Y12, Y12, Y12 // without ReLU every element keeps its share
	MOVQ relu+56(FP), AX
	TESTQ AX, AX
	JEQ unpool_start
	VXORPS Y12, Y12, Y12

unpool_start:
	TESTQ R10, R10
	JLE unpool_done
	TESTQ R11, R11
	JLE unpool_done

unpool_y:
	MOVQ DI, R12
	LEAQ (DI)(R8*1), R13
	MOVQ DX, AX
	MOVQ SI, BX
	MOVQ R11, CX

unpool_g:
	VPMOVZXBD (BX), X0
	VPERMD Y0, Y15, Y0 // window k's byte in lanes 2k and 2k+1
	VPAND poolBitTie0<>(SB), Y0, Y1
	VPCMPEQD poolBitTie0<>(SB), Y1, Y1 // the upper row's ties
	VPAND poolBitTie1<>(SB), Y0, Y2
	VPCMPEQD poolBitTie1<>(SB), Y2, Y2 // the lower row's
	VPAND poolBitPos0<>(SB), Y0, Y3
	VPCMPEQD poolBitPos0<>(SB), Y3, Y3
	VPAND poolBitPos1<>(SB), Y0, Y4
	VPCMPEQD poolBitPos1<>(SB), Y4, Y4
	VPOR Y12, Y3, Y3 // the upper row's elements that keep their share
	VPOR Y12, Y4, Y4 // the lower row's
	VANDPS Y14, Y1, Y1 // 1 where the upper row's element ties, else 0
	VANDPS Y14, Y2, Y2 // the lower row's
	VADDPS Y2, Y1, Y5
	VPERMILPS $0xB1, Y5, Y6
	VADDPS Y6, Y5, Y5 // the window's count of ties, twice
	VMOVUPS (AX), X7
	VUNPCKHPS X7, X7, X8
	VUNPCKLPS X7, X7, X7
	VINSERTF128 $1, X8, Y7, Y7 // each window's cotangent, twice
	VDIVPS Y5, Y7, Y7
	VMULPS Y7, Y1, Y1
	VADDPS Y13, Y1, Y1
	VANDPS Y3, Y1, Y1
	VMULPS Y7, Y2, Y2
	VADDPS Y13, Y2, Y2
	VANDPS Y4, Y2, Y2
	VMOVUPS Y1, (R12)
	VMOVUPS Y2, (R13)
	ADDQ $32, R12
	ADDQ $32, R13
	ADDQ $16, AX
	ADDQ $4, BX
	DECQ CX
	JNZ unpool_g

	LEAQ (DI)(R8*2), DI
	ADDQ R9, DX
	ADDQ R15, SI
	DECQ R10
	JNZ unpool_y

unpool_done:
	VZEROUPPER
	RET
