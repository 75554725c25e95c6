package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// SumF32 and SumF64 give the same bits with the assembly and with its Go
// statement (sumLanes, as on CPUs without AVX2 and under purego), on every
// length around the block sizes, with values of mixed magnitude and sign
// (whose sums depend on the association) and with NaN and ±Inf.
func TestSumLanesMatchAssembly(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 200; n++ {
		x := make([]float64, n)
		for i := range x {
			x[i] = r.NormFloat64() * math.Exp2(float64(r.IntN(48)-24))
		}
		x32 := make([]float32, n)
		for i, v := range x {
			x32[i] = float32(v)
		}
		sumBits(t, x32, SumF32, 8)
		sumBits(t, x, SumF64, 4)
		if n > 40 {
			x[n/2], x32[n/3] = math.Inf(1), float32(math.Inf(-1))
			x[n/3], x32[n/2] = math.NaN(), float32(math.NaN())
			sumBits(t, x32, SumF32, 8)
			sumBits(t, x, SumF64, 4)
		}
	}
}

func sumBits[T float32 | float64](t *testing.T, x []T, sum func([]T) T, w int) {
	t.Helper()
	got := sum(x)
	s, i := sumLanes(x, w)
	want := s + sumGo(x[i:])
	g, wt := float64(got), float64(want)
	if math.Float64bits(g) != math.Float64bits(wt) && !(g != g && wt != wt) {
		t.Errorf("n=%d: Sum = %v, its Go statement %v", len(x), got, want)
	}
}
