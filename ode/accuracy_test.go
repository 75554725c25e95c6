package ode

import (
	"fmt"
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// y' = y·cos t, y(0) = 1: y = e^(sin t).
func cosDynamics(t, y *ad.Value, _ []*ad.Value) *ad.Value { return ad.Mul(y, ad.Cos(t)) }

// fixedStepErrors returns the largest error at the grid points and at the
// midpoints of a solve of cosDynamics over [0, 4] with steps of size h:
// DOPRI5 held to fixed steps (tolerances that accept any step, FirstStep
// and MaxStep h), or RK4 (whose midpoints are its own grid points: RK4
// has no continuous extension, so it gets twice the steps).
func fixedStepErrors(m Method, h float64) (grid, mid float64) {
	const T = 4.0
	n := int(math.Round(T / h))
	var ts []float64
	for k := 0; k <= 2*n; k++ {
		ts = append(ts, float64(k)*h/2)
	}
	o := Options{Method: m, RTol: 1e3, ATol: 1e3, FirstStep: h, MaxStep: h, Steps: 1}
	ys := Solve(cosDynamics, ad.Scalar(1), Times(ts...), nil, o).Data()
	for k, t := range ts {
		e := math.Abs(ys[k] - math.Exp(math.Sin(t)))
		if k%2 == 0 {
			grid = math.Max(grid, e)
		} else {
			mid = math.Max(mid, e)
		}
	}
	return grid, mid
}

// The observed order of DOPRI5's steps is 5, of its continuous extension
// (between the steps) at least 4, and of RK4's steps 4.
func TestOrder(t *testing.T) {
	order := func(e1, e2 float64) float64 { return math.Log2(e1 / e2) }
	g1, m1 := fixedStepErrors(DOPRI5, 0.2)
	g2, m2 := fixedStepErrors(DOPRI5, 0.1)
	t.Logf("dopri5: errors %.3g → %.3g (order %.2f), dense %.3g → %.3g (order %.2f)", g1, g2, order(g1, g2), m1, m2, order(m1, m2))
	if p := order(g1, g2); p < 4.6 || p > 5.6 {
		t.Errorf("DOPRI5 step order %.2f, want ≈ 5", p)
	}
	if p := order(m1, m2); p < 3.8 {
		t.Errorf("DOPRI5 dense output order %.2f, want ≥ 4", p)
	}
	r1, _ := fixedStepErrors(RK4, 0.2)
	r2, _ := fixedStepErrors(RK4, 0.1)
	t.Logf("rk4: errors %.3g → %.3g (order %.2f)", r1, r2, order(r1, r2))
	if p := order(r1, r2); p < 3.7 || p > 4.5 {
		t.Errorf("RK4 order %.2f, want ≈ 4", p)
	}
}

// The adaptive solver meets its tolerance: the error at the end shrinks
// with RTol and stays within a small multiple of it.
func TestToleranceProportionality(t *testing.T) {
	prev := math.Inf(1)
	for _, rtol := range []float64{1e-4, 1e-6, 1e-8, 1e-10} {
		var st Stats
		ys := Solve(cosDynamics, ad.Scalar(1), Times(0, 10), nil, Options{RTol: rtol, ATol: rtol * 1e-3, Stats: &st}).Data()
		e := math.Abs(ys[1] - math.Exp(math.Sin(10)))
		t.Logf("rtol %g: error %.3g in %d steps (%d rejected, %d evaluations)", rtol, e, st.Steps, st.Rejected, st.Evals)
		if e > 100*rtol {
			t.Errorf("rtol %g: error %.3g", rtol, e)
		}
		if e >= prev {
			t.Errorf("rtol %g: error %.3g did not shrink from %.3g", rtol, e, prev)
		}
		prev = e
	}
}

// Output times do not constrain DOPRI5's steps: two hundred of them cost
// no step more than one, and the state at the end is the same bit for bit;
// the dense outputs are accurate to the tolerance.
func TestDenseOutput(t *testing.T) {
	var few, many Stats
	end := Solve(cosDynamics, ad.Scalar(1), Times(0, 10), nil, Options{RTol: 1e-8, Stats: &few}).Data()[1]
	var ts []float64
	for k := 0; k <= 200; k++ {
		ts = append(ts, float64(k)*0.05)
	}
	ys := Solve(cosDynamics, ad.Scalar(1), Times(ts...), nil, Options{RTol: 1e-8, Stats: &many}).Data()
	if few.Steps != many.Steps || ys[200] != end {
		t.Errorf("with 201 outputs: %d steps and y(10) = %v; with 2: %d steps and %v", many.Steps, ys[200], few.Steps, end)
	}
	if many.Steps > 100 {
		t.Errorf("%d steps for 201 outputs: the outputs look like they constrain the steps", many.Steps)
	}
	for k, tk := range ts {
		near(t, fmt.Sprintf("y(%g)", tk), ys[k], math.Exp(math.Sin(tk)), 1e-6)
	}
}

// Integrating backward in time (decreasing times), every method.
func TestBackwardInTime(t *testing.T) {
	const k, y2 = 0.6, 0.9
	for _, m := range allMethods {
		t.Run(m.name, func(t *testing.T) {
			kv, y0 := scalarVar(k), scalarVar(y2)
			times := ad.Var(tensor.FromFloat64([]float64{2, 0.5}, 2))
			ys := Solve(decay, y0, times, []*ad.Value{kv}, m.o)
			e := math.Exp(1.5 * k)
			near(t, "y(0.5)", ys.Data()[1], y2*e, m.tol)
			gs, err := ad.Grad(At(ys, 1), y0, kv, times)
			if err != nil {
				t.Fatal(err)
			}
			near(t, "dy/dy0", gs[0].Item(), e, m.tol)
			near(t, "dy/dk", gs[1].Item(), 1.5*y2*e, m.tol)
			near(t, "dy/dt0", gs[2].Data()[0], k*y2*e, m.tol)
			near(t, "dy/dt1", gs[2].Data()[1], -k*y2*e, m.tol)
		})
	}
}

// A float32 state: float32 outputs and gradients, at float32 accuracy.
func TestFloat32(t *testing.T) {
	for _, m := range []Options{{}, {Method: RK4, Steps: 50}, {Gradient: Backprop}, {Gradient: Checkpoint, Method: RK4, Steps: 50}} {
		y0 := ad.Var(tensor.Scalar(tensor.Float32, 1.5))
		kv := ad.Var(tensor.Scalar(tensor.Float32, 0.5))
		times := ad.Var(tensor.FromFloat32([]float32{0, 2}, 2))
		ys := Solve(decay, y0, times, []*ad.Value{kv}, m)
		if ys.DType() != tensor.Float32 {
			t.Fatalf("%+v: result is %s", m, ys.DType())
		}
		e := math.Exp(-1)
		near(t, "y(2)", ys.Data()[1], 1.5*e, 1e-4)
		gs, err := ad.Grad(At(ys, 1), y0, kv, times)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range gs {
			if g.DType() != tensor.Float32 {
				t.Errorf("%+v: a %s gradient", m, g.DType())
			}
		}
		near(t, "dy/dy0", gs[0].Item(), e, 1e-4)
		near(t, "dy/dk", gs[1].Item(), -2*1.5*e, 1e-4)
		near(t, "dy/dt1", gs[2].Data()[1], -0.5*1.5*e, 1e-4)
	}
}

// StepSize splits each interval into ⌈Δt/StepSize⌉ equal steps; Steps
// takes precedence over it.
func TestStepSize(t *testing.T) {
	var st Stats
	Solve(cosDynamics, ad.Scalar(1), Times(0, 0.35, 1), nil, Options{Method: RK4, StepSize: 0.1, Stats: &st})
	if st.Steps != 4+7 || st.Evals != 4*11+1 {
		t.Errorf("StepSize 0.1 over [0, 0.35, 1]: %+v, want 11 steps and 45 evaluations", st)
	}
	Solve(cosDynamics, ad.Scalar(1), Times(0, 0.35, 1), nil, Options{Method: RK4, StepSize: 0.1, Steps: 3, Stats: &st})
	if st.Steps != 6 {
		t.Errorf("Steps 3 beside StepSize: %d steps, want 6", st.Steps)
	}
}
