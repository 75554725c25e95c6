package fastmath

import (
	"math"
	"unsafe"
)

// unaryOp names the one-operand kernels.
type unaryOp int

const (
	opGELU unaryOp = iota
	opExp
	opSigmoid
	opSiLU
	opTanh
	opGELUTanh
)

// backwardOp names the backward kernels, dst = g·f′(x).
type backwardOp int

const (
	opGELUBwd backwardOp = iota
	opGELUTanhBwd
)

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

// geluC is √(2/π), the constant of GELU's tanh form.
var geluC = math.Sqrt(2 / math.Pi)

// GELUTanhs sets dst[i] to the tanh form of GELU,
// x·(1 + tanh(√(2/π)(x + 0.044715x³)))/2 = x·σ(2√(2/π)(x + 0.044715x³)),
// for i < len(x) (dst may be x, but must not overlap it otherwise). float32
// data runs the SIMD kernels (float64 lanes, the σ form: no cancellation
// for x < 0), or the σ form with Exp at the generic level; float64 data
// uses math.Tanh. 0 at −Inf (−0 from the SIMD kernels), +Inf at +Inf.
func GELUTanhs[T ~float32 | ~float64](dst, x []T) {
	dst = dst[:len(x)]
	if len(x) == 0 {
		return
	}
	var z T
	if _, f32 := any(z).(float32); f32 {
		if unary(opGELUTanh, f32s(dst), f32s(x)) {
			return
		}
		for i, v := range x { // x·σ(2u) with Exp: no cancellation where x < 0
			u := float64(v)
			if u < -40 {
				dst[i] = 0
				continue
			}
			dst[i] = T(u / (1 + Exp(-2*geluC*(u+0.044715*u*u*u))))
		}
		return
	}
	for i, v := range x {
		u := float64(v)
		if u < -40 {
			dst[i] = 0
			continue
		}
		dst[i] = T(0.5 * u * (1 + math.Tanh(geluC*(u+0.044715*u*u*u))))
	}
}

// GELUTanhBackward sets dst[i] = g[i]·GELUTanh′(x[i]), the backward pass of
// GELU's tanh form, for i < len(x) (dst may be g or x, but must not
// overlap them otherwise; g must be as long as x), with the SIMD kernels
// for float32 data as GELUTanhs. GELUTanh′ is 0 at −Inf and 1 at +Inf.
func GELUTanhBackward[T ~float32 | ~float64](dst, g, x []T) {
	dst, g = dst[:len(x)], g[:len(x)]
	if len(x) == 0 {
		return
	}
	var z T
	if _, f32 := any(z).(float32); f32 {
		if backward(opGELUTanhBwd, f32s(dst), f32s(g), f32s(x)) {
			return
		}
	}
	for i, v := range x {
		dst[i] = T(float64(g[i]) * geluTanhDeriv(float64(v)))
	}
}

// geluTanhDeriv is the derivative of GELU's tanh form in float64:
// (1 + t)/2 + x·(1 − t²)·u′/2 with t = tanh u; 0 and 1 beyond ±40.
func geluTanhDeriv(s float64) float64 {
	switch {
	case s < -40:
		return 0
	case s > 40:
		return 1
	}
	u := geluC * (s + 0.044715*s*s*s)
	t := math.Tanh(u)
	du := geluC * (1 + 3*0.044715*s*s)
	return 0.5*(1+t) + 0.5*s*(1-t*t)*du
}

// f32s views s, a non-empty slice of a type whose underlying type is
// float32, as a []float32 (the SIMD kernels' element type).
func f32s[T ~float32 | ~float64](s []T) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(&s[0])), len(s))
}
