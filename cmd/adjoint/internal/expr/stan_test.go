package expr

import (
	"math"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/scalar"
)

func TestStanFunctions(t *testing.T) {
	x, y := 2.0, 1.0
	c := scalar.Const
	for _, k := range []struct {
		src  string
		want float64
	}{
		{"lgamma(x) + log1m_exp(-y)", c(x).Lgamma().Add(c(-y).Log1mExp()).Value()},
		{"digamma(x) + trigamma(x) + erfc(y) + Phi(y) + inv_Phi(0.3)",
			c(x).Digamma().Value() + c(x).Trigamma().Value() + math.Erfc(y) + c(y).Phi().Value() + c(0.3).InvPhi().Value()},
		{"logit(0.3) + inv_logit(y) + log_inv_logit(y) + log1m_inv_logit(y)",
			math.Log(0.3/0.7) + 1/(1+math.Exp(-y)) - math.Log1p(math.Exp(-y)) - math.Log1p(math.Exp(y))},
		{"log1m(0.25) + log1p_exp(y) + asinh(x) + acosh(x) + atanh(0.5)",
			math.Log(0.75) + math.Log1p(math.Exp(y)) + math.Asinh(x) + math.Acosh(x) + math.Atanh(0.5)},
		{"floor(2.5) + ceil(2.5) + round(2.5) + trunc(-2.5)", 2 + 3 + 3 - 2},
		{"lbeta(x, y) + lchoose(5, 2) + binomial_coefficient_log(5, 2)", c(x).Lbeta(c(y)).Value() + 2*math.Log(10)},
		{"gamma_p(x, y) + gamma_q(x, y)", 1},
		{"log_diff_exp(x, y) + log_sum_exp(x, y) + log_sum_exp(x, y, 0)",
			math.Log(math.Exp(x)-math.Exp(y)) + math.Log(math.Exp(x)+math.Exp(y)) + math.Log(math.Exp(x)+math.Exp(y)+1)},
		{"fmin(x, y) + fmax(x, y) + fma(x, y, 3) + inc_beta(x, y, 0.5)", 3 + 5 + 0.25},
		{"modified_bessel_first_kind(0, y) + modified_bessel_second_kind(1, y)",
			c(y).BesselI0().Value() + c(y).BesselK1().Value()},
		{"modified_bessel_first_kind(2, y)", math.NaN()},
		{"normal_lpdf(y, x, 2)", scalar.NormalLpdf(c(y), c(x), c(2)).Value()},
		{"normal_lpdf(y | x, 2)", scalar.NormalLpdf(c(y), c(x), c(2)).Value()},
		{"normal_lupdf(y | x, 2)", scalar.NormalLpdf(c(y), c(x), c(2)).Value() + 0.5*math.Log(2*math.Pi)},
		{"student_t_lpdf(y | 3, x, 2) + cauchy_lpdf(y | x, 2) + logistic_lpdf(y | x, 2)",
			scalar.StudentTLpdf(c(y), c(3), c(x), c(2)).Value() + scalar.CauchyLpdf(c(y), c(x), c(2)).Value() + scalar.LogisticLpdf(c(y), c(x), c(2)).Value()},
		{"lognormal_lpdf(y | x, 2) + exponential_lpdf(y | x) + gamma_lpdf(y | x, 2) + inv_gamma_lpdf(y | x, 2)",
			scalar.LognormalLpdf(c(y), c(x), c(2)).Value() + scalar.ExponentialLpdf(c(y), c(x)).Value() + scalar.GammaLpdf(c(y), c(x), c(2)).Value() + scalar.InvGammaLpdf(c(y), c(x), c(2)).Value()},
		{"beta_lpdf(0.3 | x, y) + weibull_lpdf(y | x, 2) + uniform_lpdf(y | 0, x)",
			scalar.BetaLpdf(c(0.3), c(x), c(y)).Value() + scalar.WeibullLpdf(c(y), c(x), c(2)).Value() - math.Log(x)},
		{"poisson_lpmf(3 | x) + poisson_log_lpmf(3 | y) + bernoulli_logit_lpmf(1 | y)",
			scalar.PoissonLpmf(3, c(x)).Value() + scalar.PoissonLogLpmf(3, c(y)).Value() + scalar.BernoulliLogitLpmf(1, c(y)).Value()},
		{"binomial_lpmf(3 | 10, 0.3) + binomial_logit_lpmf(3 | 10, y) + neg_binomial_2_lpmf(4 | x, y)",
			scalar.BinomialLpmf(3, 10, c(0.3)).Value() + scalar.BinomialLogitLpmf(3, 10, c(y)).Value() + scalar.NegBinomial2Lpmf(4, c(x), c(y)).Value()},
		{"categorical_logit_lpmf(2 | x, y, 0)", y - math.Log(math.Exp(x)+math.Exp(y)+1)},
		// Outside a domain, or a count that is not an integer: NaN.
		{"normal_lpdf(y | x, -1)", math.NaN()},
		{"poisson_lpmf(2.5 | x)", math.NaN()},
		{"categorical_logit_lpmf(4 | x, y, 0)", math.NaN()},
	} {
		e, err := Parse(k.src)
		if err != nil {
			t.Errorf("%q: %v", k.src, err)
			continue
		}
		vals := map[string]float64{"x": x, "y": y}
		in := make([]float64, len(e.Vars()))
		for j, n := range e.Vars() {
			in[j] = vals[n]
		}
		got := e.EvalFloat(in)
		if math.IsNaN(k.want) != math.IsNaN(got) || math.Abs(got-k.want) > 1e-12*math.Max(1, math.Abs(k.want)) {
			t.Errorf("%q = %.15g, want %.15g", k.src, got, k.want)
		}
	}
}

