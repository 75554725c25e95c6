package ad_test

import (
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

func scalarVar(x float64) *ad.Value { return ad.Var(tensor.Scalar(tensor.Float64, x)) }

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.17g, want %.17g", what, got, want)
	}
}

// loss = x·y + x at (3, 4): ∂/∂x = y + 1 = 5, ∂/∂y = x = 3.
func TestWorkedExampleXYPlusX(t *testing.T) {
	x, y := scalarVar(3), scalarVar(4)
	loss := ad.Add(ad.Mul(x, y), x)
	near(t, "loss", loss.Item(), 15)
	gs, err := ad.Grad(loss, x, y)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "dx", gs[0].Item(), 5)
	near(t, "dy", gs[1].Item(), 3)
}

// f = θ1·θ2 + θ1 at (2, 5): (θ2 + 1, θ1) = (6, 2), through Backward.
func TestWorkedExampleTheta(t *testing.T) {
	t1, t2 := scalarVar(2), scalarVar(5)
	f := ad.Add(ad.Mul(t1, t2), t1)
	if err := f.Backward(); err != nil {
		t.Fatal(err)
	}
	near(t, "dθ1", t1.Grad().Item(), 6)
	near(t, "dθ2", t2.Grad().Item(), 2)
}

// z = x·y + sin(x²) − ln y at (0.5, 4): ∂z/∂x = y + 2x·cos(x²) = 4 + cos 0.25,
// ∂z/∂y = x − 1/y = 0.25.
func TestWorkedExampleSinLog(t *testing.T) {
	x, y := scalarVar(0.5), scalarVar(4)
	z := ad.Sub(ad.Add(ad.Mul(x, y), ad.Sin(ad.Mul(x, x))), ad.Log(y))
	gs, err := ad.Grad(z, x, y)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "dz/dx", gs[0].Item(), 4+math.Cos(0.25))
	near(t, "dz/dy", gs[1].Item(), 0.25)
}

// A weight used twice (tied input/output embedding) gets both contributions.
func TestTiedWeightAccumulates(t *testing.T) {
	w := ad.Var(tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6}, 3, 2))
	x := ad.Const(tensor.FromFloat64([]float64{1, -1}, 1, 2))
	// use 1: embedding lookup of rows 0 and 2; use 2: output projection x·Wᵀ.
	emb := ad.IndexSelect(w, 0, []int{0, 2})
	logits := ad.MatMulT(x, w, false, true)
	loss := ad.Add(ad.Sum(emb), ad.Sum(logits))
	gs, err := ad.Grad(loss, w)
	if err != nil {
		t.Fatal(err)
	}
	// d/dW Σ emb: ones on rows 0 and 2; d/dW Σ x·Wᵀ: every row gets x.
	want := []float64{2, 0, 1, -1, 2, 0}
	for i, g := range gs[0].Data() {
		near(t, "dW", g, want[i])
	}
	// The same through Backward: x used twice in x*x.
	v := scalarVar(3)
	if err := ad.Mul(v, v).Backward(); err != nil {
		t.Fatal(err)
	}
	near(t, "d(x·x)/dx", v.Grad().Item(), 6)
}

// Backward accumulates across calls until ZeroGrad.
func TestBackwardAccumulates(t *testing.T) {
	x := scalarVar(2)
	for i := 0; i < 3; i++ {
		if err := ad.Square(x).Backward(); err != nil {
			t.Fatal(err)
		}
	}
	near(t, "accumulated", x.Grad().Item(), 12)
	x.ZeroGrad()
	if x.Grad() != nil {
		t.Fatal("ZeroGrad left a gradient")
	}
	if err := ad.Square(x).Backward(); err != nil {
		t.Fatal(err)
	}
	near(t, "after zero", x.Grad().Item(), 4)
}

