package implicit_test

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/implicit"
	"github.com/adjointgo/adjoint/internal/errs"
	"github.com/adjointgo/adjoint/tensor"
)

var methods = []implicit.Method{implicit.Dense, implicit.MatrixFree}

// cosMap is x ↦ cos(θ ⊙ x), elementwise: its fixed point has the closed
// form derivative dx/dθ = −x sin(θx)/(1 + θ sin(θx)).
func cosMap(x *ad.Value, ps []*ad.Value) *ad.Value { return ad.Cos(ad.Mul(ps[0], x)) }

// pseudo returns n reproducible values in [lo, hi).
func pseudo(n int, seed uint64, lo, hi float64) []float64 {
	out := make([]float64, n)
	s := seed*0x9E3779B97F4A7C15 + 1
	for i := range out {
		s ^= s << 13
		s ^= s >> 7
		s ^= s << 17
		out[i] = lo + (hi-lo)*float64(s>>11)/(1<<53)
	}
	return out
}

func t64(data []float64, shape ...int) *tensor.Tensor {
	return tensor.FromFloat64(append([]float64(nil), data...), shape...)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// near fails unless |got − want| ≤ tol·max(1, |want|) elementwise.
func near(t testing.TB, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*math.Max(1, math.Abs(want[i]))) {
			t.Fatalf("%s[%d] = %.15g, want %.15g (difference %.3g)", what, i, got[i], want[i], d)
		}
	}
}

func TestFixedPointCosClosedForm(t *testing.T) {
	for _, shape := range [][]int{{}, {3}, {2, 2}, {2, 1, 3}} {
		for _, m := range methods {
			t.Run(fmt.Sprintf("%v/%v", shape, m), func(t *testing.T) {
				n := tensor.Size(shape)
				th := ad.Var(t64(pseudo(n, 1, 0.3, 1.2), shape...))
				var st implicit.Stats
				x, err := implicit.FixedPoint(cosMap, tensor.New(tensor.Float64, shape...), []*ad.Value{th}, &implicit.Options{Method: m, Stats: &st})
				must(t, err)
				if !tensor.EqualShape(x.Shape(), shape) {
					t.Fatalf("solution of shape %v, want %v", x.Shape(), shape)
				}
				if st.Iterations < 2 || st.Residual > 1e-10 || st.Dense != (m == implicit.Dense) {
					t.Fatalf("stats %+v", st)
				}
				w := pseudo(n, 2, -1, 1)
				g, err := ad.Grad(ad.Sum(ad.Mul(x, ad.Const(t64(w, shape...)))), th)
				must(t, err)
				xs, ths := x.Data(), th.Data()
				want := make([]float64, n)
				for i := range want {
					if r := math.Abs(xs[i] - math.Cos(ths[i]*xs[i])); r > 1e-9 {
						t.Fatalf("x[%d] = %g is no fixed point (residual %g)", i, xs[i], r)
					}
					s := math.Sin(ths[i] * xs[i])
					want[i] = w[i] * (-xs[i] * s / (1 + ths[i]*s))
				}
				near(t, "dL/dθ", g[0].Data(), want, 1e-9)
			})
		}
	}
}

// linear is x = M·x + sin(θ) with x of shape [n 1]: x* = (I − M)⁻¹ sin θ.
func linear(x *ad.Value, ps []*ad.Value) *ad.Value {
	return ad.Add(ad.MatMul(ps[0], x), ad.Sin(ps[1]))
}

// contraction returns a random n×n matrix of spectral radius rho.
func contraction(n int, rho float64, seed uint64) []float64 {
	m := mat.NewDense(n, n, pseudo(n*n, seed, -1, 1))
	var eig mat.Eigen
	if !eig.Factorize(m, mat.EigenNone) {
		panic("no eigenvalues")
	}
	var r float64
	for _, v := range eig.Values(nil) {
		r = math.Max(r, cmplx.Abs(v))
	}
	m.Scale(rho/r, m)
	return m.RawMatrix().Data
}

// linearClosedForm returns x*, ∂⟨w, x*⟩/∂M and ∂⟨w, x*⟩/∂θ: with
// λ = (I − M)⁻ᵀw, they are λ·x*ᵀ and cos θ ⊙ λ.
func linearClosedForm(mv, th, w []float64) (x, gM, gTh []float64) {
	n := len(th)
	a := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			a.Set(i, j, -mv[i*n+j])
		}
		a.Set(i, i, a.At(i, i)+1)
	}
	b := make([]float64, n)
	for i, v := range th {
		b[i] = math.Sin(v)
	}
	var xs, lam mat.VecDense
	if err := xs.SolveVec(a, mat.NewVecDense(n, b)); err != nil {
		panic(err)
	}
	if err := lam.SolveVec(a.T(), mat.NewVecDense(n, w)); err != nil {
		panic(err)
	}
	gM = make([]float64, n*n)
	gTh = make([]float64, n)
	for i := range n {
		for j := range n {
			gM[i*n+j] = lam.AtVec(i) * xs.AtVec(j)
		}
		gTh[i] = math.Cos(th[i]) * lam.AtVec(i)
	}
	return xs.RawVector().Data, gM, gTh
}

