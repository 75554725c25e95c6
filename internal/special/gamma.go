package special

import "math"

// bernoulli2k holds the Bernoulli numbers B₂, B₄, …, B₂₀ for the asymptotic
// series of the polygamma functions and of log Γ.
var bernoulli2k = [...]float64{
	1.0 / 6,
	-1.0 / 30,
	1.0 / 42,
	-1.0 / 30,
	5.0 / 66,
	-691.0 / 2730,
	7.0 / 6,
	-3617.0 / 510,
	43867.0 / 798,
	-174611.0 / 330,
}

// maxPolygammaOrder is the highest order n that [Polygamma] computes.
const maxPolygammaOrder = 20

// Lgamma returns log|Γ(x)| with its derivatives ψ(x) and ψ₁(x). The value
// is math.Lgamma's; at a pole (x = 0, −1, −2, …) it is +Inf and the
// derivatives are NaN.
func Lgamma(x float64) (v, d, dd float64) {
	v, _ = math.Lgamma(x)
	return v, polygamma(0, x), polygamma(1, x)
}

// Digamma returns ψ(x) = d/dx log Γ(x) with its derivatives ψ₁(x) and ψ₂(x).
// It is NaN at the poles x = 0, −1, −2, … and at −Inf.
func Digamma(x float64) (v, d, dd float64) {
	return polygamma(0, x), polygamma(1, x), polygamma(2, x)
}

// Trigamma returns ψ₁(x) with its derivatives ψ₂(x) and ψ₃(x). It is NaN at
// the poles x = 0, −1, −2, … and at −Inf.
func Trigamma(x float64) (v, d, dd float64) {
	return polygamma(1, x), polygamma(2, x), polygamma(3, x)
}

// Polygamma returns ψₙ(x), the n-th derivative of the digamma function,
// with its derivatives ψₙ₊₁(x) and ψₙ₊₂(x). n counts from 0 (digamma) and may
// be at most 18; outside 0 ≤ n ≤ 18, at the poles x = 0, −1, −2, … and at
// −Inf the results are NaN.
func Polygamma(n int, x float64) (v, d, dd float64) {
	if n < 0 || n+2 > maxPolygammaOrder {
		return math.NaN(), math.NaN(), math.NaN()
	}
	return polygamma(n, x), polygamma(n+1, x), polygamma(n+2, x)
}

// polygamma returns ψₙ(x) for 0 ≤ n ≤ maxPolygammaOrder.
func polygamma(n int, x float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsInf(x, -1):
		return math.NaN()
	case math.IsInf(x, 1):
		if n == 0 {
			return math.Inf(1)
		}
		return 0
	case x <= 0:
		if x == math.Floor(x) {
			return math.NaN()
		}
		return polygammaReflect(n, x)
	}
	return polygammaPos(n, x)
}

// ipow returns xᵏ for k ≥ 0 by repeated squaring.
func ipow(x float64, k int) float64 {
	p := 1.0
	for k > 0 {
		if k&1 == 1 {
			p *= x
		}
		x *= x
		k >>= 1
	}
	return p
}

// polygammaPos returns ψₙ(x) for x > 0 by the recurrence
// ψₙ(x) = ψₙ(x+1) − (−1)ⁿ n!/x^(n+1) up to x ≥ 10+2n and the asymptotic
// series from there, whose tenth term is below 1e-18 of the sum.
func polygammaPos(n int, x float64) float64 {
	x0 := 10.0 + 2*float64(n)
	// The recurrence terms, summed from the smallest.
	m := 0
	if x < x0 {
		m = int(math.Ceil(x0 - x))
	}
	rec := 0.0
	for j := m - 1; j >= 0; j-- {
		rec += ipow(1/(x+float64(j)), n+1)
	}
	y := x + float64(m)
	nfact := 1.0
	for k := 2; k <= n; k++ {
		nfact *= float64(k)
	}
	sign := 1.0 // (−1)ⁿ
	if n%2 == 1 {
		sign = -1
	}
	return polygammaAsym(n, y, nfact) - sign*nfact*rec
}

