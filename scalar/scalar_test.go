package scalar

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// close reports whether got is within tol of want, relative to max(1, |want|);
// infinities and NaNs must match exactly.
func close(got, want, tol float64) bool {
	if math.IsNaN(want) || math.IsInf(want, 0) {
		return got == want || (math.IsNaN(got) && math.IsNaN(want))
	}
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// central returns the central difference of f at x with step h.
func central(f func(float64) float64, x, h float64) float64 {
	return (f(x+h) - f(x-h)) / (2 * h)
}

func step(x float64) float64 { return 1e-6 * math.Max(0.01, math.Abs(x)) }

type unaryCase struct {
	name   string
	v      func(Var) Var
	d      func(Dual) Dual
	f      func(float64) float64
	points []float64
}

var unaryCases = []unaryCase{
	{"neg", Var.Neg, Dual.Neg, func(x float64) float64 { return -x }, []float64{-2, 0, 3}},
	{"square", Var.Square, Dual.Square, func(x float64) float64 { return x * x }, []float64{-2, 0, 0.3}},
	{"addc", func(x Var) Var { return x.AddC(2.5) }, func(x Dual) Dual { return x.AddC(2.5) }, func(x float64) float64 { return x + 2.5 }, []float64{-1, 4}},
	{"subc", func(x Var) Var { return x.SubC(2.5) }, func(x Dual) Dual { return x.SubC(2.5) }, func(x float64) float64 { return x - 2.5 }, []float64{-1, 4}},
	{"mulc", func(x Var) Var { return x.MulC(-3) }, func(x Dual) Dual { return x.MulC(-3) }, func(x float64) float64 { return -3 * x }, []float64{-1, 4}},
	{"divc", func(x Var) Var { return x.DivC(4) }, func(x Dual) Dual { return x.DivC(4) }, func(x float64) float64 { return x / 4 }, []float64{-1, 4}},
	{"sin", Var.Sin, Dual.Sin, math.Sin, []float64{-2, 0, 0.7, 10}},
	{"cos", Var.Cos, Dual.Cos, math.Cos, []float64{-2, 0, 0.7, 10}},
	{"tan", Var.Tan, Dual.Tan, math.Tan, []float64{-1.2, 0, 0.7, 1.5}},
	{"asin", Var.Asin, Dual.Asin, math.Asin, []float64{-0.999, -0.5, 0, 0.3, 0.999}},
	{"acos", Var.Acos, Dual.Acos, math.Acos, []float64{-0.999, -0.5, 0, 0.3, 0.999}},
	{"atan", Var.Atan, Dual.Atan, math.Atan, []float64{-30, -1, 0, 0.5, 7}},
	{"sinh", Var.Sinh, Dual.Sinh, math.Sinh, []float64{-3, 0, 0.5, 4}},
	{"cosh", Var.Cosh, Dual.Cosh, math.Cosh, []float64{-3, 0, 0.5, 4}},
	{"tanh", Var.Tanh, Dual.Tanh, math.Tanh, []float64{-3, 0, 0.5, 4}},
	{"exp", Var.Exp, Dual.Exp, math.Exp, []float64{-5, 0, 0.5, 3}},
	{"expm1", Var.Expm1, Dual.Expm1, math.Expm1, []float64{-5, -1e-3, 0, 1e-8, 3}},
	{"log", Var.Log, Dual.Log, math.Log, []float64{1e-3, 0.5, 1, 40}},
	{"log1p", Var.Log1p, Dual.Log1p, math.Log1p, []float64{-0.999, -1e-9, 0, 0.5, 40}},
	{"log2", Var.Log2, Dual.Log2, math.Log2, []float64{1e-3, 0.5, 8}},
	{"log10", Var.Log10, Dual.Log10, math.Log10, []float64{1e-3, 0.5, 1000}},
	{"sqrt", Var.Sqrt, Dual.Sqrt, math.Sqrt, []float64{1e-4, 0.5, 9}},
	{"cbrt", Var.Cbrt, Dual.Cbrt, math.Cbrt, []float64{-8, -1e-3, 1e-3, 27}},
	{"abs", Var.Abs, Dual.Abs, math.Abs, []float64{-2, -1e-3, 1e-3, 5}},
	{"sigmoid", Var.Sigmoid, Dual.Sigmoid, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, []float64{-30, -2, 0, 0.5, 30}},
	{"softplus", Var.Softplus, Dual.Softplus, func(x float64) float64 { return math.Log1p(math.Exp(x)) }, []float64{-30, -2, 0, 0.5, 30}},
	{"erf", Var.Erf, Dual.Erf, math.Erf, []float64{-3, -0.5, 0, 0.2, 2}},
	{"powc 2.5", func(x Var) Var { return x.PowC(2.5) }, func(x Dual) Dual { return x.PowC(2.5) }, func(x float64) float64 { return math.Pow(x, 2.5) }, []float64{1e-3, 0.5, 3}},
	{"powc -1.5", func(x Var) Var { return x.PowC(-1.5) }, func(x Dual) Dual { return x.PowC(-1.5) }, func(x float64) float64 { return math.Pow(x, -1.5) }, []float64{0.1, 2}},
	{"powc 3", func(x Var) Var { return x.PowC(3) }, func(x Dual) Dual { return x.PowC(3) }, func(x float64) float64 { return x * x * x }, []float64{-2, 0, 1.5}},
	{"powc 2", func(x Var) Var { return x.PowC(2) }, func(x Dual) Dual { return x.PowC(2) }, func(x float64) float64 { return x * x }, []float64{-2, 0, 1.5}},
	{"powc 1", func(x Var) Var { return x.PowC(1) }, func(x Dual) Dual { return x.PowC(1) }, func(x float64) float64 { return x }, []float64{-2, 0, 1.5}},
	{"powc 0", func(x Var) Var { return x.PowC(0) }, func(x Dual) Dual { return x.PowC(0) }, func(x float64) float64 { return 1 }, []float64{-2, 0, 1.5}},
	{"const^x", func(x Var) Var { return Const(2.5).Pow(x) }, func(x Dual) Dual { return Dual{V: 2.5}.Pow(x) }, func(x float64) float64 { return math.Pow(2.5, x) }, []float64{-2, 0, 1.5}},
	{"x-x*x chain", func(x Var) Var { return x.Sub(x.Mul(x)) }, func(x Dual) Dual { return x.Sub(x.Mul(x)) }, func(x float64) float64 { return x - x*x }, []float64{-2, 0.5}},
	{"x/x", func(x Var) Var { return x.Div(x) }, func(x Dual) Dual { return x.Div(x) }, func(x float64) float64 { return 1 }, []float64{-2, 0.5}},
	{"const-x", func(x Var) Var { return Const(1).Sub(x) }, func(x Dual) Dual { return Dual{V: 1}.Sub(x) }, func(x float64) float64 { return 1 - x }, []float64{-2, 0.5}},
	{"const/x", func(x Var) Var { return Const(3).Div(x) }, func(x Dual) Dual { return Dual{V: 3}.Div(x) }, func(x float64) float64 { return 3 / x }, []float64{-2, 0.5}},
}

// tapeDeriv returns f(x) and f'(x) computed on a tape.
func tapeDeriv(t *Tape, f func(Var) Var, x float64) (float64, float64) {
	t.Reset()
	xv := t.Var(x)
	y := f(xv)
	if y.IsConst() {
		return y.Value(), 0
	}
	t.Backward(y)
	return y.Value(), t.Adjoint(xv)
}

// tapeSecond returns the first and second derivatives of f at x from a
// tangent-mode tape.
func tapeSecond(t *Tape, f func(Var) Var, x float64) (float64, float64) {
	t.ResetTangent()
	xv := t.VarTangent(x, 1)
	y := f(xv)
	if y.IsConst() {
		return 0, 0
	}
	t.Backward(y)
	return t.Adjoint(xv), t.AdjointTangent(xv)
}

func TestUnaryGradcheck(t *testing.T) {
	var tp Tape
	for _, c := range unaryCases {
		for _, x := range c.points {
			v, g := tapeDeriv(&tp, c.v, x)
			if want := c.f(x); !close(v, want, 1e-14) {
				t.Errorf("%s(%g) = %g, want %g", c.name, x, v, want)
			}
			fd := central(c.f, x, step(x))
			if !close(g, fd, 1e-6) {
				t.Errorf("%s'(%g): tape %g, central difference %g", c.name, x, g, fd)
			}
			d := c.d(Dual{x, 1})
			if !close(d.V, v, 1e-15) || !close(d.D, g, 1e-14) {
				t.Errorf("%s at %g: dual (%g, %g), tape (%g, %g)", c.name, x, d.V, d.D, v, g)
			}
			// Forward-over-reverse second derivative against a central
			// difference of the tape's first derivative.
			g1, h := tapeSecond(&tp, c.v, x)
			if !close(g1, g, 1e-14) {
				t.Errorf("%s'(%g) in tangent mode %g, plain %g", c.name, x, g1, g)
			}
			fd2 := central(func(x float64) float64 { _, g := tapeDeriv(&tp, c.v, x); return g }, x, step(x))
			if !close(h, fd2, 1e-5) {
				t.Errorf("%s''(%g): tangent mode %g, central difference %g", c.name, x, h, fd2)
			}
		}
	}
}

type binaryCase struct {
	name   string
	v      func(Var, Var) Var
	d      func(Dual, Dual) Dual
	f      func(x, y float64) float64
	points [][2]float64
}

var binaryCases = []binaryCase{
	{"add", Var.Add, Dual.Add, func(x, y float64) float64 { return x + y }, [][2]float64{{1, 2}, {-3, 0.5}}},
	{"sub", Var.Sub, Dual.Sub, func(x, y float64) float64 { return x - y }, [][2]float64{{1, 2}, {-3, 0.5}}},
	{"mul", Var.Mul, Dual.Mul, func(x, y float64) float64 { return x * y }, [][2]float64{{1, 2}, {-3, 0.5}, {0, 4}}},
	{"div", Var.Div, Dual.Div, func(x, y float64) float64 { return x / y }, [][2]float64{{1, 2}, {-3, 0.5}, {0, -4}}},
	{"pow", Var.Pow, Dual.Pow, math.Pow, [][2]float64{{2, 3}, {0.5, -1.3}, {3, 0}, {1e-3, 2.5}, {1.5, 1}}},
	{"atan2", Var.Atan2, Dual.Atan2, math.Atan2, [][2]float64{{1, 2}, {-1, -2}, {1e-3, -1}, {0.5, 0}}},
	{"hypot", Var.Hypot, Dual.Hypot, math.Hypot, [][2]float64{{3, 4}, {-1, 1e-3}, {0, 2}}},
	{"min", Var.Min, Dual.Min, math.Min, [][2]float64{{1, 2}, {2, 1}, {1, 1 + 1e-3}, {1 + 1e-3, 1}}},
	{"max", Var.Max, Dual.Max, math.Max, [][2]float64{{1, 2}, {2, 1}, {1, 1 + 1e-3}, {1 + 1e-3, 1}}},
}

func TestBinaryGradcheck(t *testing.T) {
	var tp Tape
	for _, c := range binaryCases {
		for _, p := range c.points {
			x, y := p[0], p[1]
			name := fmt.Sprintf("%s(%g, %g)", c.name, x, y)
			fdx := central(func(x float64) float64 { return c.f(x, y) }, x, step(x))
			fdy := central(func(y float64) float64 { return c.f(x, y) }, y, step(y))

			// Both variables.
			tp.Reset()
			xv, yv := tp.Var(x), tp.Var(y)
			z := c.v(xv, yv)
			if want := c.f(x, y); !close(z.Value(), want, 1e-14) {
				t.Errorf("%s = %g, want %g", name, z.Value(), want)
			}
			tp.Backward(z)
			gx, gy := tp.Adjoint(xv), tp.Adjoint(yv)
			if !close(gx, fdx, 1e-6) || !close(gy, fdy, 1e-6) {
				t.Errorf("%s: tape grad (%g, %g), central differences (%g, %g)", name, gx, gy, fdx, fdy)
			}
			// A constant on either side records the same partial.
			tp.Reset()
			xv = tp.Var(x)
			z = c.v(xv, Const(y))
			tp.Backward(z)
			if g := tp.Adjoint(xv); !close(g, gx, 1e-14) {
				t.Errorf("%s with constant y: ∂/∂x %g, want %g", name, g, gx)
			}
			tp.Reset()
			yv = tp.Var(y)
			z = c.v(Const(x), yv)
			tp.Backward(z)
			if g := tp.Adjoint(yv); !close(g, gy, 1e-14) {
				t.Errorf("%s with constant x: ∂/∂y %g, want %g", name, g, gy)
			}
			// Two constants record nothing.
			if z := c.v(Const(x), Const(y)); !z.IsConst() || !close(z.Value(), c.f(x, y), 1e-14) {
				t.Errorf("%s of constants = %v", name, z)
			}
			// Duals agree with the tape.
			dx := c.d(Dual{x, 1}, Dual{y, 0})
			dy := c.d(Dual{x, 0}, Dual{y, 1})
			if !close(dx.D, gx, 1e-14) || !close(dy.D, gy, 1e-14) {
				t.Errorf("%s: dual partials (%g, %g), tape (%g, %g)", name, dx.D, dy.D, gx, gy)
			}
			// Second derivatives: Hessian columns from tangent mode against
			// central differences of the tape gradient.
			grad := func(x, y float64) (float64, float64) {
				var tq Tape
				xv, yv := tq.Var(x), tq.Var(y)
				z := c.v(xv, yv)
				tq.Backward(z)
				return tq.Adjoint(xv), tq.Adjoint(yv)
			}
			for k, dir := range [][2]float64{{1, 0}, {0, 1}} {
				tp.ResetTangent()
				xv, yv := tp.VarTangent(x, dir[0]), tp.VarTangent(y, dir[1])
				z := c.v(xv, yv)
				tp.Backward(z)
				hx, hy := tp.AdjointTangent(xv), tp.AdjointTangent(yv)
				h := step(p[k])
				var ax, ay, bx, by float64
				if k == 0 {
					ax, ay = grad(x+h, y)
					bx, by = grad(x-h, y)
				} else {
					ax, ay = grad(x, y+h)
					bx, by = grad(x, y-h)
				}
				wx, wy := (ax-bx)/(2*h), (ay-by)/(2*h)
				if !close(hx, wx, 1e-5) || !close(hy, wy, 1e-5) {
					t.Errorf("%s: Hessian column %d (%g, %g), central differences (%g, %g)", name, k, hx, hy, wx, wy)
				}
				if tz := tp.Tangent(z); !close(tz, []float64{gx, gy}[k], 1e-14) {
					t.Errorf("%s: tangent of value along %v = %g, want %g", name, dir, tz, []float64{gx, gy}[k])
				}
			}
		}
	}
}

// Same operand on both sides: x op x.
func TestBinarySameOperand(t *testing.T) {
	var tp Tape
	for _, c := range binaryCases {
		for _, x := range []float64{0.7, 2} {
			tp.Reset()
			xv := tp.Var(x)
			z := c.v(xv, xv)
			tp.Backward(z)
			fd := central(func(x float64) float64 { return c.f(x, x) }, x, step(x))
			if g := tp.Adjoint(xv); !close(g, fd, 1e-6) && !(c.name == "min" || c.name == "max") {
				t.Errorf("%s(x, x) at %g: %g, central difference %g", c.name, x, g, fd)
			}
		}
	}
}

func TestWorkedExamples(t *testing.T) {
	var tp Tape
	x, y := tp.Var(3), tp.Var(4)
	z := x.Mul(y).Add(x)
	g := gradOf(&tp, nil, z, []Var{x, y})
	if z.Value() != 15 || g[0] != 5 || g[1] != 3 {
		t.Errorf("x·y + x at (3, 4) = %g, grad %v; want 15, [5 3]", z.Value(), g)
	}

	tp.Reset()
	x, y = tp.Var(0.5), tp.Var(4)
	z = x.Mul(y).Add(x.Mul(x).Sin()).Sub(y.Log())
	g = gradOf(&tp, g, z, []Var{x, y})
	want := []float64{4 + math.Cos(0.25), 0.25}
	if wv := 2 + math.Sin(0.25) - math.Log(4); !close(z.Value(), wv, 1e-15) {
		t.Errorf("value %g, want %g", z.Value(), wv)
	}
	if !close(g[0], want[0], 1e-15) || !close(g[1], want[1], 1e-15) {
		t.Errorf("x·y + sin(x²) − ln y at (0.5, 4): grad %v, want %v", g, want)
	}
}

// The documented conventions at non-smooth and undefined points.
func TestConventions(t *testing.T) {
	var tp Tape
	d := func(f func(Var) Var, x float64) (float64, float64) { return tapeDeriv(&tp, f, x) }
	check := func(name string, got, want float64) {
		t.Helper()
		if !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("%s = %g, want %g", name, got, want)
		}
	}
	_, g := d(Var.Abs, 0)
	check("abs'(0)", g, 0)
	_, g = d(Var.Abs, math.Copysign(0, -1))
	check("abs'(-0)", g, 0)
	v, g := d(Var.Sqrt, 0)
	check("sqrt(0)", v, 0)
	check("sqrt'(0)", g, math.Inf(1))
	v, g = d(Var.Sqrt, -1)
	check("sqrt(-1)", v, math.NaN())
	check("sqrt'(-1)", g, math.NaN())
	v, g = d(Var.Log, -1)
	check("log(-1)", v, math.NaN())
	check("log'(-1)", g, math.NaN())
	v, g = d(Var.Log, 0)
	check("log(0)", v, math.Inf(-1))
	check("log'(0)", g, math.Inf(1))
	_, g = d(Var.Log1p, -2)
	check("log1p'(-2)", g, math.NaN())
	_, g = d(Var.Log2, -2)
	check("log2'(-2)", g, math.NaN())
	_, g = d(Var.Log10, -2)
	check("log10'(-2)", g, math.NaN())
	_, g = d(Var.Asin, 1)
	check("asin'(1)", g, math.Inf(1))
	_, g = d(Var.Asin, 2)
	check("asin'(2)", g, math.NaN())
	_, g = d(Var.Cbrt, 0)
	check("cbrt'(0)", g, math.Inf(1))
	_, g = d(func(x Var) Var { return x.PowC(0.5) }, 0)
	check("(x^0.5)'(0)", g, math.Inf(1))
	_, g = d(func(x Var) Var { return x.PowC(0) }, 0)
	check("(x^0)'(0)", g, 0)
	_, g = d(func(x Var) Var { return Const(0).Pow(x) }, 2)
	check("(0^x)'(2)", g, 0)
	// Stable forms do not overflow.
	v, g = d(Var.Softplus, 1000)
	check("softplus(1000)", v, 1000)
	check("softplus'(1000)", g, 1)
	v, g = d(Var.Softplus, -1000)
	check("softplus(-1000)", v, 0)
	check("softplus'(-1000)", g, 0)
	v, g = d(Var.Sigmoid, -1000)
	check("sigmoid(-1000)", v, 0)
	check("sigmoid'(-1000)", g, 0)

	two := func(f func(Var, Var) Var, x, y float64) (float64, float64) {
		tp.Reset()
		xv, yv := tp.Var(x), tp.Var(y)
		tp.Backward(f(xv, yv))
		return tp.Adjoint(xv), tp.Adjoint(yv)
	}
	gx, gy := two(Var.Min, 1, 1)
	check("∂min/∂x at a tie", gx, 0.5)
	check("∂min/∂y at a tie", gy, 0.5)
	gx, gy = two(Var.Max, 1, 1)
	check("∂max/∂x at a tie", gx, 0.5)
	check("∂max/∂y at a tie", gy, 0.5)
	gx, gy = two(Var.Hypot, 0, 0)
	check("∂hypot/∂x at 0", gx, 0)
	check("∂hypot/∂y at 0", gy, 0)
	gx, gy = two(Var.Atan2, 0, 0)
	check("∂atan2/∂y at 0", gx, 0)
	check("∂atan2/∂x at 0", gy, 0)
	gx, gy = two(Var.Pow, 0, 2)
	check("∂(x^y)/∂x at (0, 2)", gx, 0)
	check("∂(x^y)/∂y at (0, 2)", gy, 0)
	gx, gy = two(Var.Pow, -2, 3)
	check("∂(x^y)/∂x at (-2, 3)", gx, 12)
	check("∂(x^y)/∂y at (-2, 3)", gy, math.NaN())
}

