package special

import "math"

// besselI returns the modified Bessel function Iν(x) of order ν = 0 or 1
// for x ≥ 0: the power series Σ (x/2)^(2k+ν)/(k!(k+ν)!) up to x = 30, whose
// terms are all positive, and the asymptotic series
// eˣ/√(2πx) Σ (−1)ᵏ aₖ(ν)/xᵏ above.
func besselI(nu int, x float64) float64 {
	if x <= 30 {
		t := 0.25 * x * x
		term := 1.0
		if nu == 1 {
			term = 0.5 * x
		}
		s := term
		for k := 1; k < 500; k++ {
			term *= t / (float64(k) * float64(k+nu))
			s += term
			if term < 1e-17*s {
				break
			}
		}
		return s
	}
	if x > 720 {
		return math.Inf(1)
	}
	mu := 4 * float64(nu*nu)
	s, term := 1.0, 1.0
	for k := 1; k < 60; k++ {
		odd := float64(2*k - 1)
		term *= -(mu - odd*odd) / (8 * float64(k) * x)
		s += term
		if math.Abs(term) < 1e-17*math.Abs(s) {
			break
		}
	}
	return math.Exp(x-0.5*math.Log(2*math.Pi*x)) * s
}

// besselK returns the modified Bessel function Kν(x) of order ν = 0 or 1
// for x > 0. Below 1 it is the series
//
//	K₀(x) = −(log(x/2)+γ) I₀(x) + Σₖ Hₖ tᵏ/(k!)²,
//	K₁(x) = 1/x + (log(x/2)+γ) I₁(x) − (x/4) Σₖ (Hₖ+Hₖ₊₁) tᵏ/(k!(k+1)!),
//
// with t = x²/4 and Hₖ the harmonic numbers; from 1 on it is the trapezoid
// rule on Kν(x) = ∫₀^∞ e^(−x cosh s) cosh(νs) ds, whose error falls
// exponentially with the step for this integrand.
func besselK(nu int, x float64) float64 {
	const euler = 0.57721566490153286060651209008240243104215933593992
	if x < 1 {
		if nu == 1 && x < 1e-150 {
			return 1 / x // the other terms are below an ulp of 1/x
		}
		t := 0.25 * x * x
		l := math.Log(x) - math.Ln2 + euler
		if nu == 0 {
			s, term, hk := 0.0, 1.0, 0.0
			for k := 1; k < 100; k++ {
				hk += 1 / float64(k)
				term *= t / (float64(k) * float64(k))
				s += hk * term
				if hk*term < 1e-17*s {
					break
				}
			}
			return s - l*besselI(0, x)
		}
		s, term, hk, hk1 := 1.0, 1.0, 0.0, 1.0 // the k = 0 term: H₀+H₁ = 1
		for k := 1; k < 100; k++ {
			hk = hk1
			hk1 += 1 / float64(k+1)
			term *= t / (float64(k) * float64(k+1))
			s += (hk + hk1) * term
			if (hk+hk1)*term < 1e-17*s {
				break
			}
		}
		return 1/x + l*besselI(1, x) - 0.25*x*s
	}
	// e^x Kν(x) = ∫₀^∞ e^(−x(cosh s − 1)) cosh(νs) ds, by the trapezoid rule
	// with a step that shrinks like 1/√x with the width of the integrand.
	h := math.Min(0.2, 0.4/math.Sqrt(x))
	f := func(s float64) float64 {
		v := math.Exp(-x * 2 * math.Pow(math.Sinh(0.5*s), 2)) // cosh s − 1 = 2 sinh²(s/2)
		if nu == 1 {
			v *= math.Cosh(s)
		}
		return v
	}
	sum := 0.5 * f(0)
	for k := 1; k < 10000; k++ {
		v := f(float64(k) * h)
		sum += v
		if v < 1e-18*sum {
			break
		}
	}
	return math.Exp(-x) * h * sum
}

// BesselI0 returns the modified Bessel function of the first kind I₀(x) with
// its derivatives I₁(x) and I₀(x) − I₁(x)/x (½ at 0). It overflows to +Inf
// beyond |x| ≈ 713.
func BesselI0(x float64) (v, d, dd float64) {
	if math.IsNaN(x) {
		return nan1()
	}
	ax := math.Abs(x)
	i0, i1 := besselI(0, ax), besselI(1, ax)
	if x < 0 {
		i1 = -i1
	}
	switch {
	case x == 0:
		return 1, 0, 0.5
	case math.IsInf(i0, 1):
		return i0, i1, i0
	}
	return i0, i1, i0 - i1/x
}

// BesselI1 returns the modified Bessel function of the first kind I₁(x) with
// its derivatives I₀(x) − I₁(x)/x and I₁(x)(1 + 2/x²) − I₀(x)/x (½ and 0 at
// x = 0). It overflows to ±Inf beyond |x| ≈ 713.
func BesselI1(x float64) (v, d, dd float64) {
	if math.IsNaN(x) {
		return nan1()
	}
	if x == 0 {
		return 0, 0.5, 0
	}
	ax := math.Abs(x)
	i0, i1 := besselI(0, ax), besselI(1, ax)
	if x < 0 {
		i1 = -i1
	}
	if math.IsInf(i0, 1) {
		return i1, i0, i1
	}
	if ax < 1e-4 {
		// I₁(x) ≈ x/2 + x³/16: the closed forms cancel here.
		return i1, 0.5 + 3*x*x/16, 3 * x / 8
	}
	d = i0 - i1/x
	return i1, d, i1*(1+2/(x*x)) - i0/x
}

// BesselK0 returns the modified Bessel function of the second kind K₀(x) for
// x ≥ 0 with its derivatives −K₁(x) and K₀(x) + K₁(x)/x. It is +Inf at 0
// (derivatives −Inf and +Inf) and NaN for x < 0.
func BesselK0(x float64) (v, d, dd float64) {
	switch {
	case !(x >= 0):
		return nan1()
	case x == 0:
		return math.Inf(1), math.Inf(-1), math.Inf(1)
	case math.IsInf(x, 1):
		return 0, 0, 0
	}
	k0, k1 := besselK(0, x), besselK(1, x)
	return k0, -k1, k0 + k1/x
}

// BesselK1 returns the modified Bessel function of the second kind K₁(x) for
// x ≥ 0 with its derivatives −K₀(x) − K₁(x)/x and K₁(x)(1 + 2/x²) + K₀(x)/x.
// It is +Inf at 0 (derivatives −Inf and +Inf) and NaN for x < 0.
func BesselK1(x float64) (v, d, dd float64) {
	switch {
	case !(x >= 0):
		return nan1()
	case x == 0:
		return math.Inf(1), math.Inf(-1), math.Inf(1)
	case math.IsInf(x, 1):
		return 0, 0, 0
	}
	k0, k1 := besselK(0, x), besselK(1, x)
	return k1, -k0 - k1/x, k1*(1+2/(x*x)) + k0/x
}
