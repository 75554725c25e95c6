// Package parallel splits memory-bound loops over large slices across
// goroutines, as many as the matrix kernels may use (gemm.Threads, which
// follows GOMAXPROCS unless set). It is shared by package tensor's
// elementwise kernels and package optim's updates.
package parallel

import (
	"sync"

	"github.com/adjointgo/adjoint/internal/gemm"
)

// Min is the number of elements from which a loop is split (below it,
// starting goroutines costs more than the memory-bound loop saves).
const Min = 1 << 17

// Worth reports whether a loop over n elements is split. Callers check it
// before building the closure for For, so that small loops allocate nothing.
func Worth(n int) bool { return n >= Min && gemm.Threads() > 1 }

// For runs f over [0, n) in contiguous chunks, on several goroutines when
// Worth(n), else on the calling goroutine. Chunks are multiples of 64
// elements, so vectorised loops see the same alignment as in one call. f must
// write only its own chunk.
func For(n int, f func(lo, hi int)) {
	t := gemm.Threads()
	if t <= 1 || n < Min {
		f(0, n)
		return
	}
	t = min(t, n/(Min/2))
	chunk := (n/t + 63) &^ 63
	var wg sync.WaitGroup
	lo := 0
	for i := 0; i < t-1 && lo+chunk < n; i++ {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f(lo, hi)
		}(lo, lo+chunk)
		lo += chunk
	}
	f(lo, n)
	wg.Wait()
}

// Map2 calls f(dst, x) — a kernel over equal-length slices — on chunks of
// them across goroutines when Worth(len(dst)), else once. f should be a plain
// function (not a closure), so that the common, small case allocates nothing.
func Map2[T any](dst, x []T, f func(dst, x []T)) {
	if !Worth(len(dst)) {
		f(dst, x)
		return
	}
	For(len(dst), func(lo, hi int) { f(dst[lo:hi], x[lo:hi]) })
}

// Map3 is Map2 for kernels of three slices, f(dst, x, y).
func Map3[T any](dst, x, y []T, f func(dst, x, y []T)) {
	if !Worth(len(dst)) {
		f(dst, x, y)
		return
	}
	For(len(dst), func(lo, hi int) { f(dst[lo:hi], x[lo:hi], y[lo:hi]) })
}

// MapScalar is Map2 for kernels with a scalar operand, f(dst, a, x), such as
// vec.ScaleF32 and vec.AxpyF32.
func MapScalar[T any](dst []T, a T, x []T, f func(dst []T, a T, x []T)) {
	if !Worth(len(dst)) {
		f(dst, a, x)
		return
	}
	For(len(dst), func(lo, hi int) { f(dst[lo:hi], a, x[lo:hi]) })
}
