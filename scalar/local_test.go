package scalar

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

// l2Unary holds the L2 form of every case of unaryCases, by name.
var l2Unary = map[string]func(L2) L2{
	"neg": L2.Neg, "square": L2.Square,
	"addc": func(x L2) L2 { return x.AddC(2.5) },
	"subc": func(x L2) L2 { return x.SubC(2.5) },
	"mulc": func(x L2) L2 { return x.MulC(-3) },
	"divc": func(x L2) L2 { return x.DivC(4) },
	"sin":  L2.Sin, "cos": L2.Cos, "tan": L2.Tan, "asin": L2.Asin, "acos": L2.Acos, "atan": L2.Atan,
	"sinh": L2.Sinh, "cosh": L2.Cosh, "tanh": L2.Tanh, "exp": L2.Exp, "expm1": L2.Expm1,
	"log": L2.Log, "log1p": L2.Log1p, "log2": L2.Log2, "log10": L2.Log10, "sqrt": L2.Sqrt,
	"cbrt": L2.Cbrt, "abs": L2.Abs, "sigmoid": L2.Sigmoid, "softplus": L2.Softplus, "erf": L2.Erf,
	"powc 2.5":    func(x L2) L2 { return x.PowC(2.5) },
	"powc -1.5":   func(x L2) L2 { return x.PowC(-1.5) },
	"powc 3":      func(x L2) L2 { return x.PowC(3) },
	"powc 2":      func(x L2) L2 { return x.PowC(2) },
	"powc 1":      func(x L2) L2 { return x.PowC(1) },
	"powc 0":      func(x L2) L2 { return x.PowC(0) },
	"const^x":     func(x L2) L2 { return L2{V: 2.5}.Pow(x) },
	"x-x*x chain": func(x L2) L2 { return x.Sub(x.Mul(x)) },
	"x/x":         func(x L2) L2 { return x.Div(x) },
	"const-x":     func(x L2) L2 { return x.RSubC(1) },
	"const/x":     func(x L2) L2 { return L2{V: 3}.Div(x) },
}

var l2Binary = map[string]func(L2, L2) L2{
	"add": L2.Add, "sub": L2.Sub, "mul": L2.Mul, "div": L2.Div, "pow": L2.Pow,
	"atan2": L2.Atan2, "hypot": L2.Hypot, "min": L2.Min, "max": L2.Max,
}

// fn2Grad returns the value and gradient of Fn2(x, y, f) and of g written
// with Var operations, each on its own tape.
func fn2Grad(f func(a, b L2) L2, g func(a, b Var) Var, x, y float64) (v, gx, gy, w, wx, wy float64) {
	var t, u Tape
	xv, yv := t.Var(x), t.Var(y)
	z := Fn2(xv, yv, f)
	t.Backward(z)
	xu, yu := u.Var(x), u.Var(y)
	zu := g(xu, yu)
	u.Backward(zu)
	return z.Value(), t.Adjoint(xv), t.Adjoint(yv), zu.Value(), u.Adjoint(xu), u.Adjoint(yu)
}

func TestL2Unary(t *testing.T) {
	for _, c := range unaryCases {
		fl := l2Unary[c.name]
		if fl == nil {
			t.Fatalf("no L2 form of %s", c.name)
		}
		for _, x := range c.points {
			for _, y := range []float64{1, -0.75} {
				// f(x)·y + y², so that both partials are non-trivial.
				v, gx, gy, w, wx, wy := fn2Grad(
					func(a, b L2) L2 { return fl(a).Mul(b).Add(b.Square()) },
					func(a, b Var) Var { return c.v(a).Mul(b).Add(b.Square()) }, x, y)
				name := fmt.Sprintf("%s(%g)·%g", c.name, x, y)
				if !close(v, w, 1e-15) || !close(gx, wx, 1e-12) || !close(gy, wy, 1e-12) {
					t.Errorf("%s: Fn2 (%g; %g, %g), Var tape (%g; %g, %g)", name, v, gx, gy, w, wx, wy)
				}
				fdx := y * central(c.f, x, step(x))
				fdy := c.f(x) + 2*y
				if !close(gx, fdx, 1e-6) || !close(gy, fdy, 1e-6) {
					t.Errorf("%s: Fn2 (%g, %g), central differences (%g, %g)", name, gx, gy, fdx, fdy)
				}
			}
		}
	}
}

