package fn_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

// The functions that make a new value standing for a given one keep the
// batch inside Vmap, or refuse it, and the sweeps of package ad refuse a
// batch with an error that names the transform to use. ad.DetectAnomaly and ad.Eval used to
// copy the wrapper's own data, the first example's, so every example got
// the first one's result with a nil error; Arena.Use did the same and now
// refuses a batch.
func TestVmapWrappersKeepTheBatch(t *testing.T) {
	x := ad.Const(tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6}, 3, 2))
	double := func(v *ad.Value) *ad.Value { return ad.MulScalar(v, 2) }
	for name, f := range map[string]func(v *ad.Value) *ad.Value{
		"DetectAnomaly": func(v *ad.Value) *ad.Value { return double(ad.DetectAnomaly(v)) },
		"Eval":          func(v *ad.Value) *ad.Value { return ad.Eval(double, v) },
		"Detach":        func(v *ad.Value) *ad.Value { return double(v.Detach()) },
	} {
		ys, err := fn.Call(fn.Vmap(fn.Of(func(xs ...*ad.Value) *ad.Value { return f(xs[0]) }), nil, nil), x)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, v := range []float64{2, 4, 6, 8, 10, 12} {
			if got := ys[0].Tensor().AtFlat(i); got != v {
				t.Fatalf("%s: element %d is %v, want %v", name, i, got, v)
			}
		}
	}
	// DetectAnomaly inside Vmap still finds a NaN of one example.
	neg := ad.Const(tensor.FromFloat64([]float64{1, 2, -3, 4, 5, 6}, 3, 2))
	_, err := fn.Call(fn.Vmap(fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Log(ad.DetectAnomaly(xs[0])) }), nil, nil), neg)
	var ae *ad.AnomalyError
	if !errors.As(err, &ae) {
		t.Errorf("log of a negative example under DetectAnomaly: got %v, want an AnomalyError", err)
	}
	// A Func whose Forward reads a value of the batch it was not given
	// cannot return it: its data would be the first example's.
	leaky := fn.Func(func(xs ...*ad.Value) []*ad.Value {
		f := &ad.Func{
			Name:    "leaky",
			Forward: func([]*ad.Value) *ad.Value { return ad.MulScalar(xs[1], 2) },
			VJP:     func(_ []*ad.Value, _, g *ad.Value) []*ad.Value { return []*ad.Value{g} },
		}
		return []*ad.Value{f.Apply(xs[0])}
	})
	_, err = fn.Call(fn.Vmap(leaky, []int{fn.NoBatch, 0}, nil), ad.Const(tensor.FromFloat64([]float64{1, 2}, 2)), x)
	if !errors.Is(err, ad.ErrBatched) || !strings.Contains(err.Error(), "leaky") {
		t.Errorf("a Func whose Forward returns a batch: got %v, want ErrBatched naming it", err)
	}
	// ad.Grad and Backward on a value standing for a batch are an
	// ErrBatched that points to fn.Grad (they dereferenced a nil pointer).
	w := ad.Var(tensor.FromFloat64([]float64{1, 1}, 2))
	for name, sweep := range map[string]func(y *ad.Value) error{
		"Grad":     func(y *ad.Value) error { _, err := ad.Grad(y, w); return err },
		"Backward": func(y *ad.Value) error { return y.Backward() },
	} {
		var got error
		_, err = fn.Call(fn.Vmap(fn.Of(func(xs ...*ad.Value) *ad.Value {
			y := ad.Sum(ad.Mul(ad.Square(xs[0]), w))
			got = sweep(y)
			return y
		}), nil, nil), x)
		if err != nil || !errors.Is(got, ad.ErrBatched) || !strings.Contains(got.Error(), "fn.Grad") {
			t.Errorf("%s inside Vmap: got %v (Vmap: %v), want ErrBatched pointing to fn.Grad", name, got, err)
		}
	}
	// Hooks on a batch are refused (they crashed); Op and IsLeaf describe
	// the batch's op.
	_, err = fn.Call(fn.Vmap(fn.Of(func(xs ...*ad.Value) *ad.Value {
		y := ad.Mul(ad.Square(xs[0]), w)
		if y.Op() != "mul" || y.IsLeaf() {
			t.Errorf("a product inside Vmap: Op %q, IsLeaf %v", y.Op(), y.IsLeaf())
		}
		for name, reg := range map[string]func(){
			"RegisterHook": func() { y.RegisterHook(func(g *ad.Value) *ad.Value { return g }) },
			"OnGradReady":  func() { y.OnGradReady(func(*ad.Value) {}) },
		} {
			if err := ad.Try(reg); !errors.Is(err, ad.ErrBatched) {
				t.Errorf("%s on a batch: got %v, want ErrBatched", name, err)
			}
		}
		return y
	}), nil, nil), x)
	if err != nil {
		t.Fatal(err)
	}
	var ar ad.Arena
	_, err = fn.Call(fn.Vmap(fn.Of(func(xs ...*ad.Value) *ad.Value { return ar.Use(xs[0]) }), nil, nil), x)
	if !errors.Is(err, ad.ErrBatched) {
		t.Errorf("Arena.Use of a batch: got %v, want ErrBatched", err)
	}
}
