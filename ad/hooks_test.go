package ad_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

func hvec(xs ...float64) *tensor.Tensor { return tensor.FromFloat64(xs, len(xs)) }

func hookNear(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-12*(1+math.Abs(b[i])) {
			return false
		}
	}
	return true
}

// Hooks that replace the gradient, on a Var and on an intermediate value.
func TestHookScale(t *testing.T) {
	x := ad.Var(hvec(1, 2, 3))
	x.RegisterHook(func(g *ad.Value) *ad.Value { return ad.MulScalar(g, 2) })
	if err := ad.Sum(ad.Square(x)).Backward(); err != nil {
		t.Fatal(err)
	}
	if got := x.Grad().Data(); !hookNear(got, []float64{4, 8, 12}) {
		t.Errorf("Var hook: grad %v, want 2·2x", got)
	}

	w := ad.Var(hvec(1, 2, 3))
	h := ad.Square(w)
	h.RegisterHook(func(g *ad.Value) *ad.Value { return ad.MulScalar(g, 3) })
	if err := ad.Sum(h).Backward(); err != nil {
		t.Fatal(err)
	}
	if got := w.Grad().Data(); !hookNear(got, []float64{6, 12, 18}) {
		t.Errorf("intermediate hook: grad %v, want 3·2x", got)
	}

	// Several hooks run in order, each on the previous result; nil keeps.
	v := ad.Var(hvec(1, 2))
	var order []int
	v.RegisterHook(func(g *ad.Value) *ad.Value { order = append(order, 1); return ad.AddScalar(g, 1) })
	v.RegisterHook(func(g *ad.Value) *ad.Value { order = append(order, 2); return nil })
	v.RegisterHook(func(g *ad.Value) *ad.Value { order = append(order, 3); return ad.MulScalar(g, 10) })
	if err := ad.Sum(v).Backward(); err != nil {
		t.Fatal(err)
	}
	if got := v.Grad().Data(); !hookNear(got, []float64{20, 20}) || len(order) != 3 || order[0] != 1 || order[2] != 3 {
		t.Errorf("grad %v (order %v), want (1+1)·10 in order 1 2 3", got, order)
	}
	// A Var's hooks stay for the next sweep; its gradient accumulates.
	if err := ad.Sum(v).Backward(); err != nil {
		t.Fatal(err)
	}
	if got := v.Grad().Data(); !hookNear(got, []float64{40, 40}) {
		t.Errorf("second backward: grad %v, want 40", got)
	}

	// Grad sees the hooked gradient too, of a Var and of an intermediate.
	x = ad.Var(hvec(1, 2))
	x.RegisterHook(func(g *ad.Value) *ad.Value { return ad.Neg(g) })
	h = ad.Exp(x)
	h.RegisterHook(func(g *ad.Value) *ad.Value { return ad.MulScalar(g, 2) })
	gs, err := ad.Grad(ad.Sum(h), x, h)
	if err != nil {
		t.Fatal(err)
	}
	if got := gs[0].Data(); !hookNear(got, []float64{-2 * math.E, -2 * math.Exp(2)}) {
		t.Errorf("Grad: ∂/∂x = %v, want −2eˣ", got)
	}
	if got := gs[1].Data(); !hookNear(got, []float64{2, 2}) {
		t.Errorf("Grad: ∂/∂h = %v, want 2", got)
	}
	// A hook on the output sees the seed.
	y := ad.Sum(ad.Mul(x, x))
	y.RegisterHook(func(g *ad.Value) *ad.Value { return ad.MulScalar(g, 0.5) })
	gs, err = ad.Grad(y, x)
	if err != nil || !hookNear(gs[0].Data(), []float64{-1, -2}) {
		t.Errorf("output hook: %v %v, want −x", gs, err)
	}
}

// An observing hook sees the gradient, which stays valid after the sweep.
func TestHookObserve(t *testing.T) {
	x := ad.Var(hvec(1, 2, 3))
	h := ad.Tanh(ad.MulScalar(x, 0.5))
	var seen, seenX *ad.Value
	h.RegisterHook(func(g *ad.Value) *ad.Value { seen = g; return nil })
	x.RegisterHook(func(g *ad.Value) *ad.Value {
		if seenX == nil { // the hook stays on the Var for the later sweeps
			seenX = g
		}
		return nil
	})
	y := ad.Sum(ad.Mul(ad.Exp(h), ad.Const(hvec(1, 2, 3))))
	if err := y.Backward(); err != nil {
		t.Fatal(err)
	}
	want := make([]float64, 3)
	wantX := make([]float64, 3)
	for i, v := range []float64{1, 2, 3} {
		th := math.Tanh(v / 2)
		want[i] = math.Exp(th) * (v)
		wantX[i] = want[i] * (1 - th*th) / 2
	}
	if seen == nil || !hookNear(seen.Data(), want) {
		t.Fatalf("hook saw %v, want %v", seen, want)
	}
	if !hookNear(x.Grad().Data(), wantX) || !hookNear(seenX.Data(), wantX) {
		t.Errorf("grad %v (hook saw %v), want %v", x.Grad().Data(), seenX, wantX)
	}
	// Later work does not overwrite what the hooks kept.
	for range 3 {
		x.ZeroGrad()
		if err := ad.Sum(ad.Mul(ad.Square(x), ad.Const(hvec(7, 7, 7)))).Backward(); err != nil {
			t.Fatal(err)
		}
	}
	if !hookNear(seen.Data(), want) || !hookNear(seenX.Data(), wantX) {
		t.Errorf("kept gradients changed: %v %v", seen.Data(), seenX.Data())
	}
}

