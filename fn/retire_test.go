package fn_test

import (
	"errors"
	"math"
	"runtime"
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

// TestTransformsInArena: a transform's targets of arena values are arena
// values, so that what it computes from them, its sweeps and the
// gradients it returns are recorded in the arena: a step repeated in an
// arena allocates a small fraction of the heap step's bytes, gives the
// heap step's bits, and its results are stale after Reset.
func TestTransformsInArena(t *testing.T) {
	const n = 4096
	pts := make([]float64, n)
	for i := range pts {
		pts[i] = math.Sin(float64(i))
	}
	w := vec(0.5, 1.25, -0.75, 2, 0.3, -1.1, 0.9, 1.7)
	step := func(xs *ad.Value) []*ad.Value { return fn.ValueAndGrad(lapLoss(xs))(w) }
	want := step(ad.Const(tensor.FromFloat64(pts, n)))
	bytes := func(f func()) uint64 {
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		f()
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	var ar ad.Arena
	var got []*ad.Value
	arenaStep := func() {
		ar.Reset()
		got = step(ar.Const(tensor.FromFloat64(pts, n)))
	}
	arenaStep()
	arenaStep() // the arena's buffers now exist
	heapBytes := bytes(func() { step(ad.Const(tensor.FromFloat64(pts, n))) })
	arenaBytes := bytes(arenaStep)
	for i := range want {
		a, b := want[i].Tensor().Float64s(), got[i].Tensor().Float64s()
		for j := range a {
			if math.Float64bits(a[j]) != math.Float64bits(b[j]) {
				t.Fatalf("output %d element %d: arena %v, heap %v", i, j, b[j], a[j])
			}
		}
	}
	t.Logf("arena %d heap %d", arenaBytes, heapBytes)
	if arenaBytes*4 > heapBytes {
		t.Errorf("a step in the arena allocated %d bytes, the heap step %d: more than a quarter", arenaBytes, heapBytes)
	}

	// The inner gradient of an arena value: after Reset it is either
	// reported stale or still holds its numbers, never the next step's.
	u := fn.Of(func(x ...*ad.Value) *ad.Value { return ad.Sum(ad.Sin(x[0])) })
	ar.Reset()
	g := fn.Grad(u)(ar.Const(tensor.FromFloat64(pts, n)))[0]
	near(t, "grad in the arena", g.Tensor().At(3), math.Cos(pts[3]))
	keep := append([]float64(nil), g.Tensor().Float64s()...)
	ar.Reset()
	other := make([]float64, n)
	fn.Grad(u)(ar.Const(tensor.FromFloat64(other, n)))
	err := ad.Try(func() {
		for j, v := range g.Tensor().Float64s() {
			if math.Float64bits(v) != math.Float64bits(keep[j]) {
				t.Fatalf("the gradient of the step before, read after Reset, changed at %d: %v, was %v", j, v, keep[j])
			}
		}
	})
	if err != nil && !errors.Is(err, ad.ErrStale) {
		t.Errorf("reading the gradient of the step before: %v, want ErrStale or its numbers", err)
	}
}

// TestPullUnderGrad: a VJP's pullback used inside an enclosing Grad,
// made outside it or inside its function, is differentiated through its
// cotangent and through the values its function closes over (a retired
// target stops counting only for the sweeps after its function returned).
func TestPullUnderGrad(t *testing.T) {
	x := vec(0.3, 1.1)
	_, pull := fn.VJP(fn.Of(func(a ...*ad.Value) *ad.Value { return ad.Sin(a[0]) }), x)
	f := fn.Of(func(p ...*ad.Value) *ad.Value { return ad.Sum(ad.Square(pull(p[0])[0])) })
	g := fn.Grad(f)(vec(2, 3))[0]
	// Σ (p cos x)² → 2 p cos² x
	near(t, "g0", g.Tensor().At(0), 2*2*math.Pow(math.Cos(0.3), 2))
	near(t, "g1", g.Tensor().At(1), 2*3*math.Pow(math.Cos(1.1), 2))
	// inner VJP inside an outer Grad, pull used after the VJP returned but within f
	f2 := fn.Of(func(p ...*ad.Value) *ad.Value {
		_, pl := fn.VJP(fn.Of(func(a ...*ad.Value) *ad.Value { return ad.Mul(ad.Sin(a[0]), p[0]) }), x)
		return ad.Sum(ad.Square(pl(p[0])[0]))
	})
	// pl(c) = c·p·cos x; with c = p: p² cos x; Σ p⁴cos²x → 4p³cos²x
	g2 := fn.Grad(f2)(vec(2, 3))[0]
	near(t, "h0", g2.Tensor().At(0), 4*8*math.Pow(math.Cos(0.3), 2))
	near(t, "h1", g2.Tensor().At(1), 4*27*math.Pow(math.Cos(1.1), 2))
}

// TestTransformsArenaMatchesHeap: every transform on arena inputs gives
// the bits it gives on heap inputs, over two steps of one arena (the
// second reusing the first's slots and buffers).
func TestTransformsArenaMatchesHeap(t *testing.T) {
	xt := tensor.FromFloat64([]float64{0.3, -0.7, 1.2, 0.05, -1.4, 0.9}, 2, 3)
	vt := tensor.FromFloat64([]float64{1, -2, 0.5, 0.25, 3, -1}, 2, 3)
	f := fn.Of(func(a ...*ad.Value) *ad.Value {
		return ad.Sum(ad.Mul(ad.Tanh(a[0]), ad.Sin(ad.MulScalar(a[0], 1.5))))
	})
	cases := map[string]func(x, v *ad.Value) []*ad.Value{
		"grad":           func(x, _ *ad.Value) []*ad.Value { return fn.Grad(f)(x) },
		"value_and_grad": func(x, _ *ad.Value) []*ad.Value { return fn.ValueAndGrad(f)(x) },
		"vjp of grad": func(x, v *ad.Value) []*ad.Value {
			_, pull := fn.VJP(fn.Grad(f), x)
			return pull(v)
		},
		"jvp of grad": func(x, v *ad.Value) []*ad.Value {
			_, ts := fn.JVP(fn.Grad(f), []*ad.Value{x}, []*ad.Value{v})
			return ts
		},
		"hessian": func(x, _ *ad.Value) []*ad.Value { return fn.Hessian(f)(x) },
		"vmap of grad": func(x, _ *ad.Value) []*ad.Value {
			return fn.Vmap(fn.Grad(f), nil, nil)(x)
		},
		"grad of grad": func(x, v *ad.Value) []*ad.Value {
			return fn.Grad(fn.Of(func(a ...*ad.Value) *ad.Value {
				return ad.Sum(ad.Mul(fn.Grad(f)(a[0])[0], v))
			}))(x)
		},
	}
	for name, c := range cases {
		want := c(ad.Const(xt), ad.Const(vt))
		var ar ad.Arena
		for step := range 2 {
			ar.Reset()
			got := c(ar.Const(xt), ar.Const(vt))
			for i := range want {
				a, b := want[i].Tensor().Float64s(), got[i].Tensor().Float64s()
				for j := range a {
					if math.Float64bits(a[j]) != math.Float64bits(b[j]) {
						t.Fatalf("%s, arena step %d, output %d element %d: %v, heap %v", name, step, i, j, b[j], a[j])
					}
				}
			}
		}
	}
}

// TestEscapedTarget: an input of a transform that leaks out of its
// function (stored in a variable the function closes over) is not
// followed by the sweeps after the transform returned; differentiating
// with respect to it is then ErrEscaped, never an incomplete gradient
// (here it would be 0, where d/dx cos x = −sin x).
func TestEscapedTarget(t *testing.T) {
	var leak *ad.Value
	outer := fn.Of(func(p ...*ad.Value) *ad.Value {
		_, pull := fn.VJP(fn.Of(func(a ...*ad.Value) *ad.Value {
			leak = a[0]
			return ad.Mul(ad.Sin(a[0]), p[0])
		}), vec(0.5))
		return ad.Sum(pull(vec(1))[0]) // p·cos x
	})
	g := fn.Grad(outer)(vec(2))[0]
	near(t, "gradient", g.Tensor().At(0), math.Cos(0.5))
	if _, err := ad.Grad(ad.Sum(g), leak); !errors.Is(err, ad.ErrEscaped) {
		t.Errorf("Grad with respect to an escaped input: %v, want ErrEscaped", err)
	}
	y := ad.Sum(ad.Mul(leak, g))
	if err := y.Backward(); err != nil {
		t.Fatal(err)
	}
	if err := ad.Try(func() { leak.Grad() }); !errors.Is(err, ad.ErrEscaped) {
		t.Errorf("the gradient Backward left on an escaped input, read: %v, want ErrEscaped", err)
	}
	// Inside the function it is an ordinary input: differentiated there, it
	// gives the whole derivative.
	var inner float64
	fn.Grad(fn.Of(func(p ...*ad.Value) *ad.Value {
		_, pull := fn.VJP(fn.Of(func(a ...*ad.Value) *ad.Value {
			d, err := ad.Grad(ad.Sum(ad.Cos(a[0])), a[0])
			if err != nil {
				t.Fatal(err)
			}
			inner = d[0].Item()
			return ad.Mul(ad.Sin(a[0]), p[0])
		}), vec(0.5))
		return ad.Sum(pull(vec(1))[0])
	}))(vec(2))
	near(t, "inside the function", inner, -math.Sin(0.5))
}

// TestTransformOfStaleArenaValue: an arena value of the step before, given
// to a transform, is ErrStale (its storage may hold a later step's data),
// as it is for every op.
func TestTransformOfStaleArenaValue(t *testing.T) {
	var ar ad.Arena
	ar.Reset()
	x := ar.Const(tensor.FromFloat64([]float64{1, 2}, 2))
	ar.Reset()
	ar.Const(tensor.FromFloat64([]float64{5, 6}, 2))
	f := fn.Of(func(a ...*ad.Value) *ad.Value { return ad.Sum(ad.Sin(a[0])) })
	for name, run := range map[string]func(){
		"grad":         func() { fn.Grad(f)(x) },
		"vjp":          func() { fn.VJP(f, x) },
		"vmap of grad": func() { fn.Vmap(fn.Grad(f), nil, nil)(x) },
	} {
		if err := ad.Try(run); !errors.Is(err, ad.ErrStale) {
			t.Errorf("%s of a stale arena value: %v, want ErrStale", name, err)
		}
	}
}
