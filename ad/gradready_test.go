package ad_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// OnGradReady runs as soon as a Var's gradient is complete, mid-sweep: in
// a two-layer network the second layer's function runs while the first
// layer's gradient is still to come, and sees its own final gradient.
func TestOnGradReadyMidSweep(t *testing.T) {
	x := ad.Const(tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	w1 := ad.Var(tensor.FromFloat64([]float64{.1, .2, .3, .4, .5, .6, .7, .8, .9}, 3, 3))
	w2 := ad.Var(tensor.FromFloat64([]float64{1, -1, 2}, 3, 1))
	b := ad.Var(tensor.FromFloat64([]float64{0.5}, 1))
	var order []string
	var seenW2 []float64
	w2.OnGradReady(func(v *ad.Value) {
		order = append(order, "w2")
		if w1.Grad() != nil {
			t.Error("w1's gradient is already there when w2's is ready")
		}
		seenW2 = v.Grad().Data()
	})
	w1.OnGradReady(func(*ad.Value) { order = append(order, "w1") })
	b.OnGradReady(func(*ad.Value) { order = append(order, "b") })
	loss := func() *ad.Value {
		h := ad.Tanh(ad.MatMul(x, w1))
		return ad.Sum(ad.Square(ad.Add(ad.MatMul(h, w2), b)))
	}
	for step := range 2 {
		order = order[:0]
		for _, p := range []*ad.Value{w1, w2, b} {
			p.ZeroGrad()
		}
		if err := loss().Backward(); err != nil {
			t.Fatal(err)
		}
		if len(order) != 3 || order[2] != "w1" || slices.Index(order, "w2") < 0 || slices.Index(order, "b") < 0 {
			t.Errorf("step %d: order %v, want w1 last and each once", step, order)
		}
		if !slices.Equal(seenW2, w2.Grad().Data()) {
			t.Errorf("step %d: w2 was ready with %v, its final gradient is %v", step, seenW2, w2.Grad().Data())
		}
	}
	// Grad returns gradients without filling the buffers: no call.
	order = order[:0]
	if _, err := ad.Grad(loss(), w1, w2); err != nil || len(order) != 0 {
		t.Errorf("Grad: %v, calls %v", err, order)
	}
}

// A Var used several times is ready once, with the sum of its uses; one
// with gradient hooks is ready at the end of the sweep, after the hooks.
func TestOnGradReadyUsesAndHooks(t *testing.T) {
	w := ad.Var(tensor.FromFloat64([]float64{3}, 1))
	calls := 0
	var got float64
	w.OnGradReady(func(v *ad.Value) { calls++; got = v.Grad().Data()[0] })
	y := ad.Add(ad.Mul(w, w), ad.Mul(w, ad.Scalar(5))) // dy/dw = 2w + 5 = 11
	if err := ad.Sum(y).Backward(); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || got != 11 {
		t.Errorf("calls %d, gradient seen %v; want 1 call with 11", calls, got)
	}
	h := ad.Var(tensor.FromFloat64([]float64{2}, 1))
	h.RegisterHook(func(g *ad.Value) *ad.Value { return ad.MulScalar(g, 10) })
	var seen float64
	h.OnGradReady(func(v *ad.Value) { seen = v.Grad().Data()[0] })
	if err := ad.Sum(ad.Mul(h, h)).Backward(); err != nil {
		t.Fatal(err)
	}
	if seen != 40 {
		t.Errorf("with a hook: ready with %v, want 40 (the hooked gradient)", seen)
	}
	// the output itself a Var
	c := 0
	v := ad.Var(tensor.FromFloat64([]float64{1}, 1))
	v.OnGradReady(func(*ad.Value) { c++ })
	if err := v.Backward(); err != nil || c != 1 {
		t.Errorf("Backward of a Var: %v, %d calls", err, c)
	}
}

// Misuse: a function on a value that is not a Var is refused; a panic in
// the function ends the sweep with ErrFunc.
func TestOnGradReadyMisuse(t *testing.T) {
	w := ad.Var(tensor.FromFloat64([]float64{1, 2}, 2))
	h := ad.Exp(w)
	if err := ad.Try(func() { h.OnGradReady(func(*ad.Value) {}) }); !errors.Is(err, ad.ErrNoGrad) {
		t.Errorf("on a computed value: %v", err)
	}
	if err := ad.Try(func() { ad.Const(tensor.New(tensor.Float64, 1)).OnGradReady(func(*ad.Value) {}) }); !errors.Is(err, ad.ErrNoGrad) {
		t.Errorf("on a constant: %v", err)
	}
	w.OnGradReady(func(*ad.Value) { panic("boom") })
	if err := ad.Sum(h).Backward(); !errors.Is(err, ad.ErrFunc) {
		t.Errorf("panicking function: %v, want ErrFunc", err)
	}
}
