package tensor

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/internal/fastmath"
	"github.com/adjointgo/adjoint/internal/parallel"
	"github.com/adjointgo/adjoint/internal/workers"
)

// This file holds the kernels of the element-wise functions added after the
// first set (UnaryOp, BinaryOp): special functions, activations, and the
// derivative masks package ad builds their rules from. They are direct Go
// loops (branch-free where the op is piecewise linear, float32-accurate
// polynomial kernels for the float32 activations), split across goroutines
// for large contiguous operands by internal/parallel, as the other kernels
// are.

// MathOp names an element-wise function of one tensor with up to two
// constant parameters a and b.
type MathOp uint8

// The functions of MathOp. Their values at special points follow package
// math.
const (
	Erf            MathOp = iota // erf x
	Erfc                         // erfc x = 1 − erf x, accurate for large x
	Log1p                        // ln(1+x), accurate near 0
	Expm1                        // eˣ − 1, accurate near 0
	Log2                         // log₂ x
	GELU                         // x·Φ(x) = x·(1+erf(x/√2))/2
	GELUTanh                     // x·(1+tanh(√(2/π)(x+0.044715x³)))/2
	SiLU                         // x·σ(x)
	LeakyReLU                    // x for x > 0, a·x elsewhere
	ELU                          // x for x > 0, a·(eˣ−1) elsewhere
	Softsign                     // x/(1+|x|)
	Clamp                        // min(max(x, a), b)
	ClampMask                    // 1 where a ≤ x ≤ b, 0 elsewhere (Clamp's derivative)
	PosMask                      // 1 where x > 0, 0 elsewhere
	LeakyMask                    // 1 where x > 0, a elsewhere (LeakyReLU's derivative)
	OneMinusSquare               // 1 − x², x² rounded first (tanh's derivative from its output)
	// The ops below are computed by mathKernelTrig (elementwise_trig.go).
	Tan   // tan x
	Atan  // arctan x
	Asin  // arcsin x (NaN outside [−1, 1])
	Acos  // arccos x (NaN outside [−1, 1])
	Sinh  // sinh x
	Cosh  // cosh x
	Asinh // arsinh x
	Acosh // arcosh x (NaN below 1)
	Atanh // artanh x (NaN outside [−1, 1], ±Inf at ±1)
	Floor // ⌊x⌋
	Round // x rounded to the nearest integer, halves to even (NumPy's and PyTorch's round)
	Trunc // x rounded toward zero
	RDiv  // a/x
	Ceil  // ⌈x⌉
	Log10 // log₁₀ x
	Exp2  // 2ˣ
)

var mathNames = [...]string{"erf", "erfc", "log1p", "expm1", "log2", "gelu", "gelu_tanh", "silu", "leaky_relu", "elu", "softsign", "clamp", "clamp_mask", "pos_mask", "leaky_mask", "one_minus_square",
	"tan", "atan", "asin", "acos", "sinh", "cosh", "asinh", "acosh", "atanh", "floor", "round", "trunc", "rdiv", "ceil", "log10", "exp2"}

// String returns the op's name.
func (op MathOp) String() string {
	if int(op) < len(mathNames) {
		return mathNames[op]
	}
	return fmt.Sprintf("MathOp(%d)", uint8(op))
}

// Math sets t = op(x; a, b) elementwise and returns t. t may be x. An op that
// is none of the constants above panics with a *ShapeError wrapping
// ErrUnknownOp. Large operands are split across goroutines.
func (t *Tensor) Math(op MathOp, x *Tensor, a, b float64) *Tensor {
	if int(op) >= len(mathNames) {
		panic(unknownOp("math", op.String(), "Erf … Exp2"))
	}
	if t != x {
		t.resize(x.dtype, x.shape)
	} else {
		t.BumpVersion()
	}
	if x.dtype == Float32 {
		mathSplit(op, t.f32, x.f32, a, b)
	} else {
		mathSplit(op, t.f64, x.f64, a, b)
	}
	return t
}

func mathSplit[T Float](op MathOp, dst, x []T, a, b float64) {
	dst = dst[:len(x)]
	if !parallel.Worth(len(x)) {
		mathKernel(op, dst, x, a, b)
		return
	}
	ts := workers.Either[mathTask[T]](&mathTasks32, &mathTasks64)
	if ts == nil { // a named float type: a closure
		parallel.For(len(x), func(lo, hi int) { mathKernel(op, dst[lo:hi], x[lo:hi], a, b) })
		return
	}
	t := ts.Get()
	*t = mathTask[T]{op: op, dst: dst, x: x, a: a, b: b, parts: parallel.Parts(len(x), len(x))}
	workers.Run(t.parts, t)
	ts.Put(t)
}

