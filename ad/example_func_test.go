package ad_test

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// A user-defined function with its own derivative rules: logaddexp,
// log(eˣ + eʸ), computed as m + log(eˣ⁻ᵐ + eʸ⁻ᵐ) with m = max(x, y) so that
// it does not overflow, with a VJP and a JVP that read the output z:
// ∂z/∂x = eˣ⁻ᶻ and ∂z/∂y = eʸ⁻ᶻ, both in (0, 1]. At x = 1000 the naive
// composition overflows to +Inf and its gradient is NaN.
func ExampleFunc() {
	logAddExp := &ad.Func{
		Name: "logaddexp",
		Forward: func(xs []*ad.Value) *ad.Value {
			x, y := xs[0], xs[1]
			m := ad.Where(ad.Greater(x, y), x, y)
			return ad.Add(m, ad.Log(ad.Add(ad.Exp(ad.Sub(x, m)), ad.Exp(ad.Sub(y, m)))))
		},
		VJP: func(xs []*ad.Value, z, g *ad.Value) []*ad.Value {
			return []*ad.Value{ad.Mul(g, ad.Exp(ad.Sub(xs[0], z))), ad.Mul(g, ad.Exp(ad.Sub(xs[1], z)))}
		},
		JVP: func(xs []*ad.Value, z *ad.Value, ts []*ad.Value) *ad.Value {
			var out *ad.Value
			for i, t := range ts {
				if t == nil { // a zero tangent
					continue
				}
				term := ad.Mul(t, ad.Exp(ad.Sub(xs[i], z)))
				if out == nil {
					out = term
				} else {
					out = ad.Add(out, term)
				}
			}
			return out
		},
	}
	x := ad.Var(tensor.Scalar(tensor.Float64, 1000))
	y := ad.Var(tensor.Scalar(tensor.Float64, 999))

	naive := ad.Log(ad.Add(ad.Exp(x), ad.Exp(y)))
	gn, _ := ad.Grad(naive, x, y)
	fmt.Printf("naive:  z = %v, ∂z/∂x = %v, ∂z/∂y = %v\n", naive.Item(), gn[0].Item(), gn[1].Item())

	z := logAddExp.Apply(x, y)
	g, err := ad.Grad(z, x, y)
	if err != nil {
		panic(err)
	}
	fmt.Printf("stable: z = %.6f, ∂z/∂x = %.6f, ∂z/∂y = %.6f\n", z.Item(), g[0].Item(), g[1].Item())

	// Forward mode uses the JVP: the derivative along (1, 1) is 1.
	f := func(xs []*ad.Value) *ad.Value { return logAddExp.Apply(xs...) }
	one := tensor.Scalar(tensor.Float64, 1)
	_, jv, err := ad.JVP(f, []*tensor.Tensor{x.Tensor(), y.Tensor()}, []*tensor.Tensor{one, one})
	if err != nil {
		panic(err)
	}
	fmt.Printf("J·(1, 1) = %.6f\n", jv.Item())
	// Output:
	// naive:  z = +Inf, ∂z/∂x = NaN, ∂z/∂y = NaN
	// stable: z = 1000.313262, ∂z/∂x = 0.731059, ∂z/∂y = 0.268941
	// J·(1, 1) = 1.000000
}

// A straight-through estimator: Forward rounds, and the VJP passes the
// cotangent through unchanged, as if the rounding were the identity (the
// true derivative is zero almost everywhere, which would stop training).
// Forward may compute with tensors directly: it is not recorded.
func ExampleFunc_straightThrough() {
	round := &ad.Func{
		Name: "round_ste",
		Forward: func(xs []*ad.Value) *ad.Value {
			t := xs[0].Tensor().Clone()
			for k := range t.Len() {
				t.SetFlat(k, math.Round(t.AtFlat(k)))
			}
			return ad.Const(t)
		},
		VJP: func(xs []*ad.Value, y, g *ad.Value) []*ad.Value { return []*ad.Value{g} },
	}
	x := ad.Var(tensor.FromFloat64([]float64{0.3, 1.7, -2.2}, 3))
	y := round.Apply(x)
	g, err := ad.Grad(ad.Sum(y), x)
	if err != nil {
		panic(err)
	}
	fmt.Println(y.Data(), g[0].Data())
	// Output: [0 2 -2] [1 1 1]
}
