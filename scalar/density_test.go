package scalar

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"
	"gonum.org/v1/gonum/stat/distuv"
)

// densCase is a log density of the variables x, with its reference value.
type densCase struct {
	name string
	f    Func
	x    []float64
	want float64
}

func densCases() []densCase {
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	return []densCase{
		{"normal", func(v []Var) Var { return NormalLpdf(v[0], v[1], v[2]) }, []float64{0.3, -1, 2},
			distuv.Normal{Mu: -1, Sigma: 2}.LogProb(0.3)},
		{"student_t", func(v []Var) Var { return StudentTLpdf(v[0], v[1], v[2], v[3]) }, []float64{0.3, 3.5, -1, 2},
			distuv.StudentsT{Mu: -1, Sigma: 2, Nu: 3.5}.LogProb(0.3)},
		{"cauchy", func(v []Var) Var { return CauchyLpdf(v[0], v[1], v[2]) }, []float64{0.3, -1, 2},
			-math.Log(math.Pi * 2 * (1 + 0.65*0.65))},
		{"logistic", func(v []Var) Var { return LogisticLpdf(v[0], v[1], v[2]) }, []float64{0.3, -1, 2},
			// distuv.Logistic.LogProb ignores Mu and S (gonum v0.17); its Prob does not.
			math.Log(distuv.Logistic{Mu: -1, S: 2}.Prob(0.3))},
		{"lognormal", func(v []Var) Var { return LognormalLpdf(v[0], v[1], v[2]) }, []float64{1.3, -0.2, 0.7},
			distuv.LogNormal{Mu: -0.2, Sigma: 0.7}.LogProb(1.3)},
		{"exponential", func(v []Var) Var { return ExponentialLpdf(v[0], v[1]) }, []float64{1.3, 0.7},
			distuv.Exponential{Rate: 0.7}.LogProb(1.3)},
		{"gamma", func(v []Var) Var { return GammaLpdf(v[0], v[1], v[2]) }, []float64{1.3, 2.5, 0.7},
			distuv.Gamma{Alpha: 2.5, Beta: 0.7}.LogProb(1.3)},
		{"inv_gamma", func(v []Var) Var { return InvGammaLpdf(v[0], v[1], v[2]) }, []float64{1.3, 2.5, 0.7},
			distuv.InverseGamma{Alpha: 2.5, Beta: 0.7}.LogProb(1.3)},
		{"beta", func(v []Var) Var { return BetaLpdf(v[0], v[1], v[2]) }, []float64{0.3, 2.5, 1.7},
			distuv.Beta{Alpha: 2.5, Beta: 1.7}.LogProb(0.3)},
		{"weibull", func(v []Var) Var { return WeibullLpdf(v[0], v[1], v[2]) }, []float64{1.3, 2.5, 1.7},
			distuv.Weibull{K: 2.5, Lambda: 1.7}.LogProb(1.3)},
		{"gamma y=0", func(v []Var) Var { return GammaLpdf(Const(0), Const(1), v[0]) }, []float64{0.7},
			distuv.Gamma{Alpha: 1, Beta: 0.7}.LogProb(0)},
		{"beta y=0", func(v []Var) Var { return BetaLpdf(Const(0), Const(1), v[0]) }, []float64{1.7},
			math.Log(1.7)},
		{"beta y=1", func(v []Var) Var { return BetaLpdf(Const(1), v[0], Const(1)) }, []float64{2.5},
			math.Log(2.5)},
		{"weibull y=0", func(v []Var) Var { return WeibullLpdf(Const(0), Const(1), v[0]) }, []float64{1.7},
			-math.Log(1.7)},
		{"uniform", func(v []Var) Var { return UniformLpdf(v[0], v[1], v[2]) }, []float64{1.3, -0.5, 1.7},
			distuv.Uniform{Min: -0.5, Max: 1.7}.LogProb(1.3)},
		{"poisson", func(v []Var) Var { return PoissonLpmf(4, v[0]) }, []float64{2.7},
			distuv.Poisson{Lambda: 2.7}.LogProb(4)},
		{"poisson n=0", func(v []Var) Var { return PoissonLpmf(0, v[0]) }, []float64{2.7}, -2.7},
		{"poisson_log", func(v []Var) Var { return PoissonLogLpmf(4, v[0]) }, []float64{math.Log(2.7)},
			distuv.Poisson{Lambda: 2.7}.LogProb(4)},
		{"binomial", func(v []Var) Var { return BinomialLpmf(3, 10, v[0]) }, []float64{0.35},
			distuv.Binomial{N: 10, P: 0.35}.LogProb(3)},
		{"binomial_logit", func(v []Var) Var { return BinomialLogitLpmf(3, 10, v[0]) }, []float64{-0.4},
			distuv.Binomial{N: 10, P: 1 / (1 + math.Exp(0.4))}.LogProb(3)},
		{"bernoulli_logit 1", func(v []Var) Var { return BernoulliLogitLpmf(1, v[0]) }, []float64{-0.4},
			distuv.Bernoulli{P: 1 / (1 + math.Exp(0.4))}.LogProb(1)},
		{"bernoulli_logit 0", func(v []Var) Var { return BernoulliLogitLpmf(0, v[0]) }, []float64{-0.4},
			distuv.Bernoulli{P: 1 / (1 + math.Exp(0.4))}.LogProb(0)},
		{"neg_binomial_2", func(v []Var) Var { return NegBinomial2Lpmf(5, v[0], v[1]) }, []float64{3.2, 1.7},
			lg(5+1.7) - lg(6) - lg(1.7) + 5*math.Log(3.2/(3.2+1.7)) + 1.7*math.Log(1.7/(3.2+1.7))},
		{"categorical_logit", func(v []Var) Var { return CategoricalLogitLpmf(2, v) }, []float64{0.3, -1, 2},
			-1 - math.Log(math.Exp(0.3)+math.Exp(-1)+math.Exp(2))},
	}
}

