package scalar

import "math"

// L4 is the local forward-mode number of [Fn3] and [Fn4]: a value V and its
// partial derivatives D0 … D3 with respect to the (up to) four operands of
// the enclosing call. It is [L2] with four partials; see there. The literal
// L4{V: c} is the constant c.
type L4 struct {
	V, D0, D1, D2, D3 float64
}

// chain returns the L4 with value v whose partials are d times x's; a zero
// partial stays zero.
func (x L4) chain(v, d float64) L4 {
	return L4{v, mul0(d, x.D0), mul0(d, x.D1), mul0(d, x.D2), mul0(d, x.D3)}
}

// comb4 returns the L4 with value v and partials dx·x + dy·y, where a zero
// partial of x or y contributes nothing.
func comb4(v, dx float64, x L4, dy float64, y L4) L4 {
	return L4{v, mul0(dx, x.D0) + mul0(dy, y.D0), mul0(dx, x.D1) + mul0(dy, y.D1),
		mul0(dx, x.D2) + mul0(dy, y.D2), mul0(dx, x.D3) + mul0(dy, y.D3)}
}

// Add returns x + y.
func (x L4) Add(y L4) L4 { return L4{x.V + y.V, x.D0 + y.D0, x.D1 + y.D1, x.D2 + y.D2, x.D3 + y.D3} }

// Sub returns x − y.
func (x L4) Sub(y L4) L4 { return L4{x.V - y.V, x.D0 - y.D0, x.D1 - y.D1, x.D2 - y.D2, x.D3 - y.D3} }

// Mul returns x × y.
func (x L4) Mul(y L4) L4 {
	return L4{x.V * y.V, x.D0*y.V + x.V*y.D0, x.D1*y.V + x.V*y.D1, x.D2*y.V + x.V*y.D2, x.D3*y.V + x.V*y.D3}
}

// Div returns x ÷ y.
func (x L4) Div(y L4) L4 {
	v := x.V / y.V
	return comb4(v, 1/y.V, x, -v/y.V, y)
}

// AddC returns x + c.
func (x L4) AddC(c float64) L4 { return L4{x.V + c, x.D0, x.D1, x.D2, x.D3} }

// SubC returns x − c.
func (x L4) SubC(c float64) L4 { return L4{x.V - c, x.D0, x.D1, x.D2, x.D3} }

// RSubC returns c − x.
func (x L4) RSubC(c float64) L4 { return L4{c - x.V, -x.D0, -x.D1, -x.D2, -x.D3} }

// MulC returns x × c.
func (x L4) MulC(c float64) L4 { return L4{x.V * c, x.D0 * c, x.D1 * c, x.D2 * c, x.D3 * c} }

// DivC returns x ÷ c.
func (x L4) DivC(c float64) L4 { return x.MulC(1 / c) }

// Neg returns −x.
func (x L4) Neg() L4 { return L4{-x.V, -x.D0, -x.D1, -x.D2, -x.D3} }

// Square returns x².
func (x L4) Square() L4 {
	d := 2 * x.V
	return L4{x.V * x.V, d * x.D0, d * x.D1, d * x.D2, d * x.D3}
}

// Sin returns sin x.
func (x L4) Sin() L4 { return x.chain(dSin(x.V)) }

// Cos returns cos x.
func (x L4) Cos() L4 { return x.chain(dCos(x.V)) }

// Tan returns tan x.
func (x L4) Tan() L4 { return x.chain(dTan(x.V)) }

// Asin returns asin x; see [Var.Asin].
func (x L4) Asin() L4 { return x.chain(dAsin(x.V)) }

// Acos returns acos x; see [Var.Acos].
func (x L4) Acos() L4 { return x.chain(dAcos(x.V)) }

// Atan returns atan x.
func (x L4) Atan() L4 { return x.chain(dAtan(x.V)) }

// Sinh returns sinh x.
func (x L4) Sinh() L4 { return x.chain(dSinh(x.V)) }

// Cosh returns cosh x.
func (x L4) Cosh() L4 { return x.chain(dCosh(x.V)) }

// Tanh returns tanh x.
func (x L4) Tanh() L4 { return x.chain(dTanh(x.V)) }

// Exp returns eˣ.
func (x L4) Exp() L4 {
	v := math.Exp(x.V)
	return x.chain(v, v)
}

// Expm1 returns eˣ − 1.
func (x L4) Expm1() L4 { return x.chain(dExpm1(x.V)) }