// A value used twice: the hook runs once, on the summed gradient.
func TestHookSeesSum(t *testing.T) {
	x := ad.Var(hvec(0.5, -1))
	h := ad.Exp(x)
	calls, callsX := 0, 0
	var got, gotX []float64
	h.RegisterHook(func(g *ad.Value) *ad.Value { calls++; got = g.Data(); return nil })
	x.RegisterHook(func(g *ad.Value) *ad.Value { callsX++; gotX = g.Data(); return nil })
	// y = Σ h·h + Σ h + Σ x·x: h used three times, x four.
	y := ad.Add(ad.Add(ad.Sum(ad.Mul(h, h)), ad.Sum(h)), ad.Sum(ad.Mul(x, x)))
	if err := y.Backward(); err != nil {
		t.Fatal(err)
	}
	var want, wantX []float64
	for _, v := range []float64{0.5, -1} {
		e := math.Exp(v)
		want = append(want, 2*e+1)
		wantX = append(wantX, (2*e+1)*e+2*v)
	}
	if calls != 1 || !hookNear(got, want) {
		t.Errorf("intermediate: %d calls with %v, want 1 with %v", calls, got, want)
	}
	if callsX != 1 || !hookNear(gotX, wantX) || !hookNear(x.Grad().Data(), wantX) {
		t.Errorf("Var: %d calls with %v (grad %v), want 1 with %v", callsX, gotX, x.Grad().Data(), wantX)
	}
}

// RetainGrad keeps the gradient after the hooks, in either order.
func TestHookRetainGrad(t *testing.T) {
	for _, retainFirst := range []bool{false, true} {
		x := ad.Var(hvec(1, 2))
		h := ad.MulScalar(x, 3)
		if retainFirst {
			h.RetainGrad()
		}
		h.RegisterHook(func(g *ad.Value) *ad.Value { return ad.MulScalar(g, 5) })
		if !retainFirst {
			h.RetainGrad()
		}
		if err := ad.Sum(ad.Square(h)).Backward(); err != nil {
			t.Fatal(err)
		}
		// ∂y/∂h = 2h = 6x, hooked 30x; ∂y/∂x = 3·30x.
		if got := h.Grad().Data(); !hookNear(got, []float64{30, 60}) {
			t.Errorf("retain first %v: h.Grad %v, want 30x", retainFirst, got)
		}
		if got := x.Grad().Data(); !hookNear(got, []float64{90, 180}) {
			t.Errorf("retain first %v: x.Grad %v, want 90x", retainFirst, got)
		}
	}
}

// In an Arena: hooks on the step's values last for the step; a Var's stay.
func TestHookArena(t *testing.T) {
	var ar ad.Arena
	w := ad.Var(tensor.FromFloat64([]float64{1, 2, 3, 4}, 2, 2))
	wCalls := 0
	w.RegisterHook(func(g *ad.Value) *ad.Value { wCalls++; return ad.MulScalar(g, 2) })
	hCalls := 0
	var ref []float64
	for step := range 4 {
		ar.Reset()
		x := ar.Const(tensor.FromFloat64([]float64{1, -1, 0.5, 2}, 2, 2))
		h := ad.MatMul(x, w)
		if step%2 == 0 { // hooked on even steps only: odd steps' h reuse the slot
			h.RegisterHook(func(g *ad.Value) *ad.Value { hCalls++; return ad.MulScalar(g, 3) })
		}
		w.ZeroGrad()
		if err := ad.Sum(ad.Tanh(h)).Backward(); err != nil {
			t.Fatal(err)
		}
		got := w.Grad().Data()
		if step == 0 {
			ref = got
		}
		want := append([]float64(nil), ref...)
		if step%2 == 1 {
			for i := range want {
				want[i] /= 3
			}
		}
		if !hookNear(got, want) {
			t.Errorf("step %d: grad %v, want %v", step, got, want)
		}
	}
	if hCalls != 2 || wCalls != 4 {
		t.Errorf("intermediate hook ran %d times (want 2), Var hook %d (want 4)", hCalls, wCalls)
	}
	// Cross-check step 0 against the heap.
	w2 := ad.Var(tensor.FromFloat64([]float64{1, 2, 3, 4}, 2, 2))
	h := ad.MatMul(ad.Const(tensor.FromFloat64([]float64{1, -1, 0.5, 2}, 2, 2)), w2)
	g, err := ad.Grad(ad.Sum(ad.Tanh(h)), w2)
	if err != nil {
		t.Fatal(err)
	}
	want := g[0].Data()
	for i := range want {
		want[i] *= 6
	}
	if !hookNear(ref, want) {
		t.Errorf("arena grad %v, want %v", ref, want)
	}
}

