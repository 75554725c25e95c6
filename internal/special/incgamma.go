package special

import "math"

const (
	iterEps  = 1e-16  // relative size of the last term at which a series stops
	lentzEps = 4e-16  // relative change at which a continued fraction stops
	iterMax  = 100000 // the most iterations of a series or continued fraction
	lentzMin = 1e-300 // the modified Lentz method's floor against division by 0
)

// GammaP returns the regularised lower incomplete gamma function
// P(a, x) = γ(a, x)/Γ(a) for a > 0 (first argument) and x ≥ 0 (second), with
// its partials in a and x and all three second partials.
//
// The value is a power series for x < a+1 and a continued fraction for the
// complement otherwise; the partials in a are those of the same iterations,
// carried as second-order Taylor jets in a. The partials in x are closed
// form: ∂P/∂x = x^(a−1)e^(−x)/Γ(a). Outside the domain all is NaN, and so
// it is where the iterations do not converge within 10⁵ steps, which
// happens only for shapes of about 10⁹ and more with x near a.
func GammaP(a, x float64) (v float64, g [2]float64, h [3]float64) {
	p, _, ok := incGamma(a, x)
	if !ok {
		return nan2()
	}
	fx, fax, fxx := incGammaDx(a, x)
	return p.v, [2]float64{p.ds, fx}, [3]float64{p.hss, fax, fxx}
}

// GammaQ returns the regularised upper incomplete gamma function
// Q(a, x) = 1 − P(a, x) for a > 0 (first argument) and x ≥ 0 (second), with
// its partials; see [GammaP] for the method. Q keeps its relative accuracy
// where it is small (large x).
func GammaQ(a, x float64) (v float64, g [2]float64, h [3]float64) {
	_, q, ok := incGamma(a, x)
	if !ok {
		return nan2()
	}
	fx, fax, fxx := incGammaDx(a, x)
	return q.v, [2]float64{q.ds, -fx}, [3]float64{q.hss, -fax, -fxx}
}

// incGammaDx returns ∂P/∂x = x^(a−1)e^(−x)/Γ(a) and its partials in a and x.
// They are formed from g = x^(a−1)e^(−x)/Γ(a+1) = ∂P/∂x / a and from
// a·ψ(a) = a·ψ(a+1) − 1, so that neither a tiny a nor a tiny x makes them
// 0·Inf.
func incGammaDx(a, x float64) (fx, fax, fxx float64) {
	if math.IsInf(x, 1) {
		return 0, 0, 0
	}
	if x == 0 {
		switch {
		case a < 1:
			return math.Inf(1), math.Inf(-1), math.Inf(-1)
		case a == 1:
			return 1, math.Inf(-1), -1
		case a < 2:
			return 0, 0, math.Inf(1)
		case a == 2:
			return 0, 0, 1
		}
		return 0, 0, 0
	}
	lx := math.Log(x)
	lg1, _ := math.Lgamma(a + 1)
	lg := xlog(a-1, lx) - x - lg1 // log g
	g := math.Exp(lg)
	fx = a * g
	// ∂a: fx·(log x − ψ(a)) = g·(a log x − a ψ(a+1) + 1).
	fax = g * (xlog(a, lx) - a*polygamma(0, a+1) + 1)
	// ∂x: fx·((a−1)/x − 1), with the first term as (a−1)·a·g/x in logs.
	if a != 1 {
		fxx = (a - 1) * math.Exp(lg-lx+math.Log(a))
	}
	fxx -= fx
	return fx, fax, fxx
}

// incGamma returns the jets of P(a, x) and Q(a, x) in a, and false outside
// the domain a > 0, x ≥ 0 or where the iteration did not converge.
func incGamma(a, x float64) (p, q jet, ok bool) {
	if !(a > 0 && x >= 0) || math.IsInf(a, 1) {
		return p, q, false
	}
	switch {
	case x == 0:
		return jconst(0), jconst(1), true
	case math.IsInf(x, 1):
		return jconst(1), jconst(0), true
	case x < a+1:
		p, ok = incGammaSeries(a, x)
		p.v = clamp01(p.v)
		return p, p.scale(-1).addc(1), ok
	}
	q, ok = incGammaFrac(a, x)
	q.v = clamp01(q.v)
	return q.scale(-1).addc(1), q, ok
}

