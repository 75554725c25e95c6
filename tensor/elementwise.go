package tensor

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/internal/fastmath"
	"github.com/adjointgo/adjoint/internal/parallel"
	"github.com/adjointgo/adjoint/internal/vec"
)

// vecMin is the length from which the vectorised kernels of internal/vec
// are used (below it the call overhead outweighs the SIMD gain).
const vecMin = 16

// vecAdd sets dst = a + b with the vectorised kernel.
func vecAdd[T Float](dst, a, b []T) {
	if len(a) < vecMin || !vecBinary(Add, dst, a, b) {
		for i := range dst[:len(a)] {
			dst[i] = a[i] + b[i]
		}
	}
}

// vecBinary runs op with the vectorised kernels when one exists for it and
// reports whether it did. Large slices are split across goroutines.
func vecBinary[T Float](op BinaryOp, dst, a, b []T) bool {
	switch d := any(dst).(type) {
	case []float32:
		var f func(d, x, y []float32)
		switch op {
		case Add:
			f = vec.AddF32
		case Sub:
			f = vec.SubF32
		case Mul:
			f = vec.MulF32
		default:
			return false
		}
		parallel.Map3(d, any(a).([]float32), any(b).([]float32), f)
		return true
	case []float64:
		var f func(d, x, y []float64)
		switch op {
		case Add:
			f = vec.AddF64
		case Sub:
			f = vec.SubF64
		case Mul:
			f = vec.MulF64
		default:
			return false
		}
		parallel.Map3(d, any(a).([]float64), any(b).([]float64), f)
		return true
	}
	return false
}

// UnaryOp names an elementwise function of one tensor.
type UnaryOp uint8

// The elementwise unary functions. Their values at special points follow
// package math (log of a negative is NaN, sqrt of a negative is NaN).
const (
	Neg      UnaryOp = iota // −x
	Exp                     // eˣ
	Log                     // ln x
	Sqrt                    // √x
	Abs                     // |x|
	Sin                     // sin x
	Cos                     // cos x
	Tanh                    // tanh x
	Sigmoid                 // 1/(1+e⁻ˣ), computed without overflow
	Relu                    // max(x, 0); NaN stays NaN
	Softplus                // ln(1+eˣ), computed as max(x,0)+log1p(e^−|x|)
	Sign                    // −1, 0 or +1 (NaN stays NaN)
	Square                  // x²
	Recip                   // 1/x
)

var unaryNames = [...]string{"neg", "exp", "log", "sqrt", "abs", "sin", "cos", "tanh", "sigmoid", "relu", "softplus", "sign", "square", "recip"}

// String returns the op's name.
func (op UnaryOp) String() string {
	if int(op) < len(unaryNames) {
		return unaryNames[op]
	}
	return fmt.Sprintf("UnaryOp(%d)", uint8(op))
}

// Apply sets t = op(x) elementwise and returns t. t may be x. An op that is
// none of the constants above panics with a *ShapeError wrapping
// ErrUnknownOp.
func (t *Tensor) Apply(op UnaryOp, x *Tensor) *Tensor {
	if int(op) >= len(unaryNames) {
		panic(unknownOp("apply", op.String(), "Neg … Recip"))
	}
	if t != x {
		t.resize(x.dtype, x.shape)
	} else {
		t.BumpVersion()
	}
	if x.dtype == Float32 {
		unary(op, t.f32, x.f32)
	} else {
		unary(op, t.f64, x.f64)
	}
	return t
}

func unary[T Float](op UnaryOp, dst, x []T) {
	dst = dst[:len(x)]
	if d, ok := any(dst).([]float32); ok {
		// The SIMD kernels of internal/fastmath, in float64 lanes: within
		// 2·10⁻⁸ relative before the one rounding to float32 (correctly
		// rounded but for rare ties), as the math.Exp and math.Tanh loops
		// below give.
		xs := any(x).([]float32)
		switch op {
		case Exp:
			fastmath.ExpsF32(d, xs)
			return
		case Tanh:
			fastmath.TanhsF32(d, xs)
			return
		case Sigmoid:
			fastmath.SigmoidsF32(d, xs)
			return
		}
	}
	switch op {
	case Neg:
		for i, v := range x {
			dst[i] = -v
		}
	case Exp:
		for i, v := range x {
			dst[i] = T(math.Exp(float64(v)))
		}
	case Log:
		for i, v := range x {
			dst[i] = T(math.Log(float64(v)))
		}
	case Sqrt:
		for i, v := range x {
			dst[i] = T(math.Sqrt(float64(v)))
		}
	case Abs:
		for i, v := range x {
			dst[i] = T(math.Abs(float64(v)))
		}
	case Sin:
		for i, v := range x {
			dst[i] = T(math.Sin(float64(v)))
		}
	case Cos:
		for i, v := range x {
			dst[i] = T(math.Cos(float64(v)))
		}
	case Tanh:
		for i, v := range x {
			dst[i] = T(math.Tanh(float64(v)))
		}
	case Sigmoid:
		for i, v := range x {
			f := float64(v)
			if f >= 0 {
				dst[i] = T(1 / (1 + math.Exp(-f)))
			} else {
				e := math.Exp(f)
				dst[i] = T(e / (1 + e))
			}
		}
	case Relu:
		if len(x) >= vecMin {
			switch d := any(dst).(type) {
			case []float32:
				parallel.Map2(d, any(x).([]float32), vec.ReLUF32)
				return
			case []float64:
				parallel.Map2(d, any(x).([]float64), vec.ReLUF64)
				return
			}
		}
		for i, v := range x {
			dst[i] = max(v, 0) // NaN stays NaN; branch-free
		}
	case Softplus:
		for i, v := range x {
			f := float64(v)
			dst[i] = T(math.Max(f, 0) + math.Log1p(math.Exp(-math.Abs(f))))
		}
	case Sign:
		for i, v := range x {
			switch {
			case v > 0:
				dst[i] = 1
			case v < 0:
				dst[i] = -1
			default:
				dst[i] = v // ±0 and NaN
			}
		}
	case Square:
		for i, v := range x {
			dst[i] = v * v
		}
	case Recip:
		for i, v := range x {
			dst[i] = 1 / v
		}
	default:
		panic(unknownOp("apply", op.String(), "Neg … Recip"))
	}
}