// mathTask is a split mathSplit (two unset) or math2Split: part p does its
// range of the elements, a task from a free list where a closure would
// allocate at every call.
type mathTask[T Float] struct {
	op     MathOp
	op2    Math2Op
	two    bool
	dst, x []T
	y      []T
	a, b   float64
	parts  int
}

func (t *mathTask[T]) Run(p int) {
	n := len(t.dst)
	lo, hi := n*p/t.parts, n*(p+1)/t.parts
	if t.two {
		math2Kernel(t.op2, t.dst[lo:hi], t.x[lo:hi], t.y[lo:hi], hi-lo, 1, 1)
		return
	}
	mathKernel(t.op, t.dst[lo:hi], t.x[lo:hi], t.a, t.b)
}

// The free lists of mathSplit's and math2Split's tasks, one per element
// type (workers.Either).
var (
	mathTasks32 workers.Tasks[mathTask[float32]]
	mathTasks64 workers.Tasks[mathTask[float64]]
)

// geluC is √(2/π), the constant of GELU's tanh form.
var geluC = math.Sqrt(2 / math.Pi)

// mathKernel computes op over x. Every loop is a direct loop without calls
// through function values; the piecewise-linear ops and the masks are
// branch-free (builtin min and max, which keep NaN). In float32, the
// transcendental activations (SiLU, both GELUs, erf, erfc) use the
// float32-accurate kernels of internal/fastmath (relative errors below
// 2·10⁻⁷, a few float32 ulps) instead of float64 calls into package
// math; float64 keeps package math's full precision.
func mathKernel[T Float](op MathOp, dst, x []T, a, b float64) {
	dst = dst[:len(x)]
	f32 := isF32[T]()
	switch op {
	case Erf:
		if f32 {
			for i, v := range x {
				dst[i] = T(fastmath.Erf(float64(v)))
			}
			return
		}
		for i, v := range x {
			dst[i] = T(math.Erf(float64(v)))
		}
	case Erfc:
		if f32 {
			for i, v := range x {
				dst[i] = T(fastmath.Erfc(float64(v)))
			}
			return
		}
		for i, v := range x {
			dst[i] = T(math.Erfc(float64(v)))
		}
	case Log1p:
		for i, v := range x {
			dst[i] = T(math.Log1p(float64(v)))
		}
	case Expm1:
		for i, v := range x {
			dst[i] = T(math.Expm1(float64(v)))
		}
	case Log2:
		for i, v := range x {
			dst[i] = T(math.Log2(float64(v)))
		}
	case GELU:
		fastmath.GELUs(dst, x)
	case GELUTanh: // SIMD for float32 (x·σ(2u)), math.Tanh for float64
		fastmath.GELUTanhs(dst, x)
	case SiLU:
		if d, ok := any(dst).([]float32); ok { // SIMD, −0 at −Inf
			fastmath.SiLUsF32(d, any(x).([]float32))
			return
		}
		for i, v := range x {
			u := float64(v)
			dst[i] = T(u * sigmoid(u))
		}
	case LeakyReLU:
		s := T(a)
		for i, v := range x {
			dst[i] = max(v, 0) + s*min(v, 0) // NaN stays NaN
		}
	case ELU:
		for i, v := range x {
			if v > 0 {
				dst[i] = v
			} else {
				dst[i] = T(a * math.Expm1(float64(v)))
			}
		}
	case Softsign:
		for i, v := range x {
			dst[i] = v / (1 + max(v, -v))
		}
	case Clamp:
		lo, hi := T(a), T(b)
		for i, v := range x {
			dst[i] = min(max(v, lo), hi) // NaN stays NaN
		}
	case ClampMask:
		lo, hi := T(a), T(b)
		for i, v := range x {
			dst[i] = b2f[T](v >= lo) * b2f[T](v <= hi)
		}
	case PosMask:
		for i, v := range x {
			dst[i] = b2f[T](v > 0)
		}
	case LeakyMask:
		s := T(a)
		for i, v := range x {
			p := b2f[T](v > 0)
			dst[i] = p + (1-p)*s
		}
	case OneMinusSquare:
		for i, v := range x {
			dst[i] = 1 - T(v*v) // the square rounded on its own: no fused multiply-add
		}
	default:
		mathKernelTrig(op, dst, x, a)
	}
}

