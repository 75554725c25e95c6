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