func TestFixedPointLinearClosedForm(t *testing.T) {
	for _, c := range []struct {
		n        int
		m        implicit.Method
		anderson int
	}{{4, implicit.Dense, 0}, {4, implicit.MatrixFree, 0}, {6, implicit.Auto, 3}, {300, implicit.Auto, 0}, {300, implicit.MatrixFree, 5}} {
		t.Run(fmt.Sprintf("n=%d/%v/anderson=%d", c.n, c.m, c.anderson), func(t *testing.T) {
			mv, th, w := contraction(c.n, 0.6, 3), pseudo(c.n, 4, -2, 2), pseudo(c.n, 5, -1, 1)
			M, Th := ad.Var(t64(mv, c.n, c.n)), ad.Var(t64(th, c.n, 1))
			var st implicit.Stats
			x, err := implicit.FixedPoint(linear, tensor.New(tensor.Float64, c.n, 1), []*ad.Value{M, Th},
				&implicit.Options{Method: c.m, Anderson: c.anderson, Stats: &st})
			must(t, err)
			if want := c.m == implicit.Dense || c.m == implicit.Auto && c.n <= 200; st.Dense != want {
				t.Fatalf("Dense = %v, want %v", st.Dense, want)
			}
			g, err := ad.Grad(ad.Sum(ad.Mul(x, ad.Const(t64(w, c.n, 1)))), M, Th)
			must(t, err)
			xs, gM, gTh := linearClosedForm(mv, th, w)
			near(t, "x*", x.Data(), xs, 1e-9)
			near(t, "dL/dM", g[0].Data(), gM, 1e-8)
			near(t, "dL/dθ", g[1].Data(), gTh, 1e-8)
		})
	}
}

func TestAndersonAndDamping(t *testing.T) {
	n := 50
	mv, th := contraction(n, 0.95, 7), pseudo(n, 8, -1, 1)
	run := func(o implicit.Options) (implicit.Stats, []float64) {
		var st implicit.Stats
		o.Stats = &st
		x, err := implicit.FixedPoint(linear, tensor.New(tensor.Float64, n, 1), []*ad.Value{ad.Const(t64(mv, n, n)), ad.Const(t64(th, n, 1))}, &o)
		must(t, err)
		return st, x.Data()
	}
	plain, xp := run(implicit.Options{})
	acc, xa := run(implicit.Options{Anderson: 5})
	near(t, "x* (Anderson)", xa, xp, 1e-8)
	t.Logf("plain iteration: %d steps, Anderson(5): %d", plain.Iterations, acc.Iterations)
	if acc.Iterations*2 > plain.Iterations {
		t.Fatalf("Anderson took %d iterations, plain iteration %d: want at least 2× fewer", acc.Iterations, plain.Iterations)
	}
	// x ↦ 2 − 1.5x oscillates away from its fixed point 0.8; damped by
	// β = 0.5 it contracts by 0.25 per step.
	osc := func(x *ad.Value, _ []*ad.Value) *ad.Value { return ad.AddScalar(ad.MulScalar(x, -1.5), 2) }
	_, err := implicit.FixedPoint(osc, t64([]float64{0}), nil, &implicit.Options{MaxIter: 200})
	if !errors.Is(err, implicit.ErrNoConvergence) {
		t.Fatalf("undamped oscillation: err = %v, want ErrNoConvergence", err)
	}
	x, err := implicit.FixedPoint(osc, t64([]float64{0}), nil, &implicit.Options{Damping: 0.5})
	must(t, err)
	near(t, "damped fixed point", x.Data(), []float64{0.8}, 1e-9)
	x, err = implicit.FixedPoint(osc, t64([]float64{0}), nil, &implicit.Options{Anderson: 2})
	must(t, err)
	near(t, "accelerated fixed point", x.Data(), []float64{0.8}, 1e-9)
}

// cube is F(x, θ) = x³ − θ, whose root is θ^(1/3) with dx/dθ = 1/(3x²).
func cube(x *ad.Value, ps []*ad.Value) *ad.Value { return ad.Sub(ad.Mul(x, ad.Square(x)), ps[0]) }

