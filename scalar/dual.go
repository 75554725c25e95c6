package scalar

import "math"

// SumDual returns the sum of xs.
func SumDual(xs []Dual) Dual {
	var s Dual
	for _, x := range xs {
		s.V += x.V
		s.D += x.D
	}
	return s
}

// DotDual returns x[0]·y[0] + x[1]·y[1] + …. It panics with an *[Error] if
// the lengths differ.
func DotDual(xs, ys []Dual) Dual {
	if len(xs) != len(ys) {
		fail(ErrSize, "dot", "len(x) = %d, len(y) = %d", len(xs), len(ys))
	}
	var s Dual
	for j, x := range xs {
		s.V += x.V * ys[j].V
		s.D += x.D*ys[j].V + x.V*ys[j].D
	}
	return s
}

// LogSumExpDual returns ln(e^x[0] + e^x[1] + …) without overflow; see
// [LogSumExp].
func LogSumExpDual(xs []Dual) Dual {
	m := math.Inf(-1)
	for _, x := range xs {
		if x.V > m || x.V != x.V {
			m = x.V
		}
	}
	if math.IsInf(m, -1) {
		return Dual{V: m}
	}
	s := 0.0
	for _, x := range xs {
		s += math.Exp(x.V - m)
	}
	var d float64
	for _, x := range xs {
		if x.D != 0 {
			d += softmax(x.V, m, s) * x.D
		}
	}
	return Dual{m + math.Log(s), d}
}