// Non-leaf gradients are kept only when asked for.
func TestRetainGrad(t *testing.T) {
	x := scalarVar(3)
	h := ad.Square(x)
	k := ad.Exp(x)
	h.RetainGrad()
	if err := ad.Mul(h, ad.Scalar(2)).Backward(); err != nil {
		t.Fatal(err)
	}
	near(t, "dh", h.Grad().Item(), 2)
	if k.Grad() != nil {
		t.Error("non-retained intermediate has a gradient")
	}
}

func TestNonScalarNeedsSeed(t *testing.T) {
	x := ad.Var(tensor.FromFloat64([]float64{1, 2, 3}, 3))
	y := ad.Square(x)
	err := y.Backward()
	if !errors.Is(err, ad.ErrNonScalar) {
		t.Fatalf("Backward on [3]: got %v, want ErrNonScalar", err)
	}
	seed := ad.Const(tensor.FromFloat64([]float64{1, 10, 100}, 3))
	if err := y.BackwardOpts(ad.Options{Seed: seed}); err != nil {
		t.Fatal(err)
	}
	for i, g := range x.Grad().Data() {
		near(t, "vjp", g, []float64{2, 40, 600}[i])
	}
	bad := ad.Const(tensor.FromFloat64([]float64{1, 2}, 2))
	if err := ad.Square(x).BackwardOpts(ad.Options{Seed: bad}); !errors.Is(err, ad.ErrShape) {
		t.Fatalf("wrong seed shape: got %v", err)
	}
}

func TestGraphFreed(t *testing.T) {
	x := scalarVar(2)
	y := ad.Exp(ad.Sin(x))
	if err := y.Backward(); err != nil {
		t.Fatal(err)
	}
	err := y.Backward()
	if !errors.Is(err, ad.ErrGraphFreed) {
		t.Fatalf("second backward: got %v, want ErrGraphFreed", err)
	}
	var e *ad.Error
	if !errors.As(err, &e) || e.Op != "backward" {
		t.Fatalf("error %v is not an *ad.Error from backward", err)
	}
	// With RetainGraph the graph can be swept again.
	x2 := scalarVar(2)
	y2 := ad.Exp(ad.Sin(x2))
	if err := y2.BackwardOpts(ad.Options{RetainGraph: true}); err != nil {
		t.Fatal(err)
	}
	if err := y2.Backward(); err != nil {
		t.Fatalf("second backward after RetainGraph: %v", err)
	}
	want := 2 * math.Exp(math.Sin(2)) * math.Cos(2)
	near(t, "two sweeps", x2.Grad().Item(), want)
}

func TestModifiedInPlace(t *testing.T) {
	w := ad.Var(tensor.FromFloat64([]float64{1, 2}, 2))
	x := ad.Var(tensor.FromFloat64([]float64{3, 4}, 2))
	y := ad.Sum(ad.Mul(w, x)) // mul saves w (for dx) and x (for dw)
	w.Tensor().Set(10, 0)     // an optimizer step before backward
	err := y.Backward()
	if !errors.Is(err, ad.ErrModifiedInPlace) {
		t.Fatalf("got %v, want ErrModifiedInPlace", err)
	}
	var me *ad.ModifiedError
	if !errors.As(err, &me) || me.Op != "mul" || me.Now <= me.Saved {
		t.Fatalf("error %#v does not name mul and both versions", err)
	}
	if x.Grad() != nil || w.Grad() != nil {
		t.Fatal("a failed backward accumulated gradients")
	}
	// Writing through the tensor the Var was made from is caught too.
	base := tensor.FromFloat64([]float64{1, 2}, 2)
	v := ad.Var(base)
	z := ad.Sum(ad.Exp(v)) // exp saves its output, not v
	u := ad.Sum(ad.Log(v)) // log saves v
	base.Set(5, 1)
	if err := z.Backward(); err != nil {
		t.Fatalf("exp does not save its input, yet: %v", err)
	}
	if err := u.Backward(); !errors.Is(err, ad.ErrModifiedInPlace) {
		t.Fatalf("write through the source tensor: got %v", err)
	}
}

