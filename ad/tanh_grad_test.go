package ad_test

import (
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// TestTanhGradBits: tanh's VJP, one tanh_grad pass (into the cotangent's
// own storage on a plain sweep, into a new value on a recorded one), has
// the bits of the two-op form g·one_minus_square(y) it replaced, in both
// dtypes.
func TestTanhGradBits(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, n := range []int{1, 7, 300, 4099} {
			x, c := tensor.New(dt, n), tensor.New(dt, n)
			for i := range n {
				x.SetFlat(i, 3*r.NormFloat64())
				c.SetFlat(i, r.NormFloat64())
			}
			want := ad.Mul(ad.Const(c), ad.OneMinusSquare(ad.Tanh(ad.Const(x)))).Tensor()
			for _, create := range []bool{false, true} {
				xv := ad.Var(x)
				g, err := ad.GradOpts(ad.Sum(ad.Mul(ad.Tanh(xv), ad.Const(c))), []*ad.Value{xv}, ad.Options{CreateGraph: create})
				if err != nil {
					t.Fatal(err)
				}
				if !sameBits(g[0].Tensor(), want) {
					t.Fatalf("%s n=%d recorded=%v: tanh's gradient differs from g·(1 − y²) in the bits", dt, n, create)
				}
			}
		}
	}
}

// TestScaledProductBits: scaled_product, one pass, has the bits of the
// three-op form Mul(Mul(a, b), MulScalar(c, s)) it replaced, in both
// dtypes; under a batching level (a batched a, unbatched b and c) each
// example has the bits of the op applied to it alone; and tanh's second
// derivative, which runs through it, has the bits it had with the
// three-op form.
func TestScaledProductBits(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	rnd := func(dt tensor.DType, shape ...int) *tensor.Tensor {
		x := tensor.New(dt, shape...)
		for i := range x.Len() {
			x.SetFlat(i, 3*r.NormFloat64())
		}
		return x
	}
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, n := range []int{1, 7, 4099} {
			a, b, c := ad.Var(rnd(dt, n)), ad.Const(rnd(dt, n)), ad.Const(rnd(dt, n))
			for _, s := range []float64{-2, 0.1, 3} {
				got := ad.ScaledProduct(a, b, c, s)
				if got.Op() != "scaled_product" {
					t.Fatalf("the fused form recorded %q", got.Op())
				}
				if want := ad.Mul(ad.Mul(a, b), ad.MulScalar(c, s)); !sameBits(got.Tensor(), want.Tensor()) {
					t.Fatalf("%s n=%d s=%v: scaled_product differs from (a·b)·(s·c) in the bits", dt, n, s)
				}
			}
		}
		const k = 3
		l := ad.NewBatchLevel(k)
		at, b, c := rnd(dt, k, 5), ad.Const(rnd(dt, 5)), ad.Const(rnd(dt, 5))
		phys, _ := l.Unwrap(ad.ScaledProduct(l.Wrap(ad.Const(at)), b, c, -2))
		for e := range k {
			one := ad.ScaledProduct(ad.Slice(ad.Const(at), 0, e, e+1), ad.Reshape(b, 1, 5), ad.Reshape(c, 1, 5), -2)
			if !sameBits(ad.Slice(phys, 0, e, e+1).Tensor(), one.Tensor()) {
				t.Fatalf("%s: example %d under the batching level differs from the op on it alone", dt, e)
			}
		}
		// tanh's second derivative, d²/dx² Σ tanh(x)·w, against the three-op
		// form written out: g = w·(1 − y²), then ∂/∂x Σ g·v = v·(w·(−2y))·(1 − y²).
		x, w, v := rnd(dt, 9), ad.Const(rnd(dt, 9)), ad.Const(rnd(dt, 9))
		xv := ad.Var(x)
		g, err := ad.GradOpts(ad.Sum(ad.Mul(ad.Tanh(xv), w)), []*ad.Value{xv}, ad.Options{CreateGraph: true})
		if err != nil {
			t.Fatal(err)
		}
		h, err := ad.Grad(ad.Sum(ad.Mul(g[0], v)), xv)
		if err != nil {
			t.Fatal(err)
		}
		y := ad.Tanh(ad.Const(x))
		dy := ad.Mul(ad.Mul(v, w), ad.MulScalar(y, -2))
		want := ad.Mul(dy, ad.OneMinusSquare(y))
		if !sameBits(h[0].Tensor(), want.Tensor()) {
			t.Fatalf("%s: tanh's second derivative differs from the three-op form in the bits", dt)
		}
	}
}

