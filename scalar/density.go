package scalar

import (
	"math"
	"strconv"
)

// Log densities and log probability mass functions of Stan's common
// distributions, written with the operations of Var and the special
// functions, so that they differentiate in every real argument, also in
// tangent mode (Hessians are exact). The names and parametrisations are
// Stan's: NormalLpdf(y, mu, sigma) is normal_lpdf(y | mu, sigma).
//
// Each density has two forms. The Lpdf (Lpmf) form is the full log density,
// with every normalising constant. The Lupdf (Lupmf) form is unnormalised: it
// drops the terms that depend on none of the arguments (−½ ln 2π, the
// −ln n! of a Poisson count, the ln C(N, n) of a binomial, …), which a
// sampler or an optimiser does not need. Unlike Stan's _lupdf it keeps the
// terms whose arguments are all constants (−ln σ for a constant σ): a [Func]
// must have the same value evaluated on constants ([Objective.Func]) as
// recorded on a tape ([Objective.Grad]), so no term may depend on whether an
// operand is a variable.
//
// A parameter outside its domain (a scale that is not positive and finite, a
// probability outside [0, 1], a negative count, a location that is not
// finite, a NaN variate) panics with an *Error wrapping ErrDomain that names
// the density and the argument; ad.Try recovers it. A variate outside the
// support of a continuous density (y < 0 for the exponential, y outside
// [alpha, beta] for the uniform, …) is not an error: the log density is −Inf,
// with zero partials.

// lp accumulates the terms of a log density.
type lp struct {
	propto bool // drop the normalising constants
	v      Var
}

func (a *lp) add(term Var) {
	if a.v.t == nil && a.v.v == 0 {
		a.v = term
		return
	}
	a.v = a.v.Add(term)
}

func (a *lp) sub(term Var) { a.add(term.Neg()) }

// addC adds a normalising constant, a term that depends on no argument.
func (a *lp) addC(c float64) {
	if !a.propto {
		a.add(Const(c))
	}
}

// negInf returns −Inf with zero partials, on the tape of the first variable
// among xs (a constant if there is none).
func negInf(xs ...Var) Var {
	for _, x := range xs {
		if x.t != nil {
			return x.MulC(0).AddC(math.Inf(-1))
		}
	}
	return Const(math.Inf(-1))
}

func checkPos(op, name string, x Var) {
	if !(x.v > 0) || math.IsInf(x.v, 1) {
		fail(ErrDomain, op, "%s = %g: must be positive and finite", name, x.v)
	}
}

func checkFinite(op, name string, x Var) {
	if math.IsNaN(x.v) || math.IsInf(x.v, 0) {
		fail(ErrDomain, op, "%s = %g: must be finite", name, x.v)
	}
}

func checkNotNaN(op, name string, x Var) {
	if math.IsNaN(x.v) {
		fail(ErrDomain, op, "%s is NaN", name)
	}
}

func checkProb(op, name string, x Var) {
	if !(x.v >= 0 && x.v <= 1) {
		fail(ErrDomain, op, "%s = %g: must be in [0, 1]", name, x.v)
	}
}

func checkCount(op, name string, n int) {
	if n < 0 {
		fail(ErrDomain, op, "%s = %d: must be nonnegative", name, n)
	}
}

// xlog returns c·l for l the logarithm of y, taken to be 0 where c and y
// are both 0 (as Stan's multiply_log), so that the density of a shape of 1
// is finite at the end of its support.
func xlog(c, l, y Var) Var {
	if c.v == 0 && y.v == 0 {
		return Const(0)
	}
	return c.Mul(l)
}

const (
	logSqrt2Pi = 0.91893853320467274178 // ln √(2π)
	logPi      = 1.14472988584940017414 // ln π
)

// NormalLpdf returns the log density of the normal distribution with mean
// mu and standard deviation sigma > 0 at y.
func NormalLpdf(y, mu, sigma Var) Var { return normalLpdf(false, y, mu, sigma) }

// NormalLupdf is [NormalLpdf] without its constant terms.
func NormalLupdf(y, mu, sigma Var) Var { return normalLpdf(true, y, mu, sigma) }