// An infinite partial off the path to the output does not reach the
// gradient.
func TestInfinitePartialOffPath(t *testing.T) {
	var tp Tape
	x := tp.Var(0)
	_ = x.Sqrt() // ∂/∂x = +Inf, unused
	y := x.MulC(2)
	tp.Backward(y)
	if g := tp.Adjoint(x); g != 2 {
		t.Errorf("gradient %g, want 2", g)
	}
	// On the path it does, as the chain rule says.
	z := x.Sqrt().MulC(3)
	tp.Backward(z)
	if g := tp.Adjoint(x); !math.IsInf(g, 1) {
		t.Errorf("gradient through sqrt(0) %g, want +Inf", g)
	}
}

func TestReductions(t *testing.T) {
	xs := []float64{0.3, -1.2, 2.5, 0.7}
	ys := []float64{1.5, 0.25, -0.5, 2}
	c := []float64{2, -1, 0.5, 3}
	type red struct {
		name string
		v    func(x, y []Var) Var
		f    func(x, y []float64) float64
	}
	reds := []red{
		{"sum", func(x, y []Var) Var { return sumOf(x) }, func(x, y []float64) float64 {
			s := 0.0
			for _, v := range x {
				s += v
			}
			return s
		}},
		{"dot", Dot, func(x, y []float64) float64 {
			s := 0.0
			for i := range x {
				s += x[i] * y[i]
			}
			return s
		}},
		{"dotc", func(x, y []Var) Var { return DotC(x, c) }, func(x, y []float64) float64 {
			s := 0.0
			for i := range x {
				s += x[i] * c[i]
			}
			return s
		}},
		{"logsumexp", func(x, y []Var) Var { return LogSumExp(x) }, func(x, y []float64) float64 {
			s := 0.0
			for _, v := range x {
				s += math.Exp(v)
			}
			return math.Log(s)
		}},
		{"sum of squares", func(x, y []Var) Var {
			q := make([]Var, len(x))
			for i := range x {
				q[i] = x[i].Mul(y[i]).Square()
			}
			return sumOf(q)
		}, func(x, y []float64) float64 {
			s := 0.0
			for i := range x {
				s += x[i] * y[i] * x[i] * y[i]
			}
			return s
		}},
	}
	n := len(xs)
	for _, r := range reds {
		all := append(append([]float64{}, xs...), ys...)
		f := func(z []Var) Var { return r.v(z[:n], z[n:]) }
		fl := func(z []float64) float64 { return r.f(z[:n], z[n:]) }
		g, v := Gradient(nil, f, all)
		if !close(v, fl(all), 1e-14) {
			t.Errorf("%s = %g, want %g", r.name, v, fl(all))
		}
		for k := range all {
			fd := central(func(u float64) float64 {
				z := append([]float64{}, all...)
				z[k] = u
				return fl(z)
			}, all[k], step(all[k]))
			if !close(g[k], fd, 1e-6) {
				t.Errorf("%s: ∂/∂z[%d] = %g, central difference %g", r.name, k, g[k], fd)
			}
		}
		// Hessian-vector product against central differences of gradients.
		dir := []float64{0.5, -1, 0.25, 2, 1, -0.5, 0.75, 1.5}
		hv, _ := HessVec(nil, f, all, dir)
		h := 1e-5
		zp, zm := append([]float64{}, all...), append([]float64{}, all...)
		for k := range zp {
			zp[k] += h * dir[k]
			zm[k] -= h * dir[k]
		}
		gp, _ := Gradient(nil, f, zp)
		gm, _ := Gradient(nil, f, zm)
		for k := range hv {
			if want := (gp[k] - gm[k]) / (2 * h); !close(hv[k], want, 1e-5) {
				t.Errorf("%s: (H·v)[%d] = %g, central difference %g", r.name, k, hv[k], want)
			}
		}
	}
	// Constants among the elements are not recorded, and their gradient is
	// zero.
	var tp Tape
	a, b := tp.Var(1), tp.Var(2)
	for _, y := range []Var{
		sumOf([]Var{a, Const(5), b}),
		Dot([]Var{a, Const(5)}, []Var{Const(3), b}),
		LogSumExp([]Var{a, Const(0), b}),
		DotC([]Var{a, Const(5), b}, []float64{1, 2, 3}),
		DotC([]Var{a, b, a, b, a, Const(1), b}, []float64{1, 2, 3, 4, 5, 6, 7}),
		DotC([]Var{a, b, a, b, b}, []float64{1, 2, 3, 4, 5}),
	} {
		tp.Backward(y)
		if ga, gb := tp.Adjoint(a), tp.Adjoint(b); ga == 0 || gb == 0 {
			t.Errorf("reduction with constants: grad (%g, %g)", ga, gb)
		}
	}
	if s := sumOf(nil); !s.IsConst() || s.Value() != 0 {
		t.Errorf("sumOf(nil) = %v", s)
	}
	if s := LogSumExp([]Var{Const(math.Inf(-1))}); !math.IsInf(s.Value(), -1) {
		t.Errorf("LogSumExp(-Inf) = %v", s)
	}
	tp.Reset()
	u := tp.Var(math.Inf(-1))
	l := LogSumExp([]Var{u, u})
	tp.Backward(l)
	if !math.IsInf(l.Value(), -1) || tp.Adjoint(u) != 0 {
		t.Errorf("LogSumExp(-Inf, -Inf) = %v, grad %g; want -Inf, 0", l, tp.Adjoint(u))
	}
	// A large input does not overflow.
	tp.Reset()
	u, w := tp.Var(1000), tp.Var(1000)
	l = LogSumExp([]Var{u, w})
	tp.Backward(l)
	if !close(l.Value(), 1000+math.Ln2, 1e-15) || tp.Adjoint(u) != 0.5 {
		t.Errorf("LogSumExp(1000, 1000) = %v, grad %g", l, tp.Adjoint(u))
	}
	// Duals agree.
	dx := []Dual{{0.3, 1}, {-1.2, 0}, {2.5, 2}}
	dy := []Dual{{1, 0}, {2, 1}, {-1, 0}}
	if got := SumDual(dx); !close(got.V, 1.6, 1e-15) || got.D != 3 {
		t.Errorf("SumDual = %v", got)
	}
	if got := DotDual(dx, dy); !close(got.V, 0.3-2.4-2.5, 1e-15) || !close(got.D, 1-1.2-2, 1e-15) {
		t.Errorf("DotDual = %v", got)
	}
	lse := LogSumExpDual(dx)
	tp.Reset()
	vs := tp.Inputs([]float64{0.3, -1.2, 2.5}).Vars(nil)
	l = LogSumExp(vs)
	g := gradOf(&tp, nil, l, vs)
	if !close(lse.V, l.Value(), 1e-15) || !close(lse.D, g[0]+2*g[2], 1e-14) {
		t.Errorf("LogSumExpDual = %v, tape %g, %v", lse, l.Value(), g)
	}
}

