package expr

import (
	"errors"
	"fmt"
	"maps"
	"math"

	"github.com/adjointgo/adjoint/scalar"
)

// The special functions and log densities of package scalar, by their names
// in Stan.

var stanUnary = map[string]func(scalar.Var) scalar.Var{
	"lgamma": scalar.Var.Lgamma, "digamma": scalar.Var.Digamma,
	"trigamma": scalar.Var.Trigamma, "erfc": scalar.Var.Erfc,
	"Phi": scalar.Var.Phi, "inv_Phi": scalar.Var.InvPhi,
	"logit": scalar.Var.Logit, "inv_logit": scalar.Var.InvLogit,
	"log_inv_logit": scalar.Var.LogInvLogit, "log1m_inv_logit": scalar.Var.Log1mInvLogit,
	"log1m": scalar.Var.Log1m, "log1m_exp": scalar.Var.Log1mExp,
	"log1p_exp": scalar.Var.Log1pExp,
	"asinh":     scalar.Var.Asinh, "acosh": scalar.Var.Acosh, "atanh": scalar.Var.Atanh,
	"floor": scalar.Var.Floor, "ceil": scalar.Var.Ceil,
	"round": scalar.Var.Round, "trunc": scalar.Var.Trunc,
}

var stanBinary = map[string]func(a, b scalar.Var) scalar.Var{
	"lbeta": scalar.Var.Lbeta, "lchoose": scalar.Var.Lchoose,
	"binomial_coefficient_log": scalar.Var.Lchoose,
	"gamma_p":                  scalar.Var.GammaP, "gamma_q": scalar.Var.GammaQ,
	"log_diff_exp": scalar.Var.LogDiffExp,
	"fmin":         scalar.Var.Min, "fmax": scalar.Var.Max,
	"modified_bessel_first_kind":  bessel(scalar.Var.BesselI0, scalar.Var.BesselI1),
	"modified_bessel_second_kind": bessel(scalar.Var.BesselK0, scalar.Var.BesselK1),
}

// fixedFunc is a function of a fixed number of arguments.
type fixedFunc struct {
	n int
	f func([]scalar.Var) scalar.Var
}

var stanFixed = map[string]fixedFunc{
	"inc_beta": {3, func(v []scalar.Var) scalar.Var { return v[0].IncBeta(v[1], v[2]) }},
	"fma":      {3, func(v []scalar.Var) scalar.Var { return v[0].Fma(v[1], v[2]) }},
}

var stanVariadic = map[string]func([]scalar.Var) scalar.Var{
	"log_sum_exp": func(v []scalar.Var) scalar.Var {
		if len(v) == 2 {
			return v[0].LogSumExp2(v[1])
		}
		return scalar.LogSumExp(v)
	},
}

// densities lists the log densities: f takes the real arguments in Stan's
// order; the counts of a mass function come first and must be integers.
var densities = []struct {
	name   string
	n      int // arguments, counts included; 0: 2 or more
	counts int // leading integer arguments
	f      func(propto bool, c []int, v []scalar.Var) scalar.Var
}{
	{"normal", 3, 0, real3(scalar.NormalLpdf, scalar.NormalLupdf)},
	{"cauchy", 3, 0, real3(scalar.CauchyLpdf, scalar.CauchyLupdf)},
	{"logistic", 3, 0, real3(scalar.LogisticLpdf, scalar.LogisticLupdf)},
	{"lognormal", 3, 0, real3(scalar.LognormalLpdf, scalar.LognormalLupdf)},
	{"gamma", 3, 0, real3(scalar.GammaLpdf, scalar.GammaLupdf)},
	{"inv_gamma", 3, 0, real3(scalar.InvGammaLpdf, scalar.InvGammaLupdf)},
	{"beta", 3, 0, real3(scalar.BetaLpdf, scalar.BetaLupdf)},
	{"weibull", 3, 0, real3(scalar.WeibullLpdf, scalar.WeibullLupdf)},
	{"uniform", 3, 0, real3(scalar.UniformLpdf, scalar.UniformLupdf)},
	{"student_t", 4, 0, func(p bool, _ []int, v []scalar.Var) scalar.Var {
		return pick(p, scalar.StudentTLpdf, scalar.StudentTLupdf)(v[0], v[1], v[2], v[3])
	}},
	{"exponential", 2, 0, func(p bool, _ []int, v []scalar.Var) scalar.Var {
		return pick(p, scalar.ExponentialLpdf, scalar.ExponentialLupdf)(v[0], v[1])
	}},
	{"poisson", 2, 1, func(p bool, c []int, v []scalar.Var) scalar.Var {
		return pick(p, scalar.PoissonLpmf, scalar.PoissonLupmf)(c[0], v[0])
	}},
	{"poisson_log", 2, 1, func(p bool, c []int, v []scalar.Var) scalar.Var {
		return pick(p, scalar.PoissonLogLpmf, scalar.PoissonLogLupmf)(c[0], v[0])
	}},
	{"bernoulli_logit", 2, 1, func(p bool, c []int, v []scalar.Var) scalar.Var {
		return pick(p, scalar.BernoulliLogitLpmf, scalar.BernoulliLogitLupmf)(c[0], v[0])
	}},
	{"binomial", 3, 2, func(p bool, c []int, v []scalar.Var) scalar.Var {
		return pick(p, scalar.BinomialLpmf, scalar.BinomialLupmf)(c[0], c[1], v[0])
	}},
	{"binomial_logit", 3, 2, func(p bool, c []int, v []scalar.Var) scalar.Var {
		return pick(p, scalar.BinomialLogitLpmf, scalar.BinomialLogitLupmf)(c[0], c[1], v[0])
	}},
	{"neg_binomial_2", 3, 1, func(p bool, c []int, v []scalar.Var) scalar.Var {
		return pick(p, scalar.NegBinomial2Lpmf, scalar.NegBinomial2Lupmf)(c[0], v[0], v[1])
	}},
	{"categorical_logit", 0, 1, func(p bool, c []int, v []scalar.Var) scalar.Var {
		return pick(p, scalar.CategoricalLogitLpmf, scalar.CategoricalLogitLupmf)(c[0], v)
	}},
}

