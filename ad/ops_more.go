package ad

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/tensor"
)

// The ops of this file were added after the first set (issue 10): binary
// element-wise functions, special functions and activations, and more
// reductions. Their rows are in the table of rules.go; the helpers the rows
// use are here. Their kernels are tensor.Math, tensor.Math2,
// tensor.Cumsum and tensor.ArgReduce: scalar Go loops split across
// goroutines for large operands, not yet vectorised.

// paramAttrs: the constant parameters of an element-wise row (leaky_relu's
// slope, elu's alpha, clamp's bounds).
type paramAttrs struct{ a, b float64 }

func (p *paramAttrs) reset() { *p = paramAttrs{} }

// cumsumAttrs: cumsum's axis and direction.
type cumsumAttrs struct {
	axis    int
	reverse bool
}

func (p *cumsumAttrs) reset() { *p = cumsumAttrs{} }

// mathFwd is the forward kernel of a row computing tensor.Math(op), with
// the parameters of its paramAttrs when it has them.
func mathFwd(op tensor.MathOp) func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
	return func(dst *tensor.Tensor, at attrs, x, _ *tensor.Tensor) {
		var a, b float64
		if p, ok := at.(*paramAttrs); ok {
			a, b = p.a, p.b
		}
		dst.Math(op, x, a, b)
	}
}

// mathRow is the row of a unary element-wise primitive computed by
// tensor.Math(op), with d(c, v) = v·f'(x) as in elementwise.
func mathRow(name string, op tensor.MathOp, reads saveMask, d func(c primals, v *Value) *Value) rule {
	return withForward(elementwise(name, 0, reads, d), mathFwd(op))
}

// math2Fwd is the forward kernel tensor.Math2(op).
func math2Fwd(op tensor.Math2Op) func(dst *tensor.Tensor, at attrs, x, y *tensor.Tensor) {
	return func(dst *tensor.Tensor, _ attrs, x, y *tensor.Tensor) { dst.Math2(op, x, y) }
}

// math2Row is the row of a binary element-wise primitive computed by fwd,
// which saves both operands and its output. dx and dy
// return ∂f/∂x and ∂f/∂y (in the broadcast shape); the VJP multiplies g by
// them and the JVP sums the tangents weighted by them.
func math2Row(name string, fwd func(dst *tensor.Tensor, at attrs, x, y *tensor.Tensor), dx, dy func(c primals) *Value) rule {
	return rule{name: name, broadcasts: true, forward: fwd,
		saves: func(need [2]bool) saveMask { return saveIn0 | saveIn1 | saveOut },
		vjp: func(c *vjpCtx, g *Value) []*Value {
			var gx, gy *Value
			if c.need[0] {
				gx = Mul(g, dx(c))
			}
			if c.need[1] {
				gy = Mul(g, dy(c))
			}
			return c.g2(gx, gy)
		},
		jvp: func(c *jvpCtx, ts []*Value) *Value {
			var a, b *Value
			if ts[0] != nil {
				a = Mul(ts[0], dx(c))
			}
			if ts[1] != nil {
				b = Mul(ts[1], dy(c))
			}
			return addT(a, b)
		}}
}

// mathConst returns the constant tensor.Math(op, x; a, b), from x's
// allocator (an arena's when x is an arena value).
func mathConst(op tensor.MathOp, x *Value, a, b float64) *Value {
	al := allocFor(op.String(), x, nil)
	m, _ := al.alloc(false)
	m.t.Math(op, &x.t, a, b)
	al.wrote(m, nil, nil)
	return m
}

// math2Const returns the constant tensor.Math2(op, x, y), from x's
// allocator.
func math2Const(op tensor.Math2Op, x, y *Value) *Value {
	al := allocFor(op.String(), x, y)
	m, _ := al.alloc(false)
	m.t.Math2(op, &x.t, &y.t)
	al.wrote(m, nil, nil)
	return m
}

// nonzero returns d with its zeros replaced by ones: the denominator of a
// partial derivative that is taken as 0 where d is 0 (its numerator is then
// 0 too).
func nonzero(d *Value) *Value {
	al := allocFor("nonzero", d, nil)
	zero, one := constant(al, d.DType(), 0), constant(al, d.DType(), 1)
	isZero, _ := al.alloc(false)
	isZero.t.Binary(tensor.Equal, &d.t, &zero.t)
	al.wrote(isZero, nil, nil)
	return Where(isZero, one, d)
}

// Row constructors: the derivatives of the rows of the table added for
// issue 10, each d(c, v) = v·f'(x).

