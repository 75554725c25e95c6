//go:build purego || !amd64

package gemm

// outerRowFunc: this build has no vector row routines.
func outerRowFunc[T float]() func(dst, b []T, s T, stream bool) { return nil }

// outerFence: nothing was streamed.
func outerFence() {}
