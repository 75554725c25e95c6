package ode

import (
	"fmt"
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

func scalarVar(x float64) *ad.Value { return ad.Var(tensor.Scalar(tensor.Float64, x)) }

func decay(t, y *ad.Value, p []*ad.Value) *ad.Value { return ad.Neg(ad.Mul(p[0], y)) }

var allMethods = []struct {
	name string
	o    Options
	tol  float64 // relative tolerance against the analytic values
}{
	{"dopri5/adjoint", Options{Method: DOPRI5, Gradient: Adjoint, RTol: 1e-10, ATol: 1e-12}, 1e-8},
	{"dopri5/backprop", Options{Method: DOPRI5, Gradient: Backprop, RTol: 1e-10, ATol: 1e-12}, 1e-8},
	{"dopri5/checkpoint", Options{Method: DOPRI5, Gradient: Checkpoint, RTol: 1e-10, ATol: 1e-12}, 1e-8},
	{"rk4/adjoint", Options{Method: RK4, Gradient: Adjoint, Steps: 200}, 1e-8},
	{"rk4/backprop", Options{Method: RK4, Gradient: Backprop, Steps: 200}, 1e-8},
	{"rk4/checkpoint", Options{Method: RK4, Gradient: Checkpoint, Steps: 200, Snapshots: 3}, 1e-8},
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if d := math.Abs(got - want); !(d <= tol*math.Max(1, math.Abs(want))) {
		t.Errorf("%s = %.15g, want %.15g (difference %.3g)", what, got, want, d)
	}
}

// y' = −k·y, L = Σᵢ wᵢ·y(tᵢ): every gradient against its closed form.
func TestDecay(t *testing.T) {
	const y0v, k = 1.7, 0.8
	ts := []float64{0.3, 1.1, 2.0, 3.5}
	w := []float64{0.5, -1.2, 2.0, 1.5}
	for _, m := range allMethods {
		t.Run(m.name, func(t *testing.T) {
			y0, kv := scalarVar(y0v), scalarVar(k)
			times := ad.Var(tensor.FromFloat64(append([]float64(nil), ts...), len(ts)))
			ys := Solve(decay, y0, times, []*ad.Value{kv}, m.o)
			for i, tt := range ts {
				near(t, fmt.Sprintf("y(%g)", tt), ys.Data()[i], y0v*math.Exp(-k*(tt-ts[0])), m.tol)
			}
			loss := ad.Sum(ad.Mul(ys, ad.Const(tensor.FromFloat64(w, len(w)))))
			gs, err := ad.Grad(loss, y0, kv, times)
			if err != nil {
				t.Fatal(err)
			}
			var dy0, dk, dt0 float64
			for i, tt := range ts {
				e := math.Exp(-k * (tt - ts[0]))
				dy0 += w[i] * e
				dk += -w[i] * (tt - ts[0]) * y0v * e
				if i > 0 { // y(t₀) = y0 does not depend on t₀
					dt0 += w[i] * k * y0v * e
					near(t, fmt.Sprintf("dL/dt%d", i), gs[2].Data()[i], -w[i]*k*y0v*e, m.tol)
				}
			}
			near(t, "dL/dy0", gs[0].Item(), dy0, m.tol)
			near(t, "dL/dk", gs[1].Item(), dk, m.tol)
			near(t, "dL/dt0", gs[2].Data()[0], dt0, m.tol)
		})
	}
}
