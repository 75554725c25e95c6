package fn_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

// readsData is a function with no batching rule: it reads its operand's
// data to choose what to compute (x² where x[0] > 0, else 3x), as a solver
// does, and returns two results.
func readsData(xs []*ad.Value) []*ad.Value {
	x := xs[0]
	y := ad.MulScalar(x, 3)
	if x.Tensor().AtFlat(0) > 0 {
		y = ad.Square(x)
	}
	return []*ad.Value{ad.Mul(y, xs[1]), ad.Sum(y)}
}

// ad.Examplewise runs such a function once per example inside Vmap: the
// values and the per-example gradients are the examples' own, operands
// shared by the examples stay whole, nested maps work, and results whose
// shape differs between examples are an error.
func TestExamplewise(t *testing.T) {
	f := fn.Func(func(xs ...*ad.Value) []*ad.Value { return ad.Examplewise(readsData, xs...) })
	xs := ad.Const(tensor.FromFloat64([]float64{1, 2, -1, 2, 3, 4}, 3, 2))
	w := vec(10, 100)
	ys, err := fn.Call(fn.Vmap(f, []int{0, fn.NoBatch}, nil), xs, w)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{10, 400, -30, 600, 90, 1600}
	for i, v := range want {
		near(t, "product", ys[0].Tensor().AtFlat(i), v)
	}
	for i, v := range []float64{5, 3, 25} {
		near(t, "sum", ys[1].Tensor().AtFlat(i), v)
	}
	// Per-example gradients of the sum: 2x where x[0] > 0, else 3.
	g := fn.Grad(fn.Of(func(xs ...*ad.Value) *ad.Value { return f(xs...)[1] }), 0)
	gs, err := fn.Call(fn.Vmap(g, []int{0, fn.NoBatch}, nil), xs, w)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range []float64{2, 4, 3, 3, 6, 8} {
		near(t, "gradient", gs[0].Tensor().AtFlat(i), v)
	}
	// Nested: a batch of 2 of batches of 3.
	xx := ad.Const(tensor.FromFloat64([]float64{1, 2, -1, 2, 3, 4, -2, 1, 5, 5, 1, 1}, 2, 3, 2))
	inner := fn.Vmap(f, []int{0, fn.NoBatch}, nil)
	yy, err := fn.Call(fn.Vmap(inner, []int{0, fn.NoBatch}, nil), xx, w)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range []float64{10, 400, -30, 600, 90, 1600, -60, 300, 250, 2500, 10, 100} {
		near(t, "nested", yy[0].Tensor().AtFlat(i), v)
	}
	// Results of different shapes across examples.
	ragged := fn.Func(func(xs ...*ad.Value) []*ad.Value {
		return ad.Examplewise(func(xs []*ad.Value) []*ad.Value {
			if xs[0].Tensor().AtFlat(0) > 0 {
				return []*ad.Value{xs[0]}
			}
			return []*ad.Value{ad.Sum(xs[0])}
		}, xs...)
	})
	_, err = fn.Call(fn.Vmap(ragged, nil, nil), xs)
	if !errors.Is(err, ad.ErrBatched) || !strings.Contains(err.Error(), "example 1") {
		t.Errorf("results of different shapes: got %v", err)
	}
	// A value of the batch read without being given (a closure): each
	// example still gets its own, x_k·c_k.
	closure := fn.Of(func(xs ...*ad.Value) *ad.Value {
		return ad.Examplewise(func(ex []*ad.Value) []*ad.Value { return []*ad.Value{ad.Mul(ex[0], xs[1])} }, xs[0])[0]
	})
	cs := ad.Const(tensor.FromFloat64([]float64{1, 10, 100, 1000, 1e4, 1e5}, 3, 2))
	cy, err := fn.Call(fn.Vmap(closure, nil, nil), xs, cs)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range []float64{1, 20, -100, 2000, 3e4, 4e5} {
		near(t, "closure", cy[0].Tensor().AtFlat(i), v)
	}
	// Outside Vmap it is the function itself.
	out := ad.Examplewise(readsData, vec(2, 3), w)
	near(t, "outside", out[1].Item(), 13)
}

// ad.Eval and ad.Trace inside Vmap run the function on the whole batch:
// each example's value (they ran it on the first example's data alone,
// for every example, before), and Trace finds the Vars and the saved
// bytes of the physical recording, as Stats and SavedBytes measure the
// batch's (they said 0); ad.Record refuses a batch.
func TestEvalTraceInVmap(t *testing.T) {
	x := ad.Const(tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6}, 3, 2))
	w := ad.Var(tensor.FromFloat64([]float64{1, 0.5}, 2))
	layer := func(v *ad.Value) *ad.Value { return ad.Tanh(ad.Mul(v, w)) }
	var vars []*ad.Value
	var saved, stats, own int64
	f := fn.Func(func(xs ...*ad.Value) []*ad.Value {
		y, vs, s := ad.Trace(layer, xs[0], true)
		vars, saved = vs, s
		r := layer(xs[0]) // recorded: w is a Var
		stats, own = ad.Stats(r).SavedBytes, r.SavedBytes()
		return []*ad.Value{ad.Eval(layer, xs[0]), y}
	})
	ys, err := fn.Call(fn.Vmap(f, nil, nil), x)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 1, 3, 2, 5, 3}
	for _, y := range ys {
		for i, v := range want {
			near(t, "value", y.Tensor().AtFlat(i), math.Tanh(v))
		}
	}
	if len(vars) != 1 || vars[0] != w {
		t.Errorf("Trace found %v, want the weight", vars)
	}
	if saved < 6*8 {
		t.Errorf("Trace counted %d saved bytes, want at least the batch's tanh outputs (48)", saved)
	}
	if stats < 6*8 || own != 6*8 {
		t.Errorf("Stats and SavedBytes of a recorded batch: %d and %d bytes, want the batch's (at least 48, and the tanh's 48)", stats, own)
	}
	_, err = fn.Call(fn.Vmap(fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Record(layer, xs[0]).Out() }), nil, nil), x)
	if !errors.Is(err, ad.ErrBatched) {
		t.Errorf("Record of a batch: got %v, want ErrBatched", err)
	}
}