var (
	twoOverSqrtPi = 2 / math.Sqrt(math.Pi)
	invSqrt2Pi    = 1 / math.Sqrt(2*math.Pi)
	geluTanhC     = math.Sqrt(2 / math.Pi)
	geluTanhCubic = 0.044715
)

// erfDeriv is v·(2/√π)·e^(−x²).
func erfDeriv(c primals, v *Value) *Value {
	return Mul(v, MulScalar(Exp(Neg(Square(c.in(0)))), twoOverSqrtPi))
}

// geluDeriv is v·(Φ(x) + x·φ(x)), Φ(x) = (1+erf(x/√2))/2, φ the normal
// density.
func geluDeriv(c primals, v *Value) *Value {
	x := c.in(0)
	if fastCot(c, v, x) {
		return math2Const(tensor.GELUGrad, v, x)
	}
	phi := MulScalar(Exp(MulScalar(Square(x), -0.5)), invSqrt2Pi)
	cdf := AddScalar(MulScalar(Erf(MulScalar(x, 1/math.Sqrt2)), 0.5), 0.5)
	return Mul(v, Add(cdf, Mul(x, phi)))
}

// fastCot reports whether the derivative d(c, v) of an element-wise row
// may be computed as one constant kernel, tensor.Math2(op, v, x): in a
// VJP that records nothing (no CreateGraph, no tangents riding along, no
// anomaly tracking) on operands of one dtype and shape. Elsewhere (a JVP,
// double backward) it is written with differentiable ops.
func fastCot(c primals, v, x *Value) bool {
	vc, ok := c.(*vjpCtx)
	return ok && !vc.create && v.tan == nil && x.tan == nil && !v.anomaly && !x.anomaly &&
		v.t.DType() == x.t.DType() && tensor.EqualShape(v.t.Shape(), x.t.Shape())
}

// geluTanhDeriv is v·((1+t)/2 + x·(1−t²)·u′/2) with t = tanh u,
// u = c(x + 0.044715x³), u′ = c(1 + 3·0.044715x²).
func geluTanhDeriv(c primals, v *Value) *Value {
	x := c.in(0)
	if fastCot(c, v, x) {
		return math2Const(tensor.GELUTanhGrad, v, x)
	}
	x2 := Square(x)
	u := MulScalar(Mul(x, AddScalar(MulScalar(x2, geluTanhCubic), 1)), geluTanhC)
	t := Tanh(u)
	du := MulScalar(AddScalar(MulScalar(x2, 3*geluTanhCubic), 1), geluTanhC)
	sech2 := AddScalar(Neg(Square(t)), 1)
	return Mul(v, Add(MulScalar(AddScalar(t, 1), 0.5), MulScalar(Mul(x, Mul(sech2, du)), 0.5)))
}

// siluDeriv is v·(σ(x) + y·(1−σ(x))), y = x·σ(x).
func siluDeriv(c primals, v *Value) *Value {
	s := Sigmoid(c.in(0))
	return Mul(v, Add(s, Mul(c.out(), AddScalar(Neg(s), 1))))
}

// Maximum returns the elementwise larger of x and y, with broadcasting (NaN
// where either is NaN). Where x = y each operand receives half of the
// gradient, as in PyTorch; elsewhere the larger receives all of it.
func Maximum(x, y *Value) *Value { return apply2(row(opMaximum), nil, x, y) }

// Minimum returns the elementwise smaller of x and y, with broadcasting (NaN
// where either is NaN). Where x = y each operand receives half of the
// gradient, as in PyTorch.
func Minimum(x, y *Value) *Value { return apply2(row(opMinimum), nil, x, y) }

// Clamp returns x limited to [lo, hi] elementwise: min(max(x, lo), hi). The
// bounds are constants. The gradient is 1 where lo ≤ x ≤ hi (the bounds
// included, as in PyTorch) and 0 elsewhere. lo > hi is an ErrArgument
// error; an infinite bound leaves that side open.
func Clamp(x *Value, lo, hi float64) *Value {
	if !(lo <= hi) {
		panic(&Error{Op: "clamp", Err: ErrArgument, Msg: fmt.Sprintf("bounds [%v, %v] are empty or NaN", lo, hi)})
	}
	at := newAttrs[paramAttrs](x, nil)
	at.a, at.b = lo, hi
	return apply(row(opClamp), at, x, nil)
}

// Atan2 returns the angle of the point (x, y) elementwise, atan2(y, x) as in
// math.Atan2 and NumPy (note the order: y first), with broadcasting. Its
// partials are x/(x²+y²) for y and −y/(x²+y²) for x, taken as 0 at the
// origin, as package scalar does.
func Atan2(y, x *Value) *Value { return apply(row(opAtan2), nil, y, x) }

