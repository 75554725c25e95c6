package fastmath

import "math"

// ExpsF32 sets dst[i] = e^x[i] for i < len(x) (dst may be x, but must not
// overlap it otherwise). The SIMD kernels (see the package doc) compute in
// float64 lanes and round once to float32: within 2·10⁻⁸ relative before
// that rounding, 0 below about −103.9, +Inf above about 88.7. The pure-Go
// path uses math.Exp.
func ExpsF32(dst, x []float32) {
	dst = dst[:len(x)]
	if unary(opExp, dst, x) {
		return
	}
	for i, v := range x {
		dst[i] = float32(math.Exp(float64(v)))
	}
}

// TanhsF32 sets dst[i] = tanh x[i] for i < len(x) (dst as in ExpsF32). The
// SIMD kernels compute sign(x)·(1 − e)/(1 + e), e = e^(−2|x|), in float64
// lanes (x itself where |x| < 2⁻¹², where tanh x rounds to x in float32);
// the pure-Go path uses math.Tanh.
func TanhsF32(dst, x []float32) {
	dst = dst[:len(x)]
	if unary(opTanh, dst, x) {
		return
	}
	for i, v := range x {
		dst[i] = float32(math.Tanh(float64(v)))
	}
}

// SigmoidsF32 sets dst[i] = 1/(1 + e^(−x[i])) for i < len(x) (dst as in
// ExpsF32), in float64 lanes without overflow: 0 at −Inf, 1 at +Inf.
func SigmoidsF32(dst, x []float32) {
	dst = dst[:len(x)]
	if unary(opSigmoid, dst, x) {
		return
	}
	for i, v := range x {
		dst[i] = float32(sigmoid64(float64(v)))
	}
}

// SiLUsF32 sets dst[i] = x[i]/(1 + e^(−x[i])), the SiLU (swish), for
// i < len(x) (dst as in ExpsF32): −0 at −Inf (where x·σ(x) would be
// −Inf·0), +Inf at +Inf.
func SiLUsF32(dst, x []float32) {
	dst = dst[:len(x)]
	if unary(opSiLU, dst, x) {
		return
	}
	for i, v := range x {
		u := float64(v)
		if u < -110 { // |x·σ(x)| < 2⁻¹⁵⁰
			dst[i] = float32(math.Copysign(0, -1))
			continue
		}
		dst[i] = float32(u * sigmoid64(u))
	}
}

// sigmoid64 is 1/(1 + e⁻ˣ) without overflow.
func sigmoid64(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}
