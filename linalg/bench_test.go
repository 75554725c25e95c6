package linalg_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/linalg"
	"github.com/adjointgo/adjoint/tensor"
)

// The benchmarks that bench/linalg.sh sets against torch.linalg (float64,
// one right-hand side vector for the solves). The thread count is
// tensor.Threads() (GOMAXPROCS unless set): run with -cpu 1 for one thread.

var benchSizes = []int{100, 300, 1000}

// benchSystem returns a well-conditioned A (n×n, normal entries plus
// √n·I) and b (n) in float64.
func benchSystem(n int) (a, b *tensor.Tensor) {
	r := rand.New(rand.NewPCG(uint64(n), 1))
	a = tensor.New(tensor.Float64, n, n)
	d := a.Float64s()
	for i := range d {
		d[i] = r.NormFloat64()
	}
	for i := range n {
		d[i*n+i] += float64(n) / 2
	}
	b = tensor.New(tensor.Float64, n)
	for i, bd := 0, b.Float64s(); i < n; i++ {
		bd[i] = r.NormFloat64()
	}
	return a, b
}

// benchSPD returns G·Gᵀ/n + I for a normal G.
func benchSPD(n int) *tensor.Tensor {
	r := rand.New(rand.NewPCG(uint64(n), 2))
	g := tensor.New(tensor.Float64, n, n)
	for i, d := 0, g.Float64s(); i < len(d); i++ {
		d[i] = r.NormFloat64()
	}
	s := new(tensor.Tensor).MatMul(g, g, false, true)
	d := s.Float64s()
	for i := range d {
		d[i] /= float64(n)
	}
	for i := range n {
		d[i*n+i]++
	}
	return s
}

// BenchmarkSolve: x = A⁻¹·b, A n×n, b a vector (LU with partial pivoting
// and two triangular solves).
func BenchmarkSolve(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			at, bt := benchSystem(n)
			a, v := ad.Const(at), ad.Const(bt)
			for b.Loop() {
				linalg.Solve(a, v)
			}
		})
	}
}

// BenchmarkSolveGrad: x = A⁻¹·b and the gradient of sum(x) with respect
// to A and b (the forward pass, one adjoint solve with the same factors
// and an outer product).
func BenchmarkSolveGrad(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			at, bt := benchSystem(n)
			a, v := ad.Var(at), ad.Var(bt)
			for b.Loop() {
				if _, err := ad.Grad(ad.Sum(linalg.Solve(a, v)), a, v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSolveMatrix: X = A⁻¹·B with B n×n (the factorisation and n
// right-hand sides).
func BenchmarkSolveMatrix(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			at, _ := benchSystem(n)
			bt, _ := benchSystem(n)
			a, v := ad.Const(at), ad.Const(bt)
			for b.Loop() {
				linalg.Solve(a, v)
			}
		})
	}
}

// BenchmarkCholesky: L with A = L·Lᵀ.
func BenchmarkCholesky(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			a := ad.Const(benchSPD(n))
			for b.Loop() {
				linalg.Cholesky(a)
			}
		})
	}
}

// BenchmarkCholeskyGrad: L and the gradient of sum(L) with respect to A.
func BenchmarkCholeskyGrad(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			a := ad.Var(benchSPD(n))
			for b.Loop() {
				if _, err := ad.Grad(ad.Sum(linalg.Cholesky(a)), a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBatch: 10000 systems of 3×3 (one vector each) and 10000
// Cholesky factorisations of 3×3, the batched small-matrix case.
func BenchmarkBatch(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	a := ad.Const(wellConditioned(r, 10000, 3, 3))
	v := ad.Const(randT(r, 10000, 3))
	s := ad.Const(spdT(r, 10000, 3, 3))
	b.Run("solve/10000x3x3", func(b *testing.B) {
		for b.Loop() {
			linalg.Solve(a, v)
		}
	})
	b.Run("cholesky/10000x3x3", func(b *testing.B) {
		for b.Loop() {
			linalg.Cholesky(s)
		}
	})
}

// gaussNLL is ½·yᵀΣ⁻¹y + ½·log det Σ for one example, through Cholesky.
func gaussNLL(xs ...*ad.Value) *ad.Value {
	l := linalg.Cholesky(xs[0])
	quad := ad.Sum(ad.Mul(xs[1], linalg.CholeskySolve(l, xs[1])))
	return ad.MulScalar(ad.Add(quad, ad.MulScalar(ad.Sum(ad.Log(linalg.Diag(l))), 2)), 0.5)
}

// BenchmarkVmapGaussGrad measures per-example gradients (with respect to
// Σ and y) of gaussNLL for 256 examples of 16×16 covariances, float64:
// vmap, fn.Vmap(fn.Grad(...)), which factors the batch in one call; loop,
// fn.Grad once per example. The peer row is functorch.vmap(functorch.grad)
// of the same function (bench/transforms_peer.py PerExampleGrad/GaussNLL).
func BenchmarkVmapGaussGrad(b *testing.B) {
	const B, n = 256, 16
	r := rand.New(rand.NewPCG(7, 8))
	sigmas := spdT(r, B, n, n)
	ys := randT(r, B, n)
	grad := fn.Grad(fn.Of(gaussNLL), 0, 1)
	b.Run("vmap", func(b *testing.B) {
		f := fn.Vmap(grad, nil, nil)
		for range b.N {
			f(ad.Const(sigmas), ad.Const(ys))
		}
	})
	b.Run("loop", func(b *testing.B) {
		s, y := ad.Const(sigmas), ad.Const(ys)
		for range b.N {
			for k := range B {
				grad(ad.Reshape(ad.Slice(s, 0, k, k+1), n, n), ad.Reshape(ad.Slice(y, 0, k, k+1), n))
			}
		}
	})
}
