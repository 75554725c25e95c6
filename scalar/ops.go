package scalar

import (
	"errors"
	"math"
)

// op identifies an operation. It names the operation in errors and selects
// its second derivatives in tangent mode (see second1 and second2).
type op uint8

const (
	opAdd op = iota
	opSub
	opMul
	opDiv
	opPow
	opAtan2
	opHypot
	opMin
	opMax
	opNeg
	opAddC
	opMulC
	opSquare
	opSin
	opCos
	opTan
	opAsin
	opAcos
	opAtan
	opSinh
	opCosh
	opTanh
	opExp
	opExpm1
	opLog
	opLog1p
	opLog2
	opLog10
	opSqrt
	opCbrt
	opAbs
	opSigmoid
	opSoftplus
	opErf
	opPowC
	opExpC
	opSum
	opDot
	opDotC
	opLogSumExp
	opFn
	opLbeta
	opLchoose
	opGammaP
	opGammaQ
	opLogDiffExp
	opLogSumExp2
	opIncBeta
	opFma
	numOps
)

var opNames = [numOps]string{
	opAdd: "add", opSub: "sub", opMul: "mul", opDiv: "div", opPow: "pow",
	opAtan2: "atan2", opHypot: "hypot", opMin: "min", opMax: "max",
	opNeg: "neg", opAddC: "add", opMulC: "mul", opSquare: "square",
	opSin: "sin", opCos: "cos", opTan: "tan", opAsin: "asin", opAcos: "acos",
	opAtan: "atan", opSinh: "sinh", opCosh: "cosh", opTanh: "tanh",
	opExp: "exp", opExpm1: "expm1", opLog: "log", opLog1p: "log1p",
	opLog2: "log2", opLog10: "log10", opSqrt: "sqrt", opCbrt: "cbrt",
	opAbs: "abs", opSigmoid: "sigmoid", opSoftplus: "softplus", opErf: "erf",
	opPowC: "pow", opExpC: "pow", opSum: "sum", opDot: "dot", opDotC: "dot",
	opLogSumExp: "logsumexp", opFn: "preacc",
	opLbeta: "lbeta", opLchoose: "lchoose", opGammaP: "gamma_p",
	opGammaQ: "gamma_q", opLogDiffExp: "log_diff_exp",
	opLogSumExp2: "log_sum_exp", opIncBeta: "inc_beta", opFma: "fma",
}

func (o op) String() string { return opNames[o] }

// mixed holds the errors for operands of two tapes, one per op, so that the
// inlined fast paths can panic without formatting.
var mixed = func() (m [numOps]*Error) {
	for o := range m {
		m[o] = &Error{Op: op(o).String(), Err: errMismatch, Msg: "operands belong to different tapes, or one was recorded before the tape's last Reset (pass values between tapes with Var.Value)"}
	}
	return m
}()

// The recording functions below are small enough to be inlined into the
// operations that use them, so that recording an operation costs no call.
// They do no tangent-mode work: +, −, ×, x² and the operations with a
// constant have tangent data that follows from their partials, which
// Tape.flush fills in when tangent mode needs it.

// unHot records a one-parent node with value v and partial d.
func (x Var) unHot(v, d float64) Var {
	t := x.t
	if t == nil {
		return Var{v: v}
	}
	n := int32(len(t.nodes))
	t.nodes = append(t.nodes, node{x.i, n, d, 0})
	return Var{t, v, n}
}

// bin records a two-parent node with value v and partials dx, dy; class is
// bilinear for a product. A constant operand points at the sink.
func bin(o op, class int32, x, y Var, v, dx, dy float64) Var {
	t := x.t
	if t == nil {
		t = y.t
		if t == nil {
			return Var{v: v}
		}
	} else if y.t != t && y.t != nil {
		panic(mixed[o])
	}
	n := int32(len(t.nodes))
	t.nodes = append(t.nodes, node{x.i | class, y.i, dx, dy})
	return Var{t, v, n}
}

// un records a one-argument operation with value v and local derivative d.
// In tangent mode it also records the tangent data, from the operation's
// second derivative.
func (x Var) un(o op, v, d float64) Var {
	if t := x.t; t != nil && t.tangent {
		return t.un2(o, x, v, d, 0)
	}
	return x.unHot(v, d)
}

// binOp records a two-argument operation other than +, − and ×, as a
// one-parent node when an operand is constant.
func binOp(o op, x, y Var, v, dx, dy float64) Var {
	t := x.t
	if t != y.t {
		t = pick(o, t, y.t)
	}
	switch {
	case t == nil:
		return Var{v: v}
	case t.tangent:
		return t.bin2(o, x, y, v, dx, dy)
	case x.t == nil:
		return y.unHot(v, dy)
	case y.t == nil:
		return x.unHot(v, dx)
	}
	return bin(o, 0, x, y, v, dx, dy)
}

