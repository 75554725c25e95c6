package tensor

import (
	"fmt"
	"math"
	"slices"

	"github.com/adjointgo/adjoint/internal/errs"
)

// The constructors of this file are the everyday ones of NumPy and PyTorch
// (zeros, ones, eye, arange, linspace, rand, randn and the …Like forms).
// New, Full, Scalar, FromFloat32 and FromFloat64 are in tensor.go. Like
// them, a constructor given a bad argument (a negative size, a zero step,
// a dtype that is neither Float32 nor Float64) panics with a *ShapeError,
// which ad.Try returns as an error.

// ErrArgument is wrapped by every error about an argument that is neither
// a shape nor a dtype: Arange's zero or non-finite step, Linspace's
// negative count, a nil generator.
var ErrArgument = errs.New("invalid argument")

// checkDType panics with an ErrDType *ShapeError unless d is Float32 or
// Float64.
func checkDType(op string, d DType) {
	if d != Float32 && d != Float64 {
		panic(&ShapeError{Op: op, DType: true, Msg: fmt.Sprintf("%v is not a dtype; use tensor.Float32 or tensor.Float64", d)})
	}
}

// argError is the *ShapeError of a bad argument (wrapping ErrArgument).
func argError(op, format string, args ...any) *ShapeError {
	return &ShapeError{Op: op, Err: ErrArgument, Msg: fmt.Sprintf(format, args...)}
}

// newChecked is New after checking the dtype (New takes any DType other
// than Float32 for Float64).
func newChecked(op string, d DType, shape []int) *Tensor {
	checkDType(op, d)
	for _, n := range shape {
		if n < 0 {
			panic(&ShapeError{Op: op, Shapes: [][]int{slices.Clone(shape)}, Msg: "negative dimension; sizes must be ≥ 0"})
		}
	}
	return New(d, shape...)
}

// Zeros returns a tensor of the given dtype and shape filled with zeros
// (New with a checked dtype). No dimensions give a scalar.
func Zeros(dtype DType, shape ...int) *Tensor { return newChecked("zeros", dtype, shape) }

// Ones returns a tensor of the given dtype and shape filled with ones.
func Ones(dtype DType, shape ...int) *Tensor {
	t := newChecked("ones", dtype, shape)
	t.fill(1)
	return t
}

// ZerosLike returns a tensor of zeros with x's dtype and shape. A nil x,
// here and in the other …Like functions, is an ErrArgument error.
func ZerosLike(x *Tensor) *Tensor {
	needTensor("zeros_like", x)
	return New(x.dtype, x.shape...)
}

// needTensor panics with an ErrArgument error for a nil tensor.
func needTensor(op string, x *Tensor) {
	if x == nil {
		panic(argError(op, "nil *tensor.Tensor; pass the tensor whose dtype and shape to copy"))
	}
}

// OnesLike returns a tensor of ones with x's dtype and shape.
func OnesLike(x *Tensor) *Tensor { return FullLike(x, 1) }

// FullLike returns a tensor with x's dtype and shape, every element v.
func FullLike(x *Tensor, v float64) *Tensor {
	needTensor("full_like", x)
	t := New(x.dtype, x.shape...)
	t.fill(v)
	return t
}

// Eye returns the n×n identity matrix.
func Eye(dtype DType, n int) *Tensor {
	t := newChecked("eye", dtype, []int{n, n})
	for i := range n {
		t.setFlat(i*n+i, 1)
	}
	return t
}

