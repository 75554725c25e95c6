package scalar

import (
	"math"

	"github.com/adjointgo/adjoint/internal/special"
)

// Dual is a forward-mode dual number: a value V and a tangent D, the
// derivative of V along one direction. Evaluating a function on duals whose
// tangents are a direction u gives the function's value and its directional
// derivative ∇f·u in one pass, with no tape.
//
// Dual has the same operations as [Var], with the same conventions at
// non-smooth and undefined points (they share one implementation of each
// local derivative).
type Dual struct {
	V, D float64
}

// chain returns the dual with value v whose tangent is d times x's. A zero
// tangent stays zero even where d is infinite (as sqrt at 0), as on a tape.
func (x Dual) chain(v, d float64) Dual {
	if x.D == 0 {
		return Dual{V: v}
	}
	return Dual{V: v, D: d * x.D}
}

// Add returns x + y.
func (x Dual) Add(y Dual) Dual { return Dual{x.V + y.V, x.D + y.D} }

// Sub returns x − y.
func (x Dual) Sub(y Dual) Dual { return Dual{x.V - y.V, x.D - y.D} }

// Mul returns x × y.
func (x Dual) Mul(y Dual) Dual { return Dual{x.V * y.V, x.D*y.V + x.V*y.D} }

// Div returns x ÷ y.
func (x Dual) Div(y Dual) Dual {
	v := x.V / y.V
	return Dual{v, (x.D - v*y.D) / y.V}
}

// AddC returns x + c.
func (x Dual) AddC(c float64) Dual { return Dual{x.V + c, x.D} }

// SubC returns x − c.
func (x Dual) SubC(c float64) Dual { return Dual{x.V - c, x.D} }

// MulC returns x × c.
func (x Dual) MulC(c float64) Dual { return Dual{x.V * c, x.D * c} }

// DivC returns x ÷ c.
func (x Dual) DivC(c float64) Dual { return Dual{x.V / c, x.D / c} }

// Neg returns −x.
func (x Dual) Neg() Dual { return Dual{-x.V, -x.D} }

// Square returns x².
func (x Dual) Square() Dual { return Dual{x.V * x.V, 2 * x.V * x.D} }

// Sin returns sin x.
func (x Dual) Sin() Dual { return x.chain(dSin(x.V)) }

// Cos returns cos x.
func (x Dual) Cos() Dual { return x.chain(dCos(x.V)) }

// Tan returns tan x.
func (x Dual) Tan() Dual { return x.chain(dTan(x.V)) }

// Asin returns asin x; see [Var.Asin].
func (x Dual) Asin() Dual { return x.chain(dAsin(x.V)) }

// Acos returns acos x; see [Var.Acos].
func (x Dual) Acos() Dual { return x.chain(dAcos(x.V)) }

// Atan returns atan x.
func (x Dual) Atan() Dual { return x.chain(dAtan(x.V)) }

// Sinh returns sinh x.
func (x Dual) Sinh() Dual { return x.chain(dSinh(x.V)) }

// Cosh returns cosh x.
func (x Dual) Cosh() Dual { return x.chain(dCosh(x.V)) }

// Tanh returns tanh x.
func (x Dual) Tanh() Dual { return x.chain(dTanh(x.V)) }

// Exp returns eˣ.
func (x Dual) Exp() Dual {
	v := math.Exp(x.V)
	return x.chain(v, v)
}

// Expm1 returns eˣ − 1.
func (x Dual) Expm1() Dual { return x.chain(dExpm1(x.V)) }

// Log returns ln x; see [Var.Log].
func (x Dual) Log() Dual { return x.chain(dLog(x.V)) }

// Log1p returns ln(1 + x).
func (x Dual) Log1p() Dual { return x.chain(dLog1p(x.V)) }

// Log2 returns log₂ x.
func (x Dual) Log2() Dual { return x.chain(dLog2(x.V)) }

// Log10 returns log₁₀ x.
func (x Dual) Log10() Dual { return x.chain(dLog10(x.V)) }

// Sqrt returns √x; see [Var.Sqrt].
func (x Dual) Sqrt() Dual { return x.chain(dSqrt(x.V)) }

// Cbrt returns ∛x.
func (x Dual) Cbrt() Dual { return x.chain(dCbrt(x.V)) }

// Abs returns |x|, with derivative 0 at 0.
func (x Dual) Abs() Dual { return x.chain(dAbs(x.V)) }

// Sigmoid returns 1/(1 + e⁻ˣ).
func (x Dual) Sigmoid() Dual { return x.chain(dSigmoid(x.V)) }

// Softplus returns ln(1 + eˣ) in a stable form.
func (x Dual) Softplus() Dual { return x.chain(dSoftplus(x.V)) }

