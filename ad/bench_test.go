package ad_test

import (
	"fmt"
	"math"
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
		m := ad.Max(x, ad.Axes(1), ad.KeepDims).Detach()
		s := ad.Sub(x, m)
		return ad.Sub(s, ad.Log(ad.Sum(ad.Exp(s), ad.Axes(1), ad.KeepDims)))
	}
	cases := []struct {
		name string
		f    func(x *ad.Value) *ad.Value
	}{
		{"softmax/fused", func(x *ad.Value) *ad.Value { return ad.Sum(ad.Square(ad.Softmax(x, 1))) }},
		{"softmax/composed", func(x *ad.Value) *ad.Value {
			e := ad.Exp(ad.Sub(x, ad.Max(x, ad.Axes(1), ad.KeepDims).Detach()))
			return ad.Sum(ad.Square(ad.Div(e, ad.Sum(e, ad.Axes(1), ad.KeepDims))))
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

// mlpB is the MLP B loss of the engine benchmarks: 784-512-512-10 with
// biases, ReLU, fused cross-entropy, batch 128, float32. Its parameters are
// Vars (params) and, for the functional transforms, constants (consts).
type mlpB struct {
	ws, bs         []*tensor.Tensor
	x              *tensor.Tensor
	y              []int
	params, consts []*ad.Value
}

func newMLPB() *mlpB {
	sizes, batch := []int{784, 512, 512, 10}, 128
	r := rand.New(rand.NewPCG(3, 3))
	m := &mlpB{x: randn(r, 1, batch, sizes[0]), y: make([]int, batch)}
	for i := 0; i+1 < len(sizes); i++ {
		m.ws = append(m.ws, randn(r, 1/math.Sqrt(float64(sizes[i])), sizes[i], sizes[i+1]))
		m.bs = append(m.bs, randn(r, 0.01, sizes[i+1]))
	}
	for i := range m.y {
		m.y[i] = i % 10
	}
	for i := range m.ws {
		m.params = append(m.params, ad.Var(m.ws[i]), ad.Var(m.bs[i]))
		m.consts = append(m.consts, ad.Const(m.ws[i]), ad.Const(m.bs[i]))
	}
	return m
}

// loss is the network's loss on the input x with the parameters ps
// (weight, bias, weight, bias, ...).
func (m *mlpB) loss(x *ad.Value, ps []*ad.Value) *ad.Value {
	h := x
	for i := 0; i < len(ps); i += 2 {
		h = ad.Add(ad.MatMul(h, ps[i]), ps[i+1])
		if i+2 < len(ps) {
			h = ad.Relu(h)
		}
	}
	return ad.CrossEntropy(h, m.y)
}

// lossOfInput is the loss as a function of the input batch alone.
func (m *mlpB) lossOfInput(xs []*ad.Value) *ad.Value { return m.loss(xs[0], m.consts) }

// BenchmarkForward/B is the MLP B loss alone, nothing recorded: the
// baseline of BenchmarkJVP.
func BenchmarkForward(b *testing.B) {
	m := newMLPB()
	b.Run("B", func(b *testing.B) {
		x := ad.Const(m.x)
		for range b.N {
			m.loss(x, m.consts)
		}
	})
}

// BenchmarkJVP/B is the loss and its directional derivative along a
// tangent of the input batch, in one forward pass (forward mode).
func BenchmarkJVP(b *testing.B) {
	m := newMLPB()
	v := randn(rand.New(rand.NewPCG(4, 4)), 1, m.x.Shape()...)
	b.Run("B", func(b *testing.B) {
		for range b.N {
			if _, _, err := ad.JVP(m.lossOfInput, []*tensor.Tensor{m.x}, []*tensor.Tensor{v}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkGrad/B is one gradient of the loss with respect to the
// parameters (the training gradient): the baseline of BenchmarkHVP.
// Grad/B-input is the gradient with respect to the input batch, the
// gradient whose directional derivative HVP/B computes.
func BenchmarkGrad(b *testing.B) {
	m := newMLPB()
	b.Run("B", func(b *testing.B) {
		x := ad.Const(m.x)
		for range b.N {
			if _, err := ad.Grad(m.loss(x, m.params), m.params...); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("B-input", func(b *testing.B) {
		for range b.N {
			x := ad.Var(m.x)
			if _, err := ad.Grad(m.loss(x, m.consts), x); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkHVP/B is a Hessian-vector product of the loss with respect to
// the input batch by the default route (forward-over-reverse, through the
// fused cross-entropy). HVP/B-params is the product with respect to all the
// parameters, by reverse-over-reverse on the recorded loss (HVPReverse), and
// HVP/B-rev the input-batch product by reverse-over-reverse, for
// comparison; HVP/B-params-fwd is the parameters' product by
// forward-over-reverse (HVPVars).
func BenchmarkHVP(b *testing.B) {
	m := newMLPB()
	r := rand.New(rand.NewPCG(5, 5))
	v := randn(r, 1, m.x.Shape()...)
	b.Run("B", func(b *testing.B) {
		for range b.N {
			if _, err := ad.HVP(m.lossOfInput, []*tensor.Tensor{m.x}, []*tensor.Tensor{v}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("B-rev", func(b *testing.B) {
		for range b.N {
			x := ad.Var(m.x)
			if _, err := ad.HVPReverse(m.loss(x, m.consts), []*ad.Value{x}, []*ad.Value{ad.Const(v)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	var vs []*ad.Value
	for _, p := range m.params {
		vs = append(vs, ad.Const(randn(r, 1, p.Shape()...)))
	}
	b.Run("B-params", func(b *testing.B) {
		x := ad.Const(m.x)
		for range b.N {
			if _, err := ad.HVPReverse(m.loss(x, m.params), m.params, vs); err != nil {
				b.Fatal(err)
			}
		}
	})
	ts := make([]*tensor.Tensor, len(vs))
	for i, v := range vs {
		ts[i] = v.Tensor()
	}
	b.Run("B-params-fwd", func(b *testing.B) {
		x := ad.Const(m.x)
		f := func() *ad.Value { return m.loss(x, m.params) }
		for range b.N {
			if _, err := ad.HVPVars(f, m.params, ts); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// tanh1000 is x ↦ tanh(W·x) with W 1000×1000 float64 (a constant).
func tanh1000() (f func([]*ad.Value) *ad.Value, x *tensor.Tensor) {
	const n = 1000
	r := rand.New(rand.NewPCG(6, 6))
	w := tensor.New(tensor.Float64, n, n)
	for i := range w.Float64s() {
		w.Float64s()[i] = r.NormFloat64() / math.Sqrt(n)
	}
	x = tensor.New(tensor.Float64, n)
	for i := range x.Float64s() {
		x.Float64s()[i] = r.NormFloat64()
	}
	W := ad.Const(w)
	return func(xs []*ad.Value) *ad.Value {
		return ad.Tanh(ad.Reshape(ad.MatMul(W, ad.Reshape(xs[0], n, 1)), n))
	}, x
}

// BenchmarkVJP/tanh1000 is tanh(W·x) and one vector-Jacobian product with
// respect to x: the baseline of BenchmarkJacobian.
func BenchmarkVJP(b *testing.B) {
	f, x := tanh1000()
	u := ad.Const(tensor.Full(tensor.Float64, 1, x.Len()))
	b.Run("tanh1000", func(b *testing.B) {
		for range b.N {
			xv := ad.Var(x)
			if _, err := ad.GradOpts(f([]*ad.Value{xv}), []*ad.Value{xv}, ad.Options{Seed: u}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkJacobian/tanh1000 is the full 1000×1000 Jacobian of tanh(W·x)
// by the default route (JacAuto); -fwd and -rev force the mode.
func BenchmarkJacobian(b *testing.B) {
	f, x := tanh1000()
	for _, c := range []struct {
		name string
		mode ad.JacMode
	}{{"tanh1000", ad.JacAuto}, {"tanh1000-fwd", ad.JacForward}, {"tanh1000-rev", ad.JacReverse}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				if _, err := ad.Jacobian(f, []*tensor.Tensor{x}, c.mode); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
