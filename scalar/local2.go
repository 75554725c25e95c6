package scalar

import "math"

// L2 is a local forward-mode number for statement-level preaccumulation
// (see [Fn2]): a value V and its partial derivatives D0 and D1 with respect
// to the two operands of the enclosing Fn2. An expression evaluated on L2
// numbers yields its value and both local partials at once, with no tape,
// and Fn2 records the result as one node.
//
// The literal L2{V: c} is the constant c. L2 has the operations of [Var],
// with the same conventions at non-smooth and undefined points (they share
// one implementation of each local derivative).
type L2 struct {
	V, D0, D1 float64
}

// L2 is a struct of three float64 fields rather than a value and an array,
// so that the compiler keeps it in registers and passes it in registers.

// chain returns the L2 with value v whose partials are d times x's. A zero
// partial stays zero even where d is infinite (as sqrt at 0), as on a tape.
func (x L2) chain(v, d float64) L2 { return L2{v, mul0(d, x.D0), mul0(d, x.D1)} }

// comb returns the L2 with value v and partials dx·x + dy·y, where a zero
// partial of x or y contributes nothing even if dx or dy is infinite.
func comb2(v, dx float64, x L2, dy float64, y L2) L2 {
	return L2{v, mul0(dx, x.D0) + mul0(dy, y.D0), mul0(dx, x.D1) + mul0(dy, y.D1)}
}

// mul0 returns d·t, or 0 if t is 0.
func mul0(d, t float64) float64 {
	if t == 0 {
		return 0
	}
	return d * t
}

// Add returns x + y.
func (x L2) Add(y L2) L2 { return L2{x.V + y.V, x.D0 + y.D0, x.D1 + y.D1} }

// Sub returns x − y.
func (x L2) Sub(y L2) L2 { return L2{x.V - y.V, x.D0 - y.D0, x.D1 - y.D1} }

// Mul returns x × y.
func (x L2) Mul(y L2) L2 {
	return L2{x.V * y.V, x.D0*y.V + x.V*y.D0, x.D1*y.V + x.V*y.D1}
}

// Div returns x ÷ y.
func (x L2) Div(y L2) L2 {
	v := x.V / y.V
	return comb2(v, 1/y.V, x, -v/y.V, y)
}

// AddC returns x + c.
func (x L2) AddC(c float64) L2 { return L2{x.V + c, x.D0, x.D1} }

// SubC returns x − c.
func (x L2) SubC(c float64) L2 { return L2{x.V - c, x.D0, x.D1} }

// RSubC returns c − x.
func (x L2) RSubC(c float64) L2 { return L2{c - x.V, -x.D0, -x.D1} }

// MulC returns x × c.
func (x L2) MulC(c float64) L2 { return L2{x.V * c, x.D0 * c, x.D1 * c} }

// DivC returns x ÷ c.
func (x L2) DivC(c float64) L2 { return x.MulC(1 / c) }

// Neg returns −x.
func (x L2) Neg() L2 { return L2{-x.V, -x.D0, -x.D1} }

// Square returns x².
func (x L2) Square() L2 {
	d := 2 * x.V
	return L2{x.V * x.V, d * x.D0, d * x.D1}
}

// Sin returns sin x.
func (x L2) Sin() L2 { return x.chain(dSin(x.V)) }

// Cos returns cos x.
func (x L2) Cos() L2 { return x.chain(dCos(x.V)) }

// Tan returns tan x.
func (x L2) Tan() L2 { return x.chain(dTan(x.V)) }

// Asin returns asin x; see [Var.Asin].
func (x L2) Asin() L2 { return x.chain(dAsin(x.V)) }

// Acos returns acos x; see [Var.Acos].
func (x L2) Acos() L2 { return x.chain(dAcos(x.V)) }

// Atan returns atan x.
func (x L2) Atan() L2 { return x.chain(dAtan(x.V)) }

// Sinh returns sinh x.
func (x L2) Sinh() L2 { return x.chain(dSinh(x.V)) }

// Cosh returns cosh x.
func (x L2) Cosh() L2 { return x.chain(dCosh(x.V)) }

// Tanh returns tanh x.
func (x L2) Tanh() L2 { return x.chain(dTanh(x.V)) }

// Exp returns eˣ.
func (x L2) Exp() L2 {
	v := math.Exp(x.V)
	return x.chain(v, v)
}

// Expm1 returns eˣ − 1.
func (x L2) Expm1() L2 { return x.chain(dExpm1(x.V)) }

// Log returns ln x; see [Var.Log].
func (x L2) Log() L2 { return x.chain(dLog(x.V)) }

// Log1p returns ln(1 + x).
func (x L2) Log1p() L2 { return x.chain(dLog1p(x.V)) }

// Log2 returns log₂ x.
func (x L2) Log2() L2 { return x.chain(dLog2(x.V)) }

// Log10 returns log₁₀ x.
func (x L2) Log10() L2 { return x.chain(dLog10(x.V)) }

// Sqrt returns √x; see [Var.Sqrt].
func (x L2) Sqrt() L2 { return x.chain(dSqrt(x.V)) }

