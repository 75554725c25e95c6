//go:build !purego

package gemm

import (
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
