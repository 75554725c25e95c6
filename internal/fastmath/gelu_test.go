package fastmath

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adjointgo/adjoint/internal/isa"
	"github.com/adjointgo/adjoint/internal/isa/isatest"
)

// levels returns the instruction-set levels this CPU and build can run.
func levels() []isa.Level {
	var ls []isa.Level
	for l := isa.Generic; l <= isa.Best(); l++ {
		ls = append(ls, l)
	}
	return ls
}

// atLevel runs f with the slice kernels at level l.
func atLevel(l isa.Level, f func()) {
	saved := level
	level = l
	defer func() { level = saved }()
	f()
}

// benchLevel runs f, which handles n elements, as the sub-benchmark
// name/level at level l, and reports ns/element.
func benchLevel(b *testing.B, name string, l isa.Level, n int, f func()) {
	b.Run(name+"/"+l.String(), func(b *testing.B) {
		atLevel(l, func() {
			for range b.N {
				f()
			}
		})
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/element")
	})
}

// refGELU and refGELUDeriv are the references in float64 with package
// math.
func refGELU(x float64) float64 {
	if math.IsInf(x, -1) {
		return 0
	}
	return 0.5 * x * math.Erfc(-x/math.Sqrt2)
}

func refGELUDeriv(x float64) float64 {
	if math.IsInf(x, 0) {
		return 0.5 * math.Erfc(-x/math.Sqrt2)
	}
	return 0.5*math.Erfc(-x/math.Sqrt2) + x*math.Exp(-0.5*x*x)/math.Sqrt(2*math.Pi)
}

// f32 is the smallest positive normal float32.
const f32Tiny = 0x1p-126

// geluInputs are the test points: a fine grid over [−15, 15] (the left
// tail to where GELU underflows in float32), random values, the special
// values, subnormals, huge magnitudes.
func geluInputs() []float32 {
	var xs []float32
	for x := -15.0; x <= 15; x += 0.00377 {
		xs = append(xs, float32(x))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		xs = append(xs, float32(r.NormFloat64()*3))
	}
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	xs = append(xs, 0, float32(math.Copysign(0, -1)), inf, -inf, nan, -nan,
		1e-45, -1e-45, 1e-40, -1e-40, f32Tiny, -f32Tiny, 1e-20, -1e-20,
		19.99, 20, 20.01, -19.99, -20, -20.01, 25, -25, 40, -40, 1e10, -1e10,
		math.MaxFloat32, -math.MaxFloat32, 3.5, -3.5, 6, -6, 9, -9, 13, -13, 14, -14)
	return xs
}

// checkGELU reports whether got is GELU(x) in float32: within 2.4·10⁻⁷
// relative of the reference (the algorithm's 1.2·10⁻⁷ and the rounding
// to float32), or within a float32 half-ulp of the smallest subnormal
// where the result underflows.
func checkGELU(x, got float32) error {
	want := refGELU(float64(x))
	return checkClose(float64(got), want, 2.4e-7, "GELU", x)
}

func checkClose(got, want, rel float64, name string, x float32) error {
	switch {
	case math.IsNaN(want):
		if !math.IsNaN(got) {
			return fmt.Errorf("%s(%v) = %v, want NaN", name, x, got)
		}
		return nil
	case math.IsInf(want, 0):
		if got != want {
			return fmt.Errorf("%s(%v) = %v, want %v", name, x, got, want)
		}
		return nil
	}
	if d := math.Abs(got - want); d > rel*math.Abs(want) && d > 1e-45 {
		return fmt.Errorf("%s(%v) = %v, want %v (relative error %.3g)", name, x, got, want, d/math.Abs(want))
	}
	return nil
}