func TestL2Binary(t *testing.T) {
	for _, c := range binaryCases {
		fl := l2Binary[c.name]
		for _, p := range c.points {
			x, y := p[0], p[1]
			name := fmt.Sprintf("%s(%g, %g)", c.name, x, y)
			v, gx, gy, w, wx, wy := fn2Grad(func(a, b L2) L2 { return fl(a, b) }, c.v, x, y)
			if !close(v, w, 1e-15) || !close(gx, wx, 1e-12) || !close(gy, wy, 1e-12) {
				t.Errorf("%s: Fn2 (%g; %g, %g), Var tape (%g; %g, %g)", name, v, gx, gy, w, wx, wy)
			}
			fdx := central(func(x float64) float64 { return c.f(x, y) }, x, step(x))
			fdy := central(func(y float64) float64 { return c.f(x, y) }, y, step(y))
			if !close(gx, fdx, 1e-6) || !close(gy, fdy, 1e-6) {
				t.Errorf("%s: Fn2 (%g, %g), central differences (%g, %g)", name, gx, gy, fdx, fdy)
			}
			// Swapped operands through the same node.
			v, gx, gy, w, wx, wy = fn2Grad(func(a, b L2) L2 { return fl(b, a) }, func(a, b Var) Var { return c.v(b, a) }, x, y)
			if !close(v, w, 1e-15) || !close(gx, wx, 1e-12) || !close(gy, wy, 1e-12) {
				t.Errorf("%s swapped: Fn2 (%g; %g, %g), Var tape (%g; %g, %g)", name, v, gx, gy, w, wx, wy)
			}
		}
	}
}

// Fn2 with a constant operand records a one-parent node; with two constants
// it records nothing; with the same variable twice both partials add up.
func TestFn2Operands(t *testing.T) {
	f := func(a, b L2) L2 { return a.Mul(b).Sin() }
	var tp Tape
	x := tp.Var(0.3)
	n := tp.Len()
	z := Fn2(x, Const(2), f)
	if tp.Len() != n+1 || !close(z.Value(), math.Sin(0.6), 1e-15) {
		t.Errorf("Fn2 with a constant: %d nodes, value %g", tp.Len()-n, z.Value())
	}
	tp.Backward(z)
	if g := tp.Adjoint(x); !close(g, 2*math.Cos(0.6), 1e-15) {
		t.Errorf("∂/∂x = %g", g)
	}
	z = Fn2(Const(2), x, f)
	tp.Backward(z)
	if g := tp.Adjoint(x); !close(g, 2*math.Cos(0.6), 1e-15) {
		t.Errorf("constant first: ∂/∂x = %g", g)
	}
	if z := Fn2(Const(1), Const(2), f); !z.IsConst() || z.Value() != math.Sin(2) {
		t.Errorf("Fn2 of constants = %v", z)
	}
	z = Fn2(x, x, f) // sin(x²)
	tp.Backward(z)
	if g := tp.Adjoint(x); !close(g, 2*0.3*math.Cos(0.09), 1e-15) {
		t.Errorf("Fn2(x, x): ∂/∂x = %g", g)
	}
	// A zero partial stays zero where the local derivative is infinite.
	y := tp.Var(0)
	z = Fn2(x, y, func(a, b L2) L2 { return a.Add(b.MulC(0).Sqrt()) })
	tp.Backward(z)
	if gx, gy := tp.Adjoint(x), tp.Adjoint(y); gx != 1 || gy != 0 {
		t.Errorf("x + √(0·y): gradient (%g, %g), want (1, 0)", gx, gy)
	}
}

