package fn_test

import (
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

// lapLoss is a one-dimensional PINN-style loss: Σ_x (u″(x))² with
// u(x) = Σ_k sin(w_k·x), the second derivative by a VJP of a Grad inside
// the function, as BenchmarkPINNStep takes its Laplacian. Its closed
// form: u″ = −Σ_k w_k² sin(w_k x).
func lapLoss(xs *ad.Value) fn.Func {
	return fn.Of(func(p ...*ad.Value) *ad.Value {
		u := fn.Of(func(x ...*ad.Value) *ad.Value {
			return ad.Sum(ad.Sin(ad.Mul(ad.Reshape(x[0], -1, 1), ad.Reshape(p[0], 1, -1))))
		})
		_, pull := fn.VJP(fn.Grad(u), xs)
		d2 := pull(ad.Const(tensor.Ones(tensor.Float64, xs.Shape()...)))[0]
		return ad.Sum(ad.Square(d2))
	})
}

// TestRetiredTargets: once an inner transform's function has returned, its
// targets are no enclosing computation's values, so the outer gradient of
// a loss built from a VJP of a Grad is a plain sweep (its results carry no
// graph); a closed-over Var still makes it a recorded one, and both give
// the closed form.
func TestRetiredTargets(t *testing.T) {
	xs := vec(0.3, -0.8, 1.4)
	w := []float64{0.5, 1.25}
	// d/dw_j Σ_x (Σ_k w_k² sin(w_k x))² = Σ_x 2·s(x)·(2 w_j sin(w_j x) + w_j² x cos(w_j x)).
	want := make([]float64, len(w))
	for _, x := range xs.Tensor().Float64s() {
		s := 0.0
		for _, wk := range w {
			s += wk * wk * math.Sin(wk*x)
		}
		for j, wj := range w {
			want[j] += 2 * s * (2*wj*math.Sin(wj*x) + wj*wj*x*math.Cos(wj*x))
		}
	}
	out := fn.ValueAndGrad(lapLoss(xs))(vec(w...))
	g := out[1]
	if g.RequiresGrad() {
		t.Errorf("the outer gradient was recorded (it requires a gradient): the inner VJP's finished target made the sweep create a graph")
	}
	for j := range w {
		near(t, "gradient", g.Tensor().At(j), want[j])
	}

	// A Var the loss closes over: the outer sweep must record, and the
	// gradient's own gradient with respect to it is the closed form's
	// derivative in the scale a: loss(a) = a²·L, ∂/∂a Σ_j ∂loss/∂w_j = 2a·Σ_j want_j.
	a := ad.Var(sc(1.5).Tensor())
	scaled := fn.Of(func(p ...*ad.Value) *ad.Value {
		return ad.Mul(ad.Square(a), lapLoss(xs)(p...)[0])
	})
	gs := fn.Grad(scaled)(vec(w...))[0]
	if !gs.RequiresGrad() {
		t.Fatal("a gradient closing over a Var was not recorded")
	}
	da, err := ad.Grad(ad.Sum(gs), a)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "derivative through the recorded gradient", da[0].Item(), 2*1.5*(want[0]+want[1]))
}
