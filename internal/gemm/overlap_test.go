package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDirectEdgeOverlap: with beta = 0, a block whose rows are not a
// multiple of MR reads its last MR rows in place (the edge rows overlap the
// panel before) instead of packing the edge; the product must equal, bit for
// bit, the one with A packed, with NaN and Inf rows staying in their rows,
// and C's padding untouched.
func TestDirectEdgeOverlap(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	k32, k64 := kernels32(), kernels64()
	for _, tA := range []bool{false, true} {
		for _, tB := range []bool{false, true} {
			for _, m := range []int{7, 13, 17, 25, 64, 65, 100} {
				for _, n := range []int{5, 32, 64} {
					p := problem{tA, tB, m, n, 33, 1 + m%2, 0.5, 0}
					for i := range k32 {
						overlapCase(t, &k32[i], p, rng)
					}
					for i := range k64 {
						overlapCase(t, &k64[i], p, rng)
					}
				}
			}
		}
	}
}

func overlapCase[T float](t *testing.T, kn *kernel[T], p problem, rng *rand.Rand) {
	t.Helper()
	if !kn.direct {
		return
	}
	a, lda, b, ldb, c, ldc := operands[T](p, rng)
	// A NaN in the last row of the last full panel (a row the edge tile
	// rewrites) and an Inf in the last row.
	set := func(i, q int, x T) {
		if p.transA {
			a[q*lda+i] = x
		} else {
			a[i*lda+q] = x
		}
	}
	if full := p.m / kn.mr * kn.mr; full > 0 {
		set(full-1, 3, T(math.NaN()))
	}
	set(p.m-1, 5, T(math.Inf(1)))
	defer func(saved int) { directMaxBytes = saved }(directMaxBytes)
	run := func(limit int) []T {
		directMaxBytes = limit
		got := append([]T(nil), c...)
		gemm(kn, p.transA, p.transB, p.m, p.n, p.k, T(p.alpha), a, lda, b, ldb, 0, got, ldc)
		return got
	}
	packed, direct := run(0), run(math.MaxInt)
	for i := range packed {
		x, y := float64(packed[i]), float64(direct[i])
		if x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
			t.Fatalf("%s %v: C[%d,%d] = %v in place, %v packed", kn.name, p, i/ldc, i%ldc, y, x)
		}
		if i%ldc >= p.n && !math.IsNaN(y) {
			t.Fatalf("%s %v: padding C[%d,%d] written", kn.name, p, i/ldc, i%ldc)
		}
	}
	// The NaN and Inf stay in their rows.
	for i := range p.m {
		row := direct[i*ldc : i*ldc+p.n]
		nan := false
		for _, x := range row {
			nan = nan || math.IsNaN(float64(x))
		}
		full := p.m / kn.mr * kn.mr
		if want := (full > 0 && i == full-1) || i == p.m-1; nan != want && i != p.m-1 {
			t.Fatalf("%s %v: row %d has NaN %v, want %v", kn.name, p, i, nan, want)
		}
	}
}
