//go:build !purego

package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

func BenchmarkKernelS512(b *testing.B) {
	kc := 256
	a, bb, c := make([]float32, 12*kc), make([]float32, 32*kc), make([]float32, 12*32)
	for range b.N {
		s512(kc, a, 1, 12, bb, c, 32, 1, 0, 12, 32)
	}
	b.ReportMetric(2*12*32*float64(kc)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkKernelD512(b *testing.B) {
	kc := 256
	a, bb, c := make([]float64, 12*kc), make([]float64, 16*kc), make([]float64, 12*16)
	for range b.N {
		d512(kc, a, 1, 12, bb, c, 16, 1, 0, 12, 16)
	}
	b.ReportMetric(2*12*16*float64(kc)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkPack(b *testing.B) {
	n := 1024
	a := make([]float32, n*n)
	dst := make([]float32, 256*2048)
	for _, tr := range []bool{false, true} {
		name := "N"
		if tr {
			name = "T"
		}
		b.Run("A"+name, func(b *testing.B) {
			for range b.N {
				for ic := 0; ic < n; ic += 480 {
					packA(dst, 12, tr, a, n, ic, 0, min(480, n-ic), 256)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*256), "ns/elem")
		})
		b.Run("B"+name, func(b *testing.B) {
			for range b.N {
				packB(dst, 32, tr, a, n, 0, 0, 256, n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*256), "ns/elem")
		})
	}
}

// The 4- and 8-row AVX-512 kernels for a last panel of fewer rows than 12,
// and the 3- and 4-row AVX2 ones for fewer than 6, give the bits the
// full-height kernel gives (each element the same sums in the same order):
// every m from 1 to 40 (every remainder, in place, overlapped and packed),
// A packed and read in place, transposed or not, beta 0 and not, against
// the kernel without them.
func TestEdgeKernelsBits(t *testing.T) {
	if !hasAVX2 {
		t.Skip("needs AVX2")
	}
	s, d := avx2Kernels()
	edgeBits(t, &s)
	edgeBits(t, &d)
	if !hasAVX512 {
		return
	}
	s5, d5 := avx512Kernels()
	edgeBits(t, &s5)
	edgeBits(t, &d5)
}

func edgeBits[T float](t *testing.T, kn *kernel[T]) {
	if len(kn.edges) == 0 {
		t.Fatalf("%s: no edge kernels", kn.name)
	}
	plain := *kn
	plain.edges = nil
	rng := rand.New(rand.NewPCG(5, 6))
	defer func(saved int) { directMaxBytes = saved }(directMaxBytes)
	defer SetThreads(Threads())
	SetThreads(1)
	for m := 1; m <= 40; m++ {
		for _, tA := range []bool{false, true} {
			for _, beta := range []float64{0, 0.5} {
				p := problem{transA: tA, m: m, n: 37, k: 19, alpha: 1.5, beta: beta}
				a, lda, b, ldb, c, ldc := operands[T](p, rng)
				for _, direct := range []int{0, math.MaxInt} {
					directMaxBytes = direct
					got := runOn(kn, 0, p, a, lda, b, ldb, c, ldc)
					want := runOn(&plain, 0, p, a, lda, b, ldb, c, ldc)
					for i := range got {
						if math.Float64bits(float64(got[i])) != math.Float64bits(float64(want[i])) && !(got[i] != got[i] && want[i] != want[i]) {
							t.Fatalf("%s %v direct=%v: C[%d] = %v with edge kernels, %v without", kn.name, p, direct > 0, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}
