package gemm

import "runtime"

// The portable micro-kernels, used where there is no assembly kernel (CPUs
// other than amd64, amd64 without AVX2, and builds with -tags purego). A is
// always packed here (rsa = 1, csa = MR): the kernels are not direct. Each
// keeps its MR×NR accumulators in separate local variables, so that the
// compiler holds them in registers, and walks the packed panels by
// re-slicing, which leaves the depth loop without bounds checks. The tile
// shape depends on the register file of the target.

// fewFPRegs reports a target with 16 floating-point registers and
// two-operand arithmetic, where a 4×4 tile spills.
const fewFPRegs = runtime.GOARCH == "amd64" || runtime.GOARCH == "386"

func genericKernels() (kernel[float32], kernel[float64]) {
	return genericKernelsFor(fewFPRegs)
}

// genericKernelsFor returns the 2×3 kernels (few registers) or the 4×4 ones;
// the tests run both on any CPU.
func genericKernelsFor(few bool) (kernel[float32], kernel[float64]) {
	if few {
		return kernel[float32]{name: "go", mr: 2, nr: 3, kc: 256, mc: 128, nc: 1023, fn: kernel2x3[float32], pool: &pool32},
			kernel[float64]{name: "go", mr: 2, nr: 3, kc: 256, mc: 64, nc: 1023, fn: kernel2x3[float64], pool: &pool64}
	}
	return kernel[float32]{name: "go", mr: 4, nr: 4, kc: 256, mc: 128, nc: 1024, fn: kernel4x4[float32], pool: &pool32},
		kernel[float64]{name: "go", mr: 4, nr: 4, kc: 256, mc: 64, nc: 1024, fn: kernel4x4[float64], pool: &pool64}
}

// kernel4x4 is the micro-kernel for CPUs with 32 floating-point registers
// (arm64 and most others), where the compiler fuses c += a*b into one
// multiply-add: 16 accumulators and 8 operands stay in registers. The depth
// loop is unrolled twice; the first step's updates have uses inside the
// loop body, so the scheduler keeps them in source order and the second
// step's loads do not all become live at once.
func kernel4x4[T float](kc int, a []T, rsa, csa int, b, c []T, ldc int, alpha, beta T, mr, nr int) {
	var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 T
	a = a[:4*kc]
	b = b[:4*kc]
	for len(a) >= 8 && len(b) >= 8 {
		a0 := a[0]
		a1 := a[1]
		a2 := a[2]
		a3 := a[3]
		b0 := b[0]
		c00 += a0 * b0
		c10 += a1 * b0
		c20 += a2 * b0
		c30 += a3 * b0
		b1 := b[1]
		c01 += a0 * b1
		c11 += a1 * b1
		c21 += a2 * b1
		c31 += a3 * b1
		b2 := b[2]
		c02 += a0 * b2
		c12 += a1 * b2
		c22 += a2 * b2
		c32 += a3 * b2
		b3 := b[3]
		c03 += a0 * b3
		c13 += a1 * b3
		c23 += a2 * b3
		c33 += a3 * b3
		a0 = a[4]
		a1 = a[5]
		a2 = a[6]
		a3 = a[7]
		b0 = b[4]
		c00 += a0 * b0
		c10 += a1 * b0
		c20 += a2 * b0
		c30 += a3 * b0
		b1 = b[5]
		c01 += a0 * b1
		c11 += a1 * b1
		c21 += a2 * b1
		c31 += a3 * b1
		b2 = b[6]
		c02 += a0 * b2
		c12 += a1 * b2
		c22 += a2 * b2
		c32 += a3 * b2
		b3 = b[7]
		c03 += a0 * b3
		c13 += a1 * b3
		c23 += a2 * b3
		c33 += a3 * b3
		a, b = a[8:], b[8:]
	}
	for len(a) >= 4 && len(b) >= 4 {
		a0 := a[0]
		a1 := a[1]
		a2 := a[2]
		a3 := a[3]
		b0 := b[0]
		c00 += a0 * b0
		c10 += a1 * b0
		c20 += a2 * b0
		c30 += a3 * b0
		b1 := b[1]
		c01 += a0 * b1
		c11 += a1 * b1
		c21 += a2 * b1
		c31 += a3 * b1
		b2 := b[2]
		c02 += a0 * b2
		c12 += a1 * b2
		c22 += a2 * b2
		c32 += a3 * b2
		b3 := b[3]
		c03 += a0 * b3
		c13 += a1 * b3
		c23 += a2 * b3
		c33 += a3 * b3
		a, b = a[4:], b[4:]
	}
	acc := [4][4]T{{c00, c01, c02, c03}, {c10, c11, c12, c13}, {c20, c21, c22, c23}, {c30, c31, c32, c33}}
	storeTile(acc[:mr], c, ldc, alpha, beta, nr)
}

