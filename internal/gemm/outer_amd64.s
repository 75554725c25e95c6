//go:build !purego

#include "textflag.h"

// The rows of an outer product (see outer.go): dst[j] = fma(s, b[j], +0),
// the bits a micro-kernel gives a product of depth 1, for n elements, n a
// multiple of 64 bytes' worth, dst aligned to 64 bytes. With stream set the
// stores are non-temporal (they bypass the caches: the rows are not read
// again soon); storeFence orders them before later stores, once a product's
// rows are written (a fence after every row drained the write-combining
// buffers each time: 2.4 times slower).

// func storeFence()
TEXT ·storeFence(SB), NOSPLIT, $0-0
	SFENCE
	RET


// func outerRowS512(dst, b *float32, s float32, n int, stream bool)
TEXT ·outerRowS512(SB), NOSPLIT, $0-33
	MOVQ dst+0(FP), DI
	MOVQ b+8(FP), SI
	VBROADCASTSS s+16(FP), Z0
	MOVQ n+24(FP), CX
	SHRQ $4, CX
	MOVBLZX stream+32(FP), AX
	TESTQ AX, AX
	JZ s512plain
s512nt:
	VPXORD Z1, Z1, Z1
	VFMADD231PS (SI), Z0, Z1
	VMOVNTPS Z1, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ s512nt
	VZEROUPPER
	RET
s512plain:
	VPXORD Z1, Z1, Z1
	VFMADD231PS (SI), Z0, Z1
	VMOVUPS Z1, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ s512plain
	VZEROUPPER
	RET

// func outerRowD512(dst, b *float64, s float64, n int, stream bool)
TEXT ·outerRowD512(SB), NOSPLIT, $0-33
	MOVQ dst+0(FP), DI
	MOVQ b+8(FP), SI
	VBROADCASTSD s+16(FP), Z0
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	MOVBLZX stream+32(FP), AX
	TESTQ AX, AX
	JZ d512plain
d512nt:
	VPXORQ Z1, Z1, Z1
	VFMADD231PD (SI), Z0, Z1
	VMOVNTPD Z1, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ d512nt
	VZEROUPPER
	RET
d512plain:
	VPXORQ Z1, Z1, Z1
	VFMADD231PD (SI), Z0, Z1
	VMOVUPD Z1, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ d512plain
	VZEROUPPER
	RET

// func outerRowS256(dst, b *float32, s float32, n int, stream bool)
TEXT ·outerRowS256(SB), NOSPLIT, $0-33
	MOVQ dst+0(FP), DI
	MOVQ b+8(FP), SI
	VBROADCASTSS s+16(FP), Y0
	MOVQ n+24(FP), CX
	SHRQ $4, CX
	MOVBLZX stream+32(FP), AX
	TESTQ AX, AX
	JZ s256plain
s256nt:
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VFMADD231PS (SI), Y0, Y1
	VFMADD231PS 32(SI), Y0, Y2
	VMOVNTPS Y1, (DI)
	VMOVNTPS Y2, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ s256nt
	VZEROUPPER
	RET
s256plain:
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VFMADD231PS (SI), Y0, Y1
	VFMADD231PS 32(SI), Y0, Y2
	VMOVUPS Y1, (DI)
	VMOVUPS Y2, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ s256plain
	VZEROUPPER
	RET

// func outerRowD256(dst, b *float64, s float64, n int, stream bool)
TEXT ·outerRowD256(SB), NOSPLIT, $0-33
	MOVQ dst+0(FP), DI
	MOVQ b+8(FP), SI
	VBROADCASTSD s+16(FP), Y0
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	MOVBLZX stream+32(FP), AX
	TESTQ AX, AX
	JZ d256plain
d256nt:
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VFMADD231PD (SI), Y0, Y1
	VFMADD231PD 32(SI), Y0, Y2
	VMOVNTPD Y1, (DI)
	VMOVNTPD Y2, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ d256nt
	VZEROUPPER
	RET
d256plain:
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VFMADD231PD (SI), Y0, Y1
	VFMADD231PD 32(SI), Y0, Y2
	VMOVUPD Y1, (DI)
	VMOVUPD Y2, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ d256plain
	VZEROUPPER
	RET
