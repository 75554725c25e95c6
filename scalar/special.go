package scalar

import "github.com/adjointgo/adjoint/internal/special"

// The special functions of Stan's math library. Their numerics (value, first
// and second derivatives) are in package internal/special; this file records
// each as one node: a one-parent node for a unary function, a two-parent
// node for a binary one and a reduction-style node with three side entries
// for a ternary one. In tangent mode each node gets its tangent data from the
// function's exact second derivatives, so Hessians through them are exact.

// spec1 records a unary special function with value v, derivative d and
// second derivative dd. A zero tangent contributes nothing to the tangent
// data even where a derivative is infinite (mul0, as in Dual).
func (x Var) spec1(v, d, dd float64) Var {
	t := x.t
	if t == nil || !t.tangent {
		return x.unHot(v, d)
	}
	t.flush()
	tx := t.tan[x.i]
	y := x.unHot(v, d)
	t.tan = append(t.tan, mul0(d, tx))
	t.dd = append(t.dd, dual2{mul0(dd, tx), 0})
	t.flushed = len(t.nodes)
	return y
}

// spec2 records a binary special function with value v, partials g and
// Hessian h (∂xx, ∂xy, ∂yy). A constant operand gets no parent.
func spec2(o op, x, y Var, v float64, g [2]float64, h [3]float64) Var {
	t := x.t
	if t != y.t {
		t = pick(o, t, y.t)
	}
	switch {
	case t == nil:
		return Var{v: v}
	case !t.tangent:
		switch {
		case x.t == nil:
			return y.unHot(v, g[1])
		case y.t == nil:
			return x.unHot(v, g[0])
		}
		return bin(o, 0, x, y, v, g[0], g[1])
	}
	t.flush()
	tx, ty := t.tangentOf(x), t.tangentOf(y)
	ddx := mul0(h[0], tx) + mul0(h[1], ty)
	ddy := mul0(h[1], tx) + mul0(h[2], ty)
	var r Var
	switch {
	case x.t == nil:
		r = y.unHot(v, g[1])
		t.dd = append(t.dd, dual2{ddy, 0})
	case y.t == nil:
		r = x.unHot(v, g[0])
		t.dd = append(t.dd, dual2{ddx, 0})
	default:
		r = bin(o, 0, x, y, v, g[0], g[1])
		t.dd = append(t.dd, dual2{ddx, ddy})
	}
	t.tan = append(t.tan, mul0(g[0], tx)+mul0(g[1], ty))
	t.flushed = len(t.nodes)
	return r
}

// spec3 records a ternary special function with value v, partials g and
// Hessian h (∂xx, ∂xy, ∂xz, ∂yy, ∂yz, ∂zz) as a reduction-style node whose
// parents (the variable operands) are in the side arrays.
func spec3(o op, x, y, z Var, v float64, g [3]float64, h [6]float64) Var {
	xs := [3]Var{x, y, z}
	t := tapeOf(o, xs[:])
	if t == nil {
		return Var{v: v}
	}
	par, part, e := t.reserve(3) // flushes in tangent mode
	m := 0
	for j, a := range xs {
		if a.t != nil {
			par[m], part[m] = a.i, g[j]
			m++
		}
	}
	i := t.commit(e, m)
	if t.tangent {
		H := [3][3]float64{{h[0], h[1], h[2]}, {h[1], h[3], h[4]}, {h[2], h[4], h[5]}}
		var tn [3]float64
		tv := 0.0
		for j, a := range xs {
			tn[j] = t.tangentOf(a)
			tv += mul0(g[j], tn[j])
		}
		var dp [3]float64
		m = 0
		for j, a := range xs {
			if a.t != nil {
				for k := range 3 {
					dp[m] += mul0(H[j][k], tn[k])
				}
				m++
			}
		}
		t.tangents(e, m, tv, func(j int) float64 { return dp[j] })
	}
	return Var{t: t, v: v, i: i}
}

// Lgamma returns ln|Γ(x)|. At the poles 0, −1, −2, … the value is +Inf and
// the derivatives are NaN.
func (x Var) Lgamma() Var { return x.spec1(special.Lgamma(x.v)) }

// Digamma returns ψ(x) = Γ′(x)/Γ(x).
func (x Var) Digamma() Var { return x.spec1(special.Digamma(x.v)) }

// Trigamma returns ψ′(x).
func (x Var) Trigamma() Var { return x.spec1(special.Trigamma(x.v)) }

// Erfc returns the complementary error function 1 − erf x, accurate in the
// upper tail.
func (x Var) Erfc() Var { return x.spec1(special.Erfc(x.v)) }

// Phi returns the standard normal distribution function Φ(x), accurate in
// the lower tail.
func (x Var) Phi() Var { return x.spec1(special.Phi(x.v)) }

// InvPhi returns Φ⁻¹(p), the standard normal quantile, for p in [0, 1]
// (−Inf at 0, +Inf at 1, NaN outside).
func (x Var) InvPhi() Var { return x.spec1(special.InvPhi(x.v)) }

// Logit returns ln(u/(1 − u)) for u in [0, 1].
func (x Var) Logit() Var { return x.spec1(special.Logit(x.v)) }

// InvLogit returns 1/(1 + e⁻ˣ), the same function as [Var.Sigmoid] under
// its Stan name.
func (x Var) InvLogit() Var { return x.spec1(special.InvLogit(x.v)) }