// TestScaledProductThreads: scaled_product split over two threads has the
// bits of one.
func TestScaledProductThreads(t *testing.T) {
	defer tensor.SetThreads(0)
	n := 1 << 18
	a, b, c := ad.Const(randInput(tensor.Float64, 1, n)), ad.Const(randInput(tensor.Float64, 2, n)), ad.Const(randInput(tensor.Float64, 3, n))
	tensor.SetThreads(1)
	one := ad.ScaledProduct(a, b, c, -2).Tensor().Clone()
	tensor.SetThreads(2)
	two := ad.ScaledProduct(a, b, c, -2).Tensor()
	if !sameBits(one, two) {
		t.Fatal("threads change bits")
	}
}

// TestFusedProductVJPs: a sweep that records nothing writes tanh_grad's two
// cotangents and scaled_product's three with one fused kernel each; a
// create-graph sweep computes them op by op. Both give the same bits, for
// both dtypes, on one thread and on two (a size the kernels split), so the
// fused kernels are the ops' arithmetic exactly.
func TestFusedProductVJPs(t *testing.T) {
	defer tensor.SetThreads(0)
	for _, d := range []tensor.DType{tensor.Float64, tensor.Float32} {
		for _, n := range []int{37, 1 << 17} {
			for _, threads := range []int{1, 2} {
				tensor.SetThreads(threads)
				x0, v0 := randInput(d, 4, 2, n/2+1), randInput(d, 6, 2, n/2+1)
				var w *ad.Value
				if n > 1000 { // a product would be too big: an element-wise weight instead
					w = ad.Var(randInput(d, 5, 2, n/2+1))
				} else {
					w = ad.Var(randInput(d, 5, n/2+1, n/2+1))
				}
				third := func(create bool) []*tensor.Tensor {
					x := ad.Var(x0)
					var h *ad.Value
					if n > 1000 {
						h = ad.Tanh(ad.Mul(x, w))
					} else {
						h = ad.Tanh(ad.MatMul(x, w))
					}
					v := ad.Var(v0)                                                                             // so that tanh_grad's cotangent operand needs a gradient too
					g1, err := ad.GradOpts(ad.Sum(ad.Mul(h, v)), []*ad.Value{x}, ad.Options{CreateGraph: true}) // tanh_grad nodes
					if err != nil {
						t.Fatal(err)
					}
					g2, err := ad.GradOpts(ad.Sum(ad.Mul(g1[0], g1[0])), []*ad.Value{x, w}, ad.Options{CreateGraph: true}) // scaled_product nodes
					if err != nil {
						t.Fatal(err)
					}
					g3, err := ad.GradOpts(ad.Add(ad.Sum(ad.Square(g2[0])), ad.Sum(g2[1])), []*ad.Value{x, w, v}, ad.Options{CreateGraph: create})
					if err != nil {
						t.Fatal(err)
					}
					return []*tensor.Tensor{g3[0].Tensor(), g3[1].Tensor(), g3[2].Tensor()}
				}
				fused, ops := third(false), third(true)
				for i := range fused {
					if !sameBits(fused[i], ops[i]) {
						t.Fatalf("%s n=%d threads=%d: gradient %d differs between the fused VJPs and the ops", d, n, threads, i)
					}
				}
			}
		}
	}
}
