package rownorm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/tensor"
)

// BenchmarkNorm times the fused layer_norm and rms_norm kernels alone
// (Forward and Backward, float32, gamma and beta) on the GPT's
// rows (768 × 128) and on other row widths; ns/elem is per element of x.
func BenchmarkNorm(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	f32 := func(n int, scale float32) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64())*scale + 0.1
		}
		return s
	}
	for _, sh := range [][2]int{{768, 128}, {768, 64}, {192, 512}, {96, 1024}, {32, 128}} {
		rows, c := sh[0], sh[1]
		x := tensor.FromFloat32(f32(rows*c, 2), rows, c)
		g := tensor.FromFloat32(f32(rows*c, 1), rows, c)
		gamma := tensor.FromFloat32(f32(c, 1), c)
		beta := tensor.FromFloat32(f32(c, 1), c)
		for _, rms := range []bool{false, true} {
			name := "layer"
			per := 2
			if rms {
				name, per = "rms", 1
			}
			a := Params{Eps: 1e-5, RMS: rms, Rows: rows, C: c}
			var bt *tensor.Tensor
			if !rms {
				bt = beta
			}
			st := make([]float64, per*rows)
			y := tensor.New(tensor.Float32, rows, c)
			dx := tensor.New(tensor.Float32, rows, c)
			dg := tensor.New(tensor.Float32, c)
			db := tensor.New(tensor.Float32, c)
			if rms {
				db = nil
			}
			b.Run(fmt.Sprintf("%s/%dx%d/forward", name, rows, c), func(b *testing.B) {
				for range b.N {
					Forward[float32](a, st, x, gamma, bt, y)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows*c), "ns/elem")
			})
			b.Run(fmt.Sprintf("%s/%dx%d/backward", name, rows, c), func(b *testing.B) {
				var acc []float64
				Forward[float32](a, st, x, gamma, bt, y)
				for range b.N {
					acc = Backward[float32](a, st, acc, x, gamma, g, dx, dg, db)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows*c), "ns/elem")
			})
		}
	}
}