// kernel2x3 is the micro-kernel for amd64 and 386 (-tags purego), which
// have 16 SSE registers, one of them reserved, and two-operand arithmetic
// without a fused multiply-add at the baseline GOAMD64 level. The compiler
// schedules the updates of values that only feed the next iteration (the
// accumulators) last in the loop body, so every product still to be added
// is live at that point. Summing four depth steps into partial sums s and
// adding them once per iteration keeps 6 accumulators and 6 partial sums
// (plus operands) within the register file.
func kernel2x3[T float](kc int, a []T, rsa, csa int, b, c []T, ldc int, alpha, beta T, mr, nr int) {
	var c00, c01, c02, c10, c11, c12 T
	a = a[:2*kc]
	b = b[:3*kc]
	for len(a) >= 8 && len(b) >= 12 {
		a0 := a[0]
		a1 := a[1]
		b0 := b[0]
		s00 := a0 * b0
		s10 := a1 * b0
		b1 := b[1]
		s01 := a0 * b1
		s11 := a1 * b1
		b2 := b[2]
		s02 := a0 * b2
		s12 := a1 * b2
		a0 = a[2]
		a1 = a[3]
		b0 = b[3]
		s00 += a0 * b0
		s10 += a1 * b0
		b1 = b[4]
		s01 += a0 * b1
		s11 += a1 * b1
		b2 = b[5]
		s02 += a0 * b2
		s12 += a1 * b2
		a0 = a[4]
		a1 = a[5]
		b0 = b[6]
		s00 += a0 * b0
		s10 += a1 * b0
		b1 = b[7]
		s01 += a0 * b1
		s11 += a1 * b1
		b2 = b[8]
		s02 += a0 * b2
		s12 += a1 * b2
		a0 = a[6]
		a1 = a[7]
		b0 = b[9]
		s00 += a0 * b0
		s10 += a1 * b0
		b1 = b[10]
		s01 += a0 * b1
		s11 += a1 * b1
		b2 = b[11]
		s02 += a0 * b2
		s12 += a1 * b2
		c00 += s00
		c01 += s01
		c02 += s02
		c10 += s10
		c11 += s11
		c12 += s12
		a, b = a[8:], b[12:]
	}
	for len(a) >= 2 && len(b) >= 3 {
		a0 := a[0]
		a1 := a[1]
		b0 := b[0]
		c00 += a0 * b0
		c10 += a1 * b0
		b1 := b[1]
		c01 += a0 * b1
		c11 += a1 * b1
		b2 := b[2]
		c02 += a0 * b2
		c12 += a1 * b2
		a, b = a[2:], b[3:]
	}
	acc := [4][4]T{{c00, c01, c02}, {c10, c11, c12}}
	storeTile(acc[:mr], c, ldc, alpha, beta, nr)
}

// storeTile writes C = alpha·acc + beta·C for the first nr columns of each
// row of acc.
func storeTile[T float, R ~[4]T](acc []R, c []T, ldc int, alpha, beta T, nr int) {
	for i := range acc {
		ci := c[i*ldc : i*ldc+nr]
		if beta == 0 {
			for j := range ci {
				ci[j] = alpha * acc[i][j]
			}
		} else {
			for j := range ci {
				ci[j] = alpha*acc[i][j] + beta*ci[j]
			}
		}
	}
}
