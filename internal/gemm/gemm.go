// Package gemm holds the general matrix-multiply kernels behind
// tensor.MatMul: C = alpha·op(A)·op(B) + beta·C for row-major float32 and
// float64 matrices, where op(X) is X or Xᵀ.
//
// The implementation is the blocked, packed form: op(B) is packed into
// kc×NR column panels (kc from the L1 size, so a panel sits in L1; the
// blocks are derived from the CPU's caches, see blocking.go), op(A) is read in
// MR-row panels, and a register-blocked MR×NR micro-kernel does the
// arithmetic (12×32 float32 and 12×16 float64 with AVX-512, 6×16 and 6×8
// with AVX2; in portable Go 2×4 on CPUs with 16 floating-point registers such
// as amd64, 4×4 on arm64 and others). The assembly kernels read A in place
// through a row and a column stride, which serves A and Aᵀ alike; A is packed
// only when it is larger than 4 MiB, when a transposed A steps 4 KiB or more
// per depth step, or when MR of its rows would fall into one L1 set more
// often than the L1 has ways (row strides of 4096·k bytes on an 8-way L1,
// whose associativity is read with CPUID: see inPlace); B is packed with
// masked moves or in-register transposes.
// On amd64 the micro-kernels and packing loops are Go assembly for AVX-512
// and for AVX2+FMA, chosen at run time from the CPU's features; other CPUs
// and builds with -tags purego use portable Go. Aᵀ·B and A·Bᵀ never
// materialise a transpose. Products above a few MFLOP are split across
// goroutines (see [SetThreads]); smaller ones run on the calling goroutine
// without allocating.
//
// The first product of a process may tune the parameters that keep every
// result's bits (the micro-kernel at equal depth block, the row and column
// blocks, how B is packed) by timing a few candidates, and cache the
// winners per CPU; see tune.go (ADJOINT_TUNE, Tune, UseProfile) and
// the public package tune.
//
// SgemmEp and DgemmEp fuse an epilogue into the product (a bias, an
// activation, the row sums of op(A): see Epilogue), for package ad's
// fully connected layer.
//
// It is internal so that its signature can change with the kernels; the
// public entry point is package tensor.
package gemm

// Sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major float32
// matrices. op(A) is m×k, op(B) is k×n and C is m×n. lda, ldb and ldc are the
// row strides (in elements) of A, B and C as stored: A is m×k (lda ≥ k) when
// transA is false and k×m (lda ≥ m) when it is true; likewise B. When beta is
// 0, C is not read (NaNs in it do not propagate).
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ensureTuned()
	gemm(&f32, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Dgemm is Sgemm for float64.
func Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	ensureTuned()
	gemm(&f64, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Of is Sgemm or Dgemm by element type, for callers generic over it.
func Of[T float32 | float64](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	ensureTuned()
	gemmOn(kernelOf[T](), Threads(), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nil)
}

// Serial is Of on the calling goroutine alone, whatever SetThreads says:
// for callers that split their own work across goroutines and run a
// product in each part (a convolution's products over chunks of images).
// The bits are Of's.
func Serial[T float32 | float64](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	ensureTuned()
	gemmOn(kernelOf[T](), 1, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nil)
}

// kernelOf returns the kernel in use for T.
func kernelOf[T float32 | float64]() *kernel[T] {
	if k, ok := any(&f32).(*kernel[T]); ok {
		return k
	}
	return any(&f64).(*kernel[T])
}

// SgemmEp is Sgemm with the epilogue ep fused into the product (nil: none):
// C = act(alpha·op(A)·op(B) + beta·C + bias), applied to each tile of C as
// it is written, and the row sums of op(A) taken from its packed panels.
// (Not inlined: a caller's ep then stays on its stack, which the escape
// analysis of the generic body called across packages does not show.)
//
//go:noinline
func SgemmEp(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, ep *Epilogue[float32]) {
	ensureTuned()
	gemmEp(&f32, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ep)
}

// DgemmEp is SgemmEp for float64.
//
//go:noinline
func DgemmEp(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int, ep *Epilogue[float64]) {
	ensureTuned()
	gemmEp(&f64, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ep)
}

// ref is the simple reference implementation (i-k-j loop order). The tests
// compare every fast path against it.
func ref[T float32 | float64](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	for i := 0; i < m; i++ {
		ci := c[i*ldc : i*ldc+n]
		if beta == 0 {
			for j := range ci {
				ci[j] = 0
			}
		} else if beta != 1 {
			for j := range ci {
				ci[j] *= beta
			}
		}
		for p := 0; p < k; p++ {
			var aip T
			if transA {
				aip = a[p*lda+i]
			} else {
				aip = a[i*lda+p]
			}
			aip *= alpha
			if transB {
				for j := range ci {
					ci[j] += aip * b[j*ldb+p]
				}
			} else {
				bp := b[p*ldb : p*ldb+n]
				for j := range ci {
					ci[j] += aip * bp[j]
				}
			}
		}
	}
}