// Hypot returns √(x²+y²) elementwise without overflow, with broadcasting.
// Its partials x/h and y/h are taken as 0 at the origin (a subgradient), as
// package scalar does.
func Hypot(x, y *Value) *Value { return apply2(row(opHypot), nil, x, y) }

// LogAddExp returns ln(eˣ + eʸ) elementwise, computed without overflow, with
// broadcasting. Its partials are e^(x−z) and e^(y−z), z the output (NaN
// where both operands are −Inf).
func LogAddExp(x, y *Value) *Value { return apply2(row(opLogAddExp), nil, x, y) }

// Erf returns the error function of x elementwise.
func Erf(x *Value) *Value { return apply(row(opErf), nil, x, nil) }

// Erfc returns 1 − erf x elementwise, accurate where erf x is close to 1.
func Erfc(x *Value) *Value { return apply(row(opErfc), nil, x, nil) }

// Log1p returns ln(1+x) elementwise, accurate for x near 0 (math.Log1p).
func Log1p(x *Value) *Value { return apply(row(opLog1p), nil, x, nil) }

// Expm1 returns eˣ − 1 elementwise, accurate for x near 0 (math.Expm1).
func Expm1(x *Value) *Value { return apply(row(opExpm1), nil, x, nil) }

// Log2 returns log₂ x elementwise.
func Log2(x *Value) *Value { return apply(row(opLog2), nil, x, nil) }

// GELU returns x·Φ(x) elementwise, Φ the standard normal distribution
// function, in its exact form x·(1+erf(x/√2))/2 (PyTorch's
// approximate='none'). GELUTanh is the tanh approximation.
func GELU(x *Value) *Value { return apply(row(opGELU), nil, x, nil) }

// GELUTanh returns the tanh approximation of GELU elementwise,
// x·(1+tanh(√(2/π)(x+0.044715x³)))/2 (PyTorch's approximate='tanh'), with
// its own exact derivative.
func GELUTanh(x *Value) *Value { return apply(row(opGELUTanh), nil, x, nil) }

// SiLU returns x·σ(x) elementwise (the swish activation).
func SiLU(x *Value) *Value { return apply(row(opSiLU), nil, x, nil) }

// LeakyReLU returns x where x > 0 and slope·x elsewhere. Its derivative at
// 0 is slope, as in PyTorch.
func LeakyReLU(x *Value, slope float64) *Value {
	at := newAttrs[paramAttrs](x, nil)
	at.a = slope
	return apply(row(opLeakyReLU), at, x, nil)
}

// ELU returns x where x > 0 and alpha·(eˣ−1) elsewhere. Its derivative at 0
// is alpha (the left one, as in PyTorch); it is 1 there when alpha = 1.
func ELU(x *Value, alpha float64) *Value {
	at := newAttrs[paramAttrs](x, nil)
	at.a = alpha
	return apply(row(opELU), at, x, nil)
}

// Softsign returns x/(1+|x|) elementwise; its derivative is 1/(1+|x|)².
func Softsign(x *Value) *Value { return apply(row(opSoftsign), nil, x, nil) }

// Min returns the minimum of x, over every axis or over the axes of an Axes
// option, with the reduced axes removed (kept with length 1 with KeepDims).
// Where several elements tie for the minimum, each receives an equal share
// of the gradient. It is a composite, −max(−x): Max's rule, tie sharing
// included, serves it exactly, and negation costs one pass. See
// [ReduceOption].
func Min(x *Value, opts ...ReduceOption) *Value {
	axes, keep := reduceOptions("min", opts)
	return Neg(reduceMax("min", Neg(x), keep, axes))
}

// LogSumExp returns log Σ exp(x), over every axis or over the axes of an
// Axes option, computed stably, with the reduced axes removed (kept with
// length 1 with KeepDims): LogSumExp(x, Axes(-1)) is the log-normaliser of
// the rows of a matrix of logits. Where every element reduced is −Inf the
// result is −Inf (its gradient there is NaN). See [ReduceOption].
//
// It is a composite: the maximum m is subtracted as a constant (exact in
// value and gradient), so the rows of sub, exp, sum, log and add give its
// derivatives of every order.
func LogSumExp(x *Value, opts ...ReduceOption) *Value {
	const op = "logsumexp"
	axes, keep := reduceOptions(op, opts)
	m := detach(reduceMax(op, x, true, axes))
	if mt := &m.t; !allFinite(mt) {
		z := mt.Clone()
		for i := range z.Len() {
			if v := z.AtFlat(i); math.IsInf(v, 0) || math.IsNaN(v) {
				z.SetFlat(i, 0)
			}
		}
		m = Const(z)
	}
	s := Add(Log(reduceSum(op, Exp(Sub(x, m)), true, axes)), m)
	if keep {
		return s
	}
	return reduceSum(op, s, false, axes) // a sum over size-1 axes drops them
}