// polygammaAsym returns the asymptotic series of ψₙ(y) for large y, given
// nfact = n!.
func polygammaAsym(n int, y, nfact float64) float64 {
	r := 1 / y
	r2 := r * r
	if n == 0 {
		// ψ(y) ~ log y − 1/(2y) − Σ B₂ₖ/(2k y^(2k)).
		s := 0.0
		p := r2
		for k := 1; k <= len(bernoulli2k); k++ {
			t := bernoulli2k[k-1] / float64(2*k) * p
			s += t
			if math.Abs(t) < 1e-17*math.Abs(s) {
				break
			}
			p *= r2
		}
		return math.Log(y) - 0.5*r - s
	}
	// ψₙ(y) ~ (−1)^(n+1) [ (n−1)!/yⁿ + n!/(2y^(n+1))
	//                     + Σ B₂ₖ (2k+n−1)!/(2k)! / y^(2k+n) ].
	rn := ipow(r, n)
	s := nfact/float64(n) + 0.5*nfact*r
	p := r2
	for k := 1; k <= len(bernoulli2k); k++ {
		c := 1.0 // (2k+n−1)!/(2k)!
		for j := 2*k + 1; j <= 2*k+n-1; j++ {
			c *= float64(j)
		}
		t := bernoulli2k[k-1] * c * p
		s += t
		if math.Abs(t) < 1e-17*math.Abs(s) {
			break
		}
		p *= r2
	}
	if n%2 == 0 {
		s = -s
	}
	return s * rn
}

// polygammaReflect returns ψₙ(x) for a negative non-integer x by the
// reflection formula ψₙ(x) = (−1)ⁿ ψₙ(1−x) − πⁿ⁺¹ cot⁽ⁿ⁾(πx), where cot⁽ⁿ⁾ is
// the n-th derivative of cot, a polynomial in cot.
func polygammaReflect(n int, x float64) float64 {
	r := x - math.Round(x) // exact; cot(πx) = cot(πr)
	s, c := math.Sincos(math.Pi * r)
	ct := c / s
	// P₀(c) = c, Pₖ₊₁(c) = −(1+c²) Pₖ′(c); the coefficients of c^i.
	var p, q [maxPolygammaOrder + 2]float64
	p[1] = 1
	for k := 0; k < n; k++ {
		q = [maxPolygammaOrder + 2]float64{}
		for i := 1; i <= k+1; i++ {
			di := float64(i) * p[i] // coefficient of c^(i−1) in Pₖ′
			q[i-1] -= di
			q[i+1] -= di
		}
		p = q
	}
	poly := 0.0
	for i := n + 1; i >= 0; i-- {
		poly = poly*ct + p[i]
	}
	sign := 1.0
	if n%2 == 1 {
		sign = -1
	}
	return sign*polygammaPos(n, 1-x) - math.Pow(math.Pi, float64(n+1))*poly
}

// stirlingDelta returns log Γ(x) − [(x−½) log x − x + ½ log 2π] for x ≥ 10,
// the remainder of Stirling's series Σ B₂ₖ/(2k(2k−1) x^(2k−1)).
func stirlingDelta(x float64) float64 {
	r := 1 / x
	r2 := r * r
	s := 0.0
	p := r
	for k := 1; k <= len(bernoulli2k); k++ {
		t := bernoulli2k[k-1] / float64(2*k*(2*k-1)) * p
		s += t
		if math.Abs(t) < 1e-17*math.Abs(s) {
			break
		}
		p *= r2
	}
	return s
}

// lgammaDiff returns log Γ(y) − log Γ(x+y) for x, y > 0, by Stirling's
// series when y ≥ 10.
func lgammaDiff(x, y float64) float64 {
	if y < 10 {
		ly, _ := math.Lgamma(y)
		lxy, _ := math.Lgamma(x + y)
		return ly - lxy
	}
	d := stirlingDelta(y) - stirlingDelta(x+y)
	return d - (y-0.5)*math.Log1p(x/y) - x*math.Log(x+y) + x
}