func TestErrors(t *testing.T) {
	expect := func(name, op string, f func()) {
		t.Helper()
		defer func() {
			r := recover()
			err, ok := r.(error)
			var e *Error
			if !ok || !errors.As(err, &e) {
				t.Errorf("%s: panic value %v, want *Error", name, r)
				return
			}
			if e.Op != op {
				t.Errorf("%s: error %q names op %q, want %q", name, e, e.Op, op)
			}
		}()
		f()
	}
	var a, b Tape
	x, y := a.Var(1), b.Var(2)
	expect("mixed tapes", "mul", func() { x.Mul(y) })
	expect("mixed tapes in sum", "sum", func() { sumOf([]Var{x, y}) })
	expect("dot lengths", "dot", func() { Dot([]Var{x}, nil) })
	expect("dotc lengths", "dot", func() { DotC([]Var{x}, []float64{1, 2}) })
	expect("mixed tapes in dotc", "dot", func() { DotC([]Var{x, x, x, x, y}, make([]float64, 5)) })
	expect("backward of a constant", "backward", func() { a.Backward(Const(1)) })
	expect("backward of another tape's var", "backward", func() { a.Backward(y) })
	expect("adjoint before backward", "adjoint", func() { a.Adjoint(x) })
	expect("gradient dst", "gradient", func() { Gradient(make([]float64, 3), sumOf, []float64{1}) })
	expect("hessvec lengths", "hessvec", func() { HessVec(nil, sumOf, []float64{1}, []float64{1, 2}) })
	z := a.Var(3)
	a.Reset()
	expect("var from before Reset", "backward", func() { a.Backward(z) })
	// An operation on a stale variable is caught when the tape is swept.
	var c Tape
	for range 5 {
		c.Var(1)
	}
	w := c.Var(2)
	c.Reset()
	u := c.Var(1)
	expect("operation on a var from before Reset", "mul", func() { u.Mul(w) })
	if s := (&Error{Op: "mul", Msg: "m"}).Error(); s != "scalar: mul: m" {
		t.Errorf("Error() = %q", s)
	}
}

