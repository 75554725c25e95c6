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
