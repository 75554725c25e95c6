package scalar

import (
	"fmt"
	"math"
	"testing"
)

// l2Unary holds the Local2 form of every case of unaryCases, by name.
var l2Unary = map[string]func(Local2) Local2{
	"neg": Local2.Neg, "square": Local2.Square,
	"addc": func(x Local2) Local2 { return x.AddC(2.5) },
	"subc": func(x Local2) Local2 { return x.SubC(2.5) },
	"mulc": func(x Local2) Local2 { return x.MulC(-3) },
	"divc": func(x Local2) Local2 { return x.DivC(4) },
	"sin":  Local2.Sin, "cos": Local2.Cos, "tan": Local2.Tan, "asin": Local2.Asin, "acos": Local2.Acos, "atan": Local2.Atan,
	"sinh": Local2.Sinh, "cosh": Local2.Cosh, "tanh": Local2.Tanh, "exp": Local2.Exp, "expm1": Local2.Expm1,
	"log": Local2.Log, "log1p": Local2.Log1p, "log2": Local2.Log2, "log10": Local2.Log10, "sqrt": Local2.Sqrt,
	"cbrt": Local2.Cbrt, "abs": Local2.Abs, "sigmoid": Local2.Sigmoid, "softplus": Local2.Softplus, "erf": Local2.Erf,
	"powc 2.5":    func(x Local2) Local2 { return x.PowC(2.5) },
	"powc -1.5":   func(x Local2) Local2 { return x.PowC(-1.5) },
	"powc 3":      func(x Local2) Local2 { return x.PowC(3) },
	"powc 2":      func(x Local2) Local2 { return x.PowC(2) },
	"powc 1":      func(x Local2) Local2 { return x.PowC(1) },
	"powc 0":      func(x Local2) Local2 { return x.PowC(0) },
	"const^x":     func(x Local2) Local2 { return Local2{V: 2.5}.Pow(x) },
	"x-x*x chain": func(x Local2) Local2 { return x.Sub(x.Mul(x)) },
	"x/x":         func(x Local2) Local2 { return x.Div(x) },
	"const-x":     func(x Local2) Local2 { return x.RSubC(1) },
	"const/x":     func(x Local2) Local2 { return Local2{V: 3}.Div(x) },
}

var l2Binary = map[string]func(Local2, Local2) Local2{
	"add": Local2.Add, "sub": Local2.Sub, "mul": Local2.Mul, "div": Local2.Div, "pow": Local2.Pow,
	"atan2": Local2.Atan2, "hypot": Local2.Hypot, "min": Local2.Min, "max": Local2.Max,
}

// fn2 records f(x, y) by Preacc2 and Record.
func fn2(x, y Var, f func(a, b Local2) Local2) Var {
	e, a, b := Preacc2(x, y)
	return e.Record(f(a, b))
}

// fn3 and fn4 record f by Preacc3 and Preacc4 (Local3 has three partials;
// the tests use Local4 throughout and widen).
func fn3(x, y, z Var, f func(a, b, c Local4) Local4) Var {
	e, a, b, c := Preacc3(x, y, z)
	w := func(l Local3) Local4 { return Local4{V: l.V, D0: l.D0, D1: l.D1, D2: l.D2} }
	r := f(w(a), w(b), w(c))
	return e.Record(Local3{V: r.V, D0: r.D0, D1: r.D1, D2: r.D2})
}

func fn4(w, x, y, z Var, f func(a, b, c, d Local4) Local4) Var {
	e, a, b, c, d := Preacc4(w, x, y, z)
	return e.Record(f(a, b, c, d))
}

// fn2Grad returns the value and gradient of fn2(x, y, f) and of g written
// with Var operations, each on its own tape.
func fn2Grad(f func(a, b Local2) Local2, g func(a, b Var) Var, x, y float64) (v, gx, gy, w, wx, wy float64) {
	var t, u Tape
	xv, yv := t.Var(x), t.Var(y)
	z := fn2(xv, yv, f)
	t.Backward(z)
	xu, yu := u.Var(x), u.Var(y)
	zu := g(xu, yu)
	u.Backward(zu)
	return z.Value(), t.Adjoint(xv), t.Adjoint(yv), zu.Value(), u.Adjoint(xu), u.Adjoint(yu)
}