func normalLpdf(propto bool, y, mu, sigma Var) Var {
	const op = "normal_lpdf"
	checkNotNaN(op, "y", y)
	checkFinite(op, "mu", mu)
	checkPos(op, "sigma", sigma)
	a := lp{propto: propto}
	a.add(y.Sub(mu).Div(sigma).Square().MulC(-0.5))
	a.sub(sigma.Log())
	a.addC(-logSqrt2Pi)
	return a.v
}

// StudentTLpdf returns the log density of Student's t distribution with nu
// > 0 degrees of freedom, location mu and scale sigma > 0 at y.
func StudentTLpdf(y, nu, mu, sigma Var) Var { return studentTLpdf(false, y, nu, mu, sigma) }

// StudentTLupdf is [StudentTLpdf] without its constant terms.
func StudentTLupdf(y, nu, mu, sigma Var) Var { return studentTLpdf(true, y, nu, mu, sigma) }

func studentTLpdf(propto bool, y, nu, mu, sigma Var) Var {
	const op = "student_t_lpdf"
	checkNotNaN(op, "y", y)
	checkPos(op, "nu", nu)
	checkFinite(op, "mu", mu)
	checkPos(op, "sigma", sigma)
	a := lp{propto: propto}
	h := nu.MulC(0.5)
	a.add(h.AddC(0.5).Lgamma().Sub(h.Lgamma()).Sub(nu.Log().MulC(0.5)))
	a.addC(-0.5 * logPi)
	a.sub(sigma.Log())
	z := y.Sub(mu).Div(sigma)
	a.sub(h.AddC(0.5).Mul(z.Square().Div(nu).Log1p()))
	return a.v
}

// CauchyLpdf returns the log density of the Cauchy distribution with
// location mu and scale sigma > 0 at y.
func CauchyLpdf(y, mu, sigma Var) Var { return cauchyLpdf(false, y, mu, sigma) }

// CauchyLupdf is [CauchyLpdf] without its constant terms.
func CauchyLupdf(y, mu, sigma Var) Var { return cauchyLpdf(true, y, mu, sigma) }

func cauchyLpdf(propto bool, y, mu, sigma Var) Var {
	const op = "cauchy_lpdf"
	checkNotNaN(op, "y", y)
	checkFinite(op, "mu", mu)
	checkPos(op, "sigma", sigma)
	a := lp{propto: propto}
	a.addC(-logPi)
	a.sub(sigma.Log())
	a.sub(y.Sub(mu).Div(sigma).Square().Log1p())
	return a.v
}

// LogisticLpdf returns the log density of the logistic distribution with
// location mu and scale sigma > 0 at y.
func LogisticLpdf(y, mu, sigma Var) Var { return logisticLpdf(false, y, mu, sigma) }

// LogisticLupdf is [LogisticLpdf] without its constant terms.
func LogisticLupdf(y, mu, sigma Var) Var { return logisticLpdf(true, y, mu, sigma) }

func logisticLpdf(propto bool, y, mu, sigma Var) Var {
	const op = "logistic_lpdf"
	checkNotNaN(op, "y", y)
	checkFinite(op, "mu", mu)
	checkPos(op, "sigma", sigma)
	a := lp{propto: propto}
	z := y.Sub(mu).Div(sigma)
	a.sub(z)
	a.add(z.Neg().Log1pExp().MulC(-2))
	a.sub(sigma.Log())
	return a.v
}

// LognormalLpdf returns the log density of the lognormal distribution whose
// logarithm has mean mu and standard deviation sigma > 0, at y (−Inf for
// y ≤ 0).
func LognormalLpdf(y, mu, sigma Var) Var { return lognormalLpdf(false, y, mu, sigma) }

// LognormalLupdf is [LognormalLpdf] without its constant terms.
func LognormalLupdf(y, mu, sigma Var) Var { return lognormalLpdf(true, y, mu, sigma) }

func lognormalLpdf(propto bool, y, mu, sigma Var) Var {
	const op = "lognormal_lpdf"
	checkNotNaN(op, "y", y)
	checkFinite(op, "mu", mu)
	checkPos(op, "sigma", sigma)
	if y.v <= 0 {
		return negInf(y, mu, sigma)
	}
	a := lp{propto: propto}
	ly := y.Log()
	a.add(ly.Sub(mu).Div(sigma).Square().MulC(-0.5))
	a.sub(sigma.Log())
	a.sub(ly)
	a.addC(-logSqrt2Pi)
	return a.v
}