// Scale sets t = a·x + b elementwise and returns t. t may be x.
func (t *Tensor) Scale(x *Tensor, a, b float64) *Tensor {
	if t != x {
		t.resize(x.dtype, x.shape)
	} else {
		t.BumpVersion()
	}
	if x.dtype == Float32 {
		affine(t.f32, x.f32, float32(a), float32(b))
	} else {
		affine(t.f64, x.f64, a, b)
	}
	return t
}

func affine[T Float](dst, x []T, a, b T) {
	dst = dst[:len(x)]
	if b == 0 && len(x) >= vecMin {
		switch d := any(dst).(type) {
		case []float32:
			parallel.MapScalar(d, any(a).(float32), any(x).([]float32), vec.ScaleF32)
			return
		case []float64:
			parallel.MapScalar(d, any(a).(float64), any(x).([]float64), vec.ScaleF64)
			return
		}
	}
	for i, v := range x {
		dst[i] = a*v + b
	}
}

// PowScalar sets t = x^p elementwise (math.Pow) and returns t. t may be x.
func (t *Tensor) PowScalar(x *Tensor, p float64) *Tensor {
	if t != x {
		t.resize(x.dtype, x.shape)
	} else {
		t.BumpVersion()
	}
	if x.dtype == Float32 {
		powScalar(t.f32, x.f32, p)
	} else {
		powScalar(t.f64, x.f64, p)
	}
	return t
}

func powScalar[T Float](dst, x []T, p float64) {
	dst = dst[:len(x)]
	switch p {
	case 2:
		for i, v := range x {
			dst[i] = v * v
		}
	case 1:
		copy(dst, x)
	default:
		for i, v := range x {
			dst[i] = T(math.Pow(float64(v), p))
		}
	}
}

// BinaryOp names an elementwise function of two broadcast tensors.
type BinaryOp uint8

// The elementwise binary functions. The comparisons produce 1 where true and
// 0 where false, in the operands' dtype.
const (
	Add BinaryOp = iota
	Sub
	Mul
	Div
	Pow     // math.Pow(a, b)
	Maximum // the larger; NaN if either is NaN
	Minimum // the smaller; NaN if either is NaN
	Greater // a > b
	GreaterEq
	Less
	LessEq
	Equal
)

var binaryNames = [...]string{"add", "sub", "mul", "div", "pow", "maximum", "minimum", "greater", "greater_equal", "less", "less_equal", "equal"}

// String returns the op's name.
func (op BinaryOp) String() string {
	if int(op) < len(binaryNames) {
		return binaryNames[op]
	}
	return fmt.Sprintf("BinaryOp(%d)", uint8(op))
}