func isF32[T Float]() bool {
	var z T
	_, ok := any(z).(float32)
	return ok
}

func sigmoid(f float64) float64 {
	if f >= 0 {
		return 1 / (1 + math.Exp(-f))
	}
	e := math.Exp(f)
	return e / (1 + e)
}

// Math2Op names an element-wise function of two broadcast tensors, beyond
// BinaryOp.
type Math2Op uint8

// The functions of Math2Op.
const (
	Atan2        Math2Op = iota // atan2(a, b): the angle of the point (b, a)
	Hypot                       // √(a²+b²) without overflow
	LogAddExp                   // ln(eᵃ+eᵇ) without overflow
	MaxWeight                   // 1 where a > b, ½ where a = b, 0 elsewhere
	MinWeight                   // 1 where a < b, ½ where a = b, 0 elsewhere
	GELUGrad                    // a·GELU′(b) = a·(Φ(b) + b·φ(b)): the exact GELU's backward, a the gradient
	GELUTanhGrad                // a·GELUTanh′(b): the backward of GELU's tanh form, a the gradient
)

var math2Names = [...]string{"atan2", "hypot", "logaddexp", "max_weight", "min_weight", "gelu_grad", "gelu_tanh_grad"}

// String returns the op's name.
func (op Math2Op) String() string {
	if int(op) < len(math2Names) {
		return math2Names[op]
	}
	return fmt.Sprintf("Math2Op(%d)", uint8(op))
}

// Math2 sets t = op(a, b) with NumPy broadcasting and returns t, with
// Binary's rules for aliasing. Large operands of one shape are split across
// goroutines.
func (t *Tensor) Math2(op Math2Op, a, b *Tensor) *Tensor {
	if int(op) >= len(math2Names) {
		panic(unknownOp("math2", op.String(), "Atan2 … GELUTanhGrad"))
	}
	d := a.dtype
	if b.dtype != d {
		sameDType(op.String(), a, b)
	}
	if EqualShape(a.shape, b.shape) {
		if t != a && t != b {
			t.resize(d, a.shape)
		} else {
			t.BumpVersion()
		}
		if d == Float32 {
			math2Split(op, t.f32, a.f32, b.f32)
		} else {
			math2Split(op, t.f64, a.f64, b.f64)
		}
		return t
	}
	var ob, ba, bb stridesBuf
	out := shapeBuf(&ob, max(len(a.shape), len(b.shape)))
	out = broadcastInto(out, op.String(), a.shape, b.shape)
	t.noBroadcastAlias(op.String(), "operand a", a, out)
	t.noBroadcastAlias(op.String(), "operand b", b, out)
	if t == a || t == b {
		t.BumpVersion()
	} else {
		t.resizeCopy(d, out)
	}
	out = t.shape
	sa, sb := stridesIn(&ba, a.shape, out), stridesIn(&bb, b.shape, out)
	if d == Float32 {
		walk2(out, sa, sb, func(o, oa, ob, n, da, db int) { math2Kernel(op, t.f32[o:o+n], a.f32[oa:], b.f32[ob:], n, da, db) })
	} else {
		walk2(out, sa, sb, func(o, oa, ob, n, da, db int) { math2Kernel(op, t.f64[o:o+n], a.f64[oa:], b.f64[ob:], n, da, db) })
	}
	return t
}

func math2Split[T Float](op Math2Op, dst, a, b []T) {
	n := len(a)
	if !parallel.Worth(n) {
		math2Kernel(op, dst, a, b, n, 1, 1)
		return
	}
	ts := workers.Either[mathTask[T]](&mathTasks32, &mathTasks64)
	if ts == nil { // a named float type: a closure
		parallel.For(n, func(lo, hi int) { math2Kernel(op, dst[lo:hi], a[lo:hi], b[lo:hi], hi-lo, 1, 1) })
		return
	}
	t := ts.Get()
	*t = mathTask[T]{op2: op, two: true, dst: dst[:n], x: a, y: b, parts: parallel.Parts(n, n)}
	workers.Run(t.parts, t)
	ts.Put(t)
}