// ExponentialLpdf returns the log density of the exponential distribution
// with rate beta > 0 at y (−Inf for y < 0).
func ExponentialLpdf(y, beta Var) Var { return exponentialLpdf(false, y, beta) }

// ExponentialLupdf is [ExponentialLpdf] without its constant terms.
func ExponentialLupdf(y, beta Var) Var { return exponentialLpdf(true, y, beta) }

func exponentialLpdf(propto bool, y, beta Var) Var {
	const op = "exponential_lpdf"
	checkNotNaN(op, "y", y)
	checkPos(op, "beta", beta)
	if y.v < 0 {
		return negInf(y, beta)
	}
	a := lp{propto: propto}
	a.add(beta.Log())
	a.sub(beta.Mul(y))
	return a.v
}

// GammaLpdf returns the log density of the gamma distribution with shape
// alpha > 0 and rate beta > 0 at y (−Inf for y < 0).
func GammaLpdf(y, alpha, beta Var) Var { return gammaLpdf(false, y, alpha, beta) }

// GammaLupdf is [GammaLpdf] without its constant terms.
func GammaLupdf(y, alpha, beta Var) Var { return gammaLpdf(true, y, alpha, beta) }

func gammaLpdf(propto bool, y, alpha, beta Var) Var {
	const op = "gamma_lpdf"
	checkNotNaN(op, "y", y)
	checkPos(op, "alpha", alpha)
	checkPos(op, "beta", beta)
	if y.v < 0 {
		return negInf(y, alpha, beta)
	}
	a := lp{propto: propto}
	a.add(alpha.Mul(beta.Log()))
	a.sub(alpha.Lgamma())
	a.add(xlog(alpha.SubC(1), y.Log(), y))
	a.sub(beta.Mul(y))
	return a.v
}

// InvGammaLpdf returns the log density of the inverse gamma distribution
// with shape alpha > 0 and scale beta > 0 at y (−Inf for y ≤ 0).
func InvGammaLpdf(y, alpha, beta Var) Var { return invGammaLpdf(false, y, alpha, beta) }

// InvGammaLupdf is [InvGammaLpdf] without its constant terms.
func InvGammaLupdf(y, alpha, beta Var) Var { return invGammaLpdf(true, y, alpha, beta) }

func invGammaLpdf(propto bool, y, alpha, beta Var) Var {
	const op = "inv_gamma_lpdf"
	checkNotNaN(op, "y", y)
	checkPos(op, "alpha", alpha)
	checkPos(op, "beta", beta)
	if y.v <= 0 {
		return negInf(y, alpha, beta)
	}
	a := lp{propto: propto}
	a.add(alpha.Mul(beta.Log()))
	a.sub(alpha.Lgamma())
	a.sub(alpha.AddC(1).Mul(y.Log()))
	a.sub(beta.Div(y))
	return a.v
}

// BetaLpdf returns the log density of the beta distribution with shapes
// alpha > 0 and beta > 0 at y (−Inf outside [0, 1]).
func BetaLpdf(y, alpha, beta Var) Var { return betaLpdf(false, y, alpha, beta) }

// BetaLupdf is [BetaLpdf] without its constant terms.
func BetaLupdf(y, alpha, beta Var) Var { return betaLpdf(true, y, alpha, beta) }

func betaLpdf(propto bool, y, alpha, beta Var) Var {
	const op = "beta_lpdf"
	checkNotNaN(op, "y", y)
	checkPos(op, "alpha", alpha)
	checkPos(op, "beta", beta)
	if y.v < 0 || y.v > 1 {
		return negInf(y, alpha, beta)
	}
	a := lp{propto: propto}
	a.add(xlog(alpha.SubC(1), y.Log(), y))
	a.add(xlog(beta.SubC(1), y.Log1m(), Const(1).Sub(y)))
	a.sub(alpha.Lbeta(beta))
	return a.v
}