// Binary sets t = op(a, b) with NumPy broadcasting and returns t. t may be a
// or b (or share its storage) only when that operand already has the
// broadcast shape; otherwise it panics with a *ShapeError wrapping ErrAlias.
// An op that is none of the constants above panics with a *ShapeError
// wrapping ErrUnknownOp.
func (t *Tensor) Binary(op BinaryOp, a, b *Tensor) *Tensor {
	if int(op) >= len(binaryNames) {
		panic(unknownOp("binary", op.String(), "Add … Equal"))
	}
	d := a.dtype
	if b.dtype != d {
		sameDType(op.String(), a, b) // panics with the message
	}
	if EqualShape(a.shape, b.shape) {
		if t != a && t != b {
			t.resize(d, a.shape)
		} else {
			t.BumpVersion()
		}
		if d == Float32 {
			binaryFlat(op, t.f32, a.f32, b.f32)
		} else {
			binaryFlat(op, t.f64, a.f64, b.f64)
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
		binaryBroadcast(op, t.f32, a.f32, b.f32, out, sa, sb)
	} else {
		binaryBroadcast(op, t.f64, a.f64, b.f64, out, sa, sb)
	}
	return t
}

// Add sets t = a + b (broadcasting) and returns t.
func (t *Tensor) Add(a, b *Tensor) *Tensor { return t.Binary(Add, a, b) }

// Sub sets t = a − b (broadcasting) and returns t.
func (t *Tensor) Sub(a, b *Tensor) *Tensor { return t.Binary(Sub, a, b) }

// Mul sets t = a · b elementwise (broadcasting) and returns t.
func (t *Tensor) Mul(a, b *Tensor) *Tensor { return t.Binary(Mul, a, b) }

// Div sets t = a / b elementwise (broadcasting) and returns t.
func (t *Tensor) Div(a, b *Tensor) *Tensor { return t.Binary(Div, a, b) }

func binaryFlat[T Float](op BinaryOp, dst, a, b []T) {
	n := len(a)
	dst, b = dst[:n], b[:n]
	if n >= vecMin && vecBinary(op, dst, a, b) {
		return
	}
	switch op {
	case Add:
		for i := range dst {
			dst[i] = a[i] + b[i]
		}
	case Sub:
		for i := range dst {
			dst[i] = a[i] - b[i]
		}
	case Mul:
		for i := range dst {
			dst[i] = a[i] * b[i]
		}
	case Div:
		for i := range dst {
			dst[i] = a[i] / b[i]
		}
	default:
		if !binaryFlatMore(op, dst, a, b) { // elementwise_more.go
			binaryStrided(op, dst, a, b, n, 1, 1)
		}
	}
}

func binaryBroadcast[T Float](op BinaryOp, dst, a, b []T, out, sa, sb []int) {
	walk2(out, sa, sb, func(o, oa, ob, n, da, db int) {
		if da == 1 && db == 1 {
			binaryFlat(op, dst[o:o+n], a[oa:oa+n], b[ob:ob+n])
			return
		}
		binaryStrided(op, dst[o:o+n], a[oa:], b[ob:], n, da, db)
	})
}

func binaryStrided[T Float](op BinaryOp, dst, a, b []T, n, da, db int) {
	ia, ib := 0, 0
	for i := 0; i < n; i++ {
		x, y := a[ia], b[ib]
		var r T
		switch op {
		case Add:
			r = x + y
		case Sub:
			r = x - y
		case Mul:
			r = x * y
		case Div:
			r = x / y
		case Pow:
			r = T(math.Pow(float64(x), float64(y)))
		case Maximum:
			r = T(math.Max(float64(x), float64(y)))
		case Minimum:
			r = T(math.Min(float64(x), float64(y)))
		case Greater:
			r = b2f[T](x > y)
		case GreaterEq:
			r = b2f[T](x >= y)
		case Less:
			r = b2f[T](x < y)
		case LessEq:
			r = b2f[T](x <= y)
		case Equal:
			r = b2f[T](x == y)
		default:
			panic(unknownOp("binary", op.String(), "Add … Equal"))
		}
		dst[i] = r
		ia += da
		ib += db
	}
}

func b2f[T Float](c bool) T {
	if c {
		return 1
	}
	return 0
}

// Where sets t[i] = a[i] where mask[i] ≠ 0 and b[i] elsewhere, broadcasting all
// three to a common shape, and returns t. mask has the operands' dtype and is
// typically the output of a comparison. As with Binary, t may be an operand
// only when that operand already has the broadcast shape. Into a destination
// that already has the dtype, shape and capacity it allocates nothing (for up
// to 8 dimensions).
func (t *Tensor) Where(mask, a, b *Tensor) *Tensor {
	d := sameDType("where", mask, a, b)
	var mb, ob, bm, ba, bb stridesBuf
	ma := broadcastInto(shapeBuf(&mb, max(len(mask.shape), len(a.shape))), "where", mask.shape, a.shape)
	out := broadcastInto(shapeBuf(&ob, max(len(ma), len(b.shape))), "where", ma, b.shape)
	t.noBroadcastAlias("where", "the mask", mask, out)
	t.noBroadcastAlias("where", "operand a", a, out)
	t.noBroadcastAlias("where", "operand b", b, out)
	t.resizeCopy(d, out)
	sm, sa, sb := stridesIn(&bm, mask.shape, out), stridesIn(&ba, a.shape, out), stridesIn(&bb, b.shape, out)
	if d == Float32 {
		where3(t.f32, mask.f32, a.f32, b.f32, out, sm, sa, sb)
	} else {
		where3(t.f64, mask.f64, a.f64, b.f64, out, sm, sa, sb)
	}
	return t
}

func where3[T Float](dst, m, a, b []T, out, sm, sa, sb []int) {
	walk3(out, sm, sa, sb, func(o, om, oa, ob, n, dm, da, db int) {
		for i := 0; i < n; i++ {
			if m[om+i*dm] != 0 {
				dst[o+i] = a[oa+i*da]
			} else {
				dst[o+i] = b[ob+i*db]
			}
		}
	})
}
