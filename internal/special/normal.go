package special

import "math"

const (
	invSqrt2Pi = 0.3989422804014326779399460599343818684758586311649 // 1/√(2π)
	twoSqrtPi  = 1.1283791670955125738961589031215451716881012586580 // 2/√π
)

// Erfc returns the complementary error function with its derivatives
// −2/√π·e^(−x²) and 4x/√π·e^(−x²).
func Erfc(x float64) (v, d, dd float64) {
	if math.IsInf(x, 0) {
		return math.Erfc(x), 0, 0
	}
	d = -twoSqrtPi * math.Exp(-x*x)
	return math.Erfc(x), d, -2 * x * d
}

// phi returns the standard normal density.
func phi(x float64) float64 { return invSqrt2Pi * math.Exp(-0.5*x*x) }

// 1/√2 split into its float64 value and the rest.
const (
	invSqrt2Hi = 0.7071067811865476
	invSqrt2Lo = -4.8336466567264565186e-17
)

// normCDF returns Φ(x) = ½erfc(−x/√2), which keeps relative accuracy in the
// lower tail. Below −1 the rounding error r of z = −x/√2, which erfc would
// amplify by 2z², is put back to first order: erfc(z+r) ≈ erfc(z) −
// 2/√π·e^(−z²)·r.
func normCDF(x float64) float64 {
	z := -x * invSqrt2Hi
	e := math.Erfc(z)
	if x < -1 {
		r := math.FMA(-x, invSqrt2Hi, -z) - x*invSqrt2Lo
		e -= twoSqrtPi * math.Exp(-z*z) * r
	}
	return 0.5 * e
}

// Phi returns the standard normal distribution function Φ(x) with its
// derivatives φ(x) and −xφ(x). It is computed through erfc, so it keeps
// relative accuracy in the lower tail until it underflows near x = −38.5.
func Phi(x float64) (v, d, dd float64) {
	switch {
	case math.IsInf(x, -1):
		return 0, 0, 0
	case math.IsInf(x, 1):
		return 1, 0, 0
	}
	d = phi(x)
	return normCDF(x), d, -x * d
}

// The coefficients of Acklam's rational approximation of Φ⁻¹ (relative error
// below 1.2e-9), which the Halley steps in invPhiLower refine.
var (
	acklamA = [...]float64{-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00}
	acklamB = [...]float64{-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01}
	acklamC = [...]float64{-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00}
	acklamD = [...]float64{7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00}
)

// acklam returns Acklam's approximation of Φ⁻¹(p) for 0 < p ≤ ½.
func acklam(p float64) float64 {
	const pLow = 0.02425
	if p < pLow {
		q := math.Sqrt(-2 * math.Log(p))
		c, d := acklamC, acklamD
		return (((((c[0]*q+c[1])*q+c[2])*q+c[3])*q+c[4])*q + c[5]) /
			((((d[0]*q+d[1])*q+d[2])*q+d[3])*q + 1)
	}
	q := p - 0.5
	r := q * q
	a, b := acklamA, acklamB
	return (((((a[0]*r+a[1])*r+a[2])*r+a[3])*r+a[4])*r + a[5]) * q /
		(((((b[0]*r+b[1])*r+b[2])*r+b[3])*r+b[4])*r + 1)
}

// invPhiLower returns Φ⁻¹(p) for 0 < p ≤ ½: Acklam's approximation refined
// by Halley steps on Φ(x) − p, evaluated through erfc so that the relative
// accuracy holds deep in the tail.
func invPhiLower(p float64) float64 {
	x := acklam(p)
	for range 2 {
		d := phi(x)
		if d == 0 || math.IsInf(x, 0) {
			break
		}
		u := (normCDF(x) - p) / d
		x -= u / (1 + 0.5*x*u)
	}
	return x
}

// InvPhi returns the standard normal quantile Φ⁻¹(p) for 0 ≤ p ≤ 1 with its
// derivatives 1/φ(x) and x/φ(x)², where x = Φ⁻¹(p). It is ∓Inf at 0 and 1
// (derivatives +Inf and ∓Inf) and NaN outside [0, 1]. For p > ½ it is
// −Φ⁻¹(1−p), where 1 − p is exact.
func InvPhi(p float64) (v, d, dd float64) {
	switch {
	case !(p >= 0 && p <= 1):
		return nan1()
	case p == 0:
		return math.Inf(-1), math.Inf(1), math.Inf(-1)
	case p == 1:
		return math.Inf(1), math.Inf(1), math.Inf(1)
	case p <= 0.5:
		v = invPhiLower(p)
	default:
		v = -invPhiLower(1 - p)
	}
	d = 1 / phi(v)
	return v, d, v * d * d
}
