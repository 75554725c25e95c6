package ad

import (
	"fmt"

	"github.com/adjointgo/adjoint/tensor"
)

// The ops of this file were added for issue 24: NumPy's trigonometric,
// hyperbolic and rounding functions, log10 and exp2, c − x and c / x, reading one element,
// slicing several axes at once, and constants of a shape. Their rows are
// at the end of the table in rules.go; their kernels are tensor.Math.

// zeroRow is the row of a piecewise-constant element-wise op computed by
// tensor.Math(op): its derivative is 0 wherever it exists (JAX's
// defjvp_zero), so its VJP and JVP are symbolic zeros.
func zeroRow(name string, op tensor.MathOp) rule {
	return rule{name: name, forward: mathFwd(op),
		vjp: func(c *vjpCtx, g *Value) []*Value { return c.g1(nil) },
		jvp: func(c *jvpCtx, ts []*Value) *Value { return nil }}
}

// init gives the rows their batching rule. It writes table itself: this
// file's init runs before rules.go's, which sets tableRef.
func init() {
	for _, op := range []opcode{opTan, opAtan, opAsin, opAcos, opSinh, opCosh, opAsinh, opAcosh, opAtanh,
		opFloor, opRound, opTrunc, opRSubScalar, opRDivScalar, opCeil, opLog10, opExp2} {
		table[op].batch = batchUnary
	}
}

// Tan returns tan x elementwise; its derivative is 1 + tan² x.
func Tan(x *Value) *Value { return apply(row(opTan), nil, x, nil) }

// Atan returns arctan x elementwise, in (−π/2, π/2); its derivative is
// 1/(1+x²). Atan2 is the two-argument form.
func Atan(x *Value) *Value { return apply(row(opAtan), nil, x, nil) }

// Asin returns arcsin x elementwise (NaN outside [−1, 1]); its derivative
// is 1/√(1−x²), +Inf at ±1.
func Asin(x *Value) *Value { return apply(row(opAsin), nil, x, nil) }

// Acos returns arccos x elementwise (NaN outside [−1, 1]); its derivative
// is −1/√(1−x²), −Inf at ±1.
func Acos(x *Value) *Value { return apply(row(opAcos), nil, x, nil) }

// Sinh returns sinh x elementwise; its derivative is cosh x.
func Sinh(x *Value) *Value { return apply(row(opSinh), nil, x, nil) }

// Cosh returns cosh x elementwise; its derivative is sinh x.
func Cosh(x *Value) *Value { return apply(row(opCosh), nil, x, nil) }

// Asinh returns arsinh x elementwise; its derivative is 1/√(x²+1).
func Asinh(x *Value) *Value { return apply(row(opAsinh), nil, x, nil) }

// Acosh returns arcosh x elementwise (NaN below 1); its derivative is
// 1/√(x²−1), +Inf at 1.
func Acosh(x *Value) *Value { return apply(row(opAcosh), nil, x, nil) }

// Atanh returns artanh x elementwise (NaN outside [−1, 1], ±Inf at ±1);
// its derivative is 1/(1−x²).
func Atanh(x *Value) *Value { return apply(row(opAtanh), nil, x, nil) }

// Floor returns ⌊x⌋ elementwise. Its derivative is taken as 0 everywhere
// (it is 0 wherever it exists), as in PyTorch and JAX: no gradient flows
// through it. So for Round and Trunc.
func Floor(x *Value) *Value { return apply(row(opFloor), nil, x, nil) }

// Round returns x rounded to the nearest integer elementwise, halves to
// even (2.5 → 2, −0.5 → −0), as NumPy's round and PyTorch's; its
// derivative is taken as 0.
func Round(x *Value) *Value { return apply(row(opRound), nil, x, nil) }

// Ceil returns ⌈x⌉ elementwise; its derivative is taken as 0.
func Ceil(x *Value) *Value { return apply(row(opCeil), nil, x, nil) }

// Log10 returns log₁₀ x elementwise; its derivative is 1/(x ln 10).
func Log10(x *Value) *Value { return apply(row(opLog10), nil, x, nil) }

// Exp2 returns 2ˣ elementwise; its derivative is 2ˣ ln 2.
func Exp2(x *Value) *Value { return apply(row(opExp2), nil, x, nil) }

// Trunc returns x rounded toward zero elementwise; its derivative is taken
// as 0.
func Trunc(x *Value) *Value { return apply(row(opTrunc), nil, x, nil) }

// RSubScalar returns c − x elementwise, one op (AddScalar(Neg(x), c) is
// two). The name follows AddScalar and MulScalar; R for reversed, as
// Python's __rsub__.
func RSubScalar(x *Value, c float64) *Value {
	at := newAttrs[scalarAttrs](x, nil)
	at.c = c
	return apply(row(opRSubScalar), at, x, nil)
}

