package ode

import (
	"fmt"
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/tensor"
)

// mlpDynamics is f(t, y) = tanh(y·W1ᵀ + b1 + t·c)·W2ᵀ + b2 for y of shape
// [N 2]: the neural ODE's network, with a time input.
func mlpDynamics(t, y *ad.Value, p []*ad.Value) *ad.Value {
	h := ad.Add(ad.Add(ad.MatMulT(y, p[0], false, true), p[1]), ad.Mul(t, p[4]))
	return ad.Add(ad.MatMulT(ad.Tanh(h), p[2], false, true), p[3])
}

// mlpParams returns the parameters of mlpDynamics for a hidden width,
// drawn from seed, as Vars.
func mlpParams(hidden int, seed uint64, d tensor.DType) []*ad.Value {
	m := nn.NewMLP([]int{2, hidden, 2}, nn.NewRNG(seed), &nn.MLPConfig{DType: d, Act: nn.Tanh})
	c := tensor.New(d, hidden)
	rng := nn.NewRNG(seed + 1)
	for i := range hidden {
		c.SetFlat(i, rng.Float64()-0.5)
	}
	return append(nn.Values(m), ad.Var(c))
}

func randomState(n int, seed uint64, d tensor.DType) *tensor.Tensor {
	rng := nn.NewRNG(seed)
	t := tensor.New(d, n, 2)
	for i := range 2 * n {
		t.SetFlat(i, 2*rng.Float64()-1)
	}
	return t
}

// The three gradient methods on a nonlinear, time-dependent system, with
// several output times: the forward outputs are the same bit for bit
// (the recorded and unrecorded steps round alike, so DOPRI5 takes the same
// steps), Checkpoint's gradients are Backprop's up to the order in which
// the intervals' contributions are added, and the adjoint's agree with
// them to the solver's accuracy.
func TestMethodsAgree(t *testing.T) {
	ts := []float64{0, 0.4, 1.3, 2}
	for _, method := range []Method{RK4, DOPRI5} {
		t.Run(method.String(), func(t *testing.T) {
			var ys0 []float64
			var grads [3][]*tensor.Tensor
			for gi, grad := range []Gradient{Backprop, Checkpoint, Adjoint} {
				o := Options{Method: method, Gradient: grad, Steps: 50, Snapshots: 4, RTol: 1e-9, ATol: 1e-11}
				ps := mlpParams(16, 3, tensor.Float64)
				y0 := ad.Var(randomState(5, 9, tensor.Float64))
				times := ad.Var(tensor.FromFloat64(append([]float64(nil), ts...), len(ts)))
				var st Stats
				o.Stats = &st
				ys := Solve(mlpDynamics, y0, times, ps, o)
				// A loss that weighs the outputs differently.
				loss := ad.Add(ad.Sum(ad.Square(At(ys, 3))), ad.Sum(ad.Mul(At(ys, 1), At(ys, 2))))
				xs := append([]*ad.Value{y0, times}, ps...)
				gs, err := ad.Grad(loss, xs...)
				if err != nil {
					t.Fatal(err)
				}
				if gi == 0 {
					ys0 = ys.Data()
				} else if d := maxDiff(ys.Data(), ys0); d != 0 {
					t.Errorf("%v: outputs differ from Backprop's by %g", grad, d)
				}
				for _, g := range gs {
					grads[gi] = append(grads[gi], g.Tensor().Clone())
				}
				t.Logf("%v: %+v", grad, st)
				if grad == Adjoint && st.BackwardSteps == 0 {
					t.Errorf("no backward steps counted: %+v", st)
				}
			}
			names := append([]string{"y0", "times"}, "W1", "b1", "W2", "b2", "c")
			for k := range grads[0] {
				if d := relDiff(grads[1][k].Data(), grads[0][k].Data()); d > 1e-13 {
					t.Errorf("d/d%s: Checkpoint differs from Backprop by %g (relative)", names[k], d)
				}
				if d := relDiff(grads[2][k].Data(), grads[0][k].Data()); d > 1e-6 {
					t.Errorf("d/d%s: Adjoint differs from Backprop by %g (relative)", names[k], d)
				} else {
					t.Logf("d/d%s: Adjoint ÷ Backprop relative difference %.2g", names[k], d)
				}
			}
		})
	}
}

func maxDiff(a, b []float64) float64 {
	var m float64
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

// relDiff is the largest difference relative to b's largest magnitude.
func relDiff(a, b []float64) float64 {
	var s float64
	for _, x := range b {
		s = math.Max(s, math.Abs(x))
	}
	return maxDiff(a, b) / math.Max(s, 1e-300)
}

// The gradient of a subset: with only the parameters (or only y0)
// requiring a gradient, the others get none and the requested ones are
// those of the full computation.
func TestPartialGradients(t *testing.T) {
	for _, grad := range []Gradient{Adjoint, Backprop, Checkpoint} {
		t.Run(grad.String(), func(t *testing.T) {
			o := Options{Method: RK4, Gradient: grad, Steps: 20}
			ps := mlpParams(8, 5, tensor.Float64)
			y0 := ad.Var(randomState(3, 2, tensor.Float64))
			full, err := ad.Grad(ad.Sum(ad.Square(Solve(mlpDynamics, y0, Times(0, 1), ps, o))), append([]*ad.Value{y0}, ps...)...)
			if err != nil {
				t.Fatal(err)
			}
			// Parameters only: y0 constant.
			loss := ad.Sum(ad.Square(Solve(mlpDynamics, y0.Detach(), Times(0, 1), ps, o)))
			gp, err := ad.Grad(loss, ps...)
			if err != nil {
				t.Fatal(err)
			}
			for j := range ps {
				if d := maxDiff(gp[j].Data(), full[1+j].Data()); d > 1e-12 {
					t.Errorf("param %d: %g from the full gradient", j, d)
				}
			}
			// y0 only: parameters constant.
			cs := make([]*ad.Value, len(ps))
			for j, v := range ps {
				cs[j] = v.Detach()
			}
			gy, err := ad.Grad(ad.Sum(ad.Square(Solve(mlpDynamics, y0, Times(0, 1), cs, o))), y0)
			if err != nil {
				t.Fatal(err)
			}
			if d := maxDiff(gy[0].Data(), full[0].Data()); d > 1e-12 {
				t.Errorf("y0: %g from the full gradient", d)
			}
		})
	}
}

// Backward accumulates into Vars, the optimisers' way; a second Backward
// with RetainGraph gives the same gradients again.
func TestBackwardAccumulates(t *testing.T) {
	for _, grad := range []Gradient{Adjoint, Backprop, Checkpoint} {
		k := scalarVar(0.7)
		y0 := scalarVar(2)
		loss := At(Solve(decay, y0, Times(0, 1.5), []*ad.Value{k}, Options{Gradient: grad}), 1)
		if err := loss.BackwardOpts(ad.Options{RetainGraph: true}); err != nil {
			t.Fatal(err)
		}
		if err := loss.Backward(); err != nil {
			t.Fatal(err)
		}
		want := 2 * -1.5 * 2 * math.Exp(-0.7*1.5)
		near(t, fmt.Sprintf("%v: twice dL/dk", grad), k.Grad().Item(), want, 1e-6)
	}
}
