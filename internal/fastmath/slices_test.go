package fastmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// unaryInputs are the test points of the exp-based kernels: a grid over
// [−120, 120], dense near 0, random values, the special values.
func unaryInputs() []float32 {
	var xs []float32
	for x := -120.0; x <= 120; x += 0.0731 {
		xs = append(xs, float32(x))
	}
	for x := -1.0; x <= 1; x += 0.000913 {
		xs = append(xs, float32(x))
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		xs = append(xs, float32(r.NormFloat64()*4), float32(r.NormFloat64()*1e-3))
	}
	inf := float32(math.Inf(1))
	xs = append(xs, 0, float32(math.Copysign(0, -1)), inf, -inf, float32(math.NaN()),
		1e-45, -1e-45, 1e-40, -1e-40, f32Tiny, -f32Tiny, 1e-20, -1e-20, 0x1p-12, -0x1p-12, 0x1.fffp-13, -0x1.fffp-13,
		88.7, 88.8, -87.3, -103.9, -104, -110, -111, 110, 111, 19.99, 20, 21, -20, -21, 1e10, -1e10,
		math.MaxFloat32, -math.MaxFloat32)
	return xs
}

// The float32 slice kernels of Exp, Tanh, Sigmoid and SiLU agree with
// package math at every level: within 1.5·10⁻⁷ relative (one rounding to
// float32 and the algorithm's error) or below the smallest normal float32
// in absolute terms, with NaN, the limits at ±Inf, on every length from 0
// to 67, in place.
func TestUnaryF32(t *testing.T) {
	xs := unaryInputs()
	sig := func(x float64) float64 { return sigmoid64(x) }
	for _, c := range []struct {
		name string
		f    func(dst, x []float32)
		ref  func(float64) float64
	}{
		{"exp", ExpsF32, math.Exp},
		{"tanh", TanhsF32, math.Tanh},
		{"sigmoid", SigmoidsF32, sig},
		{"silu", SiLUsF32, func(x float64) float64 {
			if math.IsInf(x, -1) {
				return 0
			}
			return x * sig(x)
		}},
	} {
		for _, l := range levels() {
			atLevel(l, func() {
				dst := make([]float32, len(xs))
				c.f(dst, xs)
				for i, x := range xs {
					want := c.ref(float64(x))
					got := float64(dst[i])
					if math.IsNaN(want) || math.IsInf(want, 0) || math.IsInf(float64(float32(want)), 0) {
						if !(math.IsNaN(want) && math.IsNaN(got)) && got != float64(float32(want)) {
							t.Fatalf("%s %v: (%v) = %v, want %v", c.name, l, x, got, want)
						}
						continue
					}
					if d := math.Abs(got - want); d > 1.5e-7*math.Abs(want) && d > 0x1p-126 {
						t.Fatalf("%s %v: (%v) = %v, want %v (relative error %.3g)", c.name, l, x, got, want, d/math.Abs(want))
					}
					if (c.name == "tanh" || c.name == "silu") && x == 0 && math.Signbit(got) != math.Signbit(float64(x)) {
						t.Fatalf("%s %v: (%v) = %v: sign of zero", c.name, l, x, got)
					}
				}
				for n := 0; n <= 67; n++ {
					in := append([]float32(nil), xs[1000:1000+n]...)
					out := make([]float32, n+1)
					out[n] = 42
					c.f(out[:n], in)
					c.f(in, in)
					for i := range n {
						b := math.Float32bits(dst[1000+i])
						if math.Float32bits(out[i]) != b || math.Float32bits(in[i]) != b {
							t.Fatalf("%s %v: n=%d element %d: %v, in place %v, full slice %v", c.name, l, n, i, out[i], in[i], dst[1000+i])
						}
					}
					if out[n] != 42 {
						t.Fatalf("%s %v: n=%d: wrote past the end", c.name, l, n)
					}
				}
			})
		}
	}
}