// WeibullLpdf returns the log density of the Weibull distribution with shape
// alpha > 0 and scale sigma > 0 at y (−Inf for y < 0).
func WeibullLpdf(y, alpha, sigma Var) Var { return weibullLpdf(false, y, alpha, sigma) }

// WeibullLupdf is [WeibullLpdf] without its constant terms.
func WeibullLupdf(y, alpha, sigma Var) Var { return weibullLpdf(true, y, alpha, sigma) }

func weibullLpdf(propto bool, y, alpha, sigma Var) Var {
	const op = "weibull_lpdf"
	checkNotNaN(op, "y", y)
	checkPos(op, "alpha", alpha)
	checkPos(op, "sigma", sigma)
	if y.v < 0 {
		return negInf(y, alpha, sigma)
	}
	a := lp{propto: propto}
	lz := y.Log().Sub(sigma.Log()) // ln(y/σ)
	a.add(alpha.Log())
	a.sub(sigma.Log())
	a.add(xlog(alpha.SubC(1), lz, y))
	if y.v > 0 { // (y/σ)^α is 0 at y = 0
		a.sub(alpha.Mul(lz).Exp())
	}
	return a.v
}

// UniformLpdf returns the log density of the uniform distribution on
// [alpha, beta], alpha < beta, at y (−Inf outside).
func UniformLpdf(y, alpha, beta Var) Var { return uniformLpdf(false, y, alpha, beta) }

// UniformLupdf is [UniformLpdf] without its constant terms.
func UniformLupdf(y, alpha, beta Var) Var { return uniformLpdf(true, y, alpha, beta) }

func uniformLpdf(propto bool, y, alpha, beta Var) Var {
	const op = "uniform_lpdf"
	checkNotNaN(op, "y", y)
	checkFinite(op, "alpha", alpha)
	checkFinite(op, "beta", beta)
	if !(alpha.v < beta.v) {
		fail(ErrDomain, op, "alpha = %g, beta = %g: must have alpha < beta", alpha.v, beta.v)
	}
	if y.v < alpha.v || y.v > beta.v {
		return negInf(y, alpha, beta)
	}
	a := lp{propto: propto}
	a.sub(beta.Sub(alpha).Log())
	return a.v
}

// PoissonLpmf returns the log probability of the count n under the Poisson
// distribution with rate lambda ≥ 0.
func PoissonLpmf(n int, lambda Var) Var { return poissonLpmf(false, n, lambda) }

// PoissonLupmf is [PoissonLpmf] without its constant terms.
func PoissonLupmf(n int, lambda Var) Var { return poissonLpmf(true, n, lambda) }

func poissonLpmf(propto bool, n int, lambda Var) Var {
	const op = "poisson_lpmf"
	checkCount(op, "n", n)
	if !(lambda.v >= 0) || math.IsInf(lambda.v, 1) {
		fail(ErrDomain, op, "lambda = %g: must be nonnegative and finite", lambda.v)
	}
	if lambda.v == 0 && n > 0 {
		return negInf(lambda)
	}
	a := lp{propto: propto}
	if n > 0 {
		a.add(lambda.Log().MulC(float64(n)))
	}
	a.sub(lambda)
	a.addC(-lgammaInt(n + 1))
	return a.v
}

// PoissonLogLpmf returns the log probability of the count n under the
// Poisson distribution with log rate alpha.
func PoissonLogLpmf(n int, alpha Var) Var { return poissonLogLpmf(false, n, alpha) }

// PoissonLogLupmf is [PoissonLogLpmf] without its constant terms.
func PoissonLogLupmf(n int, alpha Var) Var { return poissonLogLpmf(true, n, alpha) }

func poissonLogLpmf(propto bool, n int, alpha Var) Var {
	const op = "poisson_log_lpmf"
	checkCount(op, "n", n)
	if math.IsNaN(alpha.v) || math.IsInf(alpha.v, 1) {
		fail(ErrDomain, op, "alpha = %g: must be less than +Inf", alpha.v)
	}
	if math.IsInf(alpha.v, -1) && n > 0 {
		return negInf(alpha)
	}
	a := lp{propto: propto}
	if n > 0 {
		a.add(alpha.MulC(float64(n)))
	}
	a.sub(alpha.Exp())
	a.addC(-lgammaInt(n + 1))
	return a.v
}