// RDivScalar returns c / x elementwise, one op; its derivative is −c/x².
func RDivScalar(x *Value, c float64) *Value {
	at := newAttrs[paramAttrs](x, nil)
	at.a = c
	return apply(row(opRDivScalar), at, x, nil)
}

// At returns the element of x at the index idx (one coordinate per axis;
// a negative coordinate counts from the end, −1 being the last) as a
// 0-dimensional value, differentiable: the gradient of x is zero but at
// that element. It is PyTorch's x[i, j] and JAX's x[i, j]. An index of the
// wrong length or out of range is an ErrShape error.
func At(x *Value, idx ...int) *Value {
	shape := x.Shape()
	if len(idx) != len(shape) {
		panic(shapeErr("at", [][]int{shape}, "index %v has %d coordinates for %d axes; give one per axis", idx, len(idx), len(shape)))
	}
	off := 0
	for i, k := range idx {
		if k < 0 {
			k += shape[i]
		}
		if k < 0 || k >= shape[i] {
			panic(shapeErr("at", [][]int{shape}, "index %v out of range on axis %d (size %d)", idx, i, shape[i]))
		}
		off = off*shape[i] + k
	}
	if len(shape) == 0 {
		return x
	}
	return Reshape(Slice(Reshape(x, -1), 0, off, off+1))
}

// Range selects the indices Start, Start+Step, … before End along one
// axis, as Python's start:end:step (see Slices). Start and End may be
// negative, counting from the end of the axis (−1 is the last index), and
// are clamped to the axis as Python clamps them; Step 0 means 1, and a
// negative Step is an ErrArgument error (reverse with Flip). End is not
// optional: the zero Range selects nothing. All() selects a whole axis, and
// Range{Start: s, End: math.MaxInt, Step: k} runs from s to the end
// (Python's s::k).
type Range struct {
	Start, End, Step int
}

// All returns the Range of a whole axis, Python's ":".
func All() Range { return Range{Start: 0, End: int(^uint(0) >> 1), Step: 1} }

// Slices returns x[r0, r1, …]: rs[i] selects along axis i, and axes
// without a Range are taken whole, as in NumPy's x[0:2, ::3]. It slices
// several axes at once, with steps; Slice is the one-axis form and At reads
// a single element. The gradient flows back to the selected elements.
// More ranges than axes are an ErrShape error.
func Slices(x *Value, rs ...Range) *Value {
	shape := x.Shape()
	if len(rs) > len(shape) {
		panic(shapeErr("slices", [][]int{shape}, "%d ranges for %d axes; give at most one per axis", len(rs), len(shape)))
	}
	for ax, r := range rs {
		n := shape[ax]
		step := r.Step
		if step == 0 {
			step = 1
		}
		if step < 0 {
			panic(&Error{Op: "slices", Err: ErrArgument, Msg: fmt.Sprintf("axis %d: step %d is negative; use a positive step, and Flip to reverse", ax, r.Step)})
		}
		lo, hi := clampIndex(r.Start, n), clampIndex(r.End, n)
		hi = max(hi, lo)
		switch {
		case lo == 0 && hi == n && step == 1:
			continue // the whole axis
		case step == 1:
			x = Slice(x, ax, lo, hi)
		default:
			idx := make([]int, 0, (hi-lo+step-1)/step)
			for i := lo; i < hi; i += step {
				idx = append(idx, i)
			}
			x = IndexSelect(x, ax, idx)
		}
	}
	return x
}

// clampIndex resolves a Python slice bound against an axis of size n.
func clampIndex(i, n int) int {
	if i < 0 {
		i += n
	}
	return min(max(i, 0), n)
}

// Zeros returns a constant of zeros of the given dtype and shape:
// Const(tensor.Zeros(dtype, shape...)). The other creation functions
// (tensor.Ones, tensor.Eye, tensor.Arange, tensor.Randn, …) make tensors;
// wrap them in Const or Var.
func Zeros(dtype tensor.DType, shape ...int) *Value { return Const(tensor.Zeros(dtype, shape...)) }

// Ones returns a constant of ones of the given dtype and shape.
func Ones(dtype tensor.DType, shape ...int) *Value { return Const(tensor.Ones(dtype, shape...)) }

// Full returns a constant of the given dtype and shape, every element v.
// A 0-dimensional one (no shape) is a scalar constant of that dtype; to
// follow another value's dtype, use ScalarLike.
func Full(dtype tensor.DType, v float64, shape ...int) *Value {
	t := tensor.Zeros(dtype, shape...) // checks the dtype and the shape
	return Const(t.Fill(v))
}
