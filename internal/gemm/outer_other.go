//go:build purego || !amd64

package gemm

// outerRowAsm: this build has no vector row routines.
func outerRowAsm[T float](dst, b []T, s T, stream bool) bool { return false }

// outerFence: nothing was streamed.
func outerFence() {}
