package fastmath

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/adjointgo/adjoint/internal/isa"
)

// sweepStride is the step, in float32 bit patterns, of TestGELUSweep:
// every pattern with ADJOINT_GELU_SWEEP=all (minutes), every 101st by
// default, every 997th with -short.
func sweepStride() uint32 {
	switch {
	case os.Getenv("ADJOINT_GELU_SWEEP") == "all":
		return 1
	case testing.Short():
		return 997
	}
	return 101
}

// The SIMD kernels of both GELUs agree with package math, with the
// tolerances of TestGELUsF32 and TestGELUBackwardF32 (g = 1), over the
// float32 values of magnitude 2⁻³⁰ to 8 and their negatives in steps of
// sweepStride bit patterns: the whole range of the float32 polynomial
// tables (|x| < 7.9375 and < 7.875) and past it into the float64 chains.
// Below 2⁻³⁰ the tables' first interval is evaluated at u < 2⁻²⁸ (u = |x|
// forward, 4|x| backward), where the polynomials are their constant and
// linear terms to float32 precision (TestGELUsF32 has subnormals).
func TestGELUSweep(t *testing.T) {
	const n = 4096
	stride := sweepStride()
	lo, hi := math.Float32bits(0x1p-30), math.Float32bits(8)
	xs := make([]float32, 0, n)
	y := make([]float32, n)
	d := make([]float32, n)
	ones := make([]float32, n)
	for i := range ones {
		ones[i] = 1
	}
	for _, l := range levels() {
		if l == isa.Generic {
			continue // the scalar algorithm, covered by TestErfGELU
		}
		var worstY, worstD float64
		check := func() {
			atLevel(l, func() {
				GELUs(y[:len(xs)], xs)
				GELUBackward(d[:len(xs)], ones[:len(xs)], xs)
			})
			for i, x := range xs {
				if err := checkGELU(x, y[i]); err != nil {
					t.Fatalf("%v: %v", l, err)
				}
				w := refGELU(float64(x))
				worstY = math.Max(worstY, math.Abs(float64(y[i])-w)/math.Abs(w))
				wd := refGELUDeriv(float64(x))
				e := math.Abs(float64(d[i]) - wd)
				if e > 2.4e-7*math.Max(math.Abs(wd), 1) {
					t.Fatalf("%v: GELU′(%v) = %v, want %v (error %.3g)", l, x, d[i], wd, e)
				}
				worstD = math.Max(worstD, e)
			}
			xs = xs[:0]
		}
		for b := lo; b <= hi; b += stride {
			xs = append(xs, math.Float32frombits(b), -math.Float32frombits(b))
			if len(xs) == n {
				check()
			}
		}
		check()
		t.Logf("%v, every %d float32: GELU relative error ≤ %.3g, GELU′ absolute error ≤ %.3g", l, stride, worstY, worstD)
	}
}

// An element's GELU and GELU′ do not depend on its neighbours: a block
// with a lane out of the float32 tables' range (|x| ≥ 7.875, ±Inf, NaN)
// runs the float64 chains for that lane alone, so each element of a
// slice mixing both gets the bits it gets on its own.
func TestGELUBlockIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	xs := make([]float32, 1000)
	gs := make([]float32, len(xs))
	for i := range xs {
		xs[i] = float32(r.NormFloat64() * 2)
		if r.IntN(10) == 0 {
			xs[i] = float32(r.NormFloat64() * 20)
		}
		gs[i] = float32(r.NormFloat64())
	}
	xs[3], xs[40], xs[77] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))
	for _, l := range levels() {
		atLevel(l, func() {
			y := make([]float32, len(xs))
			d := make([]float32, len(xs))
			GELUs(y, xs)
			GELUBackward(d, gs, xs)
			for i, x := range xs {
				y1, d1 := []float32{0}, []float32{0}
				GELUs(y1, xs[i:i+1])
				GELUBackward(d1, gs[i:i+1], xs[i:i+1])
				if math.Float32bits(y1[0]) != math.Float32bits(y[i]) || math.Float32bits(d1[0]) != math.Float32bits(d[i]) {
					t.Fatalf("%v: x=%v g=%v: alone %v, %v; in the slice %v, %v", l, x, gs[i], y1[0], d1[0], y[i], d[i])
				}
			}
		})
	}
}

// GELUBackward with an infinite or NaN gradient in the tables' range is
// g·GELU′(x) as in float64: ±Inf with the signs' product, NaN for NaN.
func TestGELUBackwardSpecialGrad(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, l := range levels() {
		atLevel(l, func() {
			for _, x := range []float32{-5, -1, -0.5, 0, 0.3, 1, 1.4, 3, 7} {
				for _, g := range []float32{inf, -inf, float32(math.NaN()), math.MaxFloat32} {
					d := []float32{0}
					GELUBackward(d, []float32{g}, []float32{x})
					rd := refGELUDeriv(float64(x))
					want := float32(float64(g) * rd)
					tol := 2.4e-7 * math.Abs(float64(g)) * math.Max(math.Abs(rd), 1) // as TestGELUBackwardF32
					if math.Float32bits(d[0]) != math.Float32bits(want) && !(d[0] != d[0] && want != want) &&
						!(math.Abs(float64(d[0])-float64(want)) <= tol) {
						t.Errorf("%v: g=%v x=%v: %v, want %v", l, g, x, d[0], want)
					}
				}
			}
		})
	}
}

// BenchmarkGELUsNormal times both GELU kernels at each SIMD level on 4096
// float32 values drawn from N(0, 1), like a network's pre-activations (most
// in the AVX2 forward kernel's cheaper range |x| < 3.45, a few blocks with
// a lane past 7.875); BenchmarkGELUs spreads its inputs evenly over
// [−6, 6] instead. ns/element is the figure to read.
func BenchmarkGELUsNormal(b *testing.B) {
	const n = 4096
	r := rand.New(rand.NewPCG(9, 10))
	xs := make([]float32, n)
	gs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(r.NormFloat64())
		gs[i] = float32(r.NormFloat64())
	}
	dst := make([]float32, n)
	for _, l := range levels() {
		if l == isa.Generic {
			continue
		}
		benchLevel(b, "fwd", l, n, func() { GELUs(dst, xs) })
		benchLevel(b, "bwd", l, n, func() { GELUBackward(dst, gs, xs) })
	}
}