// reduceSum is Sum with its options read (keep, and axes as given: nil for
// every axis), for the composites; op names the composite in an error.
func reduceSum(op string, x *Value, keep bool, axes []int) *Value {
	return apply(row(opSum), reduction(op, x, keep, true, axes), x, nil)
}

// reduceMax is Max with its options read, as reduceSum.
func reduceMax(op string, x *Value, keep bool, axes []int) *Value {
	return apply(row(opMax), reduction(op, x, keep, false, axes), x, nil)
}

func allFinite(t *tensor.Tensor) bool {
	for i := range t.Len() {
		if v := t.AtFlat(i); math.IsInf(v, 0) || math.IsNaN(v) {
			return false
		}
	}
	return true
}

// Variance returns the variance (NumPy's var; the name Var is the
// variable constructor) of x, over every axis or over the axes of an Axes
// option, with the reduced axes removed (kept with length 1 with KeepDims):
// Σ(x − mean)² / (N − correction), N the number of elements reduced.
// correction 1 is the unbiased estimate (PyTorch's default), 0 the
// population variance. N − correction ≤ 0 gives Inf or NaN, as in PyTorch.
// It is a composite of sub, square, sum and mul_scalar. See [ReduceOption].
func Variance(x *Value, correction float64, opts ...ReduceOption) *Value {
	axes, keep := reduceOptions("var", opts)
	return variance("var", x, correction, keep, axes)
}

// Std returns the standard deviation √Variance(x, correction, opts...). Its
// gradient is infinite (NaN) where the variance is 0. See [ReduceOption].
func Std(x *Value, correction float64, opts ...ReduceOption) *Value {
	axes, keep := reduceOptions("std", opts)
	return Sqrt(variance("std", x, correction, keep, axes))
}

func variance(op string, x *Value, correction float64, keep bool, axes []int) *Value {
	defer rethrow()
	var buf [8]int // the axes on the stack: no allocation for up to 8
	n := count(x.Shape(), normAxes(op, buf[:0], x.Shape(), axes))
	d := Sub(x, MulScalar(reduceSum(op, x, true, axes), 1/float64(n)))
	s := reduceSum(op, Square(d), keep, axes)
	return MulScalar(s, 1/math.Max(0, float64(n)-correction))
}

// Cumsum returns the cumulative sums of x along axis (a negative axis
// counts from the end). It is linear: its VJP is the cumulative sum of the
// cotangent from the end.
func Cumsum(x *Value, axis int) *Value {
	defer rethrow()
	return cumsumOp(x, tensor.NormAxis("cumsum", x.Shape(), axis), false)
}

func cumsumOp(x *Value, axis int, reverse bool) *Value {
	at := newAttrs[cumsumAttrs](x, nil)
	at.axis, at.reverse = axis, reverse
	return apply(row(opCumsum), at, x, nil)
}

// ArgMax returns the index along axis of the maximum of x, the first one
// where several tie, as a constant of x's dtype with the axis removed. It is
// not differentiable and records nothing. NaN counts as the maximum.
func ArgMax(x *Value, axis int) *Value { return argReduce(x, axis, false) }

// ArgMin returns the index along axis of the minimum of x, the first one
// where several tie, as a constant of x's dtype with the axis removed. It is
// not differentiable and records nothing. NaN counts as the minimum.
func ArgMin(x *Value, axis int) *Value { return argReduce(x, axis, true) }

func argReduce(x *Value, axis int, min bool) *Value {
	defer rethrow()
	if l := x.batch(); l != nil { // inside Vmap: every example's, the axis past the batch
		defer onExample(func() { argReduce(examples(x)[0], axis, min) })
		a := tensor.NormAxis("argmax", x.Shape(), axis)
		return batchOf(argReduce(x.bat.phys, a+1, min), l)
	}
	return Const(new(tensor.Tensor).ArgReduce(&x.t, axis, min, false))
}

// withSaves makes r save m when its operand needs a gradient (a row whose
// derivative reads both its operand and its output).
func withSaves(r rule, m saveMask) rule {
	r.saves = func(need [2]bool) saveMask {
		if need[0] {
			return m
		}
		return 0
	}
	return r
}

