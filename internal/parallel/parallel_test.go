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

// Split covers [0, n) exactly once, in contiguous ranges, for any thread
// count, and splits only work of at least Min elements.
func TestSplitCoversOnce(t *testing.T) {
	defer gemm.SetThreads(gemm.Threads())
	for _, threads := range []int{1, 2, 3, 8} {
		gemm.SetThreads(threads)
		for _, n := range []int{0, 1, 2, 3, 7, 1000, 5*Min + 63} {
			for _, work := range []int{n, Min - 1, Min, 9 * Min} {
				hits := make([]int32, n)
				var calls atomic.Int32
				Split(n, work, func(lo, hi int) {
					calls.Add(1)
					if lo >= hi {
						t.Errorf("empty range [%d, %d)", lo, hi)
					}
					for i := lo; i < hi; i++ {
						atomic.AddInt32(&hits[i], 1)
					}
				})
				for i, h := range hits {
					if h != 1 {
						t.Fatalf("threads=%d n=%d work=%d: piece %d visited %d times", threads, n, work, i, h)
					}
				}
				if c := calls.Load(); n > 0 && (c > 1) != SplitWorth(n, work) {
					t.Fatalf("threads=%d n=%d work=%d: %d calls, SplitWorth=%v", threads, n, work, c, SplitWorth(n, work))
				}
				if c := int(calls.Load()); c > max(threads, 1) {
					t.Fatalf("threads=%d n=%d: %d ranges", threads, n, c)
				}
			}
		}
	}
}