func TestForwardShapeErrors(t *testing.T) {
	a := ad.Var(tensor.New(tensor.Float64, 2, 3))
	b := ad.Var(tensor.New(tensor.Float64, 4, 5))
	err := ad.Try(func() { ad.MatMul(a, b) })
	if !errors.Is(err, ad.ErrShape) {
		t.Fatalf("matmul [2 3]×[4 5]: got %v", err)
	}
	if got, want := err.Error(), "ad: matmul: [2 3] × [4 5]: inner dimensions differ (3 vs 4)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	var se *tensor.ShapeError
	if !errors.As(err, &se) || se.Op != "matmul" {
		t.Errorf("not inspectable as *tensor.ShapeError: %v", err)
	}
	cases := map[string]func(){
		"add":          func() { ad.Add(a, b) },
		"sum":          func() { ad.Sum(a, ad.Axes(2)) },
		"reshape":      func() { ad.Reshape(a, 4, 2) },
		"slice":        func() { ad.Slice(a, 1, 2, 5) },
		"concat":       func() { ad.Concat(0, a, b) },
		"index_select": func() { ad.IndexSelect(a, 0, []int{0, 2}) },
		"permute":      func() { ad.Permute(a, 0, 0) },
		"softmax":      func() { ad.Softmax(a, 3) },
		"cross_entropy": func() {
			ad.CrossEntropy(a, []int{0, 3})
		},
		"broadcast_to": func() { ad.BroadcastTo(a, 3, 3) },
	}
	for op, f := range cases {
		err := ad.Try(f)
		var e *ad.Error
		if !errors.Is(err, ad.ErrShape) || !errors.As(err, &e) || e.Op != op {
			t.Errorf("%s: got %v, want a shape error naming %s", op, err, op)
		}
	}
	f32 := ad.Var(tensor.New(tensor.Float32, 2, 3))
	if err := ad.Try(func() { ad.Mul(a, f32) }); !errors.Is(err, ad.ErrDType) {
		t.Errorf("mixed dtypes: got %v, want ErrDType", err)
	}
}

func TestNoGradRecordsNothing(t *testing.T) {
	a := ad.Const(tensor.FromFloat64([]float64{1, 2}, 2))
	y := ad.Exp(ad.Mul(a, a))
	if y.RequiresGrad() || !y.IsLeaf() {
		t.Fatal("ops on constants were recorded")
	}
	if err := ad.Sum(y).Backward(); !errors.Is(err, ad.ErrNoGrad) {
		t.Fatalf("backward of a constant: got %v", err)
	}
	x := scalarVar(2)
	d := ad.Mul(x, x).Detach()
	if d.RequiresGrad() {
		t.Fatal("Detach kept the graph")
	}
	gs, err := ad.Grad(ad.Add(ad.Mul(d, x), x), x)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "detached factor", gs[0].Item(), 5) // d/dx (4·x + x) with d constant
	if _, err := ad.Grad(ad.Mul(x, x), d); !errors.Is(err, ad.ErrNoGrad) {
		t.Fatalf("grad w.r.t. a constant: got %v", err)
	}
}

// Grad with respect to an unused input is zero, and with respect to an
// intermediate value is the adjoint at that value.
func TestGradUnusedAndIntermediate(t *testing.T) {
	x, u := scalarVar(2), scalarVar(7)
	h := ad.Square(x)
	y := ad.Mul(h, ad.Scalar(3))
	gs, err := ad.Grad(y, x, u, h)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "dx", gs[0].Item(), 12)
	near(t, "du", gs[1].Item(), 0)
	near(t, "dh", gs[2].Item(), 3)
}

// A chain of 10^6 ops sweeps without recursion (no stack overflow) and gets
// the exact derivative of x·1^n.
func TestLongChain(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 10_000
	}
	x := scalarVar(1.5)
	y := x
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			y = ad.MulScalar(y, 1)
		} else {
			y = ad.AddScalar(y, 0)
		}
	}
	gs, err := ad.Grad(y, x)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "chain derivative", gs[0].Item(), 1)
}