func TestRootCubeClosedForm(t *testing.T) {
	for _, shape := range [][]int{{}, {4}, {2, 3}} {
		for _, m := range methods {
			t.Run(fmt.Sprintf("%v/%v", shape, m), func(t *testing.T) {
				n := tensor.Size(shape)
				th := pseudo(n, 9, 0.2, 30)
				if n > 1 {
					th[1] = -8 // a negative cube root, reached through the line search
				}
				Th := ad.Var(t64(th, shape...))
				var st implicit.Stats
				x, err := implicit.Root(cube, tensor.Full(tensor.Float64, 1, shape...), []*ad.Value{Th}, &implicit.Options{Method: m, Stats: &st})
				must(t, err)
				want, dwant := make([]float64, n), make([]float64, n)
				for i, v := range th {
					want[i] = math.Cbrt(v)
					dwant[i] = 1 / (3 * want[i] * want[i])
				}
				near(t, "x*", x.Data(), want, 1e-10)
				if st.Iterations == 0 || st.Iterations > 40 {
					t.Fatalf("stats %+v", st)
				}
				g, err := ad.Grad(ad.Sum(x), Th)
				must(t, err)
				near(t, "dx/dθ", g[0].Data(), dwant, 1e-9)
				// forward mode: the JVP along the unit tangent is the same diagonal
				_, jv, err := ad.JVP(func(in []*ad.Value) *ad.Value {
					y, err := implicit.Root(cube, tensor.Full(tensor.Float64, 1, shape...), in, &implicit.Options{Method: m})
					if err != nil {
						panic(err)
					}
					return y
				}, []*tensor.Tensor{t64(th, shape...)}, []*tensor.Tensor{tensor.Full(tensor.Float64, 1, shape...)})
				must(t, err)
				near(t, "JVP", jv.Data(), dwant, 1e-9)
			})
		}
	}
}

// A system of two unknowns whose output has another shape than x: the
// circle x² + y² = r² cut by the line y = a·x.
func TestRootSystemShapes(t *testing.T) {
	F := func(x *ad.Value, ps []*ad.Value) *ad.Value {
		u, v := ad.Slice(x, 0, 0, 1), ad.Slice(x, 0, 1, 2)
		circle := ad.Sub(ad.Add(ad.Square(u), ad.Square(v)), ad.Square(ps[0]))
		line := ad.Sub(v, ad.Mul(ps[1], u))
		return ad.Reshape(ad.Concat(0, circle, line), 1, 2)
	}
	for _, m := range methods {
		r, a := 2.0, 0.5
		R, A := ad.Var(t64([]float64{r}, 1)), ad.Var(t64([]float64{a}, 1))
		x, err := implicit.Root(F, t64([]float64{1, 1}, 2), []*ad.Value{R, A}, &implicit.Options{Method: m})
		must(t, err)
		// u = r/√(1+a²), v = a·u
		s := math.Sqrt(1 + a*a)
		near(t, "root", x.Data(), []float64{r / s, a * r / s}, 1e-10)
		g, err := ad.Grad(ad.Slice(x, 0, 0, 1), R, A)
		must(t, err)
		near(t, "du/dr, du/da", []float64{g[0].Item(), g[1].Item()}, []float64{1 / s, -r * a / (s * s * s)}, 1e-9)
	}
}

// tanhMap is x ↦ tanh(W·x + U·θ + b), a contraction for small W.
func tanhMap(x *ad.Value, ps []*ad.Value) *ad.Value {
	return ad.Tanh(ad.Add(ad.Add(ad.MatMul(ps[0], x), ad.MatMul(ps[1], ps[2])), ps[3]))
}

type tanhProblem struct {
	n, p        int
	W, U, Th, B []float64
}

func newTanh(n, p int) tanhProblem {
	return tanhProblem{n, p, contraction(n, 0.7, 11), pseudo(n*p, 12, -1, 1), pseudo(p, 13, -1, 1), pseudo(n, 14, -0.5, 0.5)}
}

func (q tanhProblem) inputs() []*tensor.Tensor {
	return []*tensor.Tensor{t64(q.W, q.n, q.n), t64(q.U, q.n, q.p), t64(q.Th, q.p, 1), t64(q.B, q.n, 1)}
}

func (q tanhProblem) solve(o *implicit.Options) func([]*ad.Value) *ad.Value {
	return func(in []*ad.Value) *ad.Value {
		x, err := implicit.FixedPoint(tanhMap, tensor.New(tensor.Float64, q.n, 1), in, o)
		if err != nil {
			panic(err)
		}
		return x
	}
}

