package fn_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

func randT(rng *rand.Rand, dt tensor.DType, scale float64, shape ...int) *ad.Value {
	t := tensor.New(dt, shape...)
	for i := range t.Len() {
		t.SetFlat(i, scale*rng.NormFloat64())
	}
	return ad.Const(t)
}

// BenchmarkPerExampleGrad/B: per-example gradients of the MLP B loss
// (784-512-512-10, biases, ReLU, cross-entropy of one example, float32),
// batch 128, with respect to every parameter, by Vmap of Grad (the peer:
// bench/transforms_peer.py PerExampleGrad/B). B-arena is the same step
// with the batch in an ad.Arena reset every step: the per-example
// gradients (343 MB) land in buffers the arena recycles instead of new
// storage the Go runtime zeroes.
func BenchmarkPerExampleGrad(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	dt := tensor.Float32
	w1, b1 := randT(rng, dt, 0.03, 512, 784), randT(rng, dt, 0.03, 512)
	w2, b2 := randT(rng, dt, 0.04, 512, 512), randT(rng, dt, 0.04, 512)
	w3, b3 := randT(rng, dt, 0.04, 10, 512), randT(rng, dt, 0.04, 10)
	x := randT(rng, dt, 1, 128, 784)
	hot := tensor.New(dt, 128, 10)
	for i := range 128 {
		hot.SetFlat(i*10+rng.IntN(10), 1)
	}
	y := ad.Const(hot)
	loss := fn.Of(func(p ...*ad.Value) *ad.Value {
		h := ad.Linear(p[6], p[0], p[1], ad.ActReLU)
		h = ad.Linear(h, p[2], p[3], ad.ActReLU)
		logits := ad.Linear(h, p[4], p[5], ad.ActIdentity)
		return ad.Neg(ad.Sum(ad.Mul(ad.LogSoftmax(logits, 0), p[7])))
	})
	nb := fn.NoBatch
	pg := fn.Vmap(fn.Grad(loss, 0, 1, 2, 3, 4, 5), []int{nb, nb, nb, nb, nb, nb, 0, 0}, nil)
	b.Run("B", func(b *testing.B) {
		for range b.N {
			pg(w1, b1, w2, b2, w3, b3, x, y)
		}
	})
	// B-matmul is B written with MatMul instead of Linear, each example a
	// row: the parameters are broadcast over the batch (the general way),
	// f running once per call after the first.
	mm := fn.Of(func(p ...*ad.Value) *ad.Value {
		h := ad.Relu(ad.Add(ad.MatMulT(p[6], p[0], false, true), p[1]))
		h = ad.Relu(ad.Add(ad.MatMulT(h, p[2], false, true), p[3]))
		logits := ad.Add(ad.MatMulT(h, p[4], false, true), p[5])
		return ad.Neg(ad.Sum(ad.Mul(ad.LogSoftmax(logits, -1), p[7])))
	})
	pm := fn.Vmap(fn.Grad(mm, 0, 1, 2, 3, 4, 5), []int{nb, nb, nb, nb, nb, nb, 0, 0}, nil)
	xr, yr := ad.Reshape(x, 128, 1, 784), ad.Reshape(y, 128, 1, 10)
	b.Run("B-matmul", func(b *testing.B) {
		for range b.N {
			pm(w1, b1, w2, b2, w3, b3, xr, yr)
		}
	})
	b.Run("B-arena", func(b *testing.B) {
		var ar ad.Arena
		for range b.N {
			ar.Reset()
			pg(w1, b1, w2, b2, w3, b3, ar.Const(x.Tensor()), ar.Const(hot))
		}
	})
}

// pinnLoss is the PINN loss of BenchmarkPINNStep: u = 2→64→64→64→1 tanh MLP
// (float64), loss = mean((Δu − f)²) over the points. Δu comes from
// reverse over reverse on the whole batch, as PyTorch's create_graph route
// does it: the points' rows are independent, so the gradient of Σ u with
// respect to the points holds each point's ∇u, and the pullback of that
// gradient (VJP of Grad), called with the unit column e_d, gives each
// point's ∂(∇u)_d/∂x, whose column d is ∂²u/∂x_d².
func pinnLoss(pts, f *ad.Value) fn.Func {
	n, dims := pts.Shape()[0], pts.Shape()[1]
	cols := make([]*ad.Value, dims)
	for d := range cols {
		e := tensor.New(pts.DType(), n, dims)
		for k := range n {
			e.SetFlat(k*dims+d, 1)
		}
		cols[d] = ad.Const(e)
	}
	return fn.Of(func(p ...*ad.Value) *ad.Value {
		grad := fn.Grad(fn.Of(func(x ...*ad.Value) *ad.Value { return ad.Sum(pinnNet(p, x[0])) }))
		_, pull := fn.VJP(grad, pts)
		var lap *ad.Value
		for d, e := range cols {
			c := ad.Slice(pull(e)[0], 1, d, d+1) // [N 1]
			if lap == nil {
				lap = c
			} else {
				lap = ad.Add(lap, c)
			}
		}
		return ad.Mean(ad.Square(ad.Sub(ad.Reshape(lap, -1), f)))
	})
}

