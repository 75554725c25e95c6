package ad_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// BenchmarkChain measures the engine's per-op bookkeeping: a chain of 1000
// alternating mul/add ops on float32 tensors of 1 and 1000 elements, forward
// and backward. It reports µs per op (forward + backward).
func BenchmarkChain(b *testing.B) {
	for _, size := range []int{1, 1000} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			const ops = 1000
			x := ad.Var(tensor.Full(tensor.Float32, 0.5, size))
			c := ad.Const(tensor.Full(tensor.Float32, 1.0001, size))
			d := ad.Const(tensor.Full(tensor.Float32, 1e-4, size))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				chain(x, c, d, ops)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/ops, "µs/op")
		})
	}
}

// BenchmarkChainArena is BenchmarkChain with the chain recorded in an
// Arena (its constants made with Arena.Const): no allocation per op.
func BenchmarkChainArena(b *testing.B) {
	for _, size := range []int{1, 1000} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			const ops = 1000
			x := ad.Var(tensor.Full(tensor.Float32, 0.5, size))
			ct := tensor.Full(tensor.Float32, 1.0001, size)
			dt := tensor.Full(tensor.Float32, 1e-4, size)
			var ar ad.Arena
			run := func() {
				ar.Reset()
				chain(x, ar.Const(ct), ar.Const(dt), ops)
			}
			run()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				run()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/ops, "µs/op")
		})
	}
}

func chain(x, c, d *ad.Value, ops int) {
	y := x
	for i := 0; i < ops; i += 2 {
		y = ad.Add(ad.Mul(y, c), d)
	}
	if _, err := ad.Grad(ad.Sum(y), x); err != nil {
		panic(err)
	}
}

// BenchmarkFused compares the fused softmax/log-softmax/cross-entropy rows
// with the same functions composed from primitives (forward + backward,
// float32, 128×512 logits): the reason the fused rows exist.
func BenchmarkFused(b *testing.B) {
	const n, c = 128, 512
	data := tensor.New(tensor.Float32, n, c)
	for i := 0; i < data.Len(); i++ {
		data.SetFlat(i, float64(i%97)/50-1)
	}
	targets := make([]int, n)
	for i := range targets {
		targets[i] = (i * 7) % c
	}
	onehot := tensor.New(tensor.Float32, n, c)
	for i, y := range targets {
		onehot.Set(1, i, y)
	}
	composedLogSoftmax := func(x *ad.Value) *ad.Value {
		m := ad.MaxKeepDims(x, 1).Detach()
		s := ad.Sub(x, m)
		return ad.Sub(s, ad.Log(ad.SumKeepDims(ad.Exp(s), 1)))
	}
	cases := []struct {
		name string
		f    func(x *ad.Value) *ad.Value
	}{
		{"softmax/fused", func(x *ad.Value) *ad.Value { return ad.Sum(ad.Square(ad.Softmax(x, 1))) }},
		{"softmax/composed", func(x *ad.Value) *ad.Value {
			e := ad.Exp(ad.Sub(x, ad.MaxKeepDims(x, 1).Detach()))
			return ad.Sum(ad.Square(ad.Div(e, ad.SumKeepDims(e, 1))))
		}},
		{"cross_entropy/fused", func(x *ad.Value) *ad.Value { return ad.CrossEntropy(x, targets) }},
		{"cross_entropy/composed", func(x *ad.Value) *ad.Value {
			return ad.MulScalar(ad.Sum(ad.Mul(composedLogSoftmax(x), ad.Const(onehot))), -1.0/n)
		}},
	}
	for _, cs := range cases {
		b.Run(cs.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				x := ad.Var(data)
				if _, err := ad.Grad(cs.f(x), x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func randn(r *rand.Rand, scale float64, shape ...int) *tensor.Tensor {
	t := tensor.New(tensor.Float32, shape...)
	f := t.Float32s()
	for i := range f {
		f[i] = float32(r.NormFloat64() * scale)
	}
	return t
}

// BenchmarkMLPStep is the engine's view of a training step (forward,
// fused cross-entropy, backward, a stand-in in-place update) on MLPs A and B of
// the nn benchmarks, without the nn package: for profiling the engine.
func BenchmarkMLPStep(b *testing.B) {
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

// BenchmarkHVP compares a Hessian-vector product of the MLP B loss (with
// respect to all weights, reverse-over-reverse through the fused
// cross-entropy) with one gradient of the same loss, and reports the ratio.
func BenchmarkHVP(b *testing.B) {
	sizes, batch := []int{784, 512, 512, 10}, 128
	r := rand.New(rand.NewPCG(3, 3))
	var ws, vs []*ad.Value
	for i := 0; i+1 < len(sizes); i++ {
		ws = append(ws, ad.Var(randn(r, 0.05, sizes[i], sizes[i+1])))
		vs = append(vs, ad.Const(randn(r, 1, sizes[i], sizes[i+1])))
	}
	x := ad.Const(randn(r, 1, batch, sizes[0]))
	y := make([]int, batch)
	for i := range y {
		y[i] = i % 10
	}
	loss := func() *ad.Value {
		h := x
		for i, w := range ws {
			h = ad.MatMul(h, w)
			if i+1 < len(ws) {
				h = ad.Tanh(h) // smooth, so the Hessian is not piecewise zero
			}
		}
		return ad.CrossEntropy(h, y)
	}
	var grad, hvp float64
	b.Run("grad", func(b *testing.B) {
		for range b.N {
			if _, err := ad.Grad(loss(), ws...); err != nil {
				b.Fatal(err)
			}
		}
		grad = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("hvp", func(b *testing.B) {
		for range b.N {
			if _, err := ad.HVPReverse(loss(), ws, vs); err != nil {
				b.Fatal(err)
			}
		}
		hvp = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		if grad > 0 {
			b.ReportMetric(hvp/grad, "×grad")
		}
	})
}
