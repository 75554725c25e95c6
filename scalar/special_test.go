package scalar

import (
	"errors"
	"math"
	"testing"
)

// specCase is a special function of n = len(x) variables, written on Var and
// on Dual, checked at x.
type specCase struct {
	name string
	f    Func
	fd   func([]Dual) Dual
	x    []float64
}

func un(name string, f func(Var) Var, fd func(Dual) Dual, xs ...float64) []specCase {
	var cs []specCase
	for _, x := range xs {
		cs = append(cs, specCase{name, func(v []Var) Var { return f(v[0]) }, func(d []Dual) Dual { return fd(d[0]) }, []float64{x}})
	}
	return cs
}

func bi(name string, f func(Var, Var) Var, fd func(Dual, Dual) Dual, xs ...[2]float64) []specCase {
	var cs []specCase
	for _, x := range xs {
		cs = append(cs, specCase{name, func(v []Var) Var { return f(v[0], v[1]) }, func(d []Dual) Dual { return fd(d[0], d[1]) }, x[:]})
	}
	return cs
}

func tri(name string, f func(Var, Var, Var) Var, fd func(Dual, Dual, Dual) Dual, xs ...[3]float64) []specCase {
	var cs []specCase
	for _, x := range xs {
		cs = append(cs, specCase{name, func(v []Var) Var { return f(v[0], v[1], v[2]) }, func(d []Dual) Dual { return fd(d[0], d[1], d[2]) }, x[:]})
	}
	return cs
}

func specCases() []specCase {
	var cs []specCase
	add := func(c []specCase) { cs = append(cs, c...) }
	add(un("lgamma", Var.Lgamma, Dual.Lgamma, 0.3, 2, 7.5, -1.5))
	add(un("digamma", Var.Digamma, Dual.Digamma, 0.3, 2, 12))
	add(un("trigamma", Var.Trigamma, Dual.Trigamma, 0.3, 2, 12))
	add(un("erfc", Var.Erfc, Dual.Erfc, -1, 0.2, 3))
	add(un("Phi", Var.Phi, Dual.Phi, -4, 0, 1.5))
	add(un("inv_Phi", Var.InvPhi, Dual.InvPhi, 0.01, 0.5, 0.9))
	add(un("logit", Var.Logit, Dual.Logit, 0.1, 0.5, 0.8))
	add(un("inv_logit", Var.InvLogit, Dual.InvLogit, -3, 0, 2))
	add(un("log_inv_logit", Var.LogInvLogit, Dual.LogInvLogit, -3, 0, 2))
	add(un("log1m_inv_logit", Var.Log1mInvLogit, Dual.Log1mInvLogit, -3, 0, 2))
	add(un("log1m", Var.Log1m, Dual.Log1m, -2, 0.1, 0.9))
	add(un("log1m_exp", Var.Log1mExp, Dual.Log1mExp, -5, -0.7, -0.01))
	add(un("log1p_exp", Var.Log1pExp, Dual.Log1pExp, -5, 0, 5))
	add(un("asinh", Var.Asinh, Dual.Asinh, -2, 0.3, 4))
	add(un("acosh", Var.Acosh, Dual.Acosh, 1.2, 3))
	add(un("atanh", Var.Atanh, Dual.Atanh, -0.7, 0.2))
	add(un("bessel_i0", Var.BesselI0, Dual.BesselI0, 0.5, 3, 35))
	add(un("bessel_i1", Var.BesselI1, Dual.BesselI1, 0.5, 3, 35))
	add(un("bessel_k0", Var.BesselK0, Dual.BesselK0, 0.5, 3))
	add(un("bessel_k1", Var.BesselK1, Dual.BesselK1, 0.5, 3))
	add(bi("lbeta", Var.Lbeta, Dual.Lbeta, [2]float64{0.5, 2}, [2]float64{3, 15}))
	add(bi("lchoose", Var.Lchoose, Dual.Lchoose, [2]float64{10, 3}, [2]float64{5.5, 2.2}))
	add(bi("gamma_p", Var.GammaP, Dual.GammaP, [2]float64{2, 1.5}, [2]float64{5, 9}))
	add(bi("gamma_q", Var.GammaQ, Dual.GammaQ, [2]float64{2, 1.5}, [2]float64{5, 9}))
	add(bi("log_diff_exp", Var.LogDiffExp, Dual.LogDiffExp, [2]float64{1, 0.2}, [2]float64{3, -2}))
	add(bi("log_sum_exp", Var.LogSumExp2, Dual.LogSumExp2, [2]float64{1, 0.2}, [2]float64{-3, 2}))
	add(tri("inc_beta", Var.IncBeta, Dual.IncBeta, [3]float64{2, 3, 0.4}, [3]float64{0.7, 1.5, 0.8}))
	add(tri("fma", Var.Fma, Dual.Fma, [3]float64{2, -3, 0.4}))
	// Constant operands: the one-parent and reduced side-array forms.
	add([]specCase{
		{"gamma_p(c, x)", func(v []Var) Var { return Const(2.5).GammaP(v[0]) }, nil, []float64{1.7}},
		{"gamma_p(a, c)", func(v []Var) Var { return v[0].GammaP(Const(1.7)) }, nil, []float64{2.5}},
		{"inc_beta(a, c, x)", func(v []Var) Var { return v[0].IncBeta(Const(2.5), v[1]) }, nil, []float64{1.5, 0.3}},
		{"inc_beta(c, b, c)", func(v []Var) Var { return Const(1.5).IncBeta(v[0], Const(0.3)) }, nil, []float64{2.5}},
		{"fma(x, x, x²)", func(v []Var) Var { return v[0].Fma(v[0], v[0].Square()) }, nil, []float64{1.3}},
		{"composite", func(v []Var) Var {
			return v[0].Lgamma().Mul(v[1].Log1mExp()).Add(v[0].Lbeta(v[1].Neg()).Exp())
		}, nil, []float64{2.2, -0.6}},
	})
	return cs
}