// pinnNet is the PINN's network u at the points x ([N 2] → [N 1]).
func pinnNet(p []*ad.Value, x *ad.Value) *ad.Value {
	h := ad.Linear(x, p[0], p[1], ad.ActIdentity)
	h = ad.Linear(ad.Tanh(h), p[2], p[3], ad.ActIdentity)
	h = ad.Linear(ad.Tanh(h), p[4], p[5], ad.ActIdentity)
	return ad.Linear(ad.Tanh(h), p[6], p[7], ad.ActIdentity)
}

// pinnLossHessian is pinnLoss with Δu the trace of each point's Hessian,
// vmapped over the points (the functorch route: vmap of hessian).
func pinnLossHessian(pts, f *ad.Value) fn.Func {
	u := fn.Of(func(a ...*ad.Value) *ad.Value { // a: params..., point [2]
		return ad.Sum(pinnNet(a[:8], ad.Reshape(a[8], 1, 2)))
	})
	nb := fn.NoBatch
	lap := fn.Vmap(func(a ...*ad.Value) []*ad.Value {
		h := fn.Hessian(u, 8)(a...)[0] // [2 2]
		return []*ad.Value{ad.Add(ad.Slice(ad.Reshape(h, 4), 0, 0, 1), ad.Slice(ad.Reshape(h, 4), 0, 3, 4))}
	}, []int{nb, nb, nb, nb, nb, nb, nb, nb, 0}, nil)
	return fn.Of(func(p ...*ad.Value) *ad.Value {
		d := lap(append(p[:8:8], pts)...)[0] // [N 1]
		return ad.Mean(ad.Square(ad.Sub(ad.Reshape(d, -1), f)))
	})
}

// BenchmarkPINNStep: the PINN loss at 1,024 points and its gradient with
// respect to every parameter, by reverse over reverse (the peer: PINNStep,
// whose best route is create_graph).
func BenchmarkPINNStep(b *testing.B) {
	ps, pt, ft := pinnData()
	step := fn.ValueAndGrad(pinnLoss(ad.Const(pt), ad.Const(ft)))
	b.ResetTimer()
	for range b.N {
		step(ps...)
	}
}

// BenchmarkPINNStepHessian is BenchmarkPINNStep by vmap of Hessian (the
// peer's functorch route).
func BenchmarkPINNStepHessian(b *testing.B) {
	ps, pt, ft := pinnData()
	step := fn.ValueAndGrad(pinnLossHessian(ad.Const(pt), ad.Const(ft)))
	b.ResetTimer()
	for range b.N {
		step(ps...)
	}
}

// TestPINNRoutes: the two routes of the PINN benchmarks give one loss and
// one gradient, to rounding.
func TestPINNRoutes(t *testing.T) {
	ps, pt, ft := pinnData()
	a := fn.ValueAndGrad(pinnLoss(ad.Const(pt), ad.Const(ft)))(ps...)
	b := fn.ValueAndGrad(pinnLossHessian(ad.Const(pt), ad.Const(ft)))(ps...)
	for i := range a {
		x, y := a[i].Tensor().Float64s(), b[i].Tensor().Float64s()
		scale := 0.0
		for _, v := range x {
			scale = max(scale, math.Abs(v))
		}
		for j := range x {
			if d := math.Abs(x[j] - y[j]); d > 1e-12*max(scale, 1) {
				t.Fatalf("output %d %v, element %d: reverse over reverse %v, vmap of Hessian %v", i, a[i].Shape(), j, x[j], y[j])
			}
		}
	}
}

// pinnData returns BenchmarkPINNStep's parameters, points and right-hand
// side.
func pinnData() (ps []*ad.Value, pt, ft *tensor.Tensor) {
	rng := rand.New(rand.NewPCG(2, 2))
	dt := tensor.Float64
	ps = []*ad.Value{
		randT(rng, dt, 0.7, 64, 2), randT(rng, dt, 0.1, 64),
		randT(rng, dt, 0.125, 64, 64), randT(rng, dt, 0.1, 64),
		randT(rng, dt, 0.125, 64, 64), randT(rng, dt, 0.1, 64),
		randT(rng, dt, 0.125, 1, 64), randT(rng, dt, 0.1, 1),
	}
	n := 1024
	pt, ft = tensor.New(dt, n, 2), tensor.New(dt, n)
	for i := range n {
		x, y := rng.Float64(), rng.Float64()
		pt.SetFlat(2*i, x)
		pt.SetFlat(2*i+1, y)
		ft.SetFlat(i, -2*math.Pi*math.Pi*math.Sin(math.Pi*x)*math.Sin(math.Pi*y))
	}
	return ps, pt, ft
}

