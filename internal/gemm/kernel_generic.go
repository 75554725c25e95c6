package gemm

// genericKernel is the portable 4×4 micro-kernel.
func genericKernel[T float](kc int, a []T, rsa, csa int, b, c []T, ldc int, alpha, beta T, mr, nr int) {
	// a is always packed here (rsa = 1, csa = 4): the kernel is not direct.
	var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 T
	a = a[:4*kc]
	b = b[:4*kc]
	for p := 0; p < len(a); p += 4 {
		ap := a[p : p+4 : p+4]
		bp := b[p : p+4 : p+4]
		a0, a1, a2, a3 := ap[0], ap[1], ap[2], ap[3]
		b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	acc := [4][4]T{
		{c00, c01, c02, c03},
		{c10, c11, c12, c13},
		{c20, c21, c22, c23},
		{c30, c31, c32, c33},
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

func genericKernels() (kernel[float32], kernel[float64]) {
	return kernel[float32]{name: "go", mr: 4, nr: 4, kc: 256, mc: 128, nc: 1024, fn: genericKernel[float32], pool: &pool32},
		kernel[float64]{name: "go", mr: 4, nr: 4, kc: 256, mc: 64, nc: 1024, fn: genericKernel[float64], pool: &pool64}
}