// eval evaluates f at x on constants.
func eval(f Func, x []float64) float64 {
	v := make([]Var, len(x))
	for k := range x {
		v[k] = Const(x[k])
	}
	return f(v).Value()
}

func hstep(x float64) float64 { return 1e-5 * math.Max(1, math.Abs(x)) }

func TestSpecialGradHess(t *testing.T) {
	for _, c := range specCases() {
		n := len(c.x)
		g, v := Gradient(nil, c.f, c.x)
		if want := eval(c.f, c.x); !close(v, want, 1e-15) {
			t.Errorf("%s%v: tape value %g, plain %g", c.name, c.x, v, want)
		}
		for j := range n {
			h := hstep(c.x[j])
			fd := central(func(s float64) float64 {
				x := append([]float64(nil), c.x...)
				x[j] = s
				return eval(c.f, x)
			}, c.x[j], h)
			if !close(g[j], fd, 1e-6) {
				t.Errorf("%s%v: ∂%d = %.12g, central difference %.12g", c.name, c.x, j, g[j], fd)
			}
		}
		H := Hessian(nil, c.f, c.x)
		for j := range n {
			h := hstep(c.x[j])
			xp := append([]float64(nil), c.x...)
			xm := append([]float64(nil), c.x...)
			xp[j] += h
			xm[j] -= h
			gp, _ := Gradient(nil, c.f, xp)
			gm, _ := Gradient(nil, c.f, xm)
			for i := range n {
				fd := (gp[i] - gm[i]) / (2 * h)
				if !close(H.At(i, j), fd, 2e-6) {
					t.Errorf("%s%v: H[%d][%d] = %.12g, difference of gradients %.12g", c.name, c.x, i, j, H.At(i, j), fd)
				}
			}
		}
		if c.fd != nil {
			d := make([]Dual, n)
			want := 0.0
			for j := range n {
				u := 0.3 + 0.5*float64(j)
				d[j] = Dual{c.x[j], u}
				want += g[j] * u
			}
			r := c.fd(d)
			if !close(r.V, v, 1e-15) || !close(r.D, want, 1e-13) {
				t.Errorf("%s%v: Dual (%g, %g), want (%g, %g)", c.name, c.x, r.V, r.D, v, want)
			}
		}
	}
}

// Each special function is one node.
func TestSpecialOneNode(t *testing.T) {
	var tp Tape
	x, y, z := tp.Var(2), tp.Var(3), tp.Var(0.4)
	for _, f := range []func() Var{
		x.Lgamma, x.Digamma, x.Trigamma, x.Floor,
		func() Var { return x.Lbeta(y) },
		func() Var { return x.IncBeta(y, z) },
		func() Var { return x.Fma(y, z) },
	} {
		n := tp.Len()
		f()
		if tp.Len() != n+1 {
			t.Errorf("recorded %d nodes, want 1", tp.Len()-n)
		}
	}
	if r := Const(2).IncBeta(Const(3), Const(0.4)); !r.IsConst() {
		t.Errorf("inc_beta of constants recorded a node")
	}
}

// Floor and its kind have a zero gradient and Hessian; the gradient flows
// around them, not through them.
func TestSpecialRounding(t *testing.T) {
	f := func(v []Var) Var {
		x := v[0]
		return x.Floor().Add(x.Ceil()).Add(x.Round()).Add(x.Trunc()).Mul(x)
	}
	g, v := Gradient(nil, f, []float64{2.6})
	if v != (2+3+3+2)*2.6 || g[0] != 10 {
		t.Errorf("value %g gradient %g, want 26 and 10", v, g[0])
	}
	H := Hessian(nil, f, []float64{2.6})
	if H.At(0, 0) != 0 {
		t.Errorf("Hessian %g, want 0", H.At(0, 0))
	}
}

func TestSpecialMixedTapes(t *testing.T) {
	var a, b Tape
	x, y := a.Var(1), b.Var(2)
	for name, f := range map[string]func(){
		"lbeta":    func() { x.Lbeta(y) },
		"inc_beta": func() { x.IncBeta(Const(1), y) },
	} {
		func() {
			defer func() {
				err, _ := recover().(error)
				var e *Error
				if !errors.Is(err, ErrNotOnTape) || !errors.As(err, &e) || e.Op != name {
					t.Errorf("%s: recovered %v", name, err)
				}
			}()
			f()
		}()
	}
}