func TestFn2Errors(t *testing.T) {
	f := func(a, b L2) L2 { return a.Mul(b) }
	expect := func(name, op string, fn func()) {
		t.Helper()
		defer func() {
			var e *Error
			r := recover()
			if err, ok := r.(error); !ok || !errors.As(err, &e) || e.Op != op {
				t.Errorf("%s: panic %v, want *Error from %s", name, r, op)
			}
		}()
		fn()
	}
	var a, b Tape
	expect("two tapes", "fn", func() { Fn2(a.Var(1), b.Var(2), f) })
	b.ResetTangent()
	expect("tangent mode", "fn2", func() { b.Backward(Fn2(b.Var(1), b.Var(2), f)) })
	b.ResetTangent()
	expect("tangent mode, later op", "fn2", func() { Fn2(b.Var(1), b.Var(2), f).Sin() })
	b.ResetTangent()
	expect("HessVec", "fn2", func() {
		HessVec(nil, func(x []Var) Var { return Fn2(x[0], x[1], f) }, []float64{1, 2}, []float64{1, 0})
	})
}

// Rosenbrock's gradient through Fn2 and Sum equals the op-by-op tape's.
func TestRosenbrockPreacc(t *testing.T) {
	x := startPoint(1000)
	for i := range x {
		x[i] += 0.01 * float64(i%7)
	}
	var t1, t2 Tape
	v1 := t1.Vars(nil, x)
	y1 := rosenbrock(v1)
	g1 := t1.Gradient(nil, y1, v1)
	v2 := t2.Vars(nil, x)
	y2 := rosenbrockPreacc(v2, nil)
	g2 := t2.Gradient(nil, y2, v2)
	var t4 Tape
	v4 := t4.Vars(nil, x)
	y4 := rosenbrockSeed(v4, nil)
	g4 := t4.Gradient(nil, y4, v4)
	for i := range g1 {
		if g4[i] != g2[i] {
			t.Fatalf("Seed2/Record2: ∂/∂x[%d] = %g, want %g", i, g4[i], g2[i])
		}
	}
	if !close(y2.Value(), y1.Value(), 1e-12) {
		t.Errorf("value %g, want %g", y2.Value(), y1.Value())
	}
	for i := range g1 {
		if !close(g2[i], g1[i], 1e-12) {
			t.Fatalf("∂/∂x[%d] = %g, want %g", i, g2[i], g1[i])
		}
	}
	if want := len(x) + len(x)/2 + 1; t2.Len() != want {
		t.Errorf("preaccumulated tape has %d nodes, want %d", t2.Len(), want)
	}
	var t3 Tape
	v3 := t3.Vars(nil, x)
	y3 := rosenbrockRegion(v3, nil)
	g3 := t3.Gradient(nil, y3, v3)
	if !close(y3.Value(), y1.Value(), 1e-12) {
		t.Errorf("region: value %g, want %g", y3.Value(), y1.Value())
	}
	for i := range g1 {
		if !close(g3[i], g1[i], 1e-12) {
			t.Fatalf("region: ∂/∂x[%d] = %g, want %g", i, g3[i], g1[i])
		}
	}
	if want := len(x) + len(x)/2 + 1; t3.Len() != want {
		t.Errorf("region tape has %d nodes, want %d", t3.Len(), want)
	}
}

// l4Unary and l4Binary are l2Unary and l2Binary for L4.
var l4Unary = map[string]func(L4) L4{
	"neg": L4.Neg, "square": L4.Square,
	"addc": func(x L4) L4 { return x.AddC(2.5) },
	"subc": func(x L4) L4 { return x.SubC(2.5) },
	"mulc": func(x L4) L4 { return x.MulC(-3) },
	"divc": func(x L4) L4 { return x.DivC(4) },
	"sin":  L4.Sin, "cos": L4.Cos, "tan": L4.Tan, "asin": L4.Asin, "acos": L4.Acos, "atan": L4.Atan,
	"sinh": L4.Sinh, "cosh": L4.Cosh, "tanh": L4.Tanh, "exp": L4.Exp, "expm1": L4.Expm1,
	"log": L4.Log, "log1p": L4.Log1p, "log2": L4.Log2, "log10": L4.Log10, "sqrt": L4.Sqrt,
	"cbrt": L4.Cbrt, "abs": L4.Abs, "sigmoid": L4.Sigmoid, "softplus": L4.Softplus, "erf": L4.Erf,
	"powc 2.5":    func(x L4) L4 { return x.PowC(2.5) },
	"powc -1.5":   func(x L4) L4 { return x.PowC(-1.5) },
	"powc 3":      func(x L4) L4 { return x.PowC(3) },
	"powc 2":      func(x L4) L4 { return x.PowC(2) },
	"powc 1":      func(x L4) L4 { return x.PowC(1) },
	"powc 0":      func(x L4) L4 { return x.PowC(0) },
	"const^x":     func(x L4) L4 { return L4{V: 2.5}.Pow(x) },
	"x-x*x chain": func(x L4) L4 { return x.Sub(x.Mul(x)) },
	"x/x":         func(x L4) L4 { return x.Div(x) },
	"const-x":     func(x L4) L4 { return x.RSubC(1) },
	"const/x":     func(x L4) L4 { return L4{V: 3}.Div(x) },
}