// Log returns ln x; see [Var.Log].
func (x L4) Log() L4 { return x.chain(dLog(x.V)) }

// Log1p returns ln(1 + x).
func (x L4) Log1p() L4 { return x.chain(dLog1p(x.V)) }

// Log2 returns log₂ x.
func (x L4) Log2() L4 { return x.chain(dLog2(x.V)) }

// Log10 returns log₁₀ x.
func (x L4) Log10() L4 { return x.chain(dLog10(x.V)) }

// Sqrt returns √x; see [Var.Sqrt].
func (x L4) Sqrt() L4 { return x.chain(dSqrt(x.V)) }

// Cbrt returns ∛x.
func (x L4) Cbrt() L4 { return x.chain(dCbrt(x.V)) }

// Abs returns |x|, with derivative 0 at 0.
func (x L4) Abs() L4 { return x.chain(dAbs(x.V)) }

// Sigmoid returns 1/(1 + e⁻ˣ).
func (x L4) Sigmoid() L4 { return x.chain(dSigmoid(x.V)) }

// Softplus returns ln(1 + eˣ) in a stable form.
func (x L4) Softplus() L4 { return x.chain(dSoftplus(x.V)) }

// Erf returns the error function of x.
func (x L4) Erf() L4 { return x.chain(dErf(x.V)) }

// PowC returns xᶜ for a constant c; see [Var.PowC].
func (x L4) PowC(c float64) L4 { return x.chain(dPowC(x.V, c)) }

// Pow returns xʸ; see [Var.Pow]. A zero partial on either side contributes
// nothing, so a constant exponent or base behaves as in PowC.
func (x L4) Pow(y L4) L4 {
	v, dx, dy := dPow(x.V, y.V)
	return comb4(v, dx, x, dy, y)
}

// Atan2 returns atan2(y, x) for y the receiver; see [Var.Atan2].
func (y L4) Atan2(x L4) L4 {
	v, dy, dx := dAtan2(y.V, x.V)
	return comb4(v, dy, y, dx, x)
}

// Hypot returns √(x² + y²); see [Var.Hypot].
func (x L4) Hypot(y L4) L4 {
	v, dx, dy := dHypot(x.V, y.V)
	return comb4(v, dx, x, dy, y)
}

// Min returns the smaller of x and y; see [Var.Min].
func (x L4) Min(y L4) L4 {
	v, dx, dy := dMin(x.V, y.V)
	return comb4(v, dx, x, dy, y)
}

// Max returns the larger of x and y; see [Var.Max].
func (x L4) Max(y L4) L4 {
	v, dx, dy := dMax(x.V, y.V)
	return comb4(v, dx, x, dy, y)
}

// Fn3 returns f(x, y, z) recorded as one node, with its three local partials
// computed by forward mode while f runs; see [Fn2]. f receives the operands
// as L4 numbers seeded with unit partials D0, D1, D2 (D3 stays 0). The node
// is a reduction-style node with its parents in side arrays (24 + 12·3
// bytes). Constant operands get no parent; if all are constant nothing is
// recorded. It panics with an *[Error] in tangent mode, as Fn2.
func Fn3(x, y, z Var, f func(a, b, c L4) L4) Var {
	r := f(L4{V: x.v, D0: 1}, L4{V: y.v, D1: 1}, L4{V: z.v, D2: 1})
	return recN("fn3", [4]Var{x, y, z}, 3, &r)
}

// Fn4 returns f(w, x, y, z) recorded as one node with its four local
// partials; see [Fn3].
func Fn4(w, x, y, z Var, f func(a, b, c, d L4) L4) Var {
	r := f(L4{V: w.v, D0: 1}, L4{V: x.v, D1: 1}, L4{V: y.v, D2: 1}, L4{V: z.v, D3: 1})
	return recN("fn4", [4]Var{w, x, y, z}, 4, &r)
}

// recN records the result r of Fn3 or Fn4 over the first k of xs.
func recN(name string, xs [4]Var, k int, r *L4) Var {
	t := tapeOf(opFn, xs[:k])
	if t == nil {
		return Var{v: r.V}
	}
	if t.tangent {
		fail(ErrNoSecondOrder, name, "%s", errPreaccTangent)
	}
	d := [4]float64{r.D0, r.D1, r.D2, r.D3}
	par, part, e := t.reserve(k)
	m := 0
	for j, x := range xs[:k] {
		if x.t != nil {
			par[m], part[m] = x.i, d[j]
			m++
		}
	}
	return Var{t: t, v: r.V, i: t.commit(e, m)}
}