// BenchmarkUnaryF32 times the float32 slice kernels at each level (the
// generic level is the package math loop): ns/element.
func BenchmarkUnaryF32(b *testing.B) {
	const n = 4096
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i-n/2) / (n / 16)
	}
	dst := make([]float32, n)
	for _, c := range []struct {
		name string
		f    func(dst, x []float32)
	}{{"exp", ExpsF32}, {"tanh", TanhsF32}, {"sigmoid", SigmoidsF32}, {"silu", SiLUsF32}} {
		for _, l := range levels() {
			benchLevel(b, c.name, l, n, func() { c.f(dst, xs) })
		}
	}
}

// refSigmoidForm is GELU's tanh form x·σ(v) and its derivative
// σ + x·σ(1 − σ)·v′ in float64 (no cancellation where x < 0).
func refGELUTanh(x float64) (y, d float64) {
	c := math.Sqrt(2 / math.Pi)
	if math.IsInf(x, 0) {
		if x > 0 {
			return x, 1
		}
		return 0, 0
	}
	s := sigmoid64(2 * c * (x + 0.044715*x*x*x))
	return x * s, s + x*s*(1-s)*2*c*(1+3*0.044715*x*x)
}

// GELUTanhs and GELUTanhBackward agree with the σ form in float64 at every
// level and in both dtypes, to float32 accuracy (the generic level's
// 1 + tanh u cancels where x ≪ 0: an absolute 10⁻¹³·|x| more), on every
// length from 0 to 67, in place, with the limits at ±Inf and NaN.
func TestGELUTanh(t *testing.T) {
	xs := geluInputs()
	gs := make([]float32, len(xs))
	for i := range gs {
		gs[i] = float32(1 + i%7)
	}
	for _, l := range levels() {
		atLevel(l, func() {
			y := make([]float32, len(xs))
			d := make([]float32, len(xs))
			GELUTanhs(y, xs)
			GELUTanhBackward(d, gs, xs)
			for i, x := range xs {
				wy, wd := refGELUTanh(float64(x))
				wd *= float64(gs[i])
				for k, c := range []struct{ got, want float64 }{{float64(y[i]), wy}, {float64(d[i]), wd}} {
					if math.IsNaN(c.want) || math.IsInf(c.want, 0) {
						if !(math.IsNaN(c.want) && math.IsNaN(c.got)) && c.got != c.want {
							t.Fatalf("%v case %d: x=%v: %v, want %v", l, k, x, c.got, c.want)
						}
						continue
					}
					tol := 2.4e-7*math.Max(math.Abs(c.want), float64(k)*float64(gs[i])) + 1e-13*math.Abs(float64(x)) + 1e-45
					if math.Abs(c.got-c.want) > tol {
						t.Fatalf("%v case %d: x=%v: %v, want %v", l, k, x, c.got, c.want)
					}
				}
			}
			for n := 0; n <= 67; n++ {
				x := append([]float32(nil), xs[500:500+n]...)
				g := append([]float32(nil), gs[500:500+n]...)
				out, dout := make([]float32, n), make([]float32, n)
				GELUTanhs(out, x)
				GELUTanhBackward(dout, g, x)
				GELUTanhBackward(g, g, x)
				GELUTanhs(x, x)
				for i := range n {
					if out[i] != y[500+i] || x[i] != y[500+i] || dout[i] != d[500+i] || g[i] != d[500+i] {
						t.Fatalf("%v: n=%d element %d differs from the full slice's", l, n, i)
					}
				}
			}
		})
	}
	x64 := []float64{-50, -3, -0.5, 0, 0.5, 3, 50, math.Inf(1), math.Inf(-1)}
	y64, d64, one := make([]float64, len(x64)), make([]float64, len(x64)), []float64{1, 1, 1, 1, 1, 1, 1, 1, 1}
	GELUTanhs(y64, x64)
	GELUTanhBackward(d64, one, x64)
	for i, x := range x64 {
		wy, wd := refGELUTanh(x)
		if math.Abs(y64[i]-wy) > 1e-15*math.Abs(wy)+1e-13*math.Abs(x) && y64[i] != wy || math.Abs(d64[i]-wd) > 1e-14 {
			t.Errorf("float64 x=%v: %v, %v; want %v, %v", x, y64[i], d64[i], wy, wd)
		}
	}
}