var l4Binary = map[string]func(L4, L4) L4{
	"add": L4.Add, "sub": L4.Sub, "mul": L4.Mul, "div": L4.Div, "pow": L4.Pow,
	"atan2": L4.Atan2, "hypot": L4.Hypot, "min": L4.Min, "max": L4.Max,
}

// fnGrad returns the value and gradient of a preaccumulated node rec over
// the variables x and of g written with Var operations.
func fnGrad(rec func(xs []Var) Var, g func(xs []Var) Var, x []float64) (v float64, gr []float64, w float64, wr []float64) {
	var t, u Tape
	xs := t.Vars(nil, x)
	z := rec(xs)
	gr = t.Gradient(nil, z, xs)
	us := u.Vars(nil, x)
	zu := g(us)
	wr = u.Gradient(nil, zu, us)
	return z.Value(), gr, zu.Value(), wr
}

func TestL4(t *testing.T) {
	check := func(name string, x []float64, rec, g func([]Var) Var, f func([]float64) float64) {
		t.Helper()
		v, gr, w, wr := fnGrad(rec, g, x)
		if !close(v, w, 1e-15) {
			t.Errorf("%s: value %g, Var tape %g", name, v, w)
		}
		for j := range x {
			if !close(gr[j], wr[j], 1e-12) {
				t.Errorf("%s: ∂/∂x%d = %g, Var tape %g", name, j, gr[j], wr[j])
			}
			xj := x[j]
			fd := central(func(s float64) float64 {
				y := append([]float64(nil), x...)
				y[j] = s
				return f(y)
			}, xj, step(xj))
			if !close(gr[j], fd, 1e-6) {
				t.Errorf("%s: ∂/∂x%d = %g, central difference %g", name, j, gr[j], fd)
			}
		}
	}
	for _, c := range unaryCases {
		fl := l4Unary[c.name]
		if fl == nil {
			t.Fatalf("no L4 form of %s", c.name)
		}
		for _, x := range c.points {
			// f(a)·b + c·d over four variables.
			p := []float64{x, 0.8, -1.5, 2.5}
			check(c.name+" fn4", p,
				func(v []Var) Var {
					return Fn4(v[0], v[1], v[2], v[3], func(a, b, c, d L4) L4 { return fl(a).Mul(b).Add(c.Mul(d)) })
				},
				func(v []Var) Var { return c.v(v[0]).Mul(v[1]).Add(v[2].Mul(v[3])) },
				func(p []float64) float64 { return c.f(p[0])*p[1] + p[2]*p[3] })
		}
	}
	for _, c := range binaryCases {
		fl := l4Binary[c.name]
		for _, q := range c.points {
			// f(a, b)·c over three variables.
			p := []float64{q[0], q[1], -1.25}
			check(c.name+" fn3", p,
				func(v []Var) Var {
					return Fn3(v[0], v[1], v[2], func(a, b, c L4) L4 { return fl(a, b).Mul(c) })
				},
				func(v []Var) Var { return c.v(v[0], v[1]).Mul(v[2]) },
				func(p []float64) float64 { return c.f(p[0], p[1]) * p[2] })
		}
	}
}