// Prod returns the product of x, over every axis or over the axes of an
// Axes option, with the reduced axes removed (kept with length 1 with
// KeepDims). Its gradient is exact with zeros: ∂/∂xᵢ is the product of the
// other elements, so a group with one zero passes the product of its
// nonzero elements to the zero and 0 to the others, and a group with two or
// more zeros passes 0 to all (see prodWeights). See [ReduceOption].
func Prod(x *Value, opts ...ReduceOption) *Value {
	axes, keep := reduceOptions("prod", opts)
	return apply(row(opProd), reduction("prod", x, keep, false, axes), x, nil)
}

// prodWeights returns ∂prod/∂x in x's shape, differentiably. With z the
// zeros of x, k their number in each group, P′ the product of x with its
// zeros replaced by 1 and Q the product of the zeros alone (0 where k > 0,
// else 1, but with its derivative), it is P′·[k=1] at a zero and P′·Q/xᵢ
// elsewhere. P′ and Q are prod rows again, so a second sweep
// differentiates them.
//
// At a zero i the weight is P′·Rᵢ with Rᵢ the product of the group's other
// zeros: 1 when k = 1, and a polynomial of value 0 otherwise whose
// derivatives are not 0, which is what the mixed partials of two zeros
// read (∂²prod/∂x₀∂x₁ at [0 0 5] is 5). With xz = x at the zeros and 0
// elsewhere, S = Σxz and e₂ = (S² − Σxz²)/2 (the second elementary
// symmetric sum of the zeros), Rᵢ = S − xzᵢ when k = 2 and
// e₂ − xzᵢ·(S − xzᵢ) when k = 3: the other zero, and the product of the
// other two. Groups of four zeros or more take Rᵢ = 0 (its derivatives of
// the first two orders are 0 there too), so derivatives of prod are exact to
// the third order at every point.
func prodWeights(c primals, r *reduceAttrs) *Value {
	x := c.in(0)
	d := x.DType()
	al := allocFor("prod", x, nil)
	zero, one := constant(al, d, 0), constant(al, d, 1)
	z, _ := al.alloc(false)
	z.t.Binary(tensor.Equal, &x.t, &zero.t)
	al.wrote(z, nil, nil)
	k, _ := al.alloc(false)
	k.t.Reduce(tensor.SumReduce, &z.t, true, r.axes...)
	al.wrote(k, nil, nil)
	w1, _ := al.alloc(false)
	w1.t.Binary(tensor.Equal, &k.t, &one.t)
	al.wrote(w1, nil, nil)
	xp := Where(z, one, x)
	pp := apply(row(opProd), reduction("prod", xp, true, false, r.axes), xp, nil)
	xq := Where(z, x, one)
	q := apply(row(opProd), reduction("prod", xq, true, false, r.axes), xq, nil)
	return Where(z, Mul(pp, zeroWeights(al, x, z, k, w1, r)), Div(Mul(pp, q), xp))
}

// zeroWeights returns R, the product of each zero's group's other zeros
// (see prodWeights), given the zeros z of x, their count k in each group
// (kept dims) and the mask w1 = [k = 1]. Groups with one zero or none, the
// common case, take R = w1 alone.
func zeroWeights(al allocator, x, z, k, w1 *Value, r *reduceAttrs) *Value {
	d := x.DType()
	most := 0.0 // the most zeros in a group, read without a buffer
	for _, c := range k.t.Float32s() {
		most = math.Max(most, float64(c))
	}
	for _, c := range k.t.Float64s() {
		most = math.Max(most, c)
	}
	if most < 2 {
		return w1
	}
	mask := func(c float64) *Value {
		m, _ := al.alloc(false)
		m.t.Binary(tensor.Equal, &k.t, &constant(al, d, c).t)
		al.wrote(m, nil, nil)
		return m
	}
	xz := Where(z, x, constant(al, d, 0))
	s := apply(row(opSum), reduction("sum", xz, true, true, r.axes), xz, nil)
	other := Sub(s, xz) // k = 2: the other zero
	rw := Add(w1, Mul(mask(2), other))
	if most >= 3 {
		sq := Square(xz)
		s2 := apply(row(opSum), reduction("sum", sq, true, true, r.axes), sq, nil)
		e2 := MulScalar(Sub(Square(s), s2), 0.5)
		rw = Add(rw, Mul(mask(3), Sub(e2, Mul(xz, other)))) // k = 3: the product of the other two
	}
	return rw
}

// oneMinusSquare returns 1 − y² (tanh's derivative from its output),
// differentiably.
func oneMinusSquare(y *Value) *Value { return apply(row(opOneMinusSquare), nil, y, nil) }