func vars(ts []*tensor.Tensor) []*ad.Value {
	vs := make([]*ad.Value, len(ts))
	for i, t := range ts {
		vs[i] = ad.Var(t.Clone())
	}
	return vs
}

// The implicit gradient equals the gradient of the iterations recorded on
// the tape (once they have converged), without recording them.
func TestFixedPointMatchesUnrolled(t *testing.T) {
	q := newTanh(6, 3)
	w := ad.Const(t64(pseudo(q.n, 15, -1, 1), q.n, 1))
	loss := func(x *ad.Value) *ad.Value { return ad.Sum(ad.Mul(ad.Square(x), w)) }
	in := vars(q.inputs())
	x := ad.Const(tensor.New(tensor.Float64, q.n, 1))
	for range 120 {
		x = tanhMap(x, in)
	}
	unrolled, err := ad.Grad(loss(x), in...)
	must(t, err)
	for _, m := range methods {
		in := vars(q.inputs())
		y := q.solve(&implicit.Options{Method: m})(in)
		if y.Inputs() == nil || len(y.Inputs()) != len(in) {
			t.Fatalf("the solution has %d recorded inputs, want the %d parameters alone", len(y.Inputs()), len(in))
		}
		got, err := ad.Grad(loss(y), in...)
		must(t, err)
		for i := range got {
			near(t, fmt.Sprintf("%v: gradient %d", m, i), got[i].Data(), unrolled[i].Data(), 1e-9)
		}
	}
}

func TestRootMatchesUnrolledNewton(t *testing.T) {
	th := []float64{0.5, 2, 9, 27, 100}
	Th := ad.Var(t64(th, 5))
	x := ad.Const(tensor.Full(tensor.Float64, 1, 5))
	for range 40 { // x ← x − (x³ − θ)/(3x²), recorded
		x = ad.Sub(x, ad.Div(ad.Sub(ad.Mul(x, ad.Square(x)), Th), ad.MulScalar(ad.Square(x), 3)))
	}
	w := ad.Const(t64(pseudo(5, 16, -1, 1), 5))
	unrolled, err := ad.Grad(ad.Sum(ad.Mul(x, w)), Th)
	must(t, err)
	for _, m := range methods {
		Th := ad.Var(t64(th, 5))
		y, err := implicit.Root(cube, tensor.Full(tensor.Float64, 1, 5), []*ad.Value{Th}, &implicit.Options{Method: m})
		must(t, err)
		got, err := ad.Grad(ad.Sum(ad.Mul(y, w)), Th)
		must(t, err)
		near(t, "gradient", got[0].Data(), unrolled[0].Data(), 1e-10)
	}
}

// ⟨u, J·v⟩ from the JVP equals ⟨Jᵀ·u, v⟩ from the VJP, and the Jacobians
// of forward and reverse mode agree.
func TestJVPMatchesVJP(t *testing.T) {
	q := newTanh(5, 2)
	for _, m := range methods {
		f := q.solve(&implicit.Options{Method: m})
		xs := q.inputs()
		vs := make([]*tensor.Tensor, len(xs))
		for i, x := range xs {
			vs[i] = t64(pseudo(x.Len(), uint64(20+i), -1, 1), x.Shape()...)
		}
		u := t64(pseudo(q.n, 30, -1, 1), q.n, 1)
		_, jv, err := ad.JVP(f, xs, vs)
		must(t, err)
		in := vars(xs)
		gs, err := ad.Grad(ad.Sum(ad.Mul(f(in), ad.Const(u))), in...)
		must(t, err)
		var lhs, rhs, scale float64
		for k, a := range jv.Data() {
			lhs += u.Data()[k] * a
			scale += math.Abs(u.Data()[k] * a)
		}
		for i, g := range gs {
			for k, a := range g.Data() {
				rhs += a * vs[i].Data()[k]
			}
		}
		if math.Abs(lhs-rhs) > 1e-10*scale {
			t.Fatalf("%v: ⟨u, Jv⟩ = %.15g, ⟨Jᵀu, v⟩ = %.15g", m, lhs, rhs)
		}
		fwd, err := ad.JacFwd(f, xs)
		must(t, err)
		rev, err := ad.JacRev(f, xs) // the sweep carries the seed's directions as tangents through the rules
		must(t, err)
		for i := range fwd {
			near(t, fmt.Sprintf("%v: Jacobian %d", m, i), rev[i].Data(), fwd[i].Data(), 1e-10)
		}
	}
}

