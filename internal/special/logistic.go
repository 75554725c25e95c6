package special

import "math"

// nan1 returns a unary function's all-NaN result.
func nan1() (float64, float64, float64) {
	n := math.NaN()
	return n, n, n
}

// sigmoid returns 1/(1+e^(−x)) without overflow.
func sigmoid(x float64) float64 {
	if x < 0 {
		e := math.Exp(x)
		return e / (1 + e)
	}
	return 1 / (1 + math.Exp(-x))
}

// softplus returns log(1+eˣ) without overflow or loss for large |x|.
func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// Logit returns log(u/(1−u)) for 0 ≤ u ≤ 1, with its derivatives
// 1/(u(1−u)) and (2u−1)/(u(1−u))². It is ∓Inf at 0 and 1 and NaN outside.
func Logit(u float64) (v, d, dd float64) {
	if !(u >= 0 && u <= 1) {
		return nan1()
	}
	w := 1 - u
	v = math.Log(u) - math.Log1p(-u)
	d = 1 / (u * w)
	return v, d, (u - w) * d * d
}

// InvLogit returns the logistic function σ(x) = 1/(1+e^(−x)) with its
// derivatives σ(x)σ(−x) and σ(x)σ(−x)(σ(−x)−σ(x)).
func InvLogit(x float64) (v, d, dd float64) {
	s, t := sigmoid(x), sigmoid(-x)
	d = s * t
	return s, d, d * (t - s)
}

// LogInvLogit returns log σ(x) = −log(1+e^(−x)) with its derivatives σ(−x)
// and −σ(x)σ(−x).
func LogInvLogit(x float64) (v, d, dd float64) {
	s, t := sigmoid(x), sigmoid(-x)
	return -softplus(-x), t, -s * t
}

// Log1mInvLogit returns log(1−σ(x)) = −log(1+eˣ) with its derivatives −σ(x)
// and −σ(x)σ(−x).
func Log1mInvLogit(x float64) (v, d, dd float64) {
	s, t := sigmoid(x), sigmoid(-x)
	return -softplus(x), -s, -s * t
}

// Log1pExp returns log(1+eˣ) (softplus) with its derivatives σ(x) and
// σ(x)σ(−x).
func Log1pExp(x float64) (v, d, dd float64) {
	s, t := sigmoid(x), sigmoid(-x)
	return softplus(x), s, s * t
}

// Log1m returns log(1−x) for x ≤ 1 with its derivatives −1/(1−x) and
// −1/(1−x)². It is −Inf at 1 and NaN above.
func Log1m(x float64) (v, d, dd float64) {
	if !(x <= 1) {
		return nan1()
	}
	d = -1 / (1 - x)
	return math.Log1p(-x), d, -d * d
}

// log1mExp returns log(1−eˣ) for x ≤ 0, switching between log(−expm1(x))
// and log1p(−eˣ) at −ln 2 so that both ends keep full relative accuracy.
func log1mExp(x float64) float64 {
	if x > -math.Ln2 {
		return math.Log(-math.Expm1(x))
	}
	return math.Log1p(-math.Exp(x))
}

// Log1mExp returns log(1−eˣ) for x ≤ 0 with its derivatives
// d = −1/expm1(−x) and d − d². It is −Inf at 0 (derivatives −Inf) and NaN
// for x > 0.
func Log1mExp(x float64) (v, d, dd float64) {
	if !(x <= 0) {
		return nan1()
	}
	if x == 0 {
		return math.Inf(-1), math.Inf(-1), math.Inf(-1)
	}
	d = -1 / math.Expm1(-x)
	return log1mExp(x), d, d - d*d
}

// LogDiffExp returns log(eˣ − eʸ) for x ≥ y with its derivatives in x and y.
// It is −Inf for x = y (derivatives NaN), x when y = −Inf, and NaN for
// x < y or x = +Inf.
func LogDiffExp(x, y float64) (v float64, g [2]float64, h [3]float64) {
	switch {
	case !(x >= y) || math.IsInf(x, 1):
		return nan2()
	case x == y:
		_, g, h = nan2()
		return math.Inf(-1), g, h
	case math.IsInf(y, -1):
		return x, [2]float64{1, 0}, [3]float64{}
	}
	// With t = y − x: f = x + log1mExp(t), so ∂x = 1 − l′, ∂y = l′ and
	// ∂xx = ∂yy = −∂xy = l″.
	t := y - x
	d := -1 / math.Expm1(-t)
	dd := d - d*d
	return x + log1mExp(t), [2]float64{1 - d, d}, [3]float64{dd, -dd, dd}
}

// LogSumExp returns log(eˣ + eʸ) with its derivatives σ(x−y), σ(y−x) and
// Hessian entries ±σ(x−y)σ(y−x). When both arguments are −Inf it is −Inf
// with derivatives ½, ½ (the limit along x = y) and a zero Hessian; when
// both are +Inf it is +Inf likewise.
func LogSumExp(x, y float64) (v float64, g [2]float64, h [3]float64) {
	if math.IsNaN(x) || math.IsNaN(y) {
		return nan2()
	}
	if x == y && math.IsInf(x, 0) {
		return x, [2]float64{0.5, 0.5}, [3]float64{}
	}
	m, r := x, y-x
	if y > x {
		m, r = y, x-y
	}
	v = m + math.Log1p(math.Exp(r))
	s, t := sigmoid(x-y), sigmoid(y-x)
	st := s * t
	return v, [2]float64{s, t}, [3]float64{st, -st, st}
}