func TestTapeReuseAndLayout(t *testing.T) {
	var tp Tape
	f := func() (Var, Var, Var) {
		tp.Reset()
		x, y := tp.Var(0.5), tp.Var(4)
		return x, y, x.Mul(y).Add(x.Square().Sin()).Sub(y.Log())
	}
	g := make([]float64, 2)
	x, y, z := f()
	gradOf(&tp, g, z, []Var{x, y})
	allocs := testing.AllocsPerRun(100, func() {
		x, y, z := f()
		tp.Backward(z)
		g[0], g[1] = tp.Adjoint(x), tp.Adjoint(y)
	})
	if allocs != 0 {
		t.Errorf("%g allocations per gradient on a reused tape, want 0", allocs)
	}
	// 2 variables and 5 operations: x·y, x², sin, +, log, −.
	if tp.Len() != 8 {
		t.Errorf("Len = %d, want 8", tp.Len())
	}
	// Every node costs 24 bytes: the sink, 2 variables and 6 operations.
	if tp.Bytes() != 24*9 {
		t.Errorf("Bytes = %d, want %d", tp.Bytes(), 24*9)
	}
	// A reduction adds 12 bytes per variable operand; constants cost nothing.
	x, y, z = f()
	nb := tp.Bytes()
	sumOf([]Var{x, y, Const(1), z})
	if got := tp.Bytes() - nb; got != 24+3*12 {
		t.Errorf("Sum of 3 variables and a constant: %d bytes, want %d", got, 24+3*12)
	}
	// A Jacobian of two outputs reuses the recording.
	tp.Reset()
	x, y = tp.Var(2), tp.Var(3)
	u, v := x.Mul(y), x.Add(y.Square())
	_ = x.Exp() // recorded after both outputs
	j := tp.jacobian(nil, []Var{u, v, Const(1)}, []Var{x, y})
	want := []float64{3, 2, 1, 6, 0, 0}
	for k, w := range want {
		if got := j.At(k/2, k%2); got != w {
			t.Errorf("J[%d, %d] = %g, want %g", k/2, k%2, got, w)
		}
	}
	// An output recorded before the last node: Backward starts in the
	// middle of the tape.
	tp.Backward(u)
	if tp.Adjoint(x) != 3 || tp.Adjoint(y) != 2 {
		t.Errorf("∇(x·y) = (%g, %g), want (3, 2)", tp.Adjoint(x), tp.Adjoint(y))
	}
	// Independent tapes do not interfere; a value passes between them.
	var inner Tape
	a := inner.Var(x.Value())
	b := a.Square()
	inner.Backward(b)
	w := x.MulC(inner.Adjoint(a)) // 2x · x with the inner derivative as constant
	tp.Backward(w)
	if tp.Adjoint(x) != 4 || inner.Adjoint(a) != 4 {
		t.Errorf("nested tapes: %g, %g, want 4, 4", tp.Adjoint(x), inner.Adjoint(a))
	}
}