// mixedMul is mixed[opMul], named so that Mul fits the inliner's budget.
var mixedMul = mixed[opMul]

// pick returns the tape of an operation with operands on tapes a ≠ b.
func pick(o op, a, b *recording) *recording {
	if a == nil {
		return b
	}
	if b != nil {
		failMixed(o.String(), a, b)
	}
	return a
}

// errMismatch is the error of an inlined operation (Add, Sub, Mul) whose
// operands belong to different recordings: it cannot afford to tell another
// tape from an earlier recording of the same tape, so it wraps both
// sentinels.
var errMismatch = errors.Join(ErrNotOnTape, ErrStale)

// failMixed panics for an operation op whose operands belong to the
// different recordings a and b: of different tapes, or of the same tape
// before and after a Reset.
func failMixed(op string, a, b *recording) {
	if a.state == b.state {
		fail(ErrStale, op, "a variable recorded before the tape's last Reset is combined with a current one")
	}
	fail(ErrNotOnTape, op, "operands belong to different tapes (pass values between tapes with Var.Value)")
}

// Add returns x + y.
func (x Var) Add(y Var) Var {
	t, v := x.t, x.v+y.v
	if t == nil {
		t = y.t
		if t == nil {
			return Var{v: v}
		}
	} else if y.t != t && y.t != nil {
		panic(mixed[opAdd])
	}
	n := int32(len(t.nodes))
	t.nodes = append(t.nodes, node{x.i, y.i, 1, 1})
	return Var{t, v, n}
}

// Sub returns x − y.
func (x Var) Sub(y Var) Var {
	t, v := x.t, x.v-y.v
	if t == nil {
		t = y.t
		if t == nil {
			return Var{v: v}
		}
	} else if y.t != t && y.t != nil {
		panic(mixed[opSub])
	}
	n := int32(len(t.nodes))
	t.nodes = append(t.nodes, node{x.i, y.i, 1, -1})
	return Var{t, v, n}
}

// Mul returns x × y.
func (x Var) Mul(y Var) Var {
	t, v := x.t, x.v*y.v
	if t == nil {
		t = y.t
		if t == nil {
			return Var{v: v}
		}
	} else if y.t != t && y.t != nil {
		panic(mixedMul)
	}
	n := int32(len(t.nodes))
	t.nodes = append(t.nodes, node{x.i | bilinear, y.i, y.v, x.v})
	return Var{t, v, n}
}

// (The bodies of Add, Sub and Mul repeat bin by hand: through a call to
// bin they would exceed the inliner's budget.)

// AddC returns x + c.
func (x Var) AddC(c float64) Var { return x.unHot(x.v+c, 1) }

// SubC returns x − c.
func (x Var) SubC(c float64) Var { return x.unHot(x.v-c, 1) }

// RSubC returns c − x.
func (x Var) RSubC(c float64) Var { return x.unHot(c-x.v, -1) }

// MulC returns x × c.
func (x Var) MulC(c float64) Var { return x.unHot(x.v*c, c) }

// DivC returns x ÷ c.
func (x Var) DivC(c float64) Var { return x.unHot(x.v/c, 1/c) }

// Neg returns −x.
func (x Var) Neg() Var { return x.unHot(-x.v, -1) }

// Square returns x², recorded as the product x·x.
func (x Var) Square() Var {
	t, v := x.t, x.v*x.v
	if t == nil {
		return Var{v: v}
	}
	n := int32(len(t.nodes))
	t.nodes = append(t.nodes, node{x.i | bilinear, x.i, x.v, x.v})
	return Var{t, v, n}
}

// PowC returns xᶜ for a constant exponent c. Its derivative c·xᶜ⁻¹ is 0 for
// c = 0, and +Inf at x = 0 for 0 < c < 1.
func (x Var) PowC(c float64) Var {
	v, d := dPowC(x.v, c)
	if x.t != nil && x.t.tangent {
		return x.t.un2(opPowC, x, v, d, c)
	}
	return x.un(opPowC, v, d)
}

// Pow returns xʸ. A constant y records xᶜ (see [Var.PowC]) and a constant x
// records cʸ, whose derivative cʸ·ln c is taken to be 0 where cʸ = 0. With
// both variable, ∂/∂y = xʸ·ln x is taken to be 0 at x = 0, y > 0, and is NaN
// for x < 0.
func (x Var) Pow(y Var) Var {
	switch {
	case y.t == nil:
		return x.PowC(y.v)
	case x.t == nil:
		v, d := dExpC(x.v, y.v)
		if y.t.tangent {
			return y.t.un2(opExpC, y, v, d, x.v)
		}
		return y.un(opExpC, v, d)
	}
	v, dx, dy := dPow(x.v, y.v)
	return binOp(opPow, x, y, v, dx, dy)
}

