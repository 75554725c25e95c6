package tensor

import "math"

// RNG is a seeded pseudo-random generator whose stream is the same on every
// machine, operating system, architecture and Go version: SplitMix64
// (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014), a 64-bit state advanced by the golden-ratio increment and
// mixed into each output. Its period is 2⁶⁴, ample for initialising
// weights and drawing test data; it is not for cryptography.
//
// Normals (Norm) come from Marsaglia's polar method with a logarithm of
// this package's own, written in plain float64 arithmetic with every
// rounding explicit, so that no platform's math.Log and no fused
// multiply-add can change a bit of the stream. (math/rand's streams, and
// its normal method, may change between Go versions; this one may not.)
//
// The zero value is a generator seeded with 0. An RNG is not safe for
// concurrent use: give each goroutine its own.
type RNG struct {
	state uint64
	spare float64 // the second normal of the last polar pair
	has   bool    // spare holds a normal not yet returned
}

// NewRNG returns a generator seeded with seed. Two generators with the same
// seed give the same stream.
func NewRNG(seed uint64) *RNG { return &RNG{state: seed} }

// check panics with an ErrArgument error for a nil generator.
func (r *RNG) check(op string) {
	if r == nil {
		panic(argError(op, "nil *tensor.RNG; make one with tensor.NewRNG(seed)"))
	}
}

// Uint64 returns the next 64 random bits.
func (r *RNG) Uint64() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Float64 returns a uniform draw from [0, 1): the top 53 bits of Uint64
// times 2⁻⁵³, so every value is a multiple of 2⁻⁵³.
func (r *RNG) Float64() float64 { return float64(r.Uint64()>>11) * 0x1p-53 }

// Float32 returns a uniform draw from [0, 1): the top 24 bits of Uint64
// times 2⁻²⁴ (one Uint64 per draw).
func (r *RNG) Float32() float32 { return float32(r.Uint64()>>40) * 0x1p-24 }

// Norm returns a draw from the standard normal distribution. Draws come in
// pairs from Marsaglia's polar method: u, v uniform on (−1, 1) until
// 0 < s = u²+v² < 1, then u·√(−2 ln s / s) and v·√(−2 ln s / s).
func (r *RNG) Norm() float64 {
	if r.has {
		r.has = false
		return r.spare
	}
	for {
		u := float64(2*r.Float64()) - 1
		v := float64(2*r.Float64()) - 1
		s := float64(u*u) + float64(v*v)
		if s == 0 || s >= 1 {
			continue
		}
		f := math.Sqrt(float64(-2*logDet(s)) / s) // Sqrt is correctly rounded everywhere
		r.spare, r.has = float64(v*f), true
		return float64(u * f)
	}
}

// logDet returns ln x for 0 < x < 1 using only correctly rounded
// operations with every rounding explicit (the conversions forbid fused
// multiply-adds), so that it gives the same bits on every platform. With
// x = m·2ᵏ, m in [√½, √2), ln x = k·ln 2 + 2·atanh(w), w = (m−1)/(m+1),
// |w| ≤ 0.172, and atanh's series to w²³ is within 1e-17 of it. It is
// accurate to a few ulps: enough for sampling.
func logDet(x float64) float64 {
	m, k := math.Frexp(x) // x = m·2ᵏ, m in [½, 1): exact
	if m < math.Sqrt2/2 {
		m *= 2 // exact
		k--
	}
	w := float64(m-1) / float64(m+1)
	w2 := float64(w * w)
	// Σ w²ⁱ/(2i+1) for i = 0…11, by Horner's rule from the highest term.
	p := 1.0 / 23
	for i := 10; i >= 0; i-- {
		p = float64(p*w2) + 1/float64(2*i+1)
	}
	const ln2Hi, ln2Lo = 6.93147180369123816490e-01, 1.90821492927058770002e-10 // ln2Hi + ln2Lo = ln 2; ln2Hi·k is exact for |k| < 2¹⁰
	fk := float64(k)
	return float64(fk*ln2Hi) + (float64(fk*ln2Lo) + float64(2*float64(w*p)))
}