// Fn3 and Fn4 skip constant operands and record nothing for all constants.
func TestFnNOperands(t *testing.T) {
	var tp Tape
	x, y := tp.Var(2), tp.Var(3)
	n := tp.Len()
	f := func(a, b, c L4) L4 { return a.Mul(b).Mul(c) }
	z := Fn3(x, Const(5), y, f)
	if tp.Len() != n+1 || z.Value() != 30 {
		t.Fatalf("Fn3 with a constant: %d nodes, value %g", tp.Len()-n, z.Value())
	}
	tp.Backward(z)
	if gx, gy := tp.Adjoint(x), tp.Adjoint(y); gx != 15 || gy != 10 {
		t.Errorf("gradient (%g, %g), want (15, 10)", gx, gy)
	}
	if z := Fn3(Const(1), Const(2), Const(3), f); !z.IsConst() || z.Value() != 6 {
		t.Errorf("Fn3 of constants = %v", z)
	}
	z = Fn4(x, x, y, x, func(a, b, c, d L4) L4 { return a.Mul(b).Mul(c).Add(d) }) // x²y + x
	tp.Backward(z)
	if gx, gy := tp.Adjoint(x), tp.Adjoint(y); gx != 13 || gy != 4 {
		t.Errorf("Fn4(x, x, y, x): gradient (%g, %g), want (13, 4)", gx, gy)
	}
	var u Tape
	u.ResetTangent()
	func() {
		defer func() {
			if e, ok := recover().(*Error); !ok || e.Op != "fn3" {
				t.Errorf("Fn3 in tangent mode: panic %v, want *Error from fn3", e)
			}
		}()
		Fn3(u.Var(1), u.Var(2), u.Var(3), f)
	}()
}

func TestRegion(t *testing.T) {
	// f(x, y, z) = x·y·sin(z) + Σ(x, y, z)·x, collapsed into one node with
	// three parents, against the op-by-op tape.
	f := func(v []Var) Var {
		return v[0].Mul(v[1]).Mul(v[2].Sin()).Add(Sum(v).Mul(v[0]))
	}
	x := []float64{0.7, -1.3, 2.1}
	var tp, tq Tape
	vs := tp.Vars(nil, x)
	m := tp.Begin()
	z := tp.End(m, f(vs))
	if tp.Len() != 4 {
		t.Errorf("region left %d nodes, want 4", tp.Len())
	}
	g := tp.Gradient(nil, z, vs)
	ws := tq.Vars(nil, x)
	w := f(ws)
	h := tq.Gradient(nil, w, ws)
	if !close(z.Value(), w.Value(), 1e-15) {
		t.Errorf("value %g, want %g", z.Value(), w.Value())
	}
	for j := range g {
		if !close(g[j], h[j], 1e-14) {
			t.Errorf("∂/∂x%d = %g, want %g", j, g[j], h[j])
		}
	}

	// Nested regions, a constant operand, a one-parent result.
	tp.Reset()
	a, b := tp.Var(2), tp.Var(3)
	outer := tp.Begin()
	inner := tp.Begin()
	u := tp.End(inner, a.Mul(Const(4)).Exp().Log()) // 4a
	v := tp.End(outer, u.Mul(b).Add(b))             // 4ab + b
	if tp.Len() != 3 {
		t.Errorf("nested regions left %d nodes, want 3", tp.Len())
	}
	tp.Backward(v)
	if ga, gb := tp.Adjoint(a), tp.Adjoint(b); !close(ga, 12, 1e-14) || !close(gb, 9, 1e-14) {
		t.Errorf("nested: gradient (%g, %g), want (12, 9)", ga, gb)
	}
	u = tp.End(tp.Begin(), a.Sin())
	tp.Backward(u)
	if ga := tp.Adjoint(a); !close(ga, math.Cos(2), 1e-15) {
		t.Errorf("one parent: %g", ga)
	}
	// A constant result drops the region; a result from before the region
	// keeps it; an independent variable in the region keeps it.
	n := tp.Len()
	m = tp.Begin()
	_ = a.Mul(b)
	if c := tp.End(m, Const(5)); !c.IsConst() || tp.Len() != n {
		t.Errorf("constant result: %v, %d nodes (want %d)", c, tp.Len(), n)
	}
	m = tp.Begin()
	_ = a.Mul(b)
	if c := tp.End(m, a); c != a || tp.Len() != n+1 {
		t.Errorf("result before the region: %v, %d nodes", c, tp.Len())
	}
	m = tp.Begin()
	c := tp.Var(1)
	d := tp.End(m, c.Mul(a))
	if tp.Len() != n+3 {
		t.Errorf("variable in the region: %d nodes, want %d", tp.Len(), n+3)
	}
	tp.Backward(d)
	if gc := tp.Adjoint(c); gc != 2 {
		t.Errorf("variable in the region: ∂/∂c = %g", gc)
	}
}