func TestGradcheck(t *testing.T) {
	q := newTanh(4, 2)
	tight := &implicit.Options{Tol: 1e-14, LinearTol: 1e-14}
	loss := func(f func([]*ad.Value) *ad.Value) gradcheck.Func {
		return func(in []*ad.Value) *ad.Value { x := f(in); return ad.Sum(ad.Mul(x, ad.Sin(x))) }
	}
	for _, m := range methods {
		o := *tight
		o.Method = m
		f := loss(q.solve(&o))
		if r, err := gradcheck.Check(f, q.inputs(), &gradcheck.Settings{Tol: 1e-6}); err != nil {
			t.Fatalf("%v: %v", m, err)
		} else if !r.OK {
			t.Fatalf("%v: %v", m, r)
		}
		root := func(in []*ad.Value) *ad.Value {
			x, err := implicit.Root(cube, tensor.Full(tensor.Float64, 1, 3), in, &o)
			if err != nil {
				panic(err)
			}
			return ad.Sum(ad.Mul(x, ad.Cos(x)))
		}
		if _, err := gradcheck.Check(root, []*tensor.Tensor{t64([]float64{0.7, 3, 11}, 3)}, nil); err != nil {
			t.Fatalf("%v: root: %v", m, err)
		}
	}
}

// Second derivatives through a solution: reverse over reverse
// (gradcheck.CheckSecond records the backward sweep) against central
// differences, and forward over reverse (ad.Hessian) against reverse over
// reverse (ad.HVPReverse).
func TestSecondOrder(t *testing.T) {
	for _, m := range methods {
		o := &implicit.Options{Method: m, Tol: 1e-14, LinearTol: 1e-14}
		f := func(in []*ad.Value) *ad.Value {
			x, err := implicit.FixedPoint(func(x *ad.Value, ps []*ad.Value) *ad.Value {
				return ad.Cos(ad.Mul(ps[0], ad.Mul(x, ps[1])))
			}, tensor.New(tensor.Float64, 3), in, o)
			if err != nil {
				panic(err)
			}
			return ad.Sum(ad.Mul(x, x))
		}
		in := []*tensor.Tensor{t64([]float64{0.8, 0.5, 1.1}, 3), t64([]float64{0.7}, 1)}
		if _, err := gradcheck.CheckSecond(f, in, &gradcheck.Settings{Tol: 1e-5}); err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		// the Hessian in θ alone, forward over reverse, against HVPReverse
		g := func(th *ad.Value) *ad.Value { return f([]*ad.Value{th, ad.Const(in[1])}) }
		h, err := ad.Hessian(g, in[0])
		must(t, err)
		for k := range 3 {
			th := ad.Var(in[0].Clone())
			e := make([]float64, 3)
			e[k] = 1
			hv, err := ad.HVPReverse(g(th), []*ad.Value{th}, []*ad.Value{ad.Const(t64(e, 3))})
			must(t, err)
			col := make([]float64, 3)
			for i := range col {
				col[i] = h.At(i, k)
			}
			near(t, fmt.Sprintf("%v: Hessian column %d", m, k), col, hv[0].Data(), 1e-9)
		}
		// the Root side, on a closed form: d²(θ^(1/3))/dθ² = −2/(9 θ^(5/3))
		r := func(th *ad.Value) *ad.Value {
			x, err := implicit.Root(cube, t64([]float64{1, 1}, 2), []*ad.Value{th}, &implicit.Options{Method: m})
			must(t, err)
			return ad.Sum(x)
		}
		th := []float64{2, 5}
		hr, err := ad.Hessian(r, t64(th, 2))
		must(t, err)
		want := []float64{-2 / (9 * math.Pow(th[0], 5.0/3)), 0, 0, -2 / (9 * math.Pow(th[1], 5.0/3))}
		near(t, fmt.Sprintf("%v: root Hessian", m), hr.Data(), want, 1e-9)
	}
}

func TestFloat32(t *testing.T) {
	th64 := []float64{0.4, 0.9, 1.1}
	grad := func(dt tensor.DType, m implicit.Method) []float64 {
		th := ad.Var(t64(th64, 3).Astype(dt))
		x, err := implicit.FixedPoint(cosMap, tensor.New(dt, 3), []*ad.Value{th}, &implicit.Options{Method: m})
		must(t, err)
		if x.DType() != dt {
			t.Fatalf("solution is %s, want %s", x.DType(), dt)
		}
		g, err := ad.Grad(ad.Sum(x), th)
		must(t, err)
		if g[0].DType() != dt {
			t.Fatalf("gradient is %s, want %s", g[0].DType(), dt)
		}
		return g[0].Data()
	}
	for _, m := range methods {
		near(t, fmt.Sprintf("%v: float32 gradient", m), grad(tensor.Float32, m), grad(tensor.Float64, m), 1e-4)
	}
}

