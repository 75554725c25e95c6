package ode_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/ode"
	"github.com/adjointgo/adjoint/tensor"
)

// Exponential decay y' = −k·y: the solution at t = 2 and its gradients
// with respect to the initial state, the rate and the final time, by the
// adjoint method (the default), against the closed forms
// e^(−2k), −2·y0·e^(−2k) and −k·y0·e^(−2k).
func ExampleSolve() {
	y0 := ad.Var(tensor.Scalar(tensor.Float64, 3))
	k := ad.Var(tensor.Scalar(tensor.Float64, 0.5))
	times := ad.Var(tensor.FromFloat64([]float64{0, 2}, 2))
	f := func(t, y *ad.Value, p []*ad.Value) *ad.Value { return ad.Neg(ad.Mul(p[0], y)) }

	ys := ode.Solve(f, y0, times, []*ad.Value{k}, ode.Options{RTol: 1e-10, ATol: 1e-12})
	y2 := ode.At(ys, 1)
	g, err := ad.Grad(y2, y0, k, times)
	if err != nil {
		panic(err)
	}
	fmt.Printf("y(2) = %.6f\n", y2.Item())
	fmt.Printf("dy/dy0 = %.6f, dy/dk = %.6f, dy/dT = %.6f\n", g[0].Item(), g[1].Item(), g[2].Data()[1])
	// Output:
	// y(2) = 1.103638
	// dy/dy0 = 0.367879, dy/dk = -2.207277, dy/dT = -0.551819
}

// A batch of initial states under a linear field y' = y·Aᵀ with RK4 on a
// fixed grid, three output times, and a loss on all of them: the three
// gradient methods give the same gradient with respect to A (the adjoint
// to the solver's accuracy, Checkpoint to rounding).
func ExampleGradient() {
	a := []float64{0, 1, -1, -0.1} // a damped rotation
	y0 := tensor.FromFloat64([]float64{1, 0, 0, 1}, 2, 2)
	f := func(t, y *ad.Value, p []*ad.Value) *ad.Value { return ad.MatMulT(y, p[0], false, true) }
	for _, g := range []ode.Gradient{ode.Adjoint, ode.Backprop, ode.Checkpoint} {
		A := ad.Var(tensor.FromFloat64(append([]float64(nil), a...), 2, 2))
		ys := ode.Solve(f, ad.Const(y0), ode.Times(0, 1, 2, 3), []*ad.Value{A},
			ode.Options{Method: ode.RK4, Steps: 100, Gradient: g, Snapshots: 5})
		loss := ad.Sum(ad.Square(ys))
		if err := loss.Backward(); err != nil {
			panic(err)
		}
		fmt.Printf("%-10s loss %.6f  dL/dA %.5f\n", g, loss.Item(), A.Grad().Data())
	}
	// Output:
	// adjoint    loss 6.942143  dL/dA [9.81833 -0.01866 0.01866 9.28165]
	// backprop   loss 6.942143  dL/dA [9.81833 -0.01866 0.01866 9.28165]
	// checkpoint loss 6.942143  dL/dA [9.81833 -0.01866 0.01866 9.28165]
}
