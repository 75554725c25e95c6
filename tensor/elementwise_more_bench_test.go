package tensor

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkElementwiseMore times the kernels of elementwise_more.go beside
// the existing Exp, Tanh and Mul on 10⁶ elements (float32 and float64).
func BenchmarkElementwiseMore(b *testing.B) {
	const n = 1_000_000
	for _, d := range []DType{Float32, Float64} {
		x, y := New(d, n), New(d, n)
		r := rand.New(rand.NewPCG(1, 2))
		for i := range n {
			x.SetFlat(i, 4*r.Float64()-2)
			y.SetFlat(i, 4*r.Float64()-2)
		}
		dst := New(d, n)
		run := func(name string, f func()) {
			b.Run(d.String()+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(n * d.Size()))
				for range b.N {
					f()
				}
			})
		}
		run("exp", func() { dst.Apply(Exp, x) })
		run("tanh", func() { dst.Apply(Tanh, x) })
		run("mul", func() { dst.Binary(Mul, x, y) })
		run("gelu", func() { dst.Math(GELU, x, 0, 0) })
		run("gelu_tanh", func() { dst.Math(GELUTanh, x, 0, 0) })
		run("silu", func() { dst.Math(SiLU, x, 0, 0) })
		run("erf", func() { dst.Math(Erf, x, 0, 0) })
		run("log1p", func() { dst.Math(Log1p, x, 0, 0) })
		run("leaky_relu", func() { dst.Math(LeakyReLU, x, 0.01, 0) })
		run("clamp", func() { dst.Math(Clamp, x, -1, 1) })
		run("maximum", func() { dst.Binary(Maximum, x, y) }) // tensor/elementwise.go's binaryStrided
		run("logaddexp", func() { dst.Math2(LogAddExp, x, y) })
	}
}