// Erf returns the error function of x.
func (x Dual) Erf() Dual { return x.chain(dErf(x.V)) }

// PowC returns xᶜ for a constant c; see [Var.PowC].
func (x Dual) PowC(c float64) Dual { return x.chain(dPowC(x.V, c)) }

// Pow returns xʸ; see [Var.Pow]. A zero tangent on either side contributes
// nothing, so a constant exponent or base behaves as in PowC.
func (x Dual) Pow(y Dual) Dual {
	v, dx, dy := dPow(x.V, y.V)
	return Dual{v, tangent2(dx, x.D, dy, y.D)}
}

// Atan2 returns atan2(y, x) for y the receiver; see [Var.Atan2].
func (y Dual) Atan2(x Dual) Dual {
	v, dy, dx := dAtan2(y.V, x.V)
	return Dual{v, tangent2(dy, y.D, dx, x.D)}
}

// Hypot returns √(x² + y²); see [Var.Hypot].
func (x Dual) Hypot(y Dual) Dual {
	v, dx, dy := dHypot(x.V, y.V)
	return Dual{v, tangent2(dx, x.D, dy, y.D)}
}

// Min returns the smaller of x and y; see [Var.Min].
func (x Dual) Min(y Dual) Dual {
	v, dx, dy := dMin(x.V, y.V)
	return Dual{v, tangent2(dx, x.D, dy, y.D)}
}

// Max returns the larger of x and y; see [Var.Max].
func (x Dual) Max(y Dual) Dual {
	v, dx, dy := dMax(x.V, y.V)
	return Dual{v, tangent2(dx, x.D, dy, y.D)}
}

// tangent2 returns dx·tx + dy·ty, where a zero tangent contributes nothing
// even if its partial is infinite or NaN.
func tangent2(dx, tx, dy, ty float64) float64 {
	s := 0.0
	if tx != 0 {
		s += dx * tx
	}
	if ty != 0 {
		s += dy * ty
	}
	return s
}

// SumDual returns the sum of xs.
func SumDual(xs []Dual) Dual {
	var s Dual
	for _, x := range xs {
		s.V += x.V
		s.D += x.D
	}
	return s
}

// DotDual returns x[0]·y[0] + x[1]·y[1] + …. It panics with an *[Error] if
// the lengths differ.
func DotDual(xs, ys []Dual) Dual {
	if len(xs) != len(ys) {
		fail(ErrSize, "dot", "len(x) = %d, len(y) = %d", len(xs), len(ys))
	}
	var s Dual
	for j, x := range xs {
		s.V += x.V * ys[j].V
		s.D += x.D*ys[j].V + x.V*ys[j].D
	}
	return s
}

// LogSumExpDual returns ln(e^x[0] + e^x[1] + …) without overflow; see
// [LogSumExp].
func LogSumExpDual(xs []Dual) Dual {
	m := math.Inf(-1)
	for _, x := range xs {
		if x.V > m || x.V != x.V {
			m = x.V
		}
	}
	if math.IsInf(m, -1) {
		return Dual{V: m}
	}
	s := 0.0
	for _, x := range xs {
		s += math.Exp(x.V - m)
	}
	var d float64
	for _, x := range xs {
		if x.D != 0 {
			d += softmax(x.V, m, s) * x.D
		}
	}
	return Dual{m + math.Log(s), d}
}

// The special functions; see the Var methods of the same names.

func dual2f(x, y Dual, v float64, g [2]float64, _ [3]float64) Dual {
	return Dual{v, tangent2(g[0], x.D, g[1], y.D)}
}

func dual3f(x, y, z Dual, v float64, g [3]float64, _ [6]float64) Dual {
	return Dual{v, tangent2(g[0], x.D, g[1], y.D) + tangent2(g[2], z.D, 0, 0)}
}

func (x Dual) spec1(v, d, _ float64) Dual { return x.chain(v, d) }

// Lgamma returns ln|Γ(x)|; see [Var.Lgamma].
func (x Dual) Lgamma() Dual { return x.spec1(special.Lgamma(x.V)) }

// Digamma returns ψ(x).
func (x Dual) Digamma() Dual { return x.spec1(special.Digamma(x.V)) }

// Trigamma returns ψ′(x).
func (x Dual) Trigamma() Dual { return x.spec1(special.Trigamma(x.V)) }

// Erfc returns 1 − erf x.
func (x Dual) Erfc() Dual { return x.spec1(special.Erfc(x.V)) }

// Phi returns the standard normal distribution function.
func (x Dual) Phi() Dual { return x.spec1(special.Phi(x.V)) }

