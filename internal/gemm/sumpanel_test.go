package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The register-held panel sums give the plain loop's bits, for full and
// short panels, f32 and f64, with NaN and Inf among the values.
func TestSumPanelBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, W := range []int{6, 12, 16} {
		for _, mr := range []int{W, W - 1, 1} {
			for _, kc := range []int{0, 1, 7, 256} {
				d := make([]float64, W*kc)
				for i := range d {
					d[i] = rng.NormFloat64() * math.Exp2(float64(rng.IntN(40)-20))
				}
				if len(d) > 20 {
					d[5], d[17] = math.NaN(), math.Inf(1)
				}
				d32 := make([]float32, len(d))
				for i, v := range d {
					d32[i] = float32(v)
				}
				sumBitsCase(t, d, W, mr, kc)
				sumBitsCase(t, d32, W, mr, kc)
			}
		}
	}
}

func sumBitsCase[T float](t *testing.T, d []T, W, mr, kc int) {
	t.Helper()
	want := make([]T, mr)
	for i := range want {
		want[i] = T(i) * 0.5
		for p := range kc {
			want[i] += d[p*W+i]
		}
	}
	got := make([]T, mr)
	for i := range got {
		got[i] = T(i) * 0.5
	}
	sumPanel(got, d, W, mr, kc)
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if math.Float64bits(g) != math.Float64bits(w) && !(g != g && w != w) {
			t.Errorf("W=%d mr=%d kc=%d: sum[%d] = %v, want %v", W, mr, kc, i, got[i], want[i])
		}
	}
}

func BenchmarkSumPanel(b *testing.B) {
	d := make([]float32, 12*256)
	sum := make([]float32, 12)
	for b.Loop() {
		sumPanel(sum, d, 12, 12, 256)
	}
}