func math2Kernel[T Float](op Math2Op, dst, a, b []T, n, da, db int) {
	if op == GELUGrad || op == GELUTanhGrad { // the slice kernels, SIMD for float32
		bwd := fastmath.GELUBackward[T]
		if op == GELUTanhGrad {
			bwd = fastmath.GELUTanhBackward[T]
		}
		if da == 1 && db == 1 {
			bwd(dst[:n], a[:n], b[:n])
			return
		}
		var ba, bb [64]T // a broadcast operand: gathered in chunks
		ia, ib := 0, 0
		for i := 0; i < n; i += len(ba) {
			m := min(len(ba), n-i)
			for j := range m {
				ba[j], bb[j] = a[ia], b[ib]
				ia += da
				ib += db
			}
			bwd(dst[i:i+m], ba[:m], bb[:m])
		}
		return
	}
	ia, ib := 0, 0
	for i := 0; i < n; i++ {
		x, y := a[ia], b[ib]
		var r T
		switch op {
		case Atan2:
			r = T(math.Atan2(float64(x), float64(y)))
		case Hypot:
			r = T(math.Hypot(float64(x), float64(y)))
		case LogAddExp:
			u, v := float64(x), float64(y)
			m := math.Max(u, v)
			if math.IsInf(m, 0) && u == v { // both −Inf (or +Inf): no NaN from ∞−∞
				r = T(m)
			} else {
				r = T(m + math.Log1p(math.Exp(-math.Abs(u-v))))
			}
		case MaxWeight:
			r = b2f[T](x > y) + b2f[T](x == y)/2
		case MinWeight:
			r = b2f[T](x < y) + b2f[T](x == y)/2
		default:
			panic(unknownOp("math2", op.String(), "Atan2 … GELUTanhGrad"))
		}
		dst[i] = r
		ia += da
		ib += db
	}
}

// Cumsum sets t to the cumulative sums of x along axis (from the end when
// reverse is set) and returns t. t must not be x.
func (t *Tensor) Cumsum(x *Tensor, axis int, reverse bool) *Tensor {
	axis = NormAxis("cumsum", x.shape, axis)
	if t == x {
		panic(&ShapeError{Op: "cumsum", Shapes: [][]int{x.shape}, Msg: "destination is the operand", Err: ErrAlias})
	}
	t.resize(x.dtype, x.shape)
	outer, n, inner := axisSplit(x.shape, axis)
	if x.dtype == Float32 {
		cumsum(t.f32, x.f32, outer, n, inner, reverse)
	} else {
		cumsum(t.f64, x.f64, outer, n, inner, reverse)
	}
	return t
}

// axisSplit returns the sizes of the axes before axis (multiplied), of axis,
// and of those after it.
func axisSplit(shape []int, axis int) (outer, n, inner int) {
	outer, inner = 1, 1
	for _, d := range shape[:axis] {
		outer *= d
	}
	for _, d := range shape[axis+1:] {
		inner *= d
	}
	return outer, shape[axis], inner
}

func cumsum[T Float](dst, x []T, outer, n, inner int, reverse bool) {
	for o := range outer {
		base := o * n * inner
		for j := range inner {
			var s T
			for k := range n {
				if reverse {
					k = n - 1 - k
				}
				i := base + k*inner + j
				s += x[i]
				dst[i] = s
			}
		}
	}
}

// ArgReduce sets t to the index along axis of the maximum of x (of the
// minimum when min is set), the first one where several tie, as float
// values in x's dtype, and returns t. The axis is removed unless keepDims.
// NaN counts as larger than any number for the maximum and smaller for the
// minimum (the first NaN wins, as in NumPy). The axis must not be empty.
func (t *Tensor) ArgReduce(x *Tensor, axis int, min, keepDims bool) *Tensor {
	op := "argmax"
	if min {
		op = "argmin"
	}
	axis = NormAxis(op, x.shape, axis)
	outer, n, inner := axisSplit(x.shape, axis)
	if n == 0 {
		panic(&ShapeError{Op: op, Shapes: [][]int{x.shape}, Msg: fmt.Sprintf("axis %d is empty", axis)})
	}
	if t == x {
		panic(&ShapeError{Op: op, Shapes: [][]int{x.shape}, Msg: "destination is the operand", Err: ErrAlias})
	}
	shape := append([]int(nil), x.shape...)
	if keepDims {
		shape[axis] = 1
	} else {
		shape = append(shape[:axis], shape[axis+1:]...)
	}
	t.resize(x.dtype, shape)
	for o := range outer {
		for j := range inner {
			best, bi := x.AtFlat(o*n*inner+j), 0
			for k := 1; k < n && best == best; k++ {
				v := x.AtFlat(o*n*inner + k*inner + j)
				if v != v || (!min && v > best) || (min && v < best) {
					best, bi = v, k
				}
			}
			t.SetFlat(o*inner+j, float64(bi))
		}
	}
	return t
}

