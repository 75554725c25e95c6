package linalg

import (
	"github.com/adjointgo/adjoint/internal/pool"
	"github.com/adjointgo/adjoint/internal/vec"
)

// The kernels of this package work on row-major matrices held in slices
// with a row stride (leading dimension), like BLAS and LAPACK but row-major.
// They are generic over the two element types and call the project's
// blocked GEMM (internal/gemm) for every update of more than a few
// columns, so that almost all of the arithmetic of a factorisation or a
// triangular solve runs in its micro-kernels.

// float is the element type constraint of the kernels.
type float interface{ float32 | float64 }

// dotT returns Σ a[i]·b[i] (len(a) ≤ len(b)) with the vector kernels.
func dotT[T float](a, b []T) T {
	if len(a) < 8 {
		var s T
		for i, x := range a {
			s += x * b[i]
		}
		return s
	}
	switch a := any(a).(type) {
	case []float64:
		return T(vec.DotF64(a, any(b[:len(a)]).([]float64)))
	case []float32:
		return T(vec.DotF32(a, any(b[:len(a)]).([]float32)))
	}
	return 0
}

// axpyT sets dst += alpha·x (len(x) ≥ len(dst)) with the vector kernels.
func axpyT[T float](dst []T, alpha T, x []T) {
	if len(dst) < 8 {
		for i := range dst {
			dst[i] += alpha * x[i]
		}
		return
	}
	switch d := any(dst).(type) {
	case []float64:
		vec.AxpyF64(d, float64(alpha), any(x[:len(dst)]).([]float64))
	case []float32:
		vec.AxpyF32(d, float32(alpha), any(x[:len(dst)]).([]float32))
	}
}

// scaleT sets dst *= alpha.
func scaleT[T float](dst []T, alpha T) {
	if len(dst) < 8 {
		for i := range dst {
			dst[i] *= alpha
		}
		return
	}
	switch d := any(dst).(type) {
	case []float64:
		vec.ScaleF64(d, float64(alpha), d)
	case []float32:
		vec.ScaleF32(d, float32(alpha), d)
	}
}

// swapRows exchanges rows i and j (n elements each) of a.
func swapRows[T float](a []T, lda, i, j, n int) {
	if i == j {
		return
	}
	ri, rj := a[i*lda:i*lda+n], a[j*lda:j*lda+n]
	for k := range ri {
		ri[k], rj[k] = rj[k], ri[k]
	}
}

// at returns the element (i, j) of M = op(T) for T stored in a with row
// stride lda: T[i][j], or T[j][i] when trans.
func at[T float](a []T, lda int, trans bool, i, j int) T {
	if trans {
		return a[j*lda+i]
	}
	return a[i*lda+j]
}

// blk returns the slice of a that starts at element (i, j) of M = op(T),
// for passing the block of M at (i, j) to gemm with transA = trans.
func blk[T float](a []T, lda int, trans bool, i, j int) []T {
	if trans {
		return a[j*lda+i:]
	}
	return a[i*lda+j:]
}

// Scratch buffers of the kernels (a transposed block, a panel) come from
// the module's pool of large buffers, which keeps them across garbage
// collections: fresh memory costs its page faults each time (measured
// 2.5 ms of a 6 ms Cholesky at n = 1000 with a sync.Pool, which a
// collection empties).
func getScratch[T float](n int) []T {
	var s []T
	switch any(s).(type) {
	case []float64:
		s = any(pool.Float64s(n)).([]T)
	default:
		s = any(pool.Float32s(n)).([]T)
	}
	return s
}

func putScratch[T float](buf []T) {
	switch s := any(buf).(type) {
	case []float64:
		pool.Put64(s)
	case []float32:
		pool.Put32(s)
	}
}
