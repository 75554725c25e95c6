package special

import "math"

// IncBeta returns the regularised incomplete beta function
// I_x(a, b) = B(x; a, b)/B(a, b) for a > 0 (first argument), b > 0 (second)
// and 0 ≤ x ≤ 1 (third), with its three partials and all six second
// partials, in the order of the package convention (∂aa, ∂ab, ∂ax, ∂bb, ∂bx,
// ∂xx).
//
// The value is a continued fraction (modified Lentz), of I_x(a, b) for
// x < (a+1)/(a+b+2) and of I_(1−x)(b, a) = 1 − I_x(a, b) otherwise; the
// partials in a and b are those of the same iteration, carried as
// second-order Taylor jets in (a, b). The partials in x are closed form:
// ∂I/∂x = x^(a−1)(1−x)^(b−1)/B(a, b). At x = 0 and x = 1 the partials in x
// are the one-sided limits. Below about 1e-150 a shape's second derivatives,
// of the order of 1/a², overflow and may be NaN. Outside the domain all is NaN, and so it is
// where the continued fraction does not converge within 10⁵ steps, which
// happens only for shapes of about 10⁹ and more near the peak.
func IncBeta(a, b, x float64) (v float64, g [3]float64, h [6]float64) {
	if !(a > 0 && b > 0 && x >= 0 && x <= 1) || math.IsInf(a, 1) || math.IsInf(b, 1) {
		return nan3()
	}
	var I jet
	ok := true
	switch {
	case x == 0:
		I = jconst(0)
	case x == 1:
		I = jconst(1)
	default:
		A, B := jvarS(a), jvarT(b)
		// L = log(a·b·B(a, b)) = log Γ(a+1) + log Γ(b+1) − log Γ(a+b), whose
		// derivatives stay finite as a or b goes to 0.
		pa1, pb1, pab := polygamma(0, a+1), polygamma(0, b+1), polygamma(0, a+b)
		qa1, qb1, qab := polygamma(1, a+1), polygamma(1, b+1), polygamma(1, a+b)
		L := jet{logABBeta(a, b), pa1 - pab, pb1 - pab, qa1 - qab, -qab, qb1 - qab}
		lx, ly := math.Log(x), math.Log1p(-x)
		// w = xᵃ(1−x)ᵇ/(a·b·B(a, b)), the same in both orientations.
		ev := xlog(a, lx) + xlog(b, ly) - L.v
		if pe, peak := betaExponent(a, b, x); peak {
			ev = pe - math.Log(a) - math.Log(b)
		}
		w := math.Exp(ev)
		if x < (a+1)/(a+b+2) {
			I, ok = incBetaFrac(A, B, x, lx, ly, L, w)
			I.v = clamp01(I.v)
		} else {
			var J jet
			J, ok = incBetaFrac(B, A, 1-x, ly, lx, L, w)
			J.v = clamp01(J.v)
			I = J.scale(-1).addc(1)
		}
		if !ok {
			return nan3()
		}
	}
	fx, fax, fbx, fxx := incBetaDx(a, b, x)
	return I.v, [3]float64{I.ds, I.dt, fx}, [6]float64{I.hss, I.hst, fax, I.htt, fbx, fxx}
}

// betaExponent returns a log x + b log(1−x) − log B(a, b), and true, for
// a, b ≥ 10 and |u|, |v| ≤ ½, near the peak of the integrand. It is
// a·log1pmx(u) + b·log1pmx(v) + ½log(ab/(2π(a+b))) − δ(a) − δ(b) + δ(a+b),
// with u = (x−x₀)/x₀, v = (x₀−x)/(1−x₀), x₀ = a/(a+b) and δ the remainder of
// Stirling's series, which avoids the cancellation between its three terms.
// Elsewhere it returns false.
func betaExponent(a, b, x float64) (float64, bool) {
	x0, y0 := a/(a+b), b/(a+b)
	t := x - x0
	u, v := t/x0, -t/y0
	if a < 10 || b < 10 || math.Abs(u) > 0.5 || math.Abs(v) > 0.5 {
		return 0, false
	}
	return a*log1pmx(u) + b*log1pmx(v) + 0.5*math.Log(a/(2*math.Pi)*(b/(a+b))) -
		stirlingDelta(a) - stirlingDelta(b) + stirlingDelta(a+b), true
}

// logABBeta returns log(a·b·B(a, b)) = log Γ(a+1) + log Γ(b+1) − log Γ(a+b)
// without the cancellation of log a + log b + log B(a, b) when a or b is
// small.
func logABBeta(a, b float64) float64 {
	x, y := math.Min(a, b), math.Max(a, b)
	if x >= 1 {
		return lbeta(a, b) + math.Log(a) + math.Log(b)
	}
	lx1, _ := math.Lgamma(x + 1)
	if y < 10 {
		ly1, _ := math.Lgamma(y + 1)
		lxy, _ := math.Lgamma(x + y)
		return lx1 + ly1 - lxy
	}
	return lx1 + math.Log(y) + lgammaDiff(x, y)
}

// xlog returns c·l, taken to be 0 when c is 0 (so that 0·log 0 = 0).
func xlog(c, l float64) float64 {
	if c == 0 {
		return 0
	}
	return c * l
}