// Cbrt returns ∛x.
func (x L2) Cbrt() L2 { return x.chain(dCbrt(x.V)) }

// Abs returns |x|, with derivative 0 at 0.
func (x L2) Abs() L2 { return x.chain(dAbs(x.V)) }

// Sigmoid returns 1/(1 + e⁻ˣ).
func (x L2) Sigmoid() L2 { return x.chain(dSigmoid(x.V)) }

// Softplus returns ln(1 + eˣ) in a stable form.
func (x L2) Softplus() L2 { return x.chain(dSoftplus(x.V)) }

// Erf returns the error function of x.
func (x L2) Erf() L2 { return x.chain(dErf(x.V)) }

// PowC returns xᶜ for a constant c; see [Var.PowC].
func (x L2) PowC(c float64) L2 { return x.chain(dPowC(x.V, c)) }

// Pow returns xʸ; see [Var.Pow]. A zero partial on either side contributes
// nothing, so a constant exponent or base behaves as in PowC.
func (x L2) Pow(y L2) L2 {
	v, dx, dy := dPow(x.V, y.V)
	return comb2(v, dx, x, dy, y)
}

// Atan2 returns atan2(y, x) for y the receiver; see [Var.Atan2].
func (y L2) Atan2(x L2) L2 {
	v, dy, dx := dAtan2(y.V, x.V)
	return comb2(v, dy, y, dx, x)
}

// Hypot returns √(x² + y²); see [Var.Hypot].
func (x L2) Hypot(y L2) L2 {
	v, dx, dy := dHypot(x.V, y.V)
	return comb2(v, dx, x, dy, y)
}

// Min returns the smaller of x and y; see [Var.Min].
func (x L2) Min(y L2) L2 {
	v, dx, dy := dMin(x.V, y.V)
	return comb2(v, dx, x, dy, y)
}

// Max returns the larger of x and y; see [Var.Max].
func (x L2) Max(y L2) L2 {
	v, dx, dy := dMax(x.V, y.V)
	return comb2(v, dx, x, dy, y)
}

// Fn2 returns f(x, y) recorded as one node, with its two local partials
// computed by forward mode while f runs: statement-level preaccumulation.
// f receives x and y as L2 numbers seeded with unit partials and must
// compute its result from them with L2 operations (and L2 constants); it
// must not touch the tape. A term of Rosenbrock's function, 8 nodes when
// written with Var operations, is one 24-byte node this way:
//
//	t := scalar.Fn2(x[i], x[i+1], func(a, b scalar.L2) scalar.L2 {
//		d := b.Sub(a.Square())
//		return d.Square().MulC(100).Add(a.RSubC(1).Square())
//	})
//
// If x and y are both constants nothing is recorded. The call of f is not
// inlined; where that matters, write the same thing with [Seed2] and
// [Record2], which are.
//
// Fn2 computes first derivatives only, so it cannot be used in tangent mode
// ([Tape.ResetTangent], used by [HessVec], [Hessian] and [Objective.Hess]):
// the next operation that needs tangent data panics with an *[Error] (its
// Op is "fn2"). A function whose Hessian is needed must be written with Var
// operations, optionally between [Tape.Begin] and [Tape.End], which
// preaccumulate too but keep the full recording in tangent mode.
func Fn2(x, y Var, f func(a, b L2) L2) Var {
	a, b := Seed2(x, y)
	return Record2(x, y, f(a, b))
}

// Seed2 returns the L2 numbers of x and y for a preaccumulated expression:
// their values with unit partials (1, 0) and (0, 1). Compute the expression
// from them with L2 operations and record it with [Record2] on the same x
// and y, in the same order:
//
//	a, b := scalar.Seed2(x, y)
//	z := scalar.Record2(x, y, a.Mul(b).Add(a.Square().Sin()).Sub(b.Log()))
//
// This is [Fn2] without the closure, so that the compiler can inline all of
// it.
func Seed2(x, y Var) (a, b L2) { return L2{x.v, 1, 0}, L2{y.v, 0, 1} }

// Record2 records r, computed from the seeds [Seed2](x, y), as one node
// with parents x and y and partials r.D0 and r.D1, and returns it; see
// [Fn2], whose rules it follows. A constant operand gets no parent; two
// constants record nothing. It panics with an *[Error] if x and y belong to
// different tapes.
func Record2(x, y Var, r L2) Var {
	t := x.t
	if t == nil {
		t = y.t
		if t == nil {
			return Var{v: r.V}
		}
	} else if y.t != t && y.t != nil {
		panic(mixedFn)
	}
	n := int32(len(t.nodes))
	t.nodes = append(t.nodes, node{x.i | preacc, y.i, r.D0, r.D1})
	return Var{t, r.V, n}
}

// mixedFn is mixed[opFn], named so that Record2 fits the inliner's budget.
var mixedFn = mixed[opFn]

// errPreaccTangent explains why Fn2 and its kin cannot record in tangent
// mode.
const errPreaccTangent = "preaccumulated nodes (Fn2, Fn3, Fn4, Record2 …) have no second derivatives, so they cannot be recorded in tangent mode (HessVec, Hessian, Objective.Hess): write the expression with Var operations, or between Tape.Begin and Tape.End"