// Independent graphs on different goroutines sharing read-only parameters,
// with Backward accumulating into them concurrently (go test -race).
func TestConcurrentGraphs(t *testing.T) {
	w := ad.Var(tensor.FromFloat64([]float64{0.5, -1, 2}, 3))
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				x := ad.Const(tensor.FromFloat64([]float64{1, 2, 3}, 3))
				loss := ad.Sum(ad.Tanh(ad.Mul(w, x)))
				if _, err := ad.GradOpts(loss, []*ad.Value{w}, ad.Options{RetainGraph: true}); err != nil {
					t.Error(err)
					return
				}
				if err := loss.Backward(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	x := []float64{1, 2, 3}
	for i, g := range w.Grad().Data() {
		wi := w.Tensor().AtFlat(i)
		want := 160 * x[i] * (1 - math.Pow(math.Tanh(wi*x[i]), 2))
		if math.Abs(g-want) > 1e-9*math.Abs(want) {
			t.Errorf("accumulated grad %d = %g, want %g", i, g, want)
		}
	}
}

// Grad with respect to some inputs skips the VJPs that lead only to others:
// a branch whose rule would fail if run is never run.
func TestGradPrunesToTargets(t *testing.T) {
	x := scalarVar(2)
	w := ad.Var(tensor.FromFloat64([]float64{1, 2, 3}, 3))
	other := ad.Sum(ad.Log(w))
	y := ad.Add(ad.Square(x), other)
	w.Tensor().Set(-1, 0) // log saved w: a sweep into this branch would fail
	gs, err := ad.Grad(y, x)
	if err != nil {
		t.Fatalf("pruned branch was checked or swept: %v", err)
	}
	near(t, "dx", gs[0].Item(), 4)
}

// Regression: when pruning drops one operand of mul, the VJP for the other
// must still read the right saved operand (y for ∂/∂x, x for ∂/∂y).
func TestPrunedMulReadsRightOperand(t *testing.T) {
	x := ad.Var(tensor.FromFloat64([]float64{2, 3}, 2))
	y := ad.Var(tensor.FromFloat64([]float64{5, 7}, 2))
	gs, err := ad.Grad(ad.Sum(ad.Mul(x, y)), y) // x requires a gradient but is not a target
	if err != nil {
		t.Fatal(err)
	}
	near(t, "dy0", gs[0].Data()[0], 2)
	near(t, "dy1", gs[0].Data()[1], 3)
	gs, err = ad.Grad(ad.Sum(ad.MatMul(ad.Reshape(x, 1, 2), ad.Reshape(y, 2, 1))), y)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "matmul dy0", gs[0].Data()[0], 2)
	gs, err = ad.Grad(ad.Sum(ad.Mul(x, y)), x) // and the other way round
	if err != nil {
		t.Fatal(err)
	}
	near(t, "dx0", gs[0].Data()[0], 5)
	gs, err = ad.Grad(ad.Sum(ad.MatMul(ad.Reshape(x, 1, 2), ad.Reshape(y, 2, 1))), x)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "matmul dx1", gs[0].Data()[1], 7)
}

// Concurrent training-style sweeps over tensors large enough to go through
// the recycled-storage pool and the pooled sweep scratch (go test -race),
// each checked against the closed form.
func TestConcurrentPooledSweeps(t *testing.T) {
	const n = 1024
	w := ad.Var(tensor.Full(tensor.Float64, 0.25, n))
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			x := ad.Const(tensor.Full(tensor.Float64, float64(g+1), n))
			for i := 0; i < 30; i++ {
				// loss = Σ (w·x)² + Σ w  →  ∂/∂w = 2·w·x² + 1
				loss := ad.Add(ad.Sum(ad.Square(ad.Mul(w, x))), ad.Sum(w))
				gs, err := ad.Grad(loss, w)
				if err != nil {
					t.Error(err)
					return
				}
				want := 2*0.25*float64((g+1)*(g+1)) + 1
				for _, v := range gs[0].Data() {
					if v != want {
						t.Errorf("goroutine %d: gradient %v, want %v", g, v, want)
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
}