func TestDensities(t *testing.T) {
	for _, c := range densCases() {
		g, v := Gradient(nil, c.f, c.x)
		if !close(v, c.want, 1e-13) {
			t.Errorf("%s%v = %.15g, want %.15g", c.name, c.x, v, c.want)
		}
		for j := range c.x {
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
		// Tangent mode works through every density: the Hessian matches
		// differences of the gradient.
		H := Hessian(nil, c.f, c.x)
		for j := range c.x {
			h := hstep(c.x[j])
			xp := append([]float64(nil), c.x...)
			xm := append([]float64(nil), c.x...)
			xp[j] += h
			xm[j] -= h
			gp, _ := Gradient(nil, c.f, xp)
			gm, _ := Gradient(nil, c.f, xm)
			for i := range c.x {
				if fd := (gp[i] - gm[i]) / (2 * h); !close(H.At(i, j), fd, 1e-5) {
					t.Errorf("%s%v: H[%d][%d] = %.12g, difference of gradients %.12g", c.name, c.x, i, j, H.At(i, j), fd)
				}
			}
		}
	}
}

// The unnormalised forms drop the terms that depend on no argument, and
// only those: the difference from the full form is that constant, also with
// constant operands, and the gradients agree.
func TestUnnormalised(t *testing.T) {
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	for _, c := range []struct {
		name       string
		full, un   Func
		x          []float64
		difference float64 // full − unnormalised
	}{
		{"normal", func(v []Var) Var { return NormalLpdf(v[0], v[1], v[2]) }, func(v []Var) Var { return NormalLupdf(v[0], v[1], v[2]) }, []float64{0.3, -1, 2}, -logSqrt2Pi},
		{"student_t", func(v []Var) Var { return StudentTLpdf(v[0], v[1], v[2], v[3]) }, func(v []Var) Var { return StudentTLupdf(v[0], v[1], v[2], v[3]) }, []float64{0.3, 3, -1, 2}, -0.5 * logPi},
		{"cauchy", func(v []Var) Var { return CauchyLpdf(v[0], v[1], v[2]) }, func(v []Var) Var { return CauchyLupdf(v[0], v[1], v[2]) }, []float64{0.3, -1, 2}, -logPi},
		{"lognormal", func(v []Var) Var { return LognormalLpdf(v[0], v[1], v[2]) }, func(v []Var) Var { return LognormalLupdf(v[0], v[1], v[2]) }, []float64{0.3, -1, 2}, -logSqrt2Pi},
		{"gamma", func(v []Var) Var { return GammaLpdf(v[0], v[1], v[2]) }, func(v []Var) Var { return GammaLupdf(v[0], v[1], v[2]) }, []float64{0.3, 1.5, 2}, 0},
		{"poisson", func(v []Var) Var { return PoissonLpmf(4, v[0]) }, func(v []Var) Var { return PoissonLupmf(4, v[0]) }, []float64{2.7}, -lg(5)},
		{"binomial", func(v []Var) Var { return BinomialLpmf(3, 10, v[0]) }, func(v []Var) Var { return BinomialLupmf(3, 10, v[0]) }, []float64{0.3}, math.Log(120)},
		{"neg_binomial_2", func(v []Var) Var { return NegBinomial2Lpmf(4, v[0], v[1]) }, func(v []Var) Var { return NegBinomial2Lupmf(4, v[0], v[1]) }, []float64{2, 3}, 0},
	} {
		gf, vf := Gradient(nil, c.full, c.x)
		gu, vu := Gradient(nil, c.un, c.x)
		if !close(vf-vu, c.difference, 1e-14) || !close(eval(c.full, c.x)-eval(c.un, c.x), c.difference, 1e-14) {
			t.Errorf("%s: full − unnormalised = %g (on constants %g), want %g", c.name, vf-vu, eval(c.full, c.x)-eval(c.un, c.x), c.difference)
		}
		if vu != eval(c.un, c.x) {
			t.Errorf("%s: unnormalised %g recorded, %g on constants", c.name, vu, eval(c.un, c.x))
		}
		for j := range gf {
			if !close(gf[j], gu[j], 1e-14) {
				t.Errorf("%s: ∂%d %g and %g differ", c.name, j, gf[j], gu[j])
			}
		}
	}
}

func TestDensityOutsideSupport(t *testing.T) {
	var tp Tape
	y, b := tp.Var(-1), tp.Var(2)
	r := ExponentialLpdf(y, b)
	if !math.IsInf(r.Value(), -1) {
		t.Fatalf("exponential_lpdf(-1 | 2) = %g, want −Inf", r.Value())
	}
	tp.Backward(r)
	if tp.Adjoint(y) != 0 || tp.Adjoint(b) != 0 {
		t.Errorf("partials %g %g, want 0", tp.Adjoint(y), tp.Adjoint(b))
	}
	if r := UniformLpdf(Const(3), Const(0), Const(1)); !math.IsInf(r.Value(), -1) {
		t.Errorf("uniform_lpdf(3 | 0, 1) = %g", r.Value())
	}
}

func TestDensityErrors(t *testing.T) {
	c := Const
	for _, e := range []struct {
		op, arg string
		f       func()
	}{
		{"normal_lpdf", "sigma", func() { NormalLpdf(c(0), c(0), c(-1)) }},
		{"normal_lpdf", "sigma", func() { NormalLupdf(c(0), c(0), c(0)) }},
		{"normal_lpdf", "mu", func() { NormalLpdf(c(0), c(math.Inf(1)), c(1)) }},
		{"normal_lpdf", "y", func() { NormalLpdf(c(math.NaN()), c(0), c(1)) }},
		{"student_t_lpdf", "nu", func() { StudentTLpdf(c(0), c(0), c(0), c(1)) }},
		{"cauchy_lpdf", "sigma", func() { CauchyLpdf(c(0), c(0), c(math.Inf(1))) }},
		{"logistic_lpdf", "sigma", func() { LogisticLpdf(c(0), c(0), c(-2)) }},
		{"lognormal_lpdf", "sigma", func() { LognormalLpdf(c(1), c(0), c(-2)) }},
		{"exponential_lpdf", "beta", func() { ExponentialLpdf(c(1), c(0)) }},
		{"gamma_lpdf", "alpha", func() { GammaLpdf(c(1), c(-1), c(1)) }},
		{"inv_gamma_lpdf", "beta", func() { InvGammaLpdf(c(1), c(1), c(-1)) }},
		{"beta_lpdf", "beta", func() { BetaLpdf(c(0.5), c(1), c(0)) }},
		{"weibull_lpdf", "alpha", func() { WeibullLpdf(c(1), c(0), c(1)) }},
		{"uniform_lpdf", "alpha", func() { UniformLpdf(c(1), c(2), c(1)) }},
		{"poisson_lpmf", "n", func() { PoissonLpmf(-1, c(1)) }},
		{"poisson_lpmf", "lambda", func() { PoissonLpmf(1, c(-1)) }},
		{"poisson_log_lpmf", "n", func() { PoissonLogLpmf(-2, c(1)) }},
		{"binomial_lpmf", "theta", func() { BinomialLpmf(1, 3, c(1.5)) }},
		{"binomial_lpmf", "theta", func() { BinomialLpmf(1, 3, c(-0.1)) }},
		{"binomial_lpmf", "N", func() { BinomialLpmf(1, -3, c(0.5)) }},
		{"binomial_lpmf", "n", func() { BinomialLpmf(4, 3, c(0.5)) }},
		{"binomial_logit_lpmf", "n", func() { BinomialLogitLpmf(-1, 3, c(0.5)) }},
		{"bernoulli_logit_lpmf", "n", func() { BernoulliLogitLpmf(2, c(0.5)) }},
		{"neg_binomial_2_lpmf", "phi", func() { NegBinomial2Lpmf(2, c(1), c(0)) }},
		{"categorical_logit_lpmf", "n", func() { CategoricalLogitLpmf(0, []Var{c(1), c(2)}) }},
		{"categorical_logit_lpmf", "beta[1]", func() { CategoricalLogitLpmf(1, []Var{c(1), c(math.NaN())}) }},
	} {
		func() {
			defer func() {
				err, _ := recover().(error)
				var se *Error
				if !errors.Is(err, ErrDomain) || !errors.As(err, &se) || se.Op != e.op || !containsWord(se.Msg, e.arg) {
					t.Errorf("%s (%s): recovered %v", e.op, e.arg, err)
				}
			}()
			e.f()
		}()
	}
}

func containsWord(msg, w string) bool {
	return len(msg) >= len(w) && (msg[:len(w)] == w && (len(msg) == len(w) || msg[len(w)] == ' ' || msg[len(w)] == ':'))
}

// The multivariate densities, with L and theta built from free parameters
// inside the function so that central differences stay on the constraint.
func mvCases() []densCase {
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	// Dirichlet: theta = (a, b, 1 − a − b), alpha = (c, d, 1.5).
	dir := func(v []Var) Var {
		theta := []Var{v[0], v[1], Const(1).Sub(v[0]).Sub(v[1])}
		return DirichletLpdf(theta, []Var{v[2], v[3], Const(1.5)})
	}
	dx := []float64{0.2, 0.5, 2.5, 0.8}
	dref := distmv.NewDirichlet([]float64{2.5, 0.8, 1.5}, nil).LogProb([]float64{0.2, 0.5, 0.3})
	// Multivariate normal: y, mu and the 6 entries of a 3×3 L all variable.
	mvn := func(v []Var) Var {
		L := [][]Var{{v[6]}, {v[7], v[8]}, {v[9], v[10], v[11]}}
		return MultiNormalCholeskyLpdf(v[0:3], v[3:6], L)
	}
	mx := []float64{0.3, -1, 2, 0.1, 0.2, 0.3, 1.5, 0.4, 0.9, -0.3, 0.5, 1.2}
	Ld := mat.NewTriDense(3, mat.Lower, []float64{1.5, 0, 0, 0.4, 0.9, 0, -0.3, 0.5, 1.2})
	var S mat.SymDense
	S.SymOuterK(1, Ld)
	nrm, ok := distmv.NewNormal([]float64{0.1, 0.2, 0.3}, &S, nil)
	if !ok {
		panic("covariance not positive definite")
	}
	mref := nrm.LogProb([]float64{0.3, -1, 2})
	// LKJ, K = 2: L = [[1], [r, √(1−r²)]]; density (2η−2)·ln√(1−r²) −
	// (2η−1)·ln 2 − ln B(η, η).
	lkj2 := func(v []Var) Var {
		r, eta := v[0], v[1]
		return LkjCorrCholeskyLpdf([][]Var{{Const(1)}, {r, Const(1).Sub(r.Square()).Sqrt()}}, eta)
	}
	r, eta := 0.3, 1.7
	lref := (2*eta-2)*0.5*math.Log(1-r*r) - (2*eta-1)*math.Ln2 - (2*lg(eta) - lg(2*eta))
	// LKJ, K = 3: rows (1), (c₁, s₁), (c₂, s₂c₃, s₂s₃) with cₖ = cos θₖ.
	lkj3 := func(v []Var) Var {
		t1, t2, t3, eta := v[0], v[1], v[2], v[3]
		L := [][]Var{{Const(1)}, {t1.Cos(), t1.Sin()}, {t2.Cos(), t2.Sin().Mul(t3.Cos()), t2.Sin().Mul(t3.Sin())}}
		return LkjCorrCholeskyLpdf(L, eta)
	}
	// At η = 1 the density of R is uniform, 2/π², and the Jacobian is
	// L₂₂¹·L₃₃⁰.
	l3ref := math.Log(2/(math.Pi*math.Pi)) + math.Log(math.Sin(0.7))
	return []densCase{
		{"dirichlet", dir, dx, dref},
		{"multi_normal_cholesky", mvn, mx, mref},
		{"lkj_corr_cholesky K=2", lkj2, []float64{r, eta}, lref},
		{"lkj_corr_cholesky K=3", lkj3, []float64{0.7, 1.1, 0.4, 1}, l3ref},
		{"lkj_corr_cholesky K=3 η", lkj3, []float64{0.7, 1.1, 0.4, 2.3}, math.NaN()},
	}
}

func TestMultivariateDensities(t *testing.T) {
	for _, c := range mvCases() {
		g, v := Gradient(nil, c.f, c.x)
		if !math.IsNaN(c.want) && !close(v, c.want, 1e-13) {
			t.Errorf("%s%v = %.15g, want %.15g", c.name, c.x, v, c.want)
		}
		for j := range c.x {
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
		for j := range c.x {
			h := hstep(c.x[j])
			xp := append([]float64(nil), c.x...)
			xm := append([]float64(nil), c.x...)
			xp[j] += h
			xm[j] -= h
			gp, _ := Gradient(nil, c.f, xp)
			gm, _ := Gradient(nil, c.f, xm)
			for i := range c.x {
				if fd := (gp[i] - gm[i]) / (2 * h); !close(H.At(i, j), fd, 1e-5) {
					t.Errorf("%s%v: H[%d][%d] = %.12g, difference of gradients %.12g", c.name, c.x, i, j, H.At(i, j), fd)
				}
			}
		}
	}
}

func TestMultivariateDensityErrors(t *testing.T) {
	c := Const
	one := [][]Var{{c(1)}, {c(0.6), c(0.8)}}
	for _, e := range []struct {
		op, arg string
		err     error
		f       func()
	}{
		{"dirichlet_lpdf", "theta", ErrDomain, func() { DirichletLpdf([]Var{c(0.5), c(0.6)}, []Var{c(1), c(1)}) }},
		{"dirichlet_lpdf", "alpha[1]", ErrDomain, func() { DirichletLpdf([]Var{c(0.5), c(0.5)}, []Var{c(1), c(0)}) }},
		{"dirichlet_lpdf", "len(theta)", ErrSize, func() { DirichletLpdf([]Var{c(1)}, []Var{c(1), c(1)}) }},
		{"multi_normal_cholesky_lpdf", "L[1][1]", ErrDomain, func() {
			MultiNormalCholeskyLpdf([]Var{c(0), c(0)}, []Var{c(0), c(0)}, [][]Var{{c(1)}, {c(0), c(-1)}})
		}},
		{"multi_normal_cholesky_lpdf", "len(y)", ErrSize, func() { MultiNormalCholeskyLpdf([]Var{c(0)}, []Var{c(0), c(0)}, one) }},
		{"lkj_corr_cholesky_lpdf", "eta", ErrDomain, func() { LkjCorrCholeskyLpdf(one, c(0)) }},
		{"lkj_corr_cholesky_lpdf", "row", ErrDomain, func() { LkjCorrCholeskyLpdf([][]Var{{c(1)}, {c(0.6), c(0.7)}}, c(1)) }},
	} {
		func() {
			defer func() {
				err, _ := recover().(error)
				var se *Error
				if !errors.Is(err, e.err) || !errors.As(err, &se) || se.Op != e.op || !containsWord(se.Msg, e.arg) {
					t.Errorf("%s (%s): recovered %v", e.op, e.arg, err)
				}
			}()
			e.f()
		}()
	}
}