// In tangent mode End keeps the region, so Hessians through it are exact.
func TestRegionHessian(t *testing.T) {
	f := func(x []Var) Var {
		tp := x[0].Tape()
		terms := make([]Var, 0, len(x)/2)
		for i := 0; i+1 < len(x); i += 2 {
			m := tp.Begin()
			a := x[i+1].Sub(x[i].Square())
			c := Const(1).Sub(x[i])
			terms = append(terms, tp.End(m, a.Square().MulC(100).Add(c.Square())))
		}
		return Sum(terms)
	}
	x := []float64{-1.2, 1, 0.5, 0.3}
	h := Hessian(nil, f, x)
	for i := 0; i < 4; i += 2 {
		// Closed form of one Rosenbrock term's Hessian.
		hxx := 1200*x[i]*x[i] - 400*x[i+1] + 2
		hxy := -400 * x[i]
		if !close(h.At(i, i), hxx, 1e-12) || !close(h.At(i, i+1), hxy, 1e-12) || !close(h.At(i+1, i+1), 200, 1e-12) {
			t.Errorf("Hessian block %d: %g %g %g, want %g %g 200", i, h.At(i, i), h.At(i, i+1), h.At(i+1, i+1), hxx, hxy)
		}
	}
	if h.At(0, 2) != 0 {
		t.Errorf("H[0,2] = %g", h.At(0, 2))
	}
	o := Objective{F: f}
	if v, want := o.Func(x), rosenbrockPlain(x); !close(v, want, 1e-14) {
		t.Errorf("Objective.Func through regions = %g, want %g", v, want)
	}
	g, _ := Gradient(nil, f, x)
	if want := -400*x[0]*(x[1]-x[0]*x[0]) - 2*(1-x[0]); !close(g[0], want, 1e-12) {
		t.Errorf("gradient %g, want %g", g[0], want)
	}
}

func TestRegionErrors(t *testing.T) {
	expect := func(name string, fn func()) {
		t.Helper()
		defer func() {
			if e, ok := recover().(*Error); !ok || e.Op != "end" {
				t.Errorf("%s: panic %v, want *Error from end", name, e)
			}
		}()
		fn()
	}
	var a, b Tape
	x := a.Var(1)
	m := b.Begin()
	expect("another tape", func() { b.End(m, x) })
	expect("bad mark", func() { a.End(Mark{n: 99}, x) })
	// An operation on a variable from before Reset.
	a.Reset()
	y := a.Var(2)
	z := a.Var(3)
	_ = z
	stale := Var{t: &a, v: 1, i: 2}
	m = a.Begin()
	w := stale.Mul(y) // refers to node 2 ≤ the region start
	_ = w
	a.nodes[len(a.nodes)-1].p1 = int32(len(a.nodes)) // a parent after the node
	expect("stale", func() { a.End(m, w) })
}