// lbeta returns log B(a, b) for a, b > 0, without the cancellation of
// lgamma(a) + lgamma(b) − lgamma(a+b) when an argument is large.
func lbeta(a, b float64) float64 {
	x, y := math.Min(a, b), math.Max(a, b)
	switch {
	case math.IsNaN(a) || math.IsNaN(b) || x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(1)
	case math.IsInf(y, 1):
		return math.Inf(-1)
	case y < 10:
		lx, _ := math.Lgamma(x)
		ly, _ := math.Lgamma(y)
		lxy, _ := math.Lgamma(x + y)
		return lx + ly - lxy
	case x < 10:
		lx, _ := math.Lgamma(x)
		return lx + lgammaDiff(x, y)
	}
	d := stirlingDelta(x) + stirlingDelta(y) - stirlingDelta(x+y)
	return 0.5*math.Log(2*math.Pi) - 0.5*math.Log(y) + d +
		(x-0.5)*math.Log(x/(x+y)) - y*math.Log1p(x/y)
}

// Lbeta returns log B(a, b) = log Γ(a) + log Γ(b) − log Γ(a+b), for a, b > 0,
// with its derivatives in a (x) and b (y). It is +Inf if an argument is 0
// (with NaN derivatives) and NaN for a negative argument. Below about 1e-154
// the second derivatives, of the order of 1/a², overflow and may be NaN.
func Lbeta(a, b float64) (v float64, g [2]float64, h [3]float64) {
	if !(a >= 0 && b >= 0) {
		return nan2()
	}
	v = lbeta(a, b)
	if a == 0 || b == 0 {
		_, g, h = nan2()
		return v, g, h
	}
	pab, p1ab := polygamma(0, a+b), polygamma(1, a+b)
	g = [2]float64{psiMinus(a, pab), psiMinus(b, pab)}
	h = [3]float64{psi1Minus(a, p1ab), -p1ab, psi1Minus(b, p1ab)}
	return v, g, h
}

// psiMinus returns ψ(a) − c, as ψ(a+1) − c − 1/a below 1, so that a tiny a
// whose ψ overflows gives −Inf rather than NaN.
func psiMinus(a, c float64) float64 {
	if a < 1 {
		return polygamma(0, a+1) - c - 1/a
	}
	return polygamma(0, a) - c
}

// psi1Minus returns ψ₁(a) − c, as ψ₁(a+1) − c + 1/a² below 1.
func psi1Minus(a, c float64) float64 {
	if a < 1 {
		return polygamma(1, a+1) - c + 1/(a*a)
	}
	return polygamma(1, a) - c
}

// Lchoose returns the log of the binomial coefficient, log Γ(n+1) −
// log Γ(k+1) − log Γ(n−k+1), for real n (x) and k (y) with n > −1, k > −1 and
// n − k > −1, with its derivatives. Outside that domain it is NaN.
func Lchoose(n, k float64) (v float64, g [2]float64, h [3]float64) {
	if !(n > -1 && k > -1 && n-k > -1) {
		return nan2()
	}
	// log C(n, k) = −log(n+1) − log B(n−k+1, k+1).
	v = -math.Log1p(n) - lbeta(n-k+1, k+1)
	p0n, p0k, p0nk := polygamma(0, n+1), polygamma(0, k+1), polygamma(0, n-k+1)
	p1n, p1k, p1nk := polygamma(1, n+1), polygamma(1, k+1), polygamma(1, n-k+1)
	g = [2]float64{p0n - p0nk, p0nk - p0k}
	h = [3]float64{p1n - p1nk, p1nk, -p1nk - p1k}
	return v, g, h
}

// nan2 returns a binary function's all-NaN result.
func nan2() (float64, [2]float64, [3]float64) {
	n := math.NaN()
	return n, [2]float64{n, n}, [3]float64{n, n, n}
}

// nan3 returns a ternary function's all-NaN result.
func nan3() (float64, [3]float64, [6]float64) {
	n := math.NaN()
	return n, [3]float64{n, n, n}, [6]float64{n, n, n, n, n, n}
}
