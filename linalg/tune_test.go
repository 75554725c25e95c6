package linalg

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"
)

// TestTune (LINALG_TUNE=1) times getrf and potrf at n = 1000 for several
// block widths, each against the GEMM measured just before, so that the
// ratios hold on a loaded machine.
func TestTune(t *testing.T) {
	if os.Getenv("LINALG_TUNE") == "" {
		t.Skip("LINALG_TUNE not set")
	}
	n := 1000
	r := rand.New(rand.NewPCG(1, 1))
	a0 := randMat[float64](r, n, n)
	s0 := spd[float64](r, n)
	a := make([]float64, n*n)
	c := make([]float64, n*n)
	piv := make([]int, n)
	best := func(f func()) float64 {
		b := 1e9
		for range 5 {
			t0 := time.Now()
			f()
			b = min(b, time.Since(t0).Seconds())
		}
		return b
	}
	gemmT := func() float64 {
		return best(func() { gemmT(false, false, n, n, n, 1, a0, n, a0, n, 0, c, n) }) / 3
	}
	type cfg struct{ nb, base int }
	cfgs := []cfg{{64, 8}, {96, 8}, {96, 16}, {128, 8}, {128, 16}, {192, 16}, {256, 16}}
	res := make([]float64, len(cfgs))
	for i := range res {
		res[i] = 1e9
	}
	gbest := 1e9
	for range 4 {
		gbest = min(gbest, gemmT())
		for i, c := range cfgs {
			luBlock, luBase = c.nb, c.base
			res[i] = min(res[i], best(func() { copy(a, a0); getrf(n, a, n, piv) }))
		}
	}
	for i, c := range cfgs {
		fmt.Printf("lu nb=%d base=%d: %.2f ms, gemm-equivalent ratio %.2f\n", c.nb, c.base, res[i]*1e3, gbest/res[i])
	}
	luBlock, luBase = 128, 16
	for _, nb := range []int{64, 96, 128, 192, 256, 1000} {
		cholBlock = nb
		g := gemmT() / 2
		l := best(func() { copy(a, s0); potrf(n, a, n) })
		fmt.Printf("chol nb=%d: %.2f ms, ratio %.2f\n", nb, l*1e3, g/l)
	}
	cholBlock = 96
}

// TestCompare (LINALG_TUNE=1) times the blocked factorisations against
// the same kernels unblocked (one panel as wide as the matrix) and against
// gonum's LAPACK in Go, at n = 1000: the figures of the package doc.
func TestCompare(t *testing.T) {
	if os.Getenv("LINALG_TUNE") == "" {
		t.Skip("LINALG_TUNE not set")
	}
	n := 1000
	r := rand.New(rand.NewPCG(1, 1))
	a0 := randMat[float64](r, n, n)
	s0 := spd[float64](r, n)
	a := make([]float64, n*n)
	piv := make([]int, n)
	best := func(f func()) float64 {
		b := 1e9
		for range 5 {
			t0 := time.Now()
			f()
			b = min(b, time.Since(t0).Seconds())
		}
		return b * 1e3
	}
	var impl gonum.Implementation
	for range 2 {
		fmt.Printf("getrf blocked %.1f ms\n", best(func() { copy(a, a0); getrf(n, a, n, piv) }))
		luBlock, luBase = n, n
		fmt.Printf("getrf unblocked %.1f ms\n", best(func() { copy(a, a0); getrf(n, a, n, piv) }))
		luBlock, luBase = 128, 16
		fmt.Printf("gonum dgetrf %.1f ms\n", best(func() { copy(a, a0); impl.Dgetrf(n, n, a, n, piv) }))
		fmt.Printf("potrf blocked %.1f ms\n", best(func() { copy(a, s0); potrf(n, a, n) }))
		fmt.Printf("gonum dpotrf %.1f ms\n", best(func() { copy(a, s0); impl.Dpotrf(blas.Upper, n, a, n) }))
	}
}