// The gradients of the Stan functions through the tape match central
// differences.
func TestStanGradients(t *testing.T) {
	for _, src := range []string{
		"lgamma(x) + log1m_exp(-y)",
		"gamma_p(x, y) * inc_beta(x, y, 0.3) + lbeta(x, y)",
		"normal_lpdf(1.5 | x, y) + gamma_lupdf(y | x, 2)",
		"neg_binomial_2_lpmf(4 | x, y) + categorical_logit_lpmf(1 | x, y)",
	} {
		e, err := Parse(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		in := []float64{2, 1.2}
		if e.Vars()[0] != "x" {
			in[0], in[1] = in[1], in[0]
		}
		var tp scalar.Tape
		v := tp.Inputs(in).Vars(nil)
		tp.Backward(e.Eval(v))
		for j := range in {
			h := 1e-5
			p := append([]float64(nil), in...)
			m := append([]float64(nil), in...)
			p[j] += h
			m[j] -= h
			fd := (e.EvalFloat(p) - e.EvalFloat(m)) / (2 * h)
			if g := tp.Adjoint(v[j]); math.Abs(g-fd) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("%q: ∂/∂%s = %.10g, central difference %.10g", src, e.Vars()[j], g, fd)
			}
		}
	}
}

// A density outside its domain is NaN with NaN partials.
func TestStanDomainNaN(t *testing.T) {
	e, err := Parse("normal_lpdf(x | 0, s) + x")
	if err != nil {
		t.Fatal(err)
	}
	var tp scalar.Tape
	v := tp.Inputs([]float64{1, -1}).Vars(nil)
	y := e.Eval(v)
	tp.Backward(y)
	if !math.IsNaN(y.Value()) || !math.IsNaN(tp.Adjoint(v[0])) || !math.IsNaN(tp.Adjoint(v[1])) {
		t.Errorf("value %g, partials %g %g; want NaN", y.Value(), tp.Adjoint(v[0]), tp.Adjoint(v[1]))
	}
}

func TestStanSyntaxErrors(t *testing.T) {
	for _, c := range []struct{ src, frag string }{
		{"normal_lpdf(x, 1)", "normal_lpdf takes 3 arguments, got 2"},
		{"inc_beta(x, 1)", "inc_beta takes 3 arguments, got 2"},
		{"categorical_logit_lpmf(1)", "categorical_logit_lpmf takes at least 2 arguments, got 1"},
		{"lgamma(x | 1)", `expected "," or ")"`},
		{"normal_lpdf(x, 1 | 2)", `expected "," or ")"`},
		{"x | y", `unexpected "|"`},
	} {
		_, err := Parse(c.src)
		if err == nil || !strings.Contains(err.Error(), c.frag) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.frag)
		}
	}
}