// A tape of 10⁷ operations: memory grows once, and the gradient matches the
// closed form.
func TestLongTape(t *testing.T) {
	const n = 5_000_000 // two operations per step
	var tp Tape
	x := tp.Var(0.5)
	s := Const(0)
	want := 0.0
	for k := 0; k < n; k++ {
		a := float64(k%7) - 3
		s = s.Add(x.MulC(a))
		want += a
	}
	if tp.Len() < 2*n {
		t.Fatalf("Len = %d, want at least %d", tp.Len(), 2*n)
	}
	tp.Backward(s)
	if g := tp.Adjoint(x); g != want {
		t.Errorf("gradient %g, want %g", g, want)
	}
	if per := float64(tp.Bytes()-2*24) / float64(tp.Len()-1); per > 24 { // less the sink and x
		t.Errorf("%.1f bytes per recorded op, want ≤ 24", per)
	}
}

// DotC's unrolled fast path against a loop of multiply-adds, for every
// length up to 9.
func TestDotCLengths(t *testing.T) {
	for n := 1; n <= 9; n++ {
		var tp Tape
		x := make([]float64, n)
		c := make([]float64, n)
		for k := range x {
			x[k], c[k] = 0.5+float64(k), 1.5-float64(k)
		}
		vs := tp.Inputs(x).Vars(nil)
		y := DotC(vs, c)
		g := gradOf(&tp, nil, y, vs)
		want := 0.0
		for k := range x {
			want += x[k] * c[k]
			if g[k] != c[k] {
				t.Errorf("n=%d: ∂/∂x[%d] = %g, want %g", n, k, g[k], c[k])
			}
		}
		if !close(y.Value(), want, 1e-15) {
			t.Errorf("n=%d: value %g, want %g", n, y.Value(), want)
		}
	}
}