// InvPhi returns the standard normal quantile.
func (x Dual) InvPhi() Dual { return x.spec1(special.InvPhi(x.V)) }

// Logit returns ln(u/(1 − u)).
func (x Dual) Logit() Dual { return x.spec1(special.Logit(x.V)) }

// InvLogit returns 1/(1 + e⁻ˣ).
func (x Dual) InvLogit() Dual { return x.spec1(special.InvLogit(x.V)) }

// LogInvLogit returns ln(1/(1 + e⁻ˣ)).
func (x Dual) LogInvLogit() Dual { return x.spec1(special.LogInvLogit(x.V)) }

// Log1mInvLogit returns ln(1 − 1/(1 + e⁻ˣ)).
func (x Dual) Log1mInvLogit() Dual { return x.spec1(special.Log1mInvLogit(x.V)) }

// Log1m returns ln(1 − x).
func (x Dual) Log1m() Dual { return x.spec1(special.Log1m(x.V)) }

// Log1mExp returns ln(1 − eˣ).
func (x Dual) Log1mExp() Dual { return x.spec1(special.Log1mExp(x.V)) }

// Log1pExp returns ln(1 + eˣ).
func (x Dual) Log1pExp() Dual { return x.spec1(special.Log1pExp(x.V)) }

// Asinh returns asinh x.
func (x Dual) Asinh() Dual { return x.spec1(special.Asinh(x.V)) }

// Acosh returns acosh x.
func (x Dual) Acosh() Dual { return x.spec1(special.Acosh(x.V)) }

// Atanh returns atanh x.
func (x Dual) Atanh() Dual { return x.spec1(special.Atanh(x.V)) }

// Floor returns ⌊x⌋ with derivative 0.
func (x Dual) Floor() Dual { return x.spec1(special.Floor(x.V)) }

// Ceil returns ⌈x⌉ with derivative 0.
func (x Dual) Ceil() Dual { return x.spec1(special.Ceil(x.V)) }

// Round returns x rounded half away from zero, with derivative 0.
func (x Dual) Round() Dual { return x.spec1(special.Round(x.V)) }

// Trunc returns x rounded toward zero, with derivative 0.
func (x Dual) Trunc() Dual { return x.spec1(special.Trunc(x.V)) }

// BesselI0 returns I₀(x).
func (x Dual) BesselI0() Dual { return x.spec1(special.BesselI0(x.V)) }

// BesselI1 returns I₁(x).
func (x Dual) BesselI1() Dual { return x.spec1(special.BesselI1(x.V)) }

// BesselK0 returns K₀(x).
func (x Dual) BesselK0() Dual { return x.spec1(special.BesselK0(x.V)) }

// BesselK1 returns K₁(x).
func (x Dual) BesselK1() Dual { return x.spec1(special.BesselK1(x.V)) }

// Lbeta returns ln B(a, b) for a the receiver.
func (a Dual) Lbeta(b Dual) Dual {
	v, g, h := special.Lbeta(a.V, b.V)
	return dual2f(a, b, v, g, h)
}

// Lchoose returns ln C(n, k) for n the receiver.
func (n Dual) Lchoose(k Dual) Dual {
	v, g, h := special.Lchoose(n.V, k.V)
	return dual2f(n, k, v, g, h)
}

// GammaP returns P(a, x) for a the receiver.
func (a Dual) GammaP(x Dual) Dual {
	v, g, h := special.GammaP(a.V, x.V)
	return dual2f(a, x, v, g, h)
}

// GammaQ returns Q(a, x) for a the receiver.
func (a Dual) GammaQ(x Dual) Dual {
	v, g, h := special.GammaQ(a.V, x.V)
	return dual2f(a, x, v, g, h)
}

// LogDiffExp returns ln(eˣ − eʸ) for x the receiver.
func (x Dual) LogDiffExp(y Dual) Dual {
	v, g, h := special.LogDiffExp(x.V, y.V)
	return dual2f(x, y, v, g, h)
}

// LogSumExp2 returns ln(eˣ + eʸ).
func (x Dual) LogSumExp2(y Dual) Dual {
	v, g, h := special.LogSumExp(x.V, y.V)
	return dual2f(x, y, v, g, h)
}

// IncBeta returns I_x(a, b) for a the receiver.
func (a Dual) IncBeta(b, x Dual) Dual {
	v, g, h := special.IncBeta(a.V, b.V, x.V)
	return dual3f(a, b, x, v, g, h)
}

// Fma returns x·y + z for x the receiver.
func (x Dual) Fma(y, z Dual) Dual {
	v, g, h := special.Fma(x.V, y.V, z.V)
	return dual3f(x, y, z, v, g, h)
}