// GELUs of float32 data, at every level, agrees with package math at all
// the test points, on every length from 0 to 67 and a long one, into a
// separate slice and in place.
func TestGELUsF32(t *testing.T) {
	xs := geluInputs()
	for _, l := range levels() {
		atLevel(l, func() {
			dst := make([]float32, len(xs))
			GELUs(dst, xs)
			for i, x := range xs {
				if err := checkGELU(x, dst[i]); err != nil {
					t.Fatalf("%v: %v", l, err)
				}
			}
			if got := dst[len(xs)-1]; got != GELUsOne(xs[len(xs)-1]) {
				t.Fatalf("%v: one element %v differs from the slice's %v", l, GELUsOne(xs[len(xs)-1]), got)
			}
			for n := 0; n <= 67; n++ {
				for _, off := range []int{0, 1, 5} {
					src := append([]float32(nil), xs[off*97:off*97+n]...)
					in := append([]float32(nil), src...)
					out := make([]float32, n+1)
					out[n] = 42
					GELUs(out[:n], src)
					GELUs(in, in)
					for i := range n {
						if math.Float32bits(out[i]) != math.Float32bits(dst[off*97+i]) || math.Float32bits(in[i]) != math.Float32bits(dst[off*97+i]) {
							t.Fatalf("%v: n=%d off=%d: element %d (x=%v): %v, in place %v, full slice %v", l, n, off, i, src[i], out[i], in[i], dst[off*97+i])
						}
					}
					if out[n] != 42 {
						t.Fatalf("%v: n=%d: wrote past the end", l, n)
					}
				}
			}
			if got := GELUsOne(-float32(math.Inf(1))); got != 0 {
				t.Errorf("%v: GELU(−Inf) = %v", l, got)
			}
		})
	}
}

// GELUsOne is GELUs of one element at the current level.
func GELUsOne(x float32) float32 {
	d := []float32{0}
	GELUs(d, []float32{x})
	return d[0]
}

// GELUBackward of float32 data, at every level, agrees with g·GELU′(x) in
// package math, with g in several magnitudes and signs, on every length,
// in place on g or x.
func TestGELUBackwardF32(t *testing.T) {
	xs := geluInputs()
	gs := make([]float32, len(xs))
	r := rand.New(rand.NewPCG(3, 4))
	for i := range gs {
		gs[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4)))
	}
	gs[7] = float32(math.Inf(1))
	gs[8] = float32(math.NaN())
	for _, l := range levels() {
		atLevel(l, func() {
			dst := make([]float32, len(xs))
			GELUBackward(dst, gs, xs)
			for i, x := range xs {
				want := float64(gs[i]) * refGELUDeriv(float64(x))
				// The derivative is within 2.4·10⁻⁷ absolute (Φ's error
				// near its zero crossing is absolute) and relative.
				d := refGELUDeriv(float64(x))
				tol := 2.4e-7 * math.Abs(float64(gs[i])) * math.Max(math.Abs(d), 1)
				got := float64(dst[i])
				if math.IsNaN(want) || math.IsInf(want, 0) || math.IsNaN(got) {
					if !(math.IsNaN(want) && math.IsNaN(got)) && got != want {
						t.Fatalf("%v: g=%v x=%v: %v, want %v", l, gs[i], x, got, want)
					}
					continue
				}
				if math.Abs(got-want) > tol+1e-45 {
					t.Fatalf("%v: g=%v x=%v: %v, want %v (error %.3g, tolerance %.3g)", l, gs[i], x, got, want, math.Abs(got-want), tol)
				}
			}
			for _, c := range []struct{ x, want float32 }{
				{float32(math.Inf(1)), 1}, {float32(math.Inf(-1)), 0}, {0, 0.5}, {float32(math.Copysign(0, -1)), 0.5}, {1e30, 1}, {-1e30, 0},
			} {
				d := []float32{0}
				GELUBackward(d, []float32{1}, []float32{c.x})
				if d[0] != c.want && !(c.want == 0.5 && math.Abs(float64(d[0])-0.5) <= 6e-8) { // Φ(0) is ½ within the fit's error
					t.Errorf("%v: GELU′(%v) = %v, want %v", l, c.x, d[0], c.want)
				}
			}
			for n := 0; n <= 67; n++ {
				x := append([]float32(nil), xs[300:300+n]...)
				g := append([]float32(nil), gs[300:300+n]...)
				out := make([]float32, n)
				GELUBackward(out, g, x)
				GELUBackward(g, g, x)
				x2 := append([]float32(nil), xs[300:300+n]...)
				GELUBackward(x2, gs[300:300+n], x2)
				for i := range n {
					b := math.Float32bits(dst[300+i])
					if math.Float32bits(out[i]) != b || math.Float32bits(g[i]) != b || math.Float32bits(x2[i]) != b {
						t.Fatalf("%v: n=%d: element %d: %v, on g %v, on x %v, full slice %v", l, n, i, out[i], g[i], x2[i], dst[300+i])
					}
				}
			}
		})
	}
}