// The Hessian of the extended Rosenbrock function against its closed form,
// at several points; HessVec and Objective.Hess agree with it.
func TestHessianRosenbrock(t *testing.T) {
	f := func(x []Var) Var {
		s := Const(0)
		for i := 0; i+1 < len(x); i += 2 {
			a := x[i+1].Sub(x[i].Mul(x[i]))
			b := Const(1).Sub(x[i])
			s = s.Add(a.Square().MulC(100)).Add(b.Square())
		}
		return s
	}
	closed := func(x []float64) [][]float64 {
		h := make([][]float64, len(x))
		for i := range h {
			h[i] = make([]float64, len(x))
		}
		for i := 0; i+1 < len(x); i += 2 {
			u, v := x[i], x[i+1]
			h[i][i] = 1200*u*u - 400*v + 2
			h[i][i+1] = -400 * u
			h[i+1][i] = -400 * u
			h[i+1][i+1] = 200
		}
		return h
	}
	var o Objective
	o.F = f
	for _, x := range [][]float64{{1, 1}, {-1.2, 1}, {0.3, -0.7, 2, 1.5}} {
		want := closed(x)
		h := Hessian(nil, f, x)
		oh := mat.NewSymDense(len(x), nil)
		o.Hess(oh, x)
		for i := range x {
			e := make([]float64, len(x))
			e[i] = 1
			hv, _ := HessVec(nil, f, x, e)
			for j := range x {
				if !close(h.At(i, j), want[i][j], 1e-13) || oh.At(i, j) != h.At(i, j) || !close(hv[j], want[j][i], 1e-13) {
					t.Errorf("x = %v: H[%d, %d] = %g (Objective %g, HessVec %g), want %g", x, i, j, h.At(i, j), oh.At(i, j), hv[j], want[i][j])
				}
			}
		}
		// The gradient from the Objective matches Gradient.
		g := make([]float64, len(x))
		fv := o.FuncGrad(g, x)
		g2, fv2 := Gradient(nil, f, x)
		if fv != fv2 || fv != o.Func(x) {
			t.Errorf("x = %v: values %g, %g, %g differ", x, fv, fv2, o.Func(x))
		}
		for j := range g {
			if g[j] != g2[j] {
				t.Errorf("x = %v: Objective gradient %v, Gradient %v", x, g, g2)
			}
		}
	}
}

// gradOf runs Backward from y and returns ∂y/∂xs[k] in dst (allocated if
// nil).
func gradOf(t *Tape, dst []float64, y Var, xs []Var) []float64 {
	t.Backward(y)
	if dst == nil {
		dst = make([]float64, len(xs))
	}
	for k, x := range xs {
		dst[k] = t.Adjoint(x)
	}
	return dst
}