// A parameter that f does not read gets a zero gradient, and one of
// another dtype gets a gradient of its own dtype.
func TestParamsUnusedAndMixed(t *testing.T) {
	th := ad.Var(t64([]float64{0.5, 0.7}, 2))
	unused := ad.Var(t64([]float64{1, 2, 3}, 3))
	x, err := implicit.FixedPoint(cosMap, tensor.New(tensor.Float64, 2), []*ad.Value{th, unused}, nil)
	must(t, err)
	g, err := ad.Grad(ad.Sum(x), th, unused)
	must(t, err)
	near(t, "unused parameter's gradient", g[1].Data(), []float64{0, 0, 0}, 0)

	s32 := ad.Var(tensor.Full(tensor.Float32, 0.5, 2))
	mixed := func(x *ad.Value, ps []*ad.Value) *ad.Value {
		return ad.Cos(ad.Mul(ad.Astype(ps[0], tensor.Float64), x))
	}
	x, err = implicit.FixedPoint(mixed, tensor.New(tensor.Float64, 2), []*ad.Value{s32}, nil)
	must(t, err)
	g, err = ad.Grad(ad.Sum(x), s32)
	must(t, err)
	if g[0].DType() != tensor.Float32 {
		t.Fatalf("float32 parameter got a %s gradient", g[0].DType())
	}
	xs := x.Data()[0]
	s := math.Sin(0.5 * xs)
	near(t, "float32 parameter's gradient", g[0].Data(), []float64{-xs * s / (1 + 0.5*s), -xs * s / (1 + 0.5*s)}, 1e-6)
}

// A solution without parameters is a constant, and Backward through a
// solution accumulates into the parameters like any op.
func TestNoParamsAndBackward(t *testing.T) {
	x, err := implicit.FixedPoint(func(x *ad.Value, _ []*ad.Value) *ad.Value { return ad.Cos(x) }, t64([]float64{1}), nil, nil)
	must(t, err)
	if x.RequiresGrad() {
		t.Fatal("a solution without parameters requires a gradient")
	}
	near(t, "Dottie number", x.Data(), []float64{0.7390851332151607}, 1e-9)

	th := ad.Var(t64([]float64{0.9}, 1))
	y, err := implicit.FixedPoint(cosMap, t64([]float64{0}, 1), []*ad.Value{th}, nil)
	must(t, err)
	must(t, ad.Sum(y).Backward())
	xs := y.Data()[0]
	s := math.Sin(0.9 * xs)
	near(t, "accumulated gradient", th.Grad().Data(), []float64{-xs * s / (1 + 0.9*s)}, 1e-9)
}

func asError(t *testing.T, err error, sentinel error) *implicit.Error {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("err = %v, want one wrapping %v", err, sentinel)
	}
	var e *implicit.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T) is no *implicit.Error", err, err)
	}
	if !errs.Module(err) {
		t.Fatalf("err = %v is not one of the module's errors (ad.Try would not recover it)", err)
	}
	if !strings.Contains(err.Error(), "implicit: "+e.Op+": ") {
		t.Fatalf("%q does not name the op %q", err, e.Op)
	}
	return e
}

