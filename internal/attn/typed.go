package attn

import (
	"math"
	"unsafe"

	"github.com/adjointgo/adjoint/internal/fastmath"
	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/tensor"
)

// Typed access to the GEMM kernels, the tensors' elements and the
// exponential from generic code, without allocating.

// gemmFunc is gemm.Sgemm or gemm.Dgemm.
type gemmFunc[T any] func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// isF32 reports whether T is float32 (a constant: no allocation).
func isF32[T float32 | float64]() bool {
	var z T
	return unsafe.Sizeof(z) == 4
}

// gemmOf returns the GEMM kernel of T (a func value held in an interface
// is a pointer: no allocation).
func gemmOf[T float32 | float64]() gemmFunc[T] {
	var f any = gemm.Dgemm
	if isF32[T]() {
		f = gemm.Sgemm
	}
	return f.(func(bool, bool, int, int, int, T, []T, int, []T, int, T, []T, int))
}

// data returns t's elements as []T (T must be t's dtype).
func data[T float32 | float64](t *tensor.Tensor) []T {
	var f any
	if isF32[T]() {
		f = t.Float32s()
	} else {
		f = t.Float64s()
	}
	return f.([]T)
}

// asF32 returns s as []float32 (T must be float32): the same memory,
// for the float32 kernels of fastmath.
func asF32[T float32 | float64](s []T) []float32 {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&s[0])), len(s))
}

// grow returns s with length n, reallocated only when its capacity is
// short.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// expOf returns the exponential the kernels of T use: fastmath.Exp for
// float32, math.Exp for float64.
func expOf[T float32 | float64]() func(float64) float64 {
	if isF32[T]() {
		return fastmath.Exp
	}
	return math.Exp
}