func lgammaInt(n int) float64 {
	v, _ := math.Lgamma(float64(n))
	return v
}

// lchooseInt returns ln C(N, n).
func lchooseInt(N, n int) float64 { return lgammaInt(N+1) - lgammaInt(n+1) - lgammaInt(N-n+1) }

// BinomialLpmf returns the log probability of n successes in N trials of
// success probability theta in [0, 1].
func BinomialLpmf(n, N int, theta Var) Var { return binomialLpmf(false, n, N, theta) }

// BinomialLupmf is [BinomialLpmf] without its constant terms.
func BinomialLupmf(n, N int, theta Var) Var { return binomialLpmf(true, n, N, theta) }

func checkTrials(op string, n, N int) {
	checkCount(op, "n", n)
	checkCount(op, "N", N)
	if n > N {
		fail(ErrDomain, op, "n = %d: must be at most N = %d", n, N)
	}
}

func binomialLpmf(propto bool, n, N int, theta Var) Var {
	const op = "binomial_lpmf"
	checkTrials(op, n, N)
	checkProb(op, "theta", theta)
	a := lp{propto: propto}
	a.addC(lchooseInt(N, n))
	if n > 0 {
		a.add(theta.Log().MulC(float64(n)))
	}
	if N-n > 0 {
		a.add(theta.Log1m().MulC(float64(N - n)))
	}
	return a.v
}

// BinomialLogitLpmf returns the log probability of n successes in N trials
// of success probability inv_logit(alpha).
func BinomialLogitLpmf(n, N int, alpha Var) Var { return binomialLogitLpmf(false, n, N, alpha) }

// BinomialLogitLupmf is [BinomialLogitLpmf] without its constant terms.
func BinomialLogitLupmf(n, N int, alpha Var) Var { return binomialLogitLpmf(true, n, N, alpha) }

func binomialLogitLpmf(propto bool, n, N int, alpha Var) Var {
	const op = "binomial_logit_lpmf"
	checkTrials(op, n, N)
	checkNotNaN(op, "alpha", alpha)
	a := lp{propto: propto}
	a.addC(lchooseInt(N, n))
	if n > 0 {
		a.add(alpha.LogInvLogit().MulC(float64(n)))
	}
	if N-n > 0 {
		a.add(alpha.Log1mInvLogit().MulC(float64(N - n)))
	}
	return a.v
}

// BernoulliLogitLpmf returns the log probability of the outcome n ∈ {0, 1}
// of a Bernoulli trial with success probability inv_logit(alpha).
func BernoulliLogitLpmf(n int, alpha Var) Var { return bernoulliLogitLpmf(false, n, alpha) }

// BernoulliLogitLupmf is [BernoulliLogitLpmf], which has no constant terms.
func BernoulliLogitLupmf(n int, alpha Var) Var { return bernoulliLogitLpmf(true, n, alpha) }

func bernoulliLogitLpmf(propto bool, n int, alpha Var) Var {
	const op = "bernoulli_logit_lpmf"
	if n != 0 && n != 1 {
		fail(ErrDomain, op, "n = %d: must be 0 or 1", n)
	}
	checkNotNaN(op, "alpha", alpha)
	a := lp{propto: propto}
	if n == 1 {
		a.add(alpha.LogInvLogit())
	} else {
		a.add(alpha.Log1mInvLogit())
	}
	return a.v
}

// NegBinomial2Lpmf returns the log probability of the count n under the
// negative binomial distribution with mean mu > 0 and precision phi > 0
// (variance mu + mu²/phi).
func NegBinomial2Lpmf(n int, mu, phi Var) Var { return negBinomial2Lpmf(false, n, mu, phi) }

// NegBinomial2Lupmf is [NegBinomial2Lpmf] without its constant terms.
func NegBinomial2Lupmf(n int, mu, phi Var) Var { return negBinomial2Lpmf(true, n, mu, phi) }

