//go:build !amd64 || purego

package fastmath

import "github.com/adjointgo/adjoint/internal/isa"

// level is always Generic without the assembly kernels.
var level = isa.Generic

// unary reports false: there are no SIMD kernels in this build.
func unary(op unaryOp, dst, x []float32) bool { return false }

// backward reports false: there are no SIMD kernels in this build.
func backward(op backwardOp, dst, g, x []float32) bool { return false }

func geluF32(dst, x []float32) { geluF32Go(dst, x) }

func geluBackwardF32(dst, g, x []float32) { geluBackwardF32Go(dst, g, x) }