// Vars records a run of variables whose nodes the sweep skips; outputs
// between and inside runs work as before.
func TestVarRuns(t *testing.T) {
	var tp Tape
	a := tp.Vars(nil, []float64{1, 2, 3})
	p := a[0].Mul(a[2]) // 3
	b := tp.Vars(nil, []float64{4, 5})
	c := tp.Var(6)
	q := p.Mul(b[1]).Add(c).Add(a[1].Square()) // 3·5 + 6 + 4
	g := tp.Gradient(nil, q, []Var{a[0], a[1], a[2], b[0], b[1], c})
	want := []float64{15, 4, 5, 0, 3, 1}
	for j := range g {
		if g[j] != want[j] {
			t.Errorf("∂q/∂v%d = %g, want %g", j, g[j], want[j])
		}
	}
	tp.Backward(b[0]) // a variable inside a run
	if d0, d1 := tp.Adjoint(b[0]), tp.Adjoint(a[0]); d0 != 1 || d1 != 0 {
		t.Errorf("Backward(b[0]): %g, %g", d0, d1)
	}
	tp.Backward(p)
	if d := tp.Adjoint(a[0]); d != 3 {
		t.Errorf("Backward(p): ∂p/∂a0 = %g", d)
	}
	if d := tp.Adjoint(b[1]); d != 0 {
		t.Errorf("Backward(p): ∂p/∂b1 = %g (recorded after p)", d)
	}
	// A region holding a run is kept as recorded.
	m := tp.Begin()
	r := tp.Vars(nil, []float64{7, 8})
	s := tp.End(m, r[0].Mul(r[1]).Mul(a[0]))
	tp.Backward(s)
	if d, e := tp.Adjoint(r[1]), tp.Adjoint(a[0]); d != 7 || e != 56 {
		t.Errorf("region with a run: %g, %g", d, e)
	}
}

// Operations on variables from before Reset are caught by the sweep in every
// node kind: two parents, side arrays, a range of consecutive parents, and
// in tangent mode.
func TestStaleKinds(t *testing.T) {
	expect := func(name string, fn func()) {
		t.Helper()
		defer func() {
			if e, ok := recover().(*Error); !ok || e.Op != "backward" {
				t.Errorf("%s: panic %v, want *Error from backward", name, e)
			}
		}()
		fn()
	}
	var c Tape
	old := c.Vars(nil, make([]float64, 8))
	c.Reset()
	u := c.Var(1)
	expect("record2", func() { c.Backward(Record2(u, old[6], L2{V: 1, D0: 1, D1: 1})) })
	c.Reset()
	u = c.Var(1)
	expect("sum with side arrays", func() { c.Backward(Sum([]Var{u, old[7], u})) })
	c.Reset()
	u = c.Var(1)
	expect("range sum", func() { c.Backward(Sum(old[5:8])) })
	c.Reset()
	u = c.Var(1)
	expect("dotc", func() { c.Backward(DotC([]Var{u, old[7]}, []float64{1, 2})) })
	c.ResetTangent()
	u = c.VarTangent(1, 1)
	expect("tangent mode", func() { c.Backward(u.Mul(old[7])) })
}

// DotC and Sum over consecutive variables record range nodes; in any order
// or inside a region they agree with the general form.
func TestRangeReductions(t *testing.T) {
	x := []float64{0.5, -1, 2, 3, -0.25}
	c := []float64{2, 3, -1, 0.5, 4}
	f := func(v []Var) Var {
		// DotC over consecutive variables (a range), over a permutation
		// (general), a range Sum and a general Sum.
		rev := []Var{v[4], v[3], v[2], v[1], v[0]}
		a := DotC(v, c)
		b := DotC(rev, c)
		return Sum([]Var{a.Mul(b), Sum(v), Sum(rev).Square()})
	}
	var tp, tq Tape
	vs := tp.Vars(nil, x)
	g := tp.Gradient(nil, f(vs), vs)
	ws := tq.Vars(nil, x)
	m := tq.Begin()
	y := tq.End(m, f(ws))
	h := tq.Gradient(nil, y, ws)
	// By hand: a = c·x, b = c·rev(x), s = Σx.
	var a, b, s float64
	for j := range x {
		a += c[j] * x[j]
		b += c[j] * x[4-j]
		s += x[j]
	}
	for j := range x {
		want := c[j]*b + a*c[4-j] + 1 + 2*s
		if !close(g[j], want, 1e-14) || !close(h[j], want, 1e-14) {
			t.Errorf("∂/∂x%d: %g, region %g, want %g", j, g[j], h[j], want)
		}
	}
	if tq.Len() != len(x)+1 {
		t.Errorf("region left %d nodes", tq.Len())
	}
}
