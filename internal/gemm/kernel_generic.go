package gemm

import "runtime"

// The portable micro-kernels, used where there is no assembly kernel (CPUs
// other than amd64, amd64 without AVX2, and builds with -tags purego). A is
// always packed here (rsa = 1, csa = MR): the kernels are not direct. They
// walk the packed panels by re-slicing, which leaves the depth loop without
// bounds checks, and are unrolled over the depth; the tile shape depends on
// the register file of the target (see kernel4x4 and kernel2x4). Both are
// tested on every CPU.

// fewFPRegs reports a target with 16 floating-point registers (amd64 also
// has two-operand arithmetic), where a 4×4 tile of register accumulators
// spills.
const fewFPRegs = runtime.GOARCH == "amd64" || runtime.GOARCH == "386" ||
	runtime.GOARCH == "arm" || runtime.GOARCH == "s390x"

func genericKernels() (kernel[float32], kernel[float64]) {
	return genericKernelsFor(fewFPRegs)
}

// genericKernelsFor returns the 2×4 kernels (few registers) or the 4×4 ones;
// the tests run both on any CPU.
func genericKernelsFor(few bool) (kernel[float32], kernel[float64]) {
	if few {
		return kernel[float32]{name: "go", mr: 2, nr: 4, kc: 256, mc: 128, nc: 1024, fn: kernel2x4[float32], pool: &pool32, jobs: &jobs32},
			kernel[float64]{name: "go", mr: 2, nr: 4, kc: 256, mc: 64, nc: 1024, fn: kernel2x4[float64], pool: &pool64, jobs: &jobs64}
	}
	return kernel[float32]{name: "go", mr: 4, nr: 4, kc: 256, mc: 128, nc: 1024, fn: kernel4x4[float32], pool: &pool32, jobs: &jobs32},
		kernel[float64]{name: "go", mr: 4, nr: 4, kc: 256, mc: 64, nc: 1024, fn: kernel4x4[float64], pool: &pool64, jobs: &jobs64}
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

// kernel2x4 is the micro-kernel for targets with 16 floating-point
// registers (see fewFPRegs). amd64 (-tags purego or no AVX2) reserves one
// of its 16 SSE registers and, at the baseline GOAMD64 level, has
// two-operand arithmetic without a fused multiply-add. The compiler
// schedules a value that only feeds the next loop iteration (an
// accumulator held in a register) last in the loop body, so every product
// still to be added would be live there and a tile of any useful size
// spills. Instead, sixteen depth steps are summed into 8 register partial
// sums, which are added once per iteration to accumulators kept in memory
// (a local array): 8 partial sums, 2 + 1 operands and a temporary fit in
// the register file, and the memory traffic is one load, add and store per
// accumulator every sixteen steps.
func kernel2x4[T float](kc int, a []T, rsa, csa int, b, c []T, ldc int, alpha, beta T, mr, nr int) {
	var acc [2][4]T
	a = a[:2*kc]
	b = b[:4*kc]
	for len(a) >= 32 && len(b) >= 64 {
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
		b3 := b[3]
		s03 := a0 * b3
		s13 := a1 * b3
		a0 = a[2]
		a1 = a[3]
		b0 = b[4]
		s00 += a0 * b0
		s10 += a1 * b0
		b1 = b[5]
		s01 += a0 * b1
		s11 += a1 * b1
		b2 = b[6]
		s02 += a0 * b2
		s12 += a1 * b2
		b3 = b[7]
		s03 += a0 * b3
		s13 += a1 * b3
		a0 = a[4]
		a1 = a[5]
		b0 = b[8]
		s00 += a0 * b0
		s10 += a1 * b0
		b1 = b[9]
		s01 += a0 * b1
		s11 += a1 * b1
		b2 = b[10]
		s02 += a0 * b2
		s12 += a1 * b2
		b3 = b[11]
		s03 += a0 * b3
		s13 += a1 * b3
		a0 = a[6]
		a1 = a[7]
		b0 = b[12]
		s00 += a0 * b0
		s10 += a1 * b0
		b1 = b[13]
		s01 += a0 * b1
		s11 += a1 * b1
		b2 = b[14]
		s02 += a0 * b2
		s12 += a1 * b2
		b3 = b[15]
		s03 += a0 * b3
		s13 += a1 * b3
		a0 = a[8]
		a1 = a[9]
		b0 = b[16]
		s00 += a0 * b0
		s10 += a1 * b0
		b1 = b[17]
		s01 += a0 * b1
		s11 += a1 * b1
		b2 = b[18]
		s02 += a0 * b2
		s12 += a1 * b2
		b3 = b[19]
		s03 += a0 * b3
		s13 += a1 * b3
		a0 = a[10]
		a1 = a[11]
		b0 = b[20]
		s00 += a0 * b0
		s10 += a1 * b0
		b1 = b[21]
		s01 += a0 * b1
		s11 += a1 * b1
		b2 = b[22]
		s02 += a0 * b2
		s12 += a1 * b2
		b3 = b[23]
		s03 += a0 * b3
		s13 += a1 * b3
		a0 = a[12]
		a1 = a[13]
		b0 = b[24]
		s00 += a0 * b0
		s10 += a1 * b0
		b1 = b[25]
		s01 += a0 * b1
		s11 += a1 * b1
		b2 = b[26]
		s02 += a0 * b2
		s12 += a1 * b2
		b3 = b[27]
		s03 += a0 * b3
		s13 += a1 * b3
		a0 = a[14]
		a1 = a[15]
		b0 = b[28]
		s00 += a0 * b0
		s10 += a1 * b0
		b1 = b[29]
		s01 += a0 * b1
		s11 += a1 * b1
		b2 = b[30]
		s02 += a0 * b2
		s12 += a1 * b2
		b3 = b[31]
		s03 += a0 * b3
		s13 += a1 * b3
		a0 = a[16]
		a1 = a[17]
		b0 = b[32]
		s00 += a0 * b0
		s10 += a1 * b0
		b1 = b[33]
		s01 += a0 * b1
		s11 += a1 * b1
		b2 = b[34]
		s02 += a0 * b2
		s12 += a1 * b2
		b3 = b[35]
		s03 += a0 * b3
		s13 += a1 * b3
		a0 = a[18]
		a1 = a[19]
		b0 = b[36]
		s00 += a0 * b0
		s10 += a1 * b0
		b1 = b[37]
		s01 += a0 * b1
		s11 += a1 * b1
		b2 = b[38]
		s02 += a0 * b2
		s12 += a1 * b2
		b3 = b[39]
		s03 += a0 * b3
		s13 += a1 * b3
		a0 = a[20]
		a1 = a[21]
		b0 = b[40]
		s00 += a0 * b0
		s10 += a1 * b0
		b1 = b[41]
		s01 += a0 * b1
		s11 += a1 * b1
		b2 = b[42]
		s02 += a0 * b2
		s12 += a1 * b2
		b3 = b[43]
		s03 += a0 * b3
		s13 += a1 * b3
		a0 = a[22]
		a1 = a[23]
		b0 = b[44]
		s00 += a0 * b0
		s10 += a1 * b0
		b1 = b[45]
		s01 += a0 * b1
		s11 += a1 * b1
		b2 = b[46]
		s02 += a0 * b2
		s12 += a1 * b2
		b3 = b[47]
		s03 += a0 * b3
		s13 += a1 * b3
		a0 = a[24]
		a1 = a[25]
		b0 = b[48]
		s00 += a0 * b0
		s10 += a1 * b0
		b1 = b[49]
		s01 += a0 * b1
		s11 += a1 * b1
		b2 = b[50]
		s02 += a0 * b2
		s12 += a1 * b2
		b3 = b[51]
		s03 += a0 * b3
		s13 += a1 * b3
		a0 = a[26]
		a1 = a[27]
		b0 = b[52]
		s00 += a0 * b0
		s10 += a1 * b0
		b1 = b[53]
		s01 += a0 * b1
		s11 += a1 * b1
		b2 = b[54]
		s02 += a0 * b2
		s12 += a1 * b2
		b3 = b[55]
		s03 += a0 * b3
		s13 += a1 * b3
		a0 = a[28]
		a1 = a[29]
		b0 = b[56]
		s00 += a0 * b0
		s10 += a1 * b0
		b1 = b[57]
		s01 += a0 * b1
		s11 += a1 * b1
		b2 = b[58]
		s02 += a0 * b2
		s12 += a1 * b2
		b3 = b[59]
		s03 += a0 * b3
		s13 += a1 * b3
		a0 = a[30]
		a1 = a[31]
		b0 = b[60]
		s00 += a0 * b0
		s10 += a1 * b0
		b1 = b[61]
		s01 += a0 * b1
		s11 += a1 * b1
		b2 = b[62]
		s02 += a0 * b2
		s12 += a1 * b2
		b3 = b[63]
		s03 += a0 * b3
		s13 += a1 * b3
		acc[0][0] += s00
		acc[0][1] += s01
		acc[0][2] += s02
		acc[0][3] += s03
		acc[1][0] += s10
		acc[1][1] += s11
		acc[1][2] += s12
		acc[1][3] += s13
		a, b = a[32:], b[64:]
	}
	for len(a) >= 2 && len(b) >= 4 {
		a0 := a[0]
		a1 := a[1]
		b0 := b[0]
		acc[0][0] += a0 * b0
		acc[1][0] += a1 * b0
		b1 := b[1]
		acc[0][1] += a0 * b1
		acc[1][1] += a1 * b1
		b2 := b[2]
		acc[0][2] += a0 * b2
		acc[1][2] += a1 * b2
		b3 := b[3]
		acc[0][3] += a0 * b3
		acc[1][3] += a1 * b3
		a, b = a[2:], b[4:]
	}
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
