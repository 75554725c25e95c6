package gradcheck_test

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/tensor"
)

// A numerically stable logaddexp with its own VJP and JVP passes every
// check: both rules against finite differences and against each other,
// second derivatives, and float32 against float64.
func ExampleCheckFunc() {
	logAddExp := &ad.Func{
		Name: "logaddexp",
		// m + log(eˣ⁻ᵐ + eʸ⁻ᵐ), m = max(x, y): no overflow.
		Forward: func(xs []*ad.Value) *ad.Value {
			x, y := xs[0], xs[1]
			m := ad.Where(ad.Greater(x, y), x, y)
			return ad.Add(m, ad.Log(ad.Add(ad.Exp(ad.Sub(x, m)), ad.Exp(ad.Sub(y, m)))))
		},
		// ∂z/∂x = eˣ⁻ᶻ, ∂z/∂y = eʸ⁻ᶻ, with z the output.
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
	x := tensor.FromFloat64([]float64{0.3, -1.2, 2, 5}, 4)
	y := tensor.FromFloat64([]float64{1, 0.5, -3, 4}, 4)
	rep, err := gradcheck.CheckFunc(logAddExp, []*tensor.Tensor{x, y}, nil)
	for _, r := range rep.Results {
		fmt.Println(r.Check, r.OK)
	}
	fmt.Println(err)
	// Output:
	// eval true
	// gradient true
	// second true
	// jvp-vjp true
	// tangent true
	// hvp true
	// float32 true
	// <nil>
}

// A straight-through estimator rounds forward and passes the cotangent
// through unchanged: its VJP is not the derivative of its Forward (which
// is zero almost everywhere), so the checks against finite differences do
// not apply and are skipped; the rest still hold its rules to each other.
func ExampleCheckFunc_straightThrough() {
	ste := &ad.Func{
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
	x := []*tensor.Tensor{tensor.FromFloat64([]float64{0.3, 1.7, -2.2}, 3)}

	_, err := gradcheck.CheckFunc(ste, x, nil)
	fmt.Println(err != nil)

	rep, err := gradcheck.CheckFunc(ste, x, &gradcheck.FuncSettings{Skip: gradcheck.Numeric})
	fmt.Println(rep.Ran(), err)
	// Output:
	// true
	// eval|jvp-vjp|hvp|float32 <nil>
}
