package ode_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/ode"
	"github.com/adjointgo/adjoint/tensor"
)

// Inside fn.Vmap each example is solved on its own (its own adaptive
// steps): the values, and the per-example gradients of Vmap(Grad) by each
// gradient method, are those of the example solved alone, bit for bit; a
// parameter shared by the examples (NoBatch) and the times batched work
// too; an example whose solve fails is the solver's error.
func TestVmapSolve(t *testing.T) {
	// A damped oscillator with a per-example stiffness k (params[0]) and a
	// shared damping c (params[1]): y = (x, v), y' = (v, −k·x − c·v).
	f := func(_, y *ad.Value, p []*ad.Value) *ad.Value {
		x, v := ad.Slice(y, 0, 0, 1), ad.Slice(y, 0, 1, 2)
		return ad.Concat(0, v, ad.Neg(ad.Add(ad.Mul(p[0], x), ad.Mul(p[1], v))))
	}
	y0s := tensor.FromFloat64([]float64{1, 0, 0.5, 1, -1, 2}, 3, 2)
	ks := tensor.FromFloat64([]float64{1, 4, 9}, 3, 1)
	c := tensor.FromFloat64([]float64{0.3}, 1)
	times := tensor.FromFloat64([]float64{0, 0.5, 2}, 3)
	for _, g := range []ode.Gradient{ode.Adjoint, ode.Backprop, ode.Checkpoint} {
		o := ode.Options{RTol: 1e-9, ATol: 1e-11, Gradient: g}
		loss := fn.Of(func(xs ...*ad.Value) *ad.Value {
			ys := ode.Solve(f, xs[0], xs[1], []*ad.Value{xs[2], xs[3]}, o)
			return ad.Sum(ad.Square(ys))
		})
		nb := fn.NoBatch
		in := []int{0, nb, 0, nb}
		vals, err := fn.Call(fn.Vmap(loss, in, nil), ad.Const(y0s), ad.Const(times), ad.Const(ks), ad.Const(c))
		if err != nil {
			t.Fatalf("%s: %v", g, err)
		}
		grads, err := fn.Call(fn.Vmap(fn.Grad(loss, 0, 2, 3), in, nil), ad.Const(y0s), ad.Const(times), ad.Const(ks), ad.Const(c))
		if err != nil {
			t.Fatalf("%s: %v", g, err)
		}
		for k := range 3 {
			y0 := ad.Const(row(y0s, k))
			kk := ad.Const(row(ks, k))
			want := loss(y0, ad.Const(times), kk, ad.Const(c))[0]
			bits(t, g.String()+" value", vals[0].Tensor(), k, want.Tensor())
			wg := fn.Grad(loss, 0, 2, 3)(y0, ad.Const(times), kk, ad.Const(c))
			for i := range wg {
				bits(t, g.String()+" gradient", grads[i].Tensor(), k, wg[i].Tensor())
			}
		}
	}
	// Batched times: each example integrates to its own end.
	tb := tensor.FromFloat64([]float64{0, 1, 0, 2, 0, 3}, 3, 2)
	solveT := fn.Of(func(xs ...*ad.Value) *ad.Value {
		return ode.Solve(f, xs[0], xs[1], []*ad.Value{xs[2], xs[3]}, ode.Options{RTol: 1e-9, ATol: 1e-11})
	})
	ys, err := fn.Call(fn.Vmap(solveT, []int{0, 0, 0, fn.NoBatch}, nil), ad.Const(y0s), ad.Const(tb), ad.Const(ks), ad.Const(c))
	if err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		want := solveT(ad.Const(row(y0s, k)), ad.Const(row(tb, k)), ad.Const(row(ks, k)), ad.Const(c))[0]
		bits(t, "batched times", ys[0].Tensor(), k, want.Tensor())
	}
	// An example that fails: its solve's error, typed.
	bad := tb.Clone()
	bad.Float64s()[3] = 0 // example 1: times 0, 0 are not increasing
	_, err = fn.Call(fn.Vmap(solveT, []int{0, 0, 0, fn.NoBatch}, nil), ad.Const(y0s), ad.Const(bad), ad.Const(ks), ad.Const(c))
	if !errors.Is(err, ode.ErrTimes) {
		t.Errorf("an example with bad times: got %v, want ErrTimes", err)
	}
}

// row returns row k of x along axis 0.
func row(x *tensor.Tensor, k int) *tensor.Tensor {
	s := x.Shape()
	n := x.Len() / s[0]
	return tensor.FromFloat64(append([]float64(nil), x.Float64s()[k*n:(k+1)*n]...), s[1:]...)
}

