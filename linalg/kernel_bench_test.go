package linalg

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/internal/gemm"
)

// Kernel benchmarks on raw slices, with GFLOP/s, beside the GEMM they are
// built on (run with -cpu 1 for one thread).

func BenchmarkKernelGetrf(b *testing.B) {
	for _, n := range []int{100, 300, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			a0 := randMat[float64](r, n, n)
			a := make([]float64, n*n)
			piv := make([]int, n)
			for b.Loop() {
				copy(a, a0)
				getrf(n, a, n, piv)
			}
			b.ReportMetric(2*float64(n*n*n)/3*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func BenchmarkKernelPotrf(b *testing.B) {
	for _, n := range []int{100, 300, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			a := spd[float64](r, n)
			l := make([]float64, n*n)
			for b.Loop() {
				cholLeft(n, a, l)
			}
			b.ReportMetric(float64(n*n*n)/3*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func BenchmarkKernelGemm(b *testing.B) {
	for _, n := range []int{1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			a, c := randMat[float64](r, n, n), make([]float64, n*n)
			for b.Loop() {
				gemm.Of(false, false, n, n, n, 1, a, n, a, n, 0, c, n)
			}
			b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
