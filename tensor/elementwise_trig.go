package tensor

import "math"

// mathKernelTrig computes the MathOps from Tan on: the trigonometric and
// hyperbolic functions and their inverses, the roundings, a/x, log₁₀ and
// 2ˣ, each
// element by package math in float64 (and rounded once to float32 for
// float32 tensors).
func mathKernelTrig[T Float](op MathOp, dst, x []T, a float64) {
	var f func(float64) float64
	switch op {
	case Tan:
		f = math.Tan
	case Atan:
		f = math.Atan
	case Asin:
		f = math.Asin
	case Acos:
		f = math.Acos
	case Sinh:
		f = math.Sinh
	case Cosh:
		f = math.Cosh
	case Asinh:
		f = math.Asinh
	case Acosh:
		f = math.Acosh
	case Atanh:
		f = math.Atanh
	case Log10:
		f = math.Log10
	case Exp2:
		f = math.Exp2
	case Ceil:
		for i, v := range x {
			dst[i] = T(math.Ceil(float64(v)))
		}
		return
	case Floor:
		for i, v := range x {
			dst[i] = T(math.Floor(float64(v)))
		}
		return
	case Round:
		for i, v := range x {
			dst[i] = T(math.RoundToEven(float64(v)))
		}
		return
	case Trunc:
		for i, v := range x {
			dst[i] = T(math.Trunc(float64(v)))
		}
		return
	case RDiv:
		c := T(a)
		for i, v := range x {
			dst[i] = c / v
		}
		return
	default:
		panic(unknownOp("math", op.String(), "Erf … Exp2"))
	}
	for i, v := range x {
		dst[i] = T(f(float64(v)))
	}
}