func TestMisuse(t *testing.T) {
	th := ad.Var(t64([]float64{0.5}, 1))
	one := t64([]float64{1}, 1)

	t.Run("no convergence", func(t *testing.T) {
		f := func(x *ad.Value, ps []*ad.Value) *ad.Value { return ad.AddScalar(ad.Mul(ps[0], x), 1) }
		_, err := implicit.FixedPoint(f, one, []*ad.Value{ad.Var(t64([]float64{0.999}, 1))}, &implicit.Options{MaxIter: 30})
		e := asError(t, err, implicit.ErrNoConvergence)
		if e.Op != "fixedpoint" || e.Iter != 30 || !(e.Residual > 1e-3) {
			t.Fatalf("error %+v: want op fixedpoint, 30 iterations and the residual", e)
		}
		for _, s := range []string{"fixedpoint", "30 iterations", "Anderson", "Damping", "MaxIter"} {
			if !strings.Contains(err.Error(), s) {
				t.Fatalf("%q does not mention %q", err, s)
			}
		}
	})
	t.Run("divergence", func(t *testing.T) {
		f := func(x *ad.Value, _ []*ad.Value) *ad.Value { return ad.AddScalar(ad.Square(x), 1) }
		var st implicit.Stats
		_, err := implicit.FixedPoint(f, one, nil, &implicit.Options{Stats: &st})
		e := asError(t, err, implicit.ErrNoConvergence)
		if !strings.Contains(err.Error(), "not finite") || e.Iter != st.Iterations || e.Iter >= 1000 {
			t.Fatalf("%v (stats %+v)", err, st)
		}
	})
	t.Run("shape", func(t *testing.T) {
		f := func(x *ad.Value, _ []*ad.Value) *ad.Value { return ad.Sum(x) }
		_, err := implicit.FixedPoint(f, t64([]float64{1, 2}, 2), nil, nil)
		asError(t, err, implicit.ErrShape)
		if !strings.Contains(err.Error(), "shape [] but x has shape [2]") {
			t.Fatal(err)
		}
		F := func(x *ad.Value, _ []*ad.Value) *ad.Value { return ad.Slice(x, 0, 0, 2) }
		_, err = implicit.Root(F, t64([]float64{1, 2, 3}, 3), nil, nil)
		asError(t, err, implicit.ErrShape)
		if !strings.Contains(err.Error(), "as many equations as unknowns") {
			t.Fatal(err)
		}
	})
	t.Run("dtype", func(t *testing.T) {
		f := func(x *ad.Value, _ []*ad.Value) *ad.Value { return ad.Astype(x, tensor.Float32) }
		_, err := implicit.FixedPoint(f, one, nil, nil)
		asError(t, err, implicit.ErrDType)
	})
	t.Run("closure", func(t *testing.T) {
		hidden := ad.Var(t64([]float64{0.5}, 1))
		f := func(x *ad.Value, _ []*ad.Value) *ad.Value { return ad.Cos(ad.Mul(hidden, x)) }
		_, err := implicit.FixedPoint(f, one, []*ad.Value{th}, nil)
		asError(t, err, implicit.ErrClosure)
		// a detached copy is a constant: fine
		d := hidden.Detach()
		_, err = implicit.FixedPoint(func(x *ad.Value, _ []*ad.Value) *ad.Value { return ad.Cos(ad.Mul(d, x)) }, one, nil, nil)
		must(t, err)
	})
	t.Run("error of f", func(t *testing.T) {
		f := func(x *ad.Value, _ []*ad.Value) *ad.Value { return ad.Add(x, ad.Const(t64([]float64{1, 2, 3}, 3))) }
		_, err := implicit.FixedPoint(f, t64([]float64{1, 2}, 2), nil, nil)
		var ae *ad.Error
		if !errors.Is(err, tensor.ErrShape) || !errors.As(err, &ae) {
			t.Fatalf("err = %v (%T), want ad's shape error", err, err)
		}
	})
	t.Run("arguments", func(t *testing.T) {
		for _, c := range []struct {
			name string
			err  error
		}{
			{"nil f", func() error { _, err := implicit.FixedPoint(nil, one, nil, nil); return err }()},
			{"nil F", func() error { _, err := implicit.Root(nil, one, nil, nil); return err }()},
			{"nil x0", func() error { _, err := implicit.FixedPoint(cosMap, nil, []*ad.Value{th}, nil); return err }()},
			{"nil param", func() error { _, err := implicit.FixedPoint(cosMap, one, []*ad.Value{nil}, nil); return err }()},
			{"tolerance", func() error {
				_, err := implicit.FixedPoint(cosMap, one, []*ad.Value{th}, &implicit.Options{Tol: -1})
				return err
			}()},
			{"damping", func() error {
				_, err := implicit.FixedPoint(cosMap, one, []*ad.Value{th}, &implicit.Options{Damping: 1.5})
				return err
			}()},
			{"method", func() error {
				_, err := implicit.Root(cube, one, []*ad.Value{th}, &implicit.Options{Method: 7})
				return err
			}()},
			{"count", func() error {
				_, err := implicit.Root(cube, one, []*ad.Value{th}, &implicit.Options{MaxIter: -1})
				return err
			}()},
		} {
			asError(t, c.err, implicit.ErrArgument)
		}
	})
	t.Run("root without root", func(t *testing.T) {
		F := func(x *ad.Value, _ []*ad.Value) *ad.Value { return ad.AddScalar(ad.Square(x), 1) }
		for _, m := range methods {
			_, err := implicit.Root(F, t64([]float64{0.5, 2}, 2), nil, &implicit.Options{Method: m})
			e := asError(t, err, implicit.ErrNoConvergence)
			if e.Op != "root" || !(e.Residual >= 1) {
				t.Fatalf("%v: %+v", m, e)
			}
		}
	})
	t.Run("root singular iterate", func(t *testing.T) {
		F := func(x *ad.Value, ps []*ad.Value) *ad.Value { return ad.Sub(ad.Square(x), ps[0]) }
		_, err := implicit.Root(F, t64([]float64{0}, 1), []*ad.Value{ad.Var(t64([]float64{4}, 1))}, &implicit.Options{Method: implicit.Dense})
		asError(t, err, implicit.ErrSingular)
		if !strings.Contains(err.Error(), "iterate 0") {
			t.Fatal(err)
		}
	})
	t.Run("singular at the solution", func(t *testing.T) {
		// at θ = 1 every x is a fixed point of x ↦ x + θ − 1: I − ∂f/∂x = 0
		f := func(x *ad.Value, ps []*ad.Value) *ad.Value { return ad.Add(x, ad.AddScalar(ps[0], -1)) }
		for _, c := range []struct {
			m        implicit.Method
			sentinel error
		}{{implicit.Dense, implicit.ErrSingular}, {implicit.MatrixFree, implicit.ErrNoConvergence}} {
			p := ad.Var(t64([]float64{1, 1}, 2))
			x, err := implicit.FixedPoint(f, t64([]float64{3, 4}, 2), []*ad.Value{p}, &implicit.Options{Method: c.m})
			must(t, err)
			_, err = ad.Grad(ad.Sum(x), p)
			asError(t, err, c.sentinel)
			if !errors.Is(err, ad.ErrFunc) {
				t.Fatalf("%v: %v does not wrap ad.ErrFunc", c.m, err)
			}
			if _, _, err := ad.JVP(func(in []*ad.Value) *ad.Value {
				x, err := implicit.FixedPoint(f, t64([]float64{3, 4}, 2), in, &implicit.Options{Method: c.m})
				if err != nil { // the JVP rule runs inside FixedPoint, which returns its error
					panic(err)
				}
				return x
			}, []*tensor.Tensor{t64([]float64{1, 1}, 2)}, []*tensor.Tensor{t64([]float64{1, -1}, 2)}); !errors.Is(err, c.sentinel) {
				t.Fatalf("%v: JVP: err = %v", c.m, err)
			}
		}
	})
	t.Run("third order", func(t *testing.T) {
		p := ad.Var(t64([]float64{0.5, 0.8}, 2))
		x, err := implicit.FixedPoint(cosMap, tensor.New(tensor.Float64, 2), []*ad.Value{p}, nil)
		must(t, err)
		g1, err := ad.GradOpts(ad.Sum(ad.Square(x)), []*ad.Value{p}, ad.Options{CreateGraph: true})
		must(t, err)
		_, err = ad.GradOpts(ad.Sum(ad.Square(g1[0])), []*ad.Value{p}, ad.Options{CreateGraph: true, RetainGraph: true})
		asError(t, err, implicit.ErrOrder) // recording the second sweep serves only a third derivative
		_, err = ad.Grad(ad.Sum(ad.Square(g1[0])), p)
		must(t, err) // the second derivative itself is fine
	})
}

