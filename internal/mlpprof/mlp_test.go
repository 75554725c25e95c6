package mlpprof

import (
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

func randn(r *rand.Rand, scale float64, shape ...int) *tensor.Tensor {
	t := tensor.New(tensor.Float32, shape...)
	f := t.Float32s()
	for i := range f {
		f[i] = float32(r.NormFloat64() * scale)
	}
	return t
}

func BenchmarkStep(b *testing.B) {
	for _, cfg := range []struct {
		name  string
		sizes []int
		batch int
	}{{"A", []int{64, 128, 128, 10}, 32}, {"B", []int{784, 512, 512, 10}, 128}} {
		b.Run(cfg.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			var ws, bs []*ad.Value
			for i := 0; i+1 < len(cfg.sizes); i++ {
				ws = append(ws, ad.Var(randn(r, 0.05, cfg.sizes[i], cfg.sizes[i+1])))
				bs = append(bs, ad.Var(tensor.New(tensor.Float32, cfg.sizes[i+1])))
			}
			x := ad.Const(randn(r, 1, cfg.batch, cfg.sizes[0]))
			y := make([]int, cfg.batch)
			for i := range y {
				y[i] = i % 10
			}
			b.ReportAllocs()
			for range b.N {
				h := x
				for i := range ws {
					h = ad.Add(ad.MatMul(h, ws[i]), bs[i])
					if i+1 < len(ws) {
						h = ad.Relu(h)
					}
				}
				loss := ad.CrossEntropy(h, y)
				if err := loss.Backward(); err != nil {
					b.Fatal(err)
				}
				for _, p := range append(ws, bs...) {
					p.Tensor().Scale(p.Tensor(), 1, 0) // stand-in for an update: touches the data
					p.ZeroGrad()
				}
			}
		})
	}
}