// BenchmarkPINNStepArena is BenchmarkPINNStep with the points and the
// right-hand side in an ad.Arena reset every step: every value computed
// from them, the sweeps' included, takes recycled storage.
func BenchmarkPINNStepArena(b *testing.B) {
	ps, pt, ft := pinnData()
	var ar ad.Arena
	b.ResetTimer()
	for range b.N {
		ar.Reset()
		fn.ValueAndGrad(pinnLoss(ar.Const(pt), ar.Const(ft)))(ps...)
	}
}

// BenchmarkHessian/100: the Hessian of f(x) = Σ tanh(A·x)² + Σ x⁴, x ∈ R¹⁰⁰,
// A 100×100 (float64), by JacFwd of JacRev (the peer: Hessian/100).
func BenchmarkHessian(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	a := randT(rng, tensor.Float64, 0.1, 100, 100)
	x := randT(rng, tensor.Float64, 1, 100)
	f := fn.Of(func(xs ...*ad.Value) *ad.Value {
		t := ad.Tanh(ad.MatMul(a, xs[0]))
		return ad.Add(ad.Sum(ad.Square(t)), ad.Sum(ad.PowScalar(xs[0], 4)))
	})
	h := fn.JacFwd(fn.JacRev(f))
	b.Run("100", func(b *testing.B) {
		for range b.N {
			h(x)
		}
	})
}

// BenchmarkEnsemble: 8 models of MLP 784-256-256-10 (biases, ReLU,
// float32), their parameters stacked, on one batch of 64 inputs shared by
// all (the peer: bench/transforms_peer.py Ensemble). forward is Vmap of the
// model over the parameters; grad is Vmap of Grad of each model's mean
// cross-entropy, each model's gradients.
func BenchmarkEnsemble(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	dt := tensor.Float32
	const models, batch = 8, 64
	w1, b1 := randT(rng, dt, 0.03, models, 256, 784), randT(rng, dt, 0.03, models, 256)
	w2, b2 := randT(rng, dt, 0.06, models, 256, 256), randT(rng, dt, 0.06, models, 256)
	w3, b3 := randT(rng, dt, 0.06, models, 10, 256), randT(rng, dt, 0.06, models, 10)
	x := randT(rng, dt, 1, batch, 784)
	hot := tensor.New(dt, batch, 10)
	for i := range batch {
		hot.SetFlat(i*10+rng.IntN(10), 1)
	}
	y := ad.Const(hot)
	model := func(p []*ad.Value) *ad.Value {
		h := ad.Linear(p[6], p[0], p[1], ad.ActReLU)
		h = ad.Linear(h, p[2], p[3], ad.ActReLU)
		return ad.Linear(h, p[4], p[5], ad.ActIdentity)
	}
	fwd := fn.Of(func(p ...*ad.Value) *ad.Value { return model(p) })
	loss := fn.Of(func(p ...*ad.Value) *ad.Value {
		return ad.MulScalar(ad.Neg(ad.Sum(ad.Mul(ad.LogSoftmax(model(p), -1), p[7]))), 1.0/batch)
	})
	nb := fn.NoBatch
	out := fn.Vmap(fwd, []int{0, 0, 0, 0, 0, 0, nb}, nil)
	per := fn.Vmap(fn.Grad(loss, 0, 1, 2, 3, 4, 5), []int{0, 0, 0, 0, 0, 0, nb, nb}, nil)
	b.Run("forward", func(b *testing.B) {
		for range b.N {
			out(w1, b1, w2, b2, w3, b3, x)
		}
	})
	b.Run("grad", func(b *testing.B) {
		for range b.N {
			per(w1, b1, w2, b2, w3, b3, x, y)
		}
	})
}

// BenchmarkVmapGather: each of 64 examples looks up 32 rows of 256 of a
// shared float32 table of 5000 rows (an embedding) with Gather inside
// Vmap: one gather over the table, the examples' indices laid end to end.
func BenchmarkVmapGather(b *testing.B) {
	table := ad.Const(tensor.Full(tensor.Float32, 0.5, 5000, 256))
	it := tensor.New(tensor.Float32, 64, 32, 256)
	for i := range it.Len() {
		it.SetFlat(i, float64((i/256*7919)%5000))
	}
	idx := ad.Const(it)
	f := fn.Vmap(fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Gather(xs[0], 0, xs[1]) }), []int{fn.NoBatch, 0}, nil)
	b.ReportAllocs()
	for range b.N {
		f(table, idx)
	}
}