// The float64 kernels keep package math's precision and the limits.
func TestGELUsF64(t *testing.T) {
	xs := []float64{-50, -40, -39, -10, -1, -0.5, 0, math.Copysign(0, -1), 0.5, 1, 10, 50, math.Inf(1), math.Inf(-1), math.NaN()}
	dst := make([]float64, len(xs))
	GELUs(dst, xs)
	bwd := make([]float64, len(xs))
	ones := make([]float64, len(xs))
	for i := range ones {
		ones[i] = 1
	}
	GELUBackward(bwd, ones, xs)
	for i, x := range xs {
		if w := refGELU(x); !(dst[i] == w || math.IsNaN(w) && math.IsNaN(dst[i]) || math.Abs(dst[i]-w) <= 1e-15*math.Abs(w)) {
			t.Errorf("GELUs(%v) = %v, want %v", x, dst[i], w)
		}
		if w := refGELUDeriv(x); !(bwd[i] == w || math.IsNaN(w) && math.IsNaN(bwd[i]) || math.Abs(bwd[i]-w) <= 1e-15) {
			t.Errorf("GELUBackward(%v) = %v, want %v", x, bwd[i], w)
		}
	}
}

// The level follows internal/isa (ADJOINT_CPU caps it).
func TestLevel(t *testing.T) {
	if level != isa.Current() {
		t.Errorf("level %v, isa.Current %v", level, isa.Current())
	}
	t.Logf("level %v", level)
}

// The largest errors of each level over the test points, logged for the
// package doc (go test -run MaxError -v).
func TestGELUMaxError(t *testing.T) {
	xs := geluInputs()
	ones := make([]float32, len(xs))
	for i := range ones {
		ones[i] = 1
	}
	for _, l := range levels() {
		atLevel(l, func() {
			y := make([]float32, len(xs))
			d := make([]float32, len(xs))
			GELUs(y, xs)
			GELUBackward(d, ones, xs)
			var ry, ad float64
			for i, x := range xs {
				w := refGELU(float64(x))
				if w != 0 && !math.IsNaN(w) && !math.IsInf(w, 0) && math.Abs(w) > 1e-30 {
					ry = math.Max(ry, math.Abs(float64(y[i])-w)/math.Abs(w))
				}
				if w := refGELUDeriv(float64(x)); !math.IsNaN(w) {
					ad = math.Max(ad, math.Abs(float64(d[i])-w))
				}
			}
			t.Logf("%v: GELU relative error ≤ %.3g, GELU′ absolute error ≤ %.3g", l, ry, ad)
		})
	}
}

// BenchmarkGELUs times the slice kernels of both GELUs at each level on
// 4096 float32 values in [−6, 6] (the scalar loop is the generic level):
// ns/element is the figure to read.
func BenchmarkGELUs(b *testing.B) {
	const n = 4096
	xs := make([]float32, n)
	gs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i-n/2) / (n / 12)
		gs[i] = 1 + float32(i%7)
	}
	dst := make([]float32, n)
	for _, l := range levels() {
		benchLevel(b, "fwd", l, n, func() { GELUs(dst, xs) })
		benchLevel(b, "bwd", l, n, func() { GELUBackward(dst, gs, xs) })
		benchLevel(b, "tanh_fwd", l, n, func() { GELUTanhs(dst, xs) })
		benchLevel(b, "tanh_bwd", l, n, func() { GELUTanhBackward(dst, gs, xs) })
	}
}

// The test binary rerun with ADJOINT_CPU=generic, avx2 and avx512 selects
// that level (where the CPU has it) and passes the kernel tests there.
func TestForcedLevelEnv(t *testing.T) {
	for _, l := range levels() {
		out, ok := isatest.RunForced(t, l.String(), "^(TestLevel|TestGELUsF32|TestGELUBackwardF32|TestUnaryF32)$")
		if want := "level " + l.String(); ok && !strings.Contains(out, want) {
			t.Errorf("%s=%v: want %q in\n%s", isa.Env, l, want, out)
		}
	}
}

// The slice kernels allocate nothing, tails included.
func TestSlicesNoAlloc(t *testing.T) {
	x := make([]float32, 37)
	g := make([]float32, 37)
	d := make([]float32, 37)
	for _, l := range levels() {
		atLevel(l, func() {
			if n := testing.AllocsPerRun(20, func() {
				GELUs(d, x)
				GELUBackward(d, g, x)
				ExpsF32(d, x)
				TanhsF32(d, x)
				SigmoidsF32(d, x)
				SiLUsF32(d, x)
				GELUTanhs(d, x)
				GELUTanhBackward(d, g, x)
			}); n != 0 {
				t.Errorf("%v: %v allocations", l, n)
			}
		})
	}
}