// Prod sets t to the product of x over axes (all axes when none are given)
// and returns t, the reduced axes kept as size 1 with keepDims and removed
// otherwise. The product over an empty axis is 1. t must not be x or share
// its storage (it panics with a *ShapeError wrapping ErrAlias). Into a
// destination that already has the dtype, shape and capacity it allocates
// nothing (for up to 8 dimensions).
func (t *Tensor) Prod(x *Tensor, keepDims bool, axes ...int) *Tensor {
	var ab, kb, sb stridesBuf
	ax := normAxesIn(&ab, "prod", x.shape, axes)
	t.noAlias("prod", "the operand", x)
	keep := keepDimsIn(shapeBuf(&kb, len(x.shape)), x.shape, ax)
	out := keep
	if !keepDims {
		out = squeezeIn(shapeBuf(&sb, len(x.shape))[:0], keep, ax)
	}
	t.resizeCopy(x.dtype, out)
	if x.dtype == Float32 {
		prod(t.f32, x.f32, x.shape, keep)
	} else {
		prod(t.f64, x.f64, x.shape, keep)
	}
	return t
}

func prod[T Float](dst, x []T, xs, keep []int) {
	for i := range dst {
		dst[i] = 1
	}
	if len(x) == 0 {
		return
	}
	var bx, bo stridesBuf
	sx := stridesIn(&bx, xs, xs)
	so := stridesIn(&bo, keep, xs)
	walk2(xs, sx, so, func(_, ox, oo, n, _, do int) {
		if do == 0 {
			p := dst[oo]
			for _, v := range x[ox : ox+n] {
				p *= v
			}
			dst[oo] = p
			return
		}
		d := dst[oo : oo+n]
		for i, v := range x[ox : ox+n] {
			d[i] *= v
		}
	})
}

// binaryFlatMore runs the contiguous (unbroadcast) loops of the binary ops
// that have a direct loop here, and reports whether op was one of them:
// Maximum and Minimum with the builtins (NaN if either operand is NaN, and
// −0 < +0, as math.Max and math.Min), the comparisons branch-free.
func binaryFlatMore[T Float](op BinaryOp, dst, a, b []T) bool {
	if !parallel.Worth(len(a)) { // direct calls: a generic func value would allocate
		switch op {
		case Maximum:
			maxLoop(dst, a, b)
		case Minimum:
			minLoop(dst, a, b)
		case Greater:
			greaterLoop(dst, a, b)
		case Less:
			lessLoop(dst, a, b)
		case Equal:
			equalLoop(dst, a, b)
		default:
			return false
		}
		return true
	}
	var f func(dst, a, b []T)
	switch op {
	case Maximum:
		f = maxLoop[T]
	case Minimum:
		f = minLoop[T]
	case Greater:
		f = greaterLoop[T]
	case Less:
		f = lessLoop[T]
	case Equal:
		f = equalLoop[T]
	default:
		return false
	}
	parallel.Map3(dst[:len(a)], a, b[:len(a)], f)
	return true
}

func maxLoop[T Float](dst, a, b []T) {
	b = b[:len(a)]
	for i, x := range a {
		dst[i] = max(x, b[i])
	}
}

func minLoop[T Float](dst, a, b []T) {
	b = b[:len(a)]
	for i, x := range a {
		dst[i] = min(x, b[i])
	}
}

func greaterLoop[T Float](dst, a, b []T) {
	b = b[:len(a)]
	for i, x := range a {
		dst[i] = b2f[T](x > b[i])
	}
}

func lessLoop[T Float](dst, a, b []T) {
	b = b[:len(a)]
	for i, x := range a {
		dst[i] = b2f[T](x < b[i])
	}
}

func equalLoop[T Float](dst, a, b []T) {
	b = b[:len(a)]
	for i, x := range a {
		dst[i] = b2f[T](x == b[i])
	}
}
