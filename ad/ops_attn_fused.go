package ad

import (
	"math"
	"unsafe"

	"github.com/adjointgo/adjoint/internal/fastmath"
	"github.com/adjointgo/adjoint/internal/gemm"
	"github.com/adjointgo/adjoint/internal/vec"
	"github.com/adjointgo/adjoint/tensor"
)

// Helpers shared by the fused rows of ops_attn.go and ops_norm.go: typed
// access to the GEMM and vector kernels from generic code without
// allocating, the values their VJP kernels write, and the bookkeeping of
// what they save beyond the node's slots.

// gemmFunc is gemm.Sgemm or gemm.Dgemm.
type gemmFunc[T any] func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// fusedIsF32 reports whether T is float32 (a constant: no allocation).
func fusedIsF32[T float32 | float64]() bool {
	var z T
	return unsafe.Sizeof(z) == 4
}

// fusedGemm returns the GEMM kernel of T (a func value held in an interface
// is a pointer: no allocation).
func fusedGemm[T float32 | float64]() gemmFunc[T] {
	var f any = gemm.Dgemm
	if fusedIsF32[T]() {
		f = gemm.Sgemm
	}
	return f.(func(bool, bool, int, int, int, T, []T, int, []T, int, T, []T, int))
}

// fusedAxpy returns dst += alpha·x for T (vectorised).
func fusedAxpy[T float32 | float64]() func(dst []T, alpha T, x []T) {
	var f any = vec.AxpyF64
	if fusedIsF32[T]() {
		f = vec.AxpyF32
	}
	return f.(func([]T, T, []T))
}

// fusedData returns t's elements as []T (T must be t's dtype).
func fusedData[T float32 | float64](t *tensor.Tensor) []T {
	var f any
	if fusedIsF32[T]() {
		f = t.Float32s()
	} else {
		f = t.Float64s()
	}
	return f.([]T)
}

// fusedF32 returns s as []float32 (T must be float32): the same memory,
// for the float32 kernels of fastmath.
func fusedF32[T float32 | float64](s []T) []float32 {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&s[0])), len(s))
}

// fusedGrow returns s with length n, reallocated only when its capacity is
// short.
func fusedGrow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// fusedOut returns a new value for a fused VJP kernel to write, from the
// sweep's allocator, resized to dtype d and shape.
func (c *vjpCtx) fusedOut(d tensor.DType, shape []int) *Value {
	out, _ := c.al.alloc(false)
	resizeTo(&out.t, d, shape)
	return out
}

// fusedDone marks v, written by a fused VJP kernel, as fresh storage.
func (c *vjpCtx) fusedDone(v *Value) *Value {
	c.al.wrote(v, nil, nil)
	v.fresh = true
	return v
}

// fusedTangents reports whether any of vs carries a forward-mode tangent.
func fusedTangents(vs ...*Value) bool {
	for _, v := range vs {
		if v != nil && v.tan != nil {
			return true
		}
	}
	return false
}

// fusedExp returns the exponential the kernels of T use: fastmath.Exp for
// float32, math.Exp for float64.
func fusedExp[T float32 | float64]() func(float64) float64 {
	if fusedIsF32[T]() {
		return fastmath.Exp
	}
	return math.Exp
}
