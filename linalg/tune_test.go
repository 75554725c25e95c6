package linalg

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/internal/gemm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"
)

// BenchmarkFactorBlocks times getrf and cholLeft at n = 1000 for several block
// widths (the measurements behind luBlock, luBase and cholBlock), with the
// GEMM of the same size beside them:
//
//	go test ./linalg -run '^$' -bench FactorBlocks -count 3
//
// A factorisation costs about a third (LU) or a sixth (Cholesky) of that
// GEMM's flops, so a ratio of 3× (or 6×) its time is GEMM speed.
func BenchmarkFactorBlocks(b *testing.B) {
	defer func(lb, lbase, cb int) { luBlock, luBase, cholBlock = lb, lbase, cb }(luBlock, luBase, cholBlock)
	n := 1000
	r := rand.New(rand.NewPCG(1, 1))
	a0 := randMat[float64](r, n, n)
	s0 := spd[float64](r, n)
	a := make([]float64, n*n)
	c := make([]float64, n*n)
	piv := make([]int, n)
	b.Run("gemm", func(b *testing.B) {
		for range b.N {
			gemm.Of(false, false, n, n, n, 1, a0, n, a0, n, 0, c, n)
		}
	})
	for _, cf := range []struct{ nb, base int }{{64, 8}, {96, 8}, {96, 16}, {128, 8}, {128, 16}, {192, 16}, {256, 16}} {
		b.Run(fmt.Sprintf("getrf/nb=%d,base=%d", cf.nb, cf.base), func(b *testing.B) {
			luBlock, luBase = cf.nb, cf.base
			for range b.N {
				copy(a, a0)
				getrf(n, a, n, piv)
			}
		})
	}
	for _, nb := range []int{64, 96, 128, 192, 256, 1000} {
		b.Run(fmt.Sprintf("cholLeft/nb=%d", nb), func(b *testing.B) {
			cholBlock = nb
			for range b.N {
				cholLeft(n, s0, c)
			}
		})
	}
}

// BenchmarkFactorPeers times the blocked factorisations against the same
// kernels unblocked (one panel as wide as the matrix) and against gonum's
// LAPACK in Go, at n = 1000: the figures of the package doc.
//
//	go test ./linalg -run '^$' -bench FactorPeers -count 3
func BenchmarkFactorPeers(b *testing.B) {
	defer func(lb, lbase int) { luBlock, luBase = lb, lbase }(luBlock, luBase)
	n := 1000
	r := rand.New(rand.NewPCG(1, 1))
	a0 := randMat[float64](r, n, n)
	s0 := spd[float64](r, n)
	a := make([]float64, n*n)
	piv := make([]int, n)
	var impl gonum.Implementation
	lb, lbase := luBlock, luBase
	run := func(name string, from []float64, f func()) {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				copy(a, from)
				f()
			}
		})
	}
	run("getrf/blocked", a0, func() { getrf(n, a, n, piv) })
	luBlock, luBase = n, n
	run("getrf/unblocked", a0, func() { getrf(n, a, n, piv) })
	luBlock, luBase = lb, lbase
	run("getrf/gonum", a0, func() { impl.Dgetrf(n, n, a, n, piv) })
	l := make([]float64, n*n)
	run("potrf/blocked", s0, func() { cholLeft(n, s0, l) })
	run("potrf/gonum", s0, func() { impl.Dpotrf(blas.Upper, n, a, n) })
}
