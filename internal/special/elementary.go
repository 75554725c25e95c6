package special

import "math"

// Asinh returns asinh(x) with its derivatives 1/√(1+x²) and −x/(1+x²)^(3/2).
func Asinh(x float64) (v, d, dd float64) {
	if math.IsInf(x, 0) {
		return x, 0, 0
	}
	d = 1 / math.Hypot(1, x)
	return math.Asinh(x), d, -x * d * d * d
}

// Acosh returns acosh(x) for x ≥ 1 with its derivatives 1/√(x²−1) and
// −x/(x²−1)^(3/2). The derivatives are +Inf and −Inf at 1; below 1 all is
// NaN.
func Acosh(x float64) (v, d, dd float64) {
	if !(x >= 1) {
		return nan1()
	}
	if x == 1 {
		return 0, math.Inf(1), math.Inf(-1)
	}
	if math.IsInf(x, 1) {
		return x, 0, 0
	}
	d = 1 / math.Sqrt((x-1)*(x+1))
	return math.Acosh(x), d, -x * d * d * d
}

// Atanh returns atanh(x) for −1 ≤ x ≤ 1 with its derivatives 1/(1−x²) and
// 2x/(1−x²)². It is ±Inf at ±1 (derivatives +Inf and ±Inf) and NaN outside.
func Atanh(x float64) (v, d, dd float64) {
	if !(x >= -1 && x <= 1) {
		return nan1()
	}
	d = 1 / ((1 - x) * (1 + x))
	return math.Atanh(x), d, 2 * x * d * d
}

// Fma returns x·y + z rounded once, with partials y, x, 1 and the single
// non-zero second partial ∂²/∂x∂y = 1.
func Fma(x, y, z float64) (v float64, g [3]float64, h [6]float64) {
	return math.FMA(x, y, z), [3]float64{y, x, 1}, [6]float64{0, 1, 0, 0, 0, 0}
}

// Fmin returns the smaller of x and y with partials (1, 0) or (0, 1), and
// (½, ½) at a tie. Like C's fmin it ignores a NaN operand; both NaN give
// NaN. The Hessian is zero.
func Fmin(x, y float64) (v float64, g [2]float64, h [3]float64) {
	switch {
	case x < y || math.IsNaN(y) && !math.IsNaN(x):
		return x, [2]float64{1, 0}, h
	case y < x || math.IsNaN(x) && !math.IsNaN(y):
		return y, [2]float64{0, 1}, h
	case x == y:
		return x, [2]float64{0.5, 0.5}, h
	}
	return nan2()
}

// Fmax returns the larger of x and y with partials (1, 0) or (0, 1), and
// (½, ½) at a tie. Like C's fmax it ignores a NaN operand; both NaN give
// NaN. The Hessian is zero.
func Fmax(x, y float64) (v float64, g [2]float64, h [3]float64) {
	switch {
	case x > y || math.IsNaN(y) && !math.IsNaN(x):
		return x, [2]float64{1, 0}, h
	case y > x || math.IsNaN(x) && !math.IsNaN(y):
		return y, [2]float64{0, 1}, h
	case x == y:
		return x, [2]float64{0.5, 0.5}, h
	}
	return nan2()
}

// Floor returns ⌊x⌋ with zero derivatives everywhere, also at the integers
// where it jumps (Stan's convention).
func Floor(x float64) (v, d, dd float64) { return math.Floor(x), 0, 0 }

// Ceil returns ⌈x⌉ with zero derivatives everywhere, also at its jumps.
func Ceil(x float64) (v, d, dd float64) { return math.Ceil(x), 0, 0 }

// Round returns x rounded to the nearest integer, halves away from zero
// (math.Round), with zero derivatives everywhere, also at its jumps.
func Round(x float64) (v, d, dd float64) { return math.Round(x), 0, 0 }

// Trunc returns x rounded toward zero with zero derivatives everywhere, also
// at its jumps.
func Trunc(x float64) (v, d, dd float64) { return math.Trunc(x), 0, 0 }