func negBinomial2Lpmf(propto bool, n int, mu, phi Var) Var {
	const op = "neg_binomial_2_lpmf"
	checkCount(op, "n", n)
	checkPos(op, "mu", mu)
	checkPos(op, "phi", phi)
	a := lp{propto: propto}
	fn := float64(n)
	// ln C(n+φ−1, n) + n ln μ + φ ln φ − (n+φ) ln(μ+φ)
	a.add(phi.AddC(fn - 1).Lchoose(Const(fn)))
	lmp := mu.Add(phi).Log()
	if n > 0 {
		a.add(mu.Log().Sub(lmp).MulC(fn))
	}
	a.add(phi.Mul(phi.Log().Sub(lmp)))
	return a.v
}

// CategoricalLogitLpmf returns the log probability of the outcome n under
// the categorical distribution with probabilities softmax(beta). As in Stan,
// n counts from 1: it must be in 1 … len(beta).
func CategoricalLogitLpmf(n int, beta []Var) Var { return categoricalLogitLpmf(false, n, beta) }

// CategoricalLogitLupmf is [CategoricalLogitLpmf] without its constant terms.
func CategoricalLogitLupmf(n int, beta []Var) Var { return categoricalLogitLpmf(true, n, beta) }

func categoricalLogitLpmf(propto bool, n int, beta []Var) Var {
	const op = "categorical_logit_lpmf"
	if n < 1 || n > len(beta) {
		fail(ErrDomain, op, "n = %d: must be in 1 … %d", n, len(beta))
	}
	for k, b := range beta {
		checkFinite(op, "beta["+strconv.Itoa(k)+"]", b)
	}
	a := lp{propto: propto}
	a.add(beta[n-1])
	a.sub(LogSumExp(beta))
	return a.v
}

// simplexTol is how far from 1 the sum of a simplex, and the squared norm of
// a row of a correlation matrix's Cholesky factor, may be (Stan's 1e-8).
const simplexTol = 1e-8

// DirichletLpdf returns the log density of the Dirichlet distribution with
// concentrations alpha (all positive and finite) at the simplex theta (its
// elements in [0, 1], summing to 1 within 1e-8). It panics with an *Error
// wrapping ErrSize if the lengths differ or are 0.
func DirichletLpdf(theta, alpha []Var) Var { return dirichletLpdf(false, theta, alpha) }

// DirichletLupdf is [DirichletLpdf], which has no constant terms.
func DirichletLupdf(theta, alpha []Var) Var { return dirichletLpdf(true, theta, alpha) }

func dirichletLpdf(propto bool, theta, alpha []Var) Var {
	const op = "dirichlet_lpdf"
	if len(theta) != len(alpha) || len(theta) == 0 {
		fail(ErrSize, op, "len(theta) = %d, len(alpha) = %d: must be equal and positive", len(theta), len(alpha))
	}
	s := 0.0
	for k := range theta {
		checkProb(op, "theta["+strconv.Itoa(k)+"]", theta[k])
		checkPos(op, "alpha["+strconv.Itoa(k)+"]", alpha[k])
		s += theta[k].v
	}
	if math.Abs(s-1) > simplexTol {
		fail(ErrDomain, op, "theta sums to %g: must be a simplex", s)
	}
	a := lp{propto: propto}
	a.add(sumOf(alpha).Lgamma())
	for k := range theta {
		a.sub(alpha[k].Lgamma())
		a.add(alpha[k].SubC(1).Mul(theta[k].Log()))
	}
	return a.v
}

// MultiNormalCholeskyLpdf returns the log density of the multivariate
// normal distribution with mean mu and covariance L·Lᵀ at y, for L lower
// triangular with a positive diagonal, given by rows (L[i] has at least
// i+1 elements; any above the diagonal are not read). It panics with an
// *Error wrapping ErrSize if the sizes do not fit.
func MultiNormalCholeskyLpdf(y, mu []Var, L [][]Var) Var {
	return multiNormalCholeskyLpdf(false, y, mu, L)
}

// MultiNormalCholeskyLupdf is [MultiNormalCholeskyLpdf] without its constant
// term.
func MultiNormalCholeskyLupdf(y, mu []Var, L [][]Var) Var {
	return multiNormalCholeskyLpdf(true, y, mu, L)
}