// With CreateGraph the hook's ops are recorded and differentiated again.
func TestHookCreateGraph(t *testing.T) {
	x := ad.Var(hvec(1.5, -0.5))
	u := ad.Square(x)
	// A hook runs in every sweep that reaches its value, the second one
	// through the recorded gradient included: this one acts in the first.
	once := func() func(g *ad.Value) *ad.Value {
		done := false
		return func(g *ad.Value) *ad.Value {
			if done {
				return nil
			}
			done = true
			return ad.Mul(g, g)
		}
	}
	u.RegisterHook(once())
	// y = ½Σu²: ∂y/∂u = u = x², hooked x⁴; ∂y/∂x = 2x·x⁴ = 2x⁵.
	y := ad.MulScalar(ad.Sum(ad.Square(u)), 0.5)
	g, err := ad.GradOpts(y, []*ad.Value{x}, ad.Options{CreateGraph: true})
	if err != nil {
		t.Fatal(err)
	}
	xs := []float64{1.5, -0.5}
	var want1, want2 []float64
	for _, v := range xs {
		want1 = append(want1, 2*math.Pow(v, 5))
		want2 = append(want2, 10*math.Pow(v, 4))
	}
	if !hookNear(g[0].Data(), want1) || !g[0].RequiresGrad() {
		t.Fatalf("first derivative %v, want %v, recorded", g[0].Data(), want1)
	}
	gg, err := ad.Grad(ad.Sum(g[0]), x)
	if err != nil {
		t.Fatal(err)
	}
	if !hookNear(gg[0].Data(), want2) {
		t.Errorf("second derivative %v, want %v (the hook's mul differentiated)", gg[0].Data(), want2)
	}

	// A Var's hook, recorded too: the hook squares ∂y/∂x = x² (y = Σx³/3).
	z := ad.Var(hvec(2))
	z.RegisterHook(once())
	g, err = ad.GradOpts(ad.MulScalar(ad.Sum(ad.PowScalar(z, 3)), 1.0/3), []*ad.Value{z}, ad.Options{CreateGraph: true})
	if err != nil || !hookNear(g[0].Data(), []float64{16}) {
		t.Fatalf("Var hook: %v %v, want x⁴ = 16", g, err)
	}
	gg, err = ad.Grad(ad.Sum(g[0]), z)
	if err != nil || !hookNear(gg[0].Data(), []float64{32}) {
		t.Errorf("Var hook: second derivative %v %v, want 4x³ = 32", gg, err)
	}
}

func TestHookMisuse(t *testing.T) {
	err := ad.Try(func() { ad.Const(hvec(1)).RegisterHook(func(g *ad.Value) *ad.Value { return g }) })
	if !errors.Is(err, ad.ErrNoGrad) {
		t.Errorf("hook on a constant: %v, want ErrNoGrad", err)
	}
	x := ad.Var(hvec(1, 2))
	h := ad.Exp(x)
	h.RegisterHook(func(g *ad.Value) *ad.Value { return ad.Sum(g) })
	if err := ad.Sum(h).Backward(); !errors.Is(err, ad.ErrShape) {
		t.Errorf("hook returning the wrong shape: %v, want ErrShape", err)
	}
	y := ad.Var(hvec(1, 2))
	y.RegisterHook(func(g *ad.Value) *ad.Value { panic("boom") })
	if err := ad.Sum(y).Backward(); !errors.Is(err, ad.ErrFunc) {
		t.Errorf("panicking hook: %v, want ErrFunc", err)
	}
	// Under anomaly detection a hook's NaN is reported as the hook's.
	z := ad.Var(hvec(1, 2))
	zh := ad.Exp(ad.DetectAnomaly(z))
	zh.RegisterHook(func(g *ad.Value) *ad.Value {
		return ad.Mul(g, ad.Const(hvec(math.NaN(), 1)))
	})
	err = ad.Sum(zh).Backward()
	var ae *ad.AnomalyError
	if !errors.As(err, &ae) || ae.Op != "exp" || ae.Inner != "hook" || ae.Site == "" {
		t.Errorf("NaN from a hook: %v, want an *AnomalyError naming exp's hook", err)
	}
}

// A hook that observes an intermediate gradient and one that rescales a
// parameter's.
func ExampleValue_RegisterHook() {
	w := ad.Var(tensor.FromFloat64([]float64{1, 2}, 2))
	w.RegisterHook(func(g *ad.Value) *ad.Value { return ad.MulScalar(g, 0.5) })
	h := ad.Square(w)
	h.RegisterHook(func(g *ad.Value) *ad.Value {
		fmt.Println("∂y/∂h =", g.Data())
		return nil // keep g
	})
	y := ad.Sum(ad.MulScalar(h, 3))
	if err := y.Backward(); err != nil {
		panic(err)
	}
	fmt.Println("w.Grad =", w.Grad().Data())
	// Output:
	// ∂y/∂h = [3 3]
	// w.Grad = [3 6]
}