// incBetaDx returns ∂I/∂x = x^(a−1)(1−x)^(b−1)/B(a, b) and its partials in a,
// b and x. The partials in a and b are formed from ∂I/∂x / a and / b and
// from a·ψ(a) = a·ψ(a+1) − 1, so that a tiny shape does not make them 0·Inf.
func incBetaDx(a, b, x float64) (fx, fax, fbx, fxx float64) {
	switch x {
	case 0:
		return incBetaDx0(a, b)
	case 1:
		// I_x(a, b) = 1 − I_(1−x)(b, a).
		fx, fbx, fax, fxx = incBetaDx0(b, a)
		return fx, fax, fbx, -fxx
	}
	lx, ly := math.Log(x), math.Log1p(-x)
	L := logABBeta(a, b) // log(a·b·B(a, b))
	le := xlog(a-1, lx) + xlog(b-1, ly) - L
	fx = math.Exp(le + math.Log(a) + math.Log(b))
	pab := polygamma(0, a+b)
	// ∂a: fx·(log x − ψ(a) + ψ(a+b)) = (fx/a)·(a log x + 1 − aψ(a+1) + aψ(a+b)).
	if ga := math.Exp(le + math.Log(b)); ga != 0 {
		fax = ga * (xlog(a, lx) + 1 - a*polygamma(0, a+1) + a*pab)
	}
	if gb := math.Exp(le + math.Log(a)); gb != 0 {
		fbx = gb * (xlog(b, ly) + 1 - b*polygamma(0, b+1) + b*pab)
	}
	// ∂xx = (a−1)x^(a−2)(1−x)^(b−1)/B − (b−1)x^(a−1)(1−x)^(b−2)/B.
	lab := math.Log(a) + math.Log(b)
	if a != 1 {
		fxx += (a - 1) * math.Exp(xlog(a-2, lx)+xlog(b-1, ly)-L+lab)
	}
	if b != 1 {
		fxx -= (b - 1) * math.Exp(xlog(a-1, lx)+xlog(b-2, ly)-L+lab)
	}
	return fx, fax, fbx, fxx
}

// incBetaDx0 returns the limits of incBetaDx as x → 0⁺, which the power
// x^(a−1) decides: infinite for a < 1, finite for a = 1 and 0 above (∂xx
// has its own thresholds at 1 and 2).
func incBetaDx0(a, b float64) (fx, fax, fbx, fxx float64) {
	inf := math.Inf(1)
	switch {
	case a < 1:
		return inf, -inf, inf, -inf
	case a == 1:
		// ∂I/∂x = b(1−x)^(b−1) near 0.
		return b, -inf, 1, -b * (b - 1)
	case a < 2:
		return 0, 0, 0, inf
	case a == 2:
		return 0, 0, 0, b * (b + 1)
	}
	return 0, 0, 0, 0
}

// incBetaFrac returns I_x(a, b) = xᵃ(1−x)ᵇ/(a B(a, b)) · 1/(1+ d₁/(1+ d₂/(1+ …)))
// as a jet, where
//
//	d₂ₘ₊₁ = −(a+m)(a+b+m)x / ((a+2m)(a+2m+1)),
//	d₂ₘ   = m(b−m)x / ((a+2m−1)(a+2m)),
//
// by the modified Lentz method. lx and ly are log x and log(1−x), L is the
// jet of log(a·b·B(a, b)), and w is the accurate value of
// xᵃ(1−x)ᵇ/(a·b·B(a, b)), so that the prefactor is b·w: the factor b taken
// out keeps the jet free of ψ(b) ≈ −1/b, which would cancel against it for
// small b. It also reports whether the fraction converged.
func incBetaFrac(A, B jet, x, lx, ly float64, L jet, w float64) (jet, bool) {
	AB := A.add(B)
	c := jconst(1)
	d := jconst(1).sub(AB.scale(x).div(A.addc(1)))
	if math.Abs(d.v) < lentzMin {
		d.v = lentzMin
	}
	d = d.recip()
	h := d
	step := func(aa jet) jet {
		d = jconst(1).add(aa.mul(d))
		if math.Abs(d.v) < lentzMin {
			d.v = lentzMin
		}
		c = jconst(1).add(aa.div(c))
		if math.Abs(c.v) < lentzMin {
			c.v = lentzMin
		}
		d = d.recip()
		return d.mul(c)
	}
	converged := false
	for m := 1; m < iterMax && !converged; m++ {
		fm := float64(m)
		// d₂ₘ = m(b−m)x / ((a+2m−1)(a+2m)).
		num := B.addc(-fm).scale(fm * x)
		den := A.addc(2*fm - 1).mul(A.addc(2 * fm))
		h = h.mul(step(num.div(den)))
		// d₂ₘ₊₁ = −(a+m)(a+b+m)x / ((a+2m)(a+2m+1)).
		num = A.addc(fm).mul(AB.addc(fm)).scale(-x)
		den = A.addc(2 * fm).mul(A.addc(2*fm + 1))
		del := step(num.div(den))
		h = h.mul(del)
		converged = lentzDone(del, h)
	}
	e := A.scale(lx).add(B.scale(ly)).sub(L)
	return B.mul(e.chain(w, w, w)).mul(h), converged
}
