package gemm

import (
	"fmt"
	"testing"

	"github.com/adjointgo/adjoint/internal/isa"
)

// logCPU prints the CPU the figures are taken on and the parameters in
// use (shown with -v; reportCPU puts the family and model on every line),
// so that figures from other machines can be told apart (issue 26).
func logCPU(b *testing.B) {
	b.Helper()
	b.Logf("%v; %s", isa.ThisCPU(), KernelName())
}

var benchSizes = []int{64, 128, 256, 512, 1024, 2048}

func benchGemm[T float](b *testing.B, transA, transB bool, n int) {
	a, bb, c := make([]T, n*n), make([]T, n*n), make([]T, n*n)
	for i := range a {
		a[i] = T(i%7) * 0.25
		bb[i] = T(i%5) * 0.5
	}
	run := func() {
		switch any(a).(type) {
		case []float32:
			Sgemm(transA, transB, n, n, n, 1, any(a).([]float32), n, any(bb).([]float32), n, 0, any(c).([]float32), n)
		case []float64:
			Dgemm(transA, transB, n, n, n, 1, any(a).([]float64), n, any(bb).([]float64), n, 0, any(c).([]float64), n)
		}
	}
	run()
	b.ResetTimer()
	for range b.N {
		run()
	}
	secs := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)/secs/1e9, "GFLOP/s")
	reportCPU(b)
}

// reportCPU adds the CPU's family and model to a benchmark's figures, so
// that every line says which CPU it was measured on.
func reportCPU(b *testing.B) {
	c := isa.ThisCPU()
	b.ReportMetric(float64(c.Family), "cpu-family")
	b.ReportMetric(float64(c.Model), "cpu-model")
}

// BenchmarkMatMul times square C = A·B. The thread count is Threads()
// (GOMAXPROCS unless set); run with -cpu 1,2 to compare.
func BenchmarkMatMul(b *testing.B) {
	logCPU(b)
	for _, dt := range []string{"f32", "f64"} {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%s/n=%d", dt, n), func(b *testing.B) {
				if dt == "f32" {
					benchGemm[float32](b, false, false, n)
				} else {
					benchGemm[float64](b, false, false, n)
				}
			})
		}
	}
}

// BenchmarkMatMulT times the transposed forms the backward pass uses:
// tA is Aᵀ·B (dW = Xᵀ·G), tB is A·Bᵀ (dX = G·Wᵀ).
func BenchmarkMatMulT(b *testing.B) {
	logCPU(b)
	for _, dt := range []string{"f32", "f64"} {
		for _, tr := range []string{"tA", "tB"} {
			for _, n := range benchSizes {
				b.Run(fmt.Sprintf("%s/%s/n=%d", dt, tr, n), func(b *testing.B) {
					if dt == "f32" {
						benchGemm[float32](b, tr == "tA", tr == "tB", n)
					} else {
						benchGemm[float64](b, tr == "tA", tr == "tB", n)
					}
				})
			}
		}
	}
}

// BenchmarkKernels times every micro-kernel this CPU can run (the portable
// Go one, AVX2, AVX-512) on square products, one goroutine.
func BenchmarkKernels(b *testing.B) {
	defer SetThreads(Threads())
	SetThreads(1)
	k32, k64 := allKernels()
	for _, n := range []int{64, 256, 1024} {
		for i := range k32 {
			b.Run(fmt.Sprintf("f32/%s/n=%d", k32[i].name, n), func(b *testing.B) {
				benchKernel(b, &k32[i], n)
			})
		}
		for i := range k64 {
			b.Run(fmt.Sprintf("f64/%s/n=%d", k64[i].name, n), func(b *testing.B) {
				benchKernel(b, &k64[i], n)
			})
		}
	}
}

func benchKernel[T float](b *testing.B, kn *kernel[T], n int) {
	a, bb, c := make([]T, n*n), make([]T, n*n), make([]T, n*n)
	for range b.N {
		gemm(kn, false, false, n, n, n, 1, a, n, bb, n, 0, c, n)
	}
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
