package gemm

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// BenchmarkPureGo compares the portable Go micro-kernel (the one arm64 and
// -tags purego builds use) with gonum's pure-Go BLAS on square C = A·B, in
// the same run. Both use GOMAXPROCS goroutines; run with -cpu 1 for a
// single-thread comparison.
func BenchmarkPureGo(b *testing.B) {
	g32, g64 := genericKernels()
	var impl gonum.Implementation
	for _, n := range []int{64, 256, 512} {
		for _, who := range []string{"ours", "gonum"} {
			b.Run(fmt.Sprintf("%s/f32/n=%d", who, n), func(b *testing.B) {
				a, bb, c := pureGoOperands[float32](n)
				run := func() { gemm(&g32, false, false, n, n, n, 1, a, n, bb, n, 0, c, n) }
				if who == "gonum" {
					run = func() { impl.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, bb, n, 0, c, n) }
				}
				benchRun(b, n, run)
			})
			b.Run(fmt.Sprintf("%s/f64/n=%d", who, n), func(b *testing.B) {
				a, bb, c := pureGoOperands[float64](n)
				run := func() { gemm(&g64, false, false, n, n, n, 1, a, n, bb, n, 0, c, n) }
				if who == "gonum" {
					run = func() { impl.Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, bb, n, 0, c, n) }
				}
				benchRun(b, n, run)
			})
		}
	}
}

func pureGoOperands[T float](n int) (a, b, c []T) {
	a, b, c = make([]T, n*n), make([]T, n*n), make([]T, n*n)
	for i := range a {
		a[i] = T(i%7) * 0.25
		b[i] = T(i%5) * 0.5
	}
	return a, b, c
}

func benchRun(b *testing.B, n int, run func()) {
	run()
	b.ResetTimer()
	for range b.N {
		run()
	}
	secs := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)/secs/1e9, "GFLOP/s")
}
