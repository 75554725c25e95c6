package tensor

import (
	"sync"

	"github.com/adjointgo/adjoint/internal/gemm"
)

// parMin is the number of elements from which an elementwise kernel is
// split across goroutines (below it, starting them costs more than the
// memory-bound loop saves).
const parMin = 1 << 17

// parallel reports whether an elementwise kernel over n elements is split
// across goroutines. Callers check it before building the closure for
// parallelFor, so that small kernels allocate nothing.
func parallel(n int) bool { return n >= parMin && gemm.Threads() > 1 }

// parallelFor runs f over [0, n) in contiguous chunks, on as many goroutines as
// the matrix kernels may use (gemm.Threads) when n is large enough, else on
// the calling goroutine. Chunks are multiples of 64 elements, so that
// vectorised loops and cache lines stay aligned to the same boundaries as a
// single call. f must write only its own chunk.
func parallelFor(n int, f func(lo, hi int)) {
	t := gemm.Threads()
	if t <= 1 || n < parMin {
		f(0, n)
		return
	}
	t = min(t, n/(parMin/2))
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