// Arange returns the 1-dimensional tensor start, start+step, … of the
// values before stop (stop excluded), as NumPy's arange: element i is
// start + i·step computed in float64, and there are ⌈(stop−start)/step⌉
// of them (none when that is ≤ 0). A zero, NaN or infinite step, or a
// non-finite start or stop, is an ErrArgument error.
func Arange(dtype DType, start, stop, step float64) *Tensor {
	checkDType("arange", dtype)
	if step == 0 || math.IsNaN(step) || math.IsInf(step, 0) {
		panic(argError("arange", "step %v must be finite and nonzero", step))
	}
	if math.IsNaN(start) || math.IsInf(start, 0) || math.IsNaN(stop) || math.IsInf(stop, 0) {
		panic(argError("arange", "bounds [%v, %v) must be finite", start, stop))
	}
	c := math.Ceil((stop - start) / step)
	if c > 1<<40 {
		panic(argError("arange", "[%v, %v) by %v has %g elements, too many to allocate", start, stop, step, c))
	}
	n := max(int(c), 0)
	t := New(dtype, n)
	for i := range n {
		t.setFlat(i, start+float64(i)*step)
	}
	return t
}

// Linspace returns n evenly spaced values from start to stop, both
// included, as NumPy's linspace: element i is start + i·(stop−start)/(n−1)
// computed in float64, and the last is stop exactly. n = 1 gives [start],
// n = 0 an empty tensor; a negative n is an ErrArgument error.
func Linspace(dtype DType, start, stop float64, n int) *Tensor {
	checkDType("linspace", dtype)
	if n < 0 {
		panic(argError("linspace", "count %d is negative; use n ≥ 0", n))
	}
	t := New(dtype, n)
	if n == 0 {
		return t
	}
	step := (stop - start) / float64(max(n-1, 1))
	for i := range n {
		t.setFlat(i, start+float64(i)*step)
	}
	if n > 1 {
		t.setFlat(n-1, stop)
	}
	return t
}

// Rand returns a tensor of the given dtype and shape whose elements are
// drawn uniformly from [0, 1) by r, in row-major order (see RNG.Float64
// and RNG.Float32). A nil r is an ErrArgument error.
func Rand(r *RNG, dtype DType, shape ...int) *Tensor {
	t := newChecked("rand", dtype, shape)
	r.check("rand")
	if t.dtype == Float32 {
		for i := range t.f32 {
			t.f32[i] = r.Float32()
		}
	} else {
		for i := range t.f64 {
			t.f64[i] = r.Float64()
		}
	}
	return t
}

// Randn returns a tensor of the given dtype and shape whose elements are
// drawn from the standard normal distribution by r, in row-major order
// (see RNG.Norm; float32 elements are the float64 draws rounded). A nil r
// is an ErrArgument error.
func Randn(r *RNG, dtype DType, shape ...int) *Tensor {
	t := newChecked("randn", dtype, shape)
	r.check("randn")
	if t.dtype == Float32 {
		for i := range t.f32 {
			t.f32[i] = float32(r.Norm())
		}
	} else {
		for i := range t.f64 {
			t.f64[i] = r.Norm()
		}
	}
	return t
}

// RandLike is Rand with x's dtype and shape.
func RandLike(r *RNG, x *Tensor) *Tensor {
	needTensor("rand_like", x)
	return Rand(r, x.dtype, x.shape...)
}

// RandnLike is Randn with x's dtype and shape.
func RandnLike(r *RNG, x *Tensor) *Tensor {
	needTensor("randn_like", x)
	return Randn(r, x.dtype, x.shape...)
}

// FromSlice returns a tensor of the given shape holding a copy of data
// (float32 data gives a Float32 tensor, float64 a Float64 one); later
// writes to data do not reach it. len(data) must equal the product of
// shape; no dimensions give a scalar. To wrap data without copying, so
// that the tensor and the slice share storage, use FromFloat32 or
// FromFloat64.
func FromSlice[T float32 | float64](data []T, shape ...int) *Tensor {
	switch d := any(data).(type) {
	case []float32:
		return FromFloat32(slices.Clone(d), shape...)
	case []float64:
		return FromFloat64(slices.Clone(d), shape...)
	}
	panic("unreachable")
}

// setFlat writes element i without bumping the version (for constructors).
func (t *Tensor) setFlat(i int, v float64) {
	if t.dtype == Float32 {
		t.f32[i] = float32(v)
	} else {
		t.f64[i] = v
	}
}
