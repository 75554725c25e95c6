//go:build !purego

#include "textflag.h"

// The block kernels of block_amd64.go: nb·ny rows of width
// float32s, row (b, y) of src at b·ssb + y·ssy elements, copied (or added)
// into row (b, y) of dst at b·dsb + y·dsy; eight elements per AVX2 step,
// then one at a time.

// func blockCopyF32AVX2(dst *float32, dsb, dsy int, src *float32, ssb, ssy, nb, ny, width int)
TEXT ·blockCopyF32AVX2(SB), NOSPLIT, $0-72
	MOVQ dst+0(FP), DI
	MOVQ dsb+8(FP), R8
	SHLQ $2, R8
	MOVQ dsy+16(FP), R9
	SHLQ $2, R9
	MOVQ src+24(FP), SI
	MOVQ ssb+32(FP), R10
	SHLQ $2, R10
	MOVQ ssy+40(FP), R11
	SHLQ $2, R11
	MOVQ nb+48(FP), R12
	MOVQ width+64(FP), CX
	MOVQ CX, DX
	ANDQ $-8, DX
	TESTQ R12, R12
	JLE copy_done

copy_b:
	MOVQ DI, R13
	MOVQ SI, R14
	MOVQ ny+56(FP), BX
	TESTQ BX, BX
	JLE copy_bnext

copy_y:
	XORQ AX, AX
	CMPQ AX, DX
	JGE copy_tail

copy_vec:
	VMOVUPS (R14)(AX*4), Y0
	VMOVUPS Y0, (R13)(AX*4)
	ADDQ $8, AX
	CMPQ AX, DX
	JLT copy_vec

copy_tail:
	CMPQ AX, CX
	JGE copy_ynext
	VMOVSS (R14)(AX*4), X0
	VMOVSS X0, (R13)(AX*4)
	INCQ AX
	JMP copy_tail

copy_ynext:
	ADDQ R9, R13
	ADDQ R11, R14
	DECQ BX
	JNZ copy_y

copy_bnext:
	ADDQ R8, DI
	ADDQ R10, SI
	DECQ R12
	JNZ copy_b

copy_done:
	VZEROUPPER
	RET

// func blockAddF32AVX2(dst *float32, dsb, dsy int, src *float32, ssb, ssy, nb, ny, width int)
// Each element is dst + src, as Go's dst += src computes it.
TEXT ·blockAddF32AVX2(SB), NOSPLIT, $0-72
	MOVQ dst+0(FP), DI
	MOVQ dsb+8(FP), R8
	SHLQ $2, R8
	MOVQ dsy+16(FP), R9
	SHLQ $2, R9
	MOVQ src+24(FP), SI
	MOVQ ssb+32(FP), R10
	SHLQ $2, R10
	MOVQ ssy+40(FP), R11
	SHLQ $2, R11
	MOVQ nb+48(FP), R12
	MOVQ width+64(FP), CX
	MOVQ CX, DX
	ANDQ $-8, DX
	TESTQ R12, R12
	JLE add_done

add_b:
	MOVQ DI, R13
	MOVQ SI, R14
	MOVQ ny+56(FP), BX
	TESTQ BX, BX
	JLE add_bnext

add_y:
	XORQ AX, AX
	CMPQ AX, DX
	JGE add_tail

add_vec:
	VMOVUPS (R13)(AX*4), Y0
	VADDPS (R14)(AX*4), Y0, Y0
	VMOVUPS Y0, (R13)(AX*4)
	ADDQ $8, AX
	CMPQ AX, DX
	JLT add_vec

add_tail:
	CMPQ AX, CX
	JGE add_ynext
	VMOVSS (R13)(AX*4), X0
	VADDSS (R14)(AX*4), X0, X0
	VMOVSS X0, (R13)(AX*4)
	INCQ AX
	JMP add_tail

add_ynext:
	ADDQ R9, R13
	ADDQ R11, R14
	DECQ BX
	JNZ add_y

add_bnext:
	ADDQ R8, DI
	ADDQ R10, SI
	DECQ R12
	JNZ add_b

add_done:
	VZEROUPPER
	RET

// func swapBiasRowF32AVX2(dst, src, bias *float32, a, l, stride int)
// dst [a l] gets row k of src (at k·stride elements) plus bias[k], for
// k < a: the bits of Go's v + bias[k].
TEXT ·swapBiasRowF32AVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ bias+16(FP), DX
	MOVQ a+24(FP), R8
	MOVQ l+32(FP), CX
	MOVQ stride+40(FP), R9
	SHLQ $2, R9
	MOVQ CX, R10
	ANDQ $-8, R10
	TESTQ R8, R8
	JLE bias_done

bias_k:
	VBROADCASTSS (DX), Y1
	XORQ AX, AX
	CMPQ AX, R10
	JGE bias_tail

bias_vec:
	VADDPS (SI)(AX*4), Y1, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, R10
	JLT bias_vec

bias_tail:
	CMPQ AX, CX
	JGE bias_next
	VMOVSS (SI)(AX*4), X0
	VADDSS X1, X0, X0
	VMOVSS X0, (DI)(AX*4)
	INCQ AX
	JMP bias_tail

bias_next:
	LEAQ (DI)(CX*4), DI
	ADDQ R9, SI
	ADDQ $4, DX
	DECQ R8
	JNZ bias_k

bias_done:
	VZEROUPPER
	RET
