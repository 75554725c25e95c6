package vec

import (
	"math/rand/v2"
	"testing"
)

// testProducts checks TanhGrad and ScaledProduct against their rounded
// step-by-step forms, bit for bit, at every length of lengths (the
// assembly's blocks and the Go tail), with NaN, infinities and −0 among the
// operands, and in place (dst one of the inputs).
func testProducts[T float32 | float64](t *testing.T, tanhGrad func(dst, grad, y []T), scaled func(dst, a, b, c []T, s T)) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range lengths {
		a, b, c := randSlice[T](rng, n), randSlice[T](rng, n), randSlice[T](rng, n)
		dst := make([]T, n)
		tanhGrad(dst, a, b)
		for i := range dst {
			one := 1 - T(b[i]*b[i]) // conversions: each step rounded, never fused
			if w := T(a[i] * one); !same(dst[i], w) {
				t.Fatalf("tanhGrad n=%d: dst[%d] = %v, want %v (grad=%v y=%v)", n, i, dst[i], w, a[i], b[i])
			}
		}
		in := append([]T(nil), b...)
		tanhGrad(in, a, in)
		for i := range in {
			if !same(in[i], dst[i]) {
				t.Fatalf("tanhGrad n=%d in place: dst[%d] = %v, want %v", n, i, in[i], dst[i])
			}
		}
		for _, s := range []T{1.5, -0.1, 3} {
			scaled(dst, a, b, c, s)
			for i := range dst {
				if w := T(a[i]*b[i]) * T(s*c[i]); !same(dst[i], w) {
					t.Fatalf("scaledProduct n=%d s=%v: dst[%d] = %v, want %v", n, s, i, dst[i], w)
				}
			}
			in := append([]T(nil), c...)
			scaled(in, a, b, in, s)
			for i := range in {
				if !same(in[i], dst[i]) {
					t.Fatalf("scaledProduct n=%d in place: dst[%d] = %v, want %v", n, i, in[i], dst[i])
				}
			}
		}
	}
}

func TestProductsF32(t *testing.T) {
	paths(t, func(t *testing.T) { testProducts(t, TanhGradF32, ScaledProductF32) })
}

func TestProductsF64(t *testing.T) {
	paths(t, func(t *testing.T) { testProducts(t, TanhGradF64, ScaledProductF64) })
}

// testFused checks ScaledProduct3 and TanhGradVJP against the single-output
// kernels they fuse, bit for bit, at every length of lengths (the assembly's
// blocks and the Go tail) with NaN, infinities and −0 among the operands.
func testFused[T float32 | float64](t *testing.T, scaled func(dst, a, b, c []T, s T), tanhGrad func(dst, grad, y []T),
	scaled3 func(d0, d1, d2, g, a, b, c []T, s T), tgVJP func(dg, dy, gg, g, y []T, s T)) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range lengths {
		g, a, b, c := randSlice[T](rng, n), randSlice[T](rng, n), randSlice[T](rng, n), randSlice[T](rng, n)
		for _, s := range []T{-2, 0.7} {
			d0, d1, d2 := make([]T, n), make([]T, n), make([]T, n)
			scaled3(d0, d1, d2, g, a, b, c, s)
			w0, w1, w2 := make([]T, n), make([]T, n), make([]T, n)
			scaled(w0, g, b, c, s)
			scaled(w1, g, a, c, s)
			scaled(w2, g, a, b, s)
			for i := range n {
				if !same(d0[i], w0[i]) || !same(d1[i], w1[i]) || !same(d2[i], w2[i]) {
					t.Fatalf("scaledProduct3 n=%d s=%v [%d]: %v %v %v, want %v %v %v", n, s, i, d0[i], d1[i], d2[i], w0[i], w1[i], w2[i])
				}
			}
			dg, dy := make([]T, n), make([]T, n)
			tgVJP(dg, dy, g, a, b, s)
			tanhGrad(w0, g, b)
			scaled(w1, g, a, b, s)
			for i := range n {
				if !same(dg[i], w0[i]) || !same(dy[i], w1[i]) {
					t.Fatalf("tanhGradVJP n=%d s=%v [%d]: %v %v, want %v %v", n, s, i, dg[i], dy[i], w0[i], w1[i])
				}
			}
		}
	}
}

func TestFusedF32(t *testing.T) {
	paths(t, func(t *testing.T) { testFused(t, ScaledProductF32, TanhGradF32, ScaledProduct3F32, TanhGradVJPF32) })
}

func TestFusedF64(t *testing.T) {
	paths(t, func(t *testing.T) { testFused(t, ScaledProductF64, TanhGradF64, ScaledProduct3F64, TanhGradVJPF64) })
}