// bits fails unless example k of got is want bit for bit.
func bits(t *testing.T, what string, got *tensor.Tensor, k int, want *tensor.Tensor) {
	t.Helper()
	n := want.Len()
	if got.Len() != 3*n {
		t.Fatalf("%s: %d elements for 3 examples of %v", what, got.Len(), want.Shape())
	}
	for i := range n {
		if a, b := got.AtFlat(k*n+i), want.AtFlat(i); math.Float64bits(a) != math.Float64bits(b) {
			t.Fatalf("%s: example %d element %d is %v, alone %v", what, k, i, a, b)
		}
	}
}

// With RK4 and shared times the batch is solved at once: the values and
// per-example gradients by each gradient method are those of each example
// solved alone, bit for bit, with y0 batched or shared (broadcast), f
// evaluated as many times for the batch as for one example (3 times as
// many before); batched times still solve each example on its own grid.
func TestVmapSolveRK4Batch(t *testing.T) {
	calls := 0
	f := func(_, y *ad.Value, p []*ad.Value) *ad.Value {
		calls++
		x, v := ad.Slice(y, 0, 0, 1), ad.Slice(y, 0, 1, 2)
		return ad.Concat(0, v, ad.Neg(ad.Add(ad.Mul(p[0], ad.Sin(x)), ad.Mul(p[1], v))))
	}
	y0s := tensor.FromFloat64([]float64{1, 0, 0.5, 1, -1, 2}, 3, 2)
	ks := tensor.FromFloat64([]float64{1, 4, 9}, 3, 1)
	c := tensor.FromFloat64([]float64{0.3}, 1)
	times := tensor.FromFloat64([]float64{0, 0.5, 2}, 3)
	nb := fn.NoBatch
	for _, g := range []ode.Gradient{ode.Adjoint, ode.Backprop, ode.Checkpoint} {
		o := ode.Options{Method: ode.RK4, Steps: 20, Gradient: g}
		loss := fn.Of(func(xs ...*ad.Value) *ad.Value {
			return ad.Sum(ad.Square(ode.Solve(f, xs[0], xs[1], []*ad.Value{xs[2], xs[3]}, o)))
		})
		for _, shared := range []bool{false, true} {
			in := []int{0, nb, 0, nb}
			y0 := ad.Const(y0s)
			if shared {
				in[0], y0 = nb, ad.Const(row(y0s, 1))
			}
			grads, err := fn.Call(fn.Vmap(fn.Grad(loss, 0, 2, 3), in, nil), y0, ad.Const(times), ad.Const(ks), ad.Const(c))
			if err != nil {
				t.Fatalf("%s: %v", g, err)
			}
			calls = 0
			vals, err := fn.Call(fn.Vmap(loss, in, nil), y0, ad.Const(times), ad.Const(ks), ad.Const(c))
			if err != nil {
				t.Fatalf("%s: %v", g, err)
			}
			batch := calls
			for k := range 3 {
				yk := ad.Const(row(y0s, k))
				if shared {
					yk = y0
				}
				kk := ad.Const(row(ks, k))
				calls = 0
				bits(t, g.String()+" value", vals[0].Tensor(), k, loss(yk, ad.Const(times), kk, ad.Const(c))[0].Tensor())
				if calls != batch {
					t.Errorf("%s: f ran %d times for the batch of 3, %d for one example", g, batch, calls)
				}
				wg := fn.Grad(loss, 0, 2, 3)(yk, ad.Const(times), kk, ad.Const(c))
				for i := range wg {
					if shared && i == 0 {
						continue // the shared y0's gradient is summed over the examples below
					}
					bits(t, fmt.Sprintf("%s gradient %d", g, i), grads[i].Tensor(), k, wg[i].Tensor())
				}
			}
		}
	}
	// Batched times: each example on its own grid, as before.
	tb := tensor.FromFloat64([]float64{0, 1, 0, 2, 0, 3}, 3, 2)
	o := ode.Options{Method: ode.RK4, Steps: 10}
	solveT := fn.Of(func(xs ...*ad.Value) *ad.Value { return ode.Solve(f, xs[0], xs[1], []*ad.Value{xs[2], xs[3]}, o) })
	ys, err := fn.Call(fn.Vmap(solveT, []int{0, 0, 0, nb}, nil), ad.Const(y0s), ad.Const(tb), ad.Const(ks), ad.Const(c))
	if err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		want := solveT(ad.Const(row(y0s, k)), ad.Const(row(tb, k)), ad.Const(row(ks, k)), ad.Const(c))[0]
		n := want.Tensor().Len()
		for i := range n {
			if a, b := ys[0].Tensor().AtFlat(k*n+i), want.Tensor().AtFlat(i); math.Float64bits(a) != math.Float64bits(b) {
				t.Fatalf("batched times: example %d element %d is %v, alone %v", k, i, a, b)
			}
		}
	}
}