// incGammaSeries returns P(a, x) = xᵃe⁻ˣ/Γ(a+1) Σₙ xⁿ/((a+1)⋯(a+n)) as a jet
// in a, and whether it converged. Every term and its first two
// a-derivatives have one sign, so the stopping test on all three is safe.
func incGammaSeries(a, x float64) (jet, bool) {
	A := jvarS(a)
	term := jconst(1)
	sum := term
	converged := false
	for n := 1; n < iterMax && !converged; n++ {
		term = term.mul(jconst(x).div(A.addc(float64(n))))
		sum = sum.add(term)
		converged = math.Abs(term.v) <= iterEps*math.Abs(sum.v) &&
			math.Abs(term.ds) <= iterEps*math.Abs(sum.ds) &&
			math.Abs(term.hss) <= iterEps*math.Abs(sum.hss)
	}
	// xᵃe⁻ˣ/Γ(a+1): the jet of the exponent, with its value from
	// gammaExponent near the peak.
	e := A.scale(math.Log(x)).addc(-x).sub(A.addc(1).lgamma())
	ev := e.v
	if pe, ok := gammaExponent(a, x); ok {
		ev = pe - math.Log(a)
	}
	pv := math.Exp(ev)
	return e.chain(pv, pv, pv).mul(sum), converged
}

// incGammaFrac returns Q(a, x) = xᵃe⁻ˣ/Γ(a) · 1/(x+1−a− 1(1−a)/(x+3−a− …))
// as a jet in a, by the modified Lentz method, and whether it converged.
func incGammaFrac(a, x float64) (jet, bool) {
	A := jvarS(a)
	b := A.scale(-1).addc(x + 1)
	c := jconst(1 / lentzMin)
	d := b.recip()
	h := d
	converged := false
	for i := 1; i < iterMax && !converged; i++ {
		fi := float64(i)
		an := A.addc(-fi).scale(fi) // −i(i−a)
		b = b.addc(2)
		d = an.mul(d).add(b)
		if math.Abs(d.v) < lentzMin {
			d.v = lentzMin
		}
		c = b.add(an.div(c))
		if math.Abs(c.v) < lentzMin {
			c.v = lentzMin
		}
		d = d.recip()
		del := d.mul(c)
		h = h.mul(del)
		converged = lentzDone(del, h)
	}
	// xᵃe⁻ˣ/Γ(a) = a·xᵃe⁻ˣ/Γ(a+1): the factor a taken out keeps the jet
	// free of ψ(a) ≈ −1/a, which would cancel against it for small a.
	e := A.scale(math.Log(x)).addc(-x).sub(A.addc(1).lgamma())
	ev := e.v
	if pe, ok := gammaExponent(a, x); ok {
		ev = pe - math.Log(a)
	}
	w := math.Exp(ev)
	return A.mul(e.chain(w, w, w)).mul(h), converged
}

// gammaExponent returns a log x − x − log Γ(a), and true, for a ≥ 10 and
// |x−a| ≤ a/2, near the peak of the integrand. It is
// a·log1pmx((x−a)/a) + ½log(a/2π) − δ(a), with δ the remainder of Stirling's
// series, which avoids the cancellation between a log x, x and log Γ(a).
// Elsewhere it returns false, and the plain sum has no such cancellation.
func gammaExponent(a, x float64) (float64, bool) {
	u := (x - a) / a
	if a < 10 || math.Abs(u) > 0.5 {
		return 0, false
	}
	return a*log1pmx(u) + 0.5*math.Log(a/(2*math.Pi)) - stirlingDelta(a), true
}

// log1pmx returns log(1+u) − u for u > −1, by its power series for small |u|.
func log1pmx(u float64) float64 {
	if math.Abs(u) > 0.25 {
		return math.Log1p(u) - u
	}
	// −u²/2 + u³/3 − u⁴/4 + …
	s, p := 0.0, -u*u
	for k := 2; k < 60; k++ {
		t := p / float64(k)
		s += t
		if math.Abs(t) < 1e-17*math.Abs(s) {
			break
		}
		p *= -u
	}
	return s
}

// lentzDone reports whether a continued fraction's factor del has converged
// to 1 in its value and its derivatives, relative to the scale of the
// derivatives of log h.
func lentzDone(del, h jet) bool {
	if math.Abs(del.v-1) > lentzEps {
		return false
	}
	ls := 1 + math.Abs(h.ds/h.v) + math.Abs(h.dt/h.v)
	ll := 1 + math.Abs(h.hss/h.v) + math.Abs(h.hst/h.v) + math.Abs(h.htt/h.v)
	return math.Abs(del.ds)+math.Abs(del.dt) <= lentzEps*ls &&
		math.Abs(del.hss)+math.Abs(del.hst)+math.Abs(del.htt) <= lentzEps*ll
}

// clamp01 returns v limited to [0, 1], against rounding at the ends.
func clamp01(v float64) float64 { return math.Min(math.Max(v, 0), 1) }
