package parallel

import (
	"sync/atomic"
	"testing"

	"github.com/adjointgo/adjoint/internal/gemm"
)

// For covers [0, n) exactly once, in 64-aligned chunks, whatever the thread
// count and n around the split points.
func TestForCoversOnce(t *testing.T) {
	defer gemm.SetThreads(gemm.Threads())
	for _, threads := range []int{1, 2, 3, 8} {
		gemm.SetThreads(threads)
		for _, n := range []int{0, 1, Min - 1, Min, Min + 1, 5*Min + 63} {
			hits := make([]int32, n)
			var calls atomic.Int32
			For(n, func(lo, hi int) {
				calls.Add(1)
				if lo%64 != 0 {
					t.Errorf("chunk starts at %d, not a multiple of 64", lo)
				}
				for i := lo; i < hi; i++ {
					atomic.AddInt32(&hits[i], 1)
				}
			})
			for i, h := range hits {
				if h != 1 {
					t.Fatalf("threads=%d n=%d: element %d visited %d times", threads, n, i, h)
				}
			}
			if want := Worth(n); want != (calls.Load() > 1) && n > 0 {
				t.Fatalf("threads=%d n=%d: %d calls, Worth=%v", threads, n, calls.Load(), want)
			}
		}
	}
}