// LogInvLogit returns ln(1/(1 + e⁻ˣ)) without overflow or cancellation.
func (x Var) LogInvLogit() Var { return x.spec1(special.LogInvLogit(x.v)) }

// Log1mInvLogit returns ln(1 − 1/(1 + e⁻ˣ)) = −ln(1 + eˣ) stably.
func (x Var) Log1mInvLogit() Var { return x.spec1(special.Log1mInvLogit(x.v)) }

// Log1m returns ln(1 − x) for x ≤ 1, accurate near 0.
func (x Var) Log1m() Var { return x.spec1(special.Log1m(x.v)) }

// Log1mExp returns ln(1 − eˣ) for x ≤ 0, accurate at both ends.
func (x Var) Log1mExp() Var { return x.spec1(special.Log1mExp(x.v)) }

// Log1pExp returns ln(1 + eˣ), the same function as [Var.Softplus] under its
// Stan name.
func (x Var) Log1pExp() Var { return x.spec1(special.Log1pExp(x.v)) }

// Asinh returns the inverse hyperbolic sine of x.
func (x Var) Asinh() Var { return x.spec1(special.Asinh(x.v)) }

// Acosh returns the inverse hyperbolic cosine of x ≥ 1.
func (x Var) Acosh() Var { return x.spec1(special.Acosh(x.v)) }

// Atanh returns the inverse hyperbolic tangent of x in [−1, 1].
func (x Var) Atanh() Var { return x.spec1(special.Atanh(x.v)) }

// Floor returns ⌊x⌋. Its derivative is taken to be 0 everywhere, also at the
// jumps, as in Stan: a gradient does not flow through it.
func (x Var) Floor() Var { return x.spec1(special.Floor(x.v)) }

// Ceil returns ⌈x⌉, with derivative 0 everywhere; see [Var.Floor].
func (x Var) Ceil() Var { return x.spec1(special.Ceil(x.v)) }

// Round returns x rounded half away from zero, with derivative 0 everywhere;
// see [Var.Floor].
func (x Var) Round() Var { return x.spec1(special.Round(x.v)) }

// Trunc returns x rounded toward zero, with derivative 0 everywhere; see
// [Var.Floor].
func (x Var) Trunc() Var { return x.spec1(special.Trunc(x.v)) }

// BesselI0 returns I₀(x), the modified Bessel function of the first kind of
// order 0.
func (x Var) BesselI0() Var { return x.spec1(special.BesselI0(x.v)) }

// BesselI1 returns I₁(x), the modified Bessel function of the first kind of
// order 1.
func (x Var) BesselI1() Var { return x.spec1(special.BesselI1(x.v)) }

// BesselK0 returns K₀(x) for x ≥ 0, the modified Bessel function of the
// second kind of order 0 (+Inf at 0).
func (x Var) BesselK0() Var { return x.spec1(special.BesselK0(x.v)) }

// BesselK1 returns K₁(x) for x ≥ 0, the modified Bessel function of the
// second kind of order 1 (+Inf at 0).
func (x Var) BesselK1() Var { return x.spec1(special.BesselK1(x.v)) }

// Lbeta returns ln B(a, b) for a the receiver, without cancellation when an
// argument is large.
func (a Var) Lbeta(b Var) Var {
	v, g, h := special.Lbeta(a.v, b.v)
	return spec2(opLbeta, a, b, v, g, h)
}

// Lchoose returns ln C(n, k) for n the receiver, the log binomial
// coefficient continued to real n and k.
func (n Var) Lchoose(k Var) Var {
	v, g, h := special.Lchoose(n.v, k.v)
	return spec2(opLchoose, n, k, v, g, h)
}

// GammaP returns the regularised lower incomplete gamma function P(a, x) for
// a the receiver; both partials are exact to second order.
func (a Var) GammaP(x Var) Var {
	v, g, h := special.GammaP(a.v, x.v)
	return spec2(opGammaP, a, x, v, g, h)
}

// GammaQ returns the regularised upper incomplete gamma function
// Q(a, x) = 1 − P(a, x) for a the receiver.
func (a Var) GammaQ(x Var) Var {
	v, g, h := special.GammaQ(a.v, x.v)
	return spec2(opGammaQ, a, x, v, g, h)
}

// LogDiffExp returns ln(eˣ − eʸ) for x the receiver and y ≤ x, without
// overflow.
func (x Var) LogDiffExp(y Var) Var {
	v, g, h := special.LogDiffExp(x.v, y.v)
	return spec2(opLogDiffExp, x, y, v, g, h)
}

// LogSumExp2 returns ln(eˣ + eʸ) without overflow as one two-parent node:
// the binary form of the reduction [LogSumExp], with the same value.
func (x Var) LogSumExp2(y Var) Var {
	v, g, h := special.LogSumExp(x.v, y.v)
	return spec2(opLogSumExp2, x, y, v, g, h)
}

// IncBeta returns the regularised incomplete beta function I_x(a, b) for a
// the receiver, recorded as one node differentiable in all three arguments.
func (a Var) IncBeta(b, x Var) Var {
	v, g, h := special.IncBeta(a.v, b.v, x.v)
	return spec3(opIncBeta, a, b, x, v, g, h)
}

// Fma returns x·y + z for x the receiver, as one node.
func (x Var) Fma(y, z Var) Var {
	v, g, h := special.Fma(x.v, y.v, z.v)
	return spec3(opFma, x, y, z, v, g, h)
}