func multiNormalCholeskyLpdf(propto bool, y, mu []Var, L [][]Var) Var {
	const op = "multi_normal_cholesky_lpdf"
	K := len(y)
	if len(mu) != K || len(L) != K {
		fail(ErrSize, op, "len(y) = %d, len(mu) = %d, len(L) = %d: must be equal", K, len(mu), len(L))
	}
	for i := range K {
		if len(L[i]) <= i {
			fail(ErrSize, op, "row %d of L has %d elements, want at least %d", i, len(L[i]), i+1)
		}
		checkNotNaN(op, "y["+strconv.Itoa(i)+"]", y[i])
		checkFinite(op, "mu["+strconv.Itoa(i)+"]", mu[i])
		for j := 0; j < i; j++ {
			checkFinite(op, "L["+strconv.Itoa(i)+"]["+strconv.Itoa(j)+"]", L[i][j])
		}
		checkPos(op, "L["+strconv.Itoa(i)+"]["+strconv.Itoa(i)+"]", L[i][i])
	}
	// z = L⁻¹(y − μ) by forward substitution.
	z := make([]Var, K)
	a := lp{propto: propto}
	for i := range K {
		r := y[i].Sub(mu[i])
		if i > 0 {
			r = r.Sub(Dot(L[i][:i], z[:i]))
		}
		z[i] = r.Div(L[i][i])
		a.sub(L[i][i].Log())
	}
	a.add(Dot(z, z).MulC(-0.5))
	a.addC(-float64(K) * logSqrt2Pi)
	return a.v
}

// LkjCorrCholeskyLpdf returns the log density of the LKJ distribution with
// shape eta > 0 over correlation matrices, at the Cholesky factor L of one
// (lower triangular by rows as in [MultiNormalCholeskyLpdf], with a positive
// diagonal and rows of unit norm within 1e-8), including the Jacobian of
// R = L·Lᵀ, as Stan's lkj_corr_cholesky_lpdf.
func LkjCorrCholeskyLpdf(L [][]Var, eta Var) Var { return lkjCorrCholeskyLpdf(false, L, eta) }

// LkjCorrCholeskyLupdf is [LkjCorrCholeskyLpdf], whose normalising constant
// depends on eta and is kept.
func LkjCorrCholeskyLupdf(L [][]Var, eta Var) Var { return lkjCorrCholeskyLpdf(true, L, eta) }

func lkjCorrCholeskyLpdf(propto bool, L [][]Var, eta Var) Var {
	const op = "lkj_corr_cholesky_lpdf"
	checkPos(op, "eta", eta)
	K := len(L)
	if K == 0 {
		fail(ErrSize, op, "L is empty")
	}
	for i := range K {
		if len(L[i]) <= i {
			fail(ErrSize, op, "row %d of L has %d elements, want at least %d", i, len(L[i]), i+1)
		}
		checkPos(op, "L["+strconv.Itoa(i)+"]["+strconv.Itoa(i)+"]", L[i][i])
		s := 0.0
		for j := 0; j <= i; j++ {
			s += L[i][j].v * L[i][j].v
		}
		if math.Abs(s-1) > simplexTol {
			fail(ErrDomain, op, "row %d of L has squared norm %g: must be 1", i, s)
		}
	}
	a := lp{propto: propto}
	// The density of R is det(R)^(η−1)/c with (Lewandowski, Kurowicka and
	// Joe 2009) ln c = Σₖ (K−k)·[(2η−2+K−k)·ln 2 + ln B(bₖ, bₖ)] over
	// k = 1 … K−1, bₖ = η + (K−k−1)/2. det R = Πᵢ Lᵢᵢ², and the Jacobian
	// of L ↦ R is Πᵢ Lᵢᵢ^(K−i) (rows i = 1 … K, 1-based).
	for k := 1; k < K; k++ {
		m := float64(K - k)
		b := eta.AddC((m - 1) / 2)
		a.sub(eta.MulC(2).AddC(m - 2).MulC(m * math.Ln2).Add(b.Lbeta(b).MulC(m)))
	}
	for i := 1; i < K; i++ { // 0-based row i is row i+1
		a.add(eta.MulC(2).AddC(float64(K-i-1) - 2).Mul(L[i][i].Log()))
	}
	return a.v
}