func TestLocal2Unary(t *testing.T) {
	for _, c := range unaryCases {
		fl := l2Unary[c.name]
		if fl == nil {
			t.Fatalf("no Local2 form of %s", c.name)
		}
		for _, x := range c.points {
			for _, y := range []float64{1, -0.75} {
				// f(x)·y + y², so that both partials are non-trivial.
				v, gx, gy, w, wx, wy := fn2Grad(
					func(a, b Local2) Local2 { return fl(a).Mul(b).Add(b.Square()) },
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

func TestLocal2Binary(t *testing.T) {
	for _, c := range binaryCases {
		fl := l2Binary[c.name]
		for _, p := range c.points {
			x, y := p[0], p[1]
			name := fmt.Sprintf("%s(%g, %g)", c.name, x, y)
			v, gx, gy, w, wx, wy := fn2Grad(func(a, b Local2) Local2 { return fl(a, b) }, c.v, x, y)
			if !close(v, w, 1e-15) || !close(gx, wx, 1e-12) || !close(gy, wy, 1e-12) {
				t.Errorf("%s: Fn2 (%g; %g, %g), Var tape (%g; %g, %g)", name, v, gx, gy, w, wx, wy)
			}
			fdx := central(func(x float64) float64 { return c.f(x, y) }, x, step(x))
			fdy := central(func(y float64) float64 { return c.f(x, y) }, y, step(y))
			if !close(gx, fdx, 1e-6) || !close(gy, fdy, 1e-6) {
				t.Errorf("%s: Fn2 (%g, %g), central differences (%g, %g)", name, gx, gy, fdx, fdy)
			}
			// Swapped operands through the same node.
			v, gx, gy, w, wx, wy = fn2Grad(func(a, b Local2) Local2 { return fl(b, a) }, func(a, b Var) Var { return c.v(b, a) }, x, y)
			if !close(v, w, 1e-15) || !close(gx, wx, 1e-12) || !close(gy, wy, 1e-12) {
				t.Errorf("%s swapped: Fn2 (%g; %g, %g), Var tape (%g; %g, %g)", name, v, gx, gy, w, wx, wy)
			}
		}
	}
}

// Fn2 with a constant operand records a one-parent node; with two constants
// it records nothing; with the same variable twice both partials add up.
func TestFn2Operands(t *testing.T) {
	f := func(a, b Local2) Local2 { return a.Mul(b).Sin() }
	var tp Tape
	x := tp.Var(0.3)
	n := tp.Len()
	z := fn2(x, Const(2), f)
	if tp.Len() != n+1 || !close(z.Value(), math.Sin(0.6), 1e-15) {
		t.Errorf("Fn2 with a constant: %d nodes, value %g", tp.Len()-n, z.Value())
	}
	tp.Backward(z)
	if g := tp.Adjoint(x); !close(g, 2*math.Cos(0.6), 1e-15) {
		t.Errorf("∂/∂x = %g", g)
	}
	z = fn2(Const(2), x, f)
	tp.Backward(z)
	if g := tp.Adjoint(x); !close(g, 2*math.Cos(0.6), 1e-15) {
		t.Errorf("constant first: ∂/∂x = %g", g)
	}
	if z := fn2(Const(1), Const(2), f); !z.IsConst() || z.Value() != math.Sin(2) {
		t.Errorf("Fn2 of constants = %v", z)
	}
	z = fn2(x, x, f) // sin(x²)
	tp.Backward(z)
	if g := tp.Adjoint(x); !close(g, 2*0.3*math.Cos(0.09), 1e-15) {
		t.Errorf("fn2(x, x): ∂/∂x = %g", g)
	}
	// A zero partial stays zero where the local derivative is infinite.
	y := tp.Var(0)
	z = fn2(x, y, func(a, b Local2) Local2 { return a.Add(b.MulC(0).Sqrt()) })
	tp.Backward(z)
	if gx, gy := tp.Adjoint(x), tp.Adjoint(y); gx != 1 || gy != 0 {
		t.Errorf("x + √(0·y): gradient (%g, %g), want (1, 0)", gx, gy)
	}
}

// Rosenbrock's gradient through Fn2 and Sum equals the op-by-op tape's.
func TestRosenbrockPreacc(t *testing.T) {
	x := startPoint(1000)
	for i := range x {
		x[i] += 0.01 * float64(i%7)
	}
	var t1, t2 Tape
	v1 := t1.Inputs(x).Vars(nil)
	y1 := rosenbrock(v1)
	g1 := gradOf(&t1, nil, y1, v1)
	v2 := t2.Inputs(x).Vars(nil)
	y2 := rosenbrockPreacc(v2, nil)
	g2 := gradOf(&t2, nil, y2, v2)
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
}

// l4Unary and l4Binary are l2Unary and l2Binary for Local4.
var l4Unary = map[string]func(Local4) Local4{
	"neg": Local4.Neg, "square": Local4.Square,
	"addc": func(x Local4) Local4 { return x.AddC(2.5) },
	"subc": func(x Local4) Local4 { return x.SubC(2.5) },
	"mulc": func(x Local4) Local4 { return x.MulC(-3) },
	"divc": func(x Local4) Local4 { return x.DivC(4) },
	"sin":  Local4.Sin, "cos": Local4.Cos, "tan": Local4.Tan, "asin": Local4.Asin, "acos": Local4.Acos, "atan": Local4.Atan,
	"sinh": Local4.Sinh, "cosh": Local4.Cosh, "tanh": Local4.Tanh, "exp": Local4.Exp, "expm1": Local4.Expm1,
	"log": Local4.Log, "log1p": Local4.Log1p, "log2": Local4.Log2, "log10": Local4.Log10, "sqrt": Local4.Sqrt,
	"cbrt": Local4.Cbrt, "abs": Local4.Abs, "sigmoid": Local4.Sigmoid, "softplus": Local4.Softplus, "erf": Local4.Erf,
	"powc 2.5":    func(x Local4) Local4 { return x.PowC(2.5) },
	"powc -1.5":   func(x Local4) Local4 { return x.PowC(-1.5) },
	"powc 3":      func(x Local4) Local4 { return x.PowC(3) },
	"powc 2":      func(x Local4) Local4 { return x.PowC(2) },
	"powc 1":      func(x Local4) Local4 { return x.PowC(1) },
	"powc 0":      func(x Local4) Local4 { return x.PowC(0) },
	"const^x":     func(x Local4) Local4 { return Local4{V: 2.5}.Pow(x) },
	"x-x*x chain": func(x Local4) Local4 { return x.Sub(x.Mul(x)) },
	"x/x":         func(x Local4) Local4 { return x.Div(x) },
	"const-x":     func(x Local4) Local4 { return x.RSubC(1) },
	"const/x":     func(x Local4) Local4 { return Local4{V: 3}.Div(x) },
}

var l4Binary = map[string]func(Local4, Local4) Local4{
	"add": Local4.Add, "sub": Local4.Sub, "mul": Local4.Mul, "div": Local4.Div, "pow": Local4.Pow,
	"atan2": Local4.Atan2, "hypot": Local4.Hypot, "min": Local4.Min, "max": Local4.Max,
}

// fnGrad returns the value and gradient of a preaccumulated node rec over
// the variables x and of g written with Var operations.
func fnGrad(rec func(xs []Var) Var, g func(xs []Var) Var, x []float64) (v float64, gr []float64, w float64, wr []float64) {
	var t, u Tape
	xs := t.Inputs(x).Vars(nil)
	z := rec(xs)
	gr = gradOf(&t, nil, z, xs)
	us := u.Inputs(x).Vars(nil)
	zu := g(us)
	wr = gradOf(&u, nil, zu, us)
	return z.Value(), gr, zu.Value(), wr
}

func TestLocal4(t *testing.T) {
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
			t.Fatalf("no Local4 form of %s", c.name)
		}
		for _, x := range c.points {
			// f(a)·b + c·d over four variables.
			p := []float64{x, 0.8, -1.5, 2.5}
			check(c.name+" fn4", p,
				func(v []Var) Var {
					return fn4(v[0], v[1], v[2], v[3], func(a, b, c, d Local4) Local4 { return fl(a).Mul(b).Add(c.Mul(d)) })
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
					return fn3(v[0], v[1], v[2], func(a, b, c Local4) Local4 { return fl(a, b).Mul(c) })
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
	f := func(a, b, c Local4) Local4 { return a.Mul(b).Mul(c) }
	z := fn3(x, Const(5), y, f)
	if tp.Len() != n+1 || z.Value() != 30 {
		t.Fatalf("Fn3 with a constant: %d nodes, value %g", tp.Len()-n, z.Value())
	}
	tp.Backward(z)
	if gx, gy := tp.Adjoint(x), tp.Adjoint(y); gx != 15 || gy != 10 {
		t.Errorf("gradient (%g, %g), want (15, 10)", gx, gy)
	}
	if z := fn3(Const(1), Const(2), Const(3), f); !z.IsConst() || z.Value() != 6 {
		t.Errorf("Fn3 of constants = %v", z)
	}
	z = fn4(x, x, y, x, func(a, b, c, d Local4) Local4 { return a.Mul(b).Mul(c).Add(d) }) // x²y + x
	tp.Backward(z)
	if gx, gy := tp.Adjoint(x), tp.Adjoint(y); gx != 13 || gy != 4 {
		t.Errorf("fn4(x, x, y, x): gradient (%g, %g), want (13, 4)", gx, gy)
	}
}

// Vars records a run of variables whose nodes the sweep skips; outputs
// between and inside runs work as before.
func TestVarRuns(t *testing.T) {
	var tp Tape
	a := tp.Inputs([]float64{1, 2, 3}).Vars(nil)
	p := a[0].Mul(a[2]) // 3
	b := tp.Inputs([]float64{4, 5}).Vars(nil)
	c := tp.Var(6)
	q := p.Mul(b[1]).Add(c).Add(a[1].Square()) // 3·5 + 6 + 4
	g := gradOf(&tp, nil, q, []Var{a[0], a[1], a[2], b[0], b[1], c})
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
}

// DotC and Sum over consecutive variables record range nodes; in any order
// they agree with the general form.
func TestRangeReductions(t *testing.T) {
	x := []float64{0.5, -1, 2, 3, -0.25}
	c := []float64{2, 3, -1, 0.5, 4}
	f := func(v []Var) Var {
		// DotC over consecutive variables (a range), over a permutation
		// (general), a range Sum and a general Sum.
		rev := []Var{v[4], v[3], v[2], v[1], v[0]}
		a := DotC(v, c)
		b := DotC(rev, c)
		return sumOf([]Var{a.Mul(b), sumOf(v), sumOf(rev).Square()})
	}
	var tp Tape
	vs := tp.Inputs(x).Vars(nil)
	g := gradOf(&tp, nil, f(vs), vs)
	// By hand: a = c·x, b = c·rev(x), s = Σx.
	var a, b, s float64
	for j := range x {
		a += c[j] * x[j]
		b += c[j] * x[4-j]
		s += x[j]
	}
	for j := range x {
		want := c[j]*b + a*c[4-j] + 1 + 2*s
		if !close(g[j], want, 1e-14) {
			t.Errorf("∂/∂x%d: %g, want %g", j, g[j], want)
		}
	}
}