// The local derivatives, shared by Var and Dual. Each returns the value and
// the derivative (or partials) at its argument.

func dSin(x float64) (float64, float64) {
	s, c := math.Sincos(x)
	return s, c
}

func dCos(x float64) (float64, float64) {
	s, c := math.Sincos(x)
	return c, -s
}

func dTan(x float64) (float64, float64) {
	t := math.Tan(x)
	return t, 1 + t*t
}

func dAsin(x float64) (float64, float64) { return math.Asin(x), 1 / math.Sqrt(1-x*x) }
func dAcos(x float64) (float64, float64) { return math.Acos(x), -1 / math.Sqrt(1-x*x) }
func dAtan(x float64) (float64, float64) { return math.Atan(x), 1 / (1 + x*x) }
func dExp(x float64) (float64, float64)  { v := math.Exp(x); return v, v }

func dDiv(x, y float64) (v, dx, dy float64) {
	v = x / y
	return v, 1 / y, -v / y
}

func dSinh(x float64) (float64, float64) { return math.Sinh(x), math.Cosh(x) }
func dCosh(x float64) (float64, float64) { return math.Cosh(x), math.Sinh(x) }

func dTanh(x float64) (float64, float64) {
	t := math.Tanh(x)
	return t, 1 - t*t
}

func dExpm1(x float64) (float64, float64) { return math.Expm1(x), math.Exp(x) }

// domain returns d, or NaN where the value v is NaN (outside the domain).
func domain(v, d float64) float64 {
	if v != v {
		return math.NaN()
	}
	return d
}

func dLog(x float64) (float64, float64) {
	v := math.Log(x)
	return v, domain(v, 1/x)
}

func dLog1p(x float64) (float64, float64) {
	v := math.Log1p(x)
	return v, domain(v, 1/(1+x))
}

func dLog2(x float64) (float64, float64) {
	v := math.Log2(x)
	return v, domain(v, 1/(x*math.Ln2))
}

func dLog10(x float64) (float64, float64) {
	v := math.Log10(x)
	return v, domain(v, 1/(x*math.Ln10))
}

func dSqrt(x float64) (float64, float64) {
	v := math.Sqrt(x)
	return v, 0.5 / v
}

func dCbrt(x float64) (float64, float64) {
	v := math.Cbrt(x)
	return v, 1 / (3 * v * v)
}

func dAbs(x float64) (float64, float64) {
	switch {
	case x > 0:
		return x, 1
	case x < 0:
		return -x, -1
	}
	return math.Abs(x), 0 // 0, −0 and NaN
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func dSigmoid(x float64) (float64, float64) {
	s := sigmoid(x)
	return s, s * (1 - s)
}

// dSoftplus shares one exponential between the value and its derivative,
// the sigmoid.
func dSoftplus(x float64) (float64, float64) {
	if x > 0 {
		e := math.Exp(-x)
		return x + math.Log1p(e), 1 / (1 + e)
	}
	e := math.Exp(x)
	return math.Log1p(e), e / (1 + e)
}

func dErf(x float64) (float64, float64) {
	return math.Erf(x), 2 / math.SqrtPi * math.Exp(-x*x)
}

func dPowC(x, c float64) (float64, float64) {
	switch c {
	case 0:
		return 1, 0
	case 1:
		return x, 1
	case 2:
		return x * x, 2 * x
	}
	return math.Pow(x, c), c * math.Pow(x, c-1)
}

func dExpC(c, x float64) (float64, float64) {
	v := math.Pow(c, x)
	if v == 0 {
		return 0, 0
	}
	return v, v * math.Log(c)
}

func dPow(x, y float64) (v, dx, dy float64) {
	v, dx = dPowC(x, y)
	switch {
	case x == 0 && y > 0:
		dy = 0
	case x < 0:
		dy = math.NaN()
	default:
		dy = v * math.Log(x)
	}
	return v, dx, dy
}

func dAtan2(y, x float64) (v, dy, dx float64) {
	v = math.Atan2(y, x)
	r := x*x + y*y
	if r == 0 {
		return v, 0, 0
	}
	return v, x / r, -y / r
}

func dHypot(x, y float64) (v, dx, dy float64) {
	v = math.Hypot(x, y)
	if v == 0 {
		return v, 0, 0
	}
	return v, x / v, y / v
}

func dMin(x, y float64) (v, dx, dy float64) {
	switch {
	case x < y:
		return x, 1, 0
	case y < x:
		return y, 0, 1
	case x == y:
		return x, 0.5, 0.5
	}
	return math.NaN(), math.NaN(), math.NaN()
}

func dMax(x, y float64) (v, dx, dy float64) {
	switch {
	case x > y:
		return x, 1, 0
	case y > x:
		return y, 0, 1
	case x == y:
		return x, 0.5, 0.5
	}
	return math.NaN(), math.NaN(), math.NaN()
}