// A larger system, F(x) = x + tanh(W·x) − θ with 300 unknowns: Newton–Krylov
// (GMRES on JVPs) and the matrix-free adjoint agree with the dense path.
func TestRootMatrixFreeMatchesDense(t *testing.T) {
	n := 300
	w := t64(contraction(n, 0.9, 17), n, n)
	th := t64(pseudo(n, 18, -2, 2), n, 1)
	u := ad.Const(t64(pseudo(n, 19, -1, 1), n, 1))
	F := func(x *ad.Value, ps []*ad.Value) *ad.Value {
		return ad.Sub(ad.Add(x, ad.Tanh(ad.MatMul(ps[0], x))), ps[1])
	}
	var xs [2][]float64
	var gs [2][]*ad.Value
	for i, m := range methods {
		W, Th := ad.Var(w.Clone()), ad.Var(th.Clone())
		var st implicit.Stats
		x, err := implicit.Root(F, tensor.New(tensor.Float64, n, 1), []*ad.Value{W, Th}, &implicit.Options{Method: m, Stats: &st})
		must(t, err)
		if st.Iterations > 20 {
			t.Fatalf("%v: %d Newton steps", m, st.Iterations)
		}
		xs[i] = x.Data()
		gs[i], err = ad.Grad(ad.Sum(ad.Mul(x, u)), W, Th)
		must(t, err)
	}
	near(t, "root", xs[1], xs[0], 1e-9)
	near(t, "dL/dW", gs[1][0].Data(), gs[0][0].Data(), 1e-8)
	near(t, "dL/dθ", gs[1][1].Data(), gs[0][1].Data(), 1e-8)
}