func pick[F any](propto bool, full, un F) F {
	if propto {
		return un
	}
	return full
}

func real3(full, un func(a, b, c scalar.Var) scalar.Var) func(bool, []int, []scalar.Var) scalar.Var {
	return func(p bool, _ []int, v []scalar.Var) scalar.Var { return pick(p, full, un)(v[0], v[1], v[2]) }
}

// bessel makes Stan's modified_bessel_*_kind(v, z) for the orders v = 0
// and 1 (NaN for any other order).
func bessel(f0, f1 func(scalar.Var) scalar.Var) func(a, b scalar.Var) scalar.Var {
	return func(v, z scalar.Var) scalar.Var {
		switch v.Value() {
		case 0:
			return f0(z)
		case 1:
			return f1(z)
		}
		return scalar.Const(math.NaN())
	}
}

// density wraps a log density for the expression language: the counts are
// the values of the leading arguments, and arguments outside the density's
// domain (a negative scale, a non-integer count, …), where package scalar
// panics with scalar.ErrDomain, give NaN, with NaN partials in the variable
// arguments so that a gradient does not look valid.
func density(name string, counts int, propto bool, f func(bool, []int, []scalar.Var) scalar.Var) func([]scalar.Var) scalar.Var {
	return func(v []scalar.Var) (r scalar.Var) {
		defer func() {
			if e := recover(); e != nil {
				if err, ok := e.(error); ok && errors.Is(err, scalar.ErrDomain) {
					r = scalar.Const(math.NaN())
					for _, a := range v {
						if !a.IsConst() {
							r = r.Add(a.MulC(math.NaN()))
						}
					}
					return
				}
				panic(e)
			}
		}()
		c := make([]int, counts)
		for k := range c {
			x := v[k].Value()
			if x != math.Trunc(x) || math.Abs(x) > 1<<52 {
				panic(&scalar.Error{Op: name, Err: scalar.ErrDomain, Msg: fmt.Sprintf("argument %d = %g: must be an integer", k+1, x)})
			}
			c[k] = int(x)
		}
		return f(propto, c, v[counts:])
	}
}

func init() {
	maps.Copy(unary, stanUnary)
	maps.Copy(binaryFuncs, stanBinary)
	maps.Copy(variadic, stanVariadic)
	for _, d := range densities {
		for _, propto := range []bool{false, true} {
			suffix := "_lpdf"
			if d.counts > 0 {
				suffix = "_lpmf"
			}
			if propto {
				suffix = suffix[:2] + "u" + suffix[2:]
			}
			name := d.name + suffix
			f := density(name, d.counts, propto, d.f)
			if d.n == 0 {
				variadicMin[name] = d.counts + 1
				variadic[name] = f
			} else {
				fixed[name] = fixedFunc{d.n, f}
			}
		}
	}
	maps.Copy(fixed, stanFixed)
}

// isDensity reports whether name is a log density or mass function.
func isDensity(name string) bool {
	for _, s := range []string{"_lpdf", "_lupdf", "_lpmf", "_lupmf"} {
		if len(name) > len(s) && name[len(name)-len(s):] == s {
			return true
		}
	}
	return false
}
