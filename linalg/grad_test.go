package linalg_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/gradcheck"
	"github.com/adjointgo/adjoint/linalg"
	"github.com/adjointgo/adjoint/tensor"
)

// Gradients against central differences (float64), first and second
// order, on single matrices and batches.

// randT returns a float64 tensor of normal entries.
func randT(r *rand.Rand, shape ...int) *tensor.Tensor {
	t := tensor.New(tensor.Float64, shape...)
	for i, d := 0, t.Float64s(); i < len(d); i++ {
		d[i] = r.NormFloat64()
	}
	return t
}

// wellConditioned returns a batch of n×n matrices, normal entries plus 3·I
// (well away from singular).
func wellConditioned(r *rand.Rand, shape ...int) *tensor.Tensor {
	t := randT(r, shape...)
	n := shape[len(shape)-1]
	d := t.Float64s()
	for k := 0; k < len(d); k += n * n {
		for i := range n {
			d[k+i*n+i] += 3
		}
	}
	return t
}

// spdT returns a batch of symmetric positive definite matrices G·Gᵀ/n + I.
func spdT(r *rand.Rand, shape ...int) *tensor.Tensor {
	g := randT(r, shape...)
	s := new(tensor.Tensor).MatMul(g, g, false, true)
	n := shape[len(shape)-1]
	d := s.Float64s()
	for k := 0; k < len(d); k += n * n {
		for i := range n {
			for j := range n {
				d[k+i*n+j] /= float64(n)
			}
			d[k+i*n+i]++
		}
	}
	return s
}

// lowerT returns a batch of lower triangular matrices with a diagonal in
// [1, 2] (the strict upper triangle is filled too: it must not matter).
func lowerT(r *rand.Rand, shape ...int) *tensor.Tensor {
	t := randT(r, shape...)
	n := shape[len(shape)-1]
	d := t.Float64s()
	for k := 0; k < len(d); k += n * n {
		for i := range n {
			d[k+i*n+i] = 1 + r.Float64()
		}
	}
	return t
}

type gradCase struct {
	name string
	f    gradcheck.Func
	xs   []*tensor.Tensor
}

func gradCases() []gradCase {
	r := rand.New(rand.NewPCG(11, 12))
	var cs []gradCase
	add := func(name string, f gradcheck.Func, xs ...*tensor.Tensor) {
		cs = append(cs, gradCase{name, f, xs})
	}
	solve := func(xs []*ad.Value) *ad.Value { return linalg.Solve(xs[0], xs[1]) }
	add("solve/3x3,3x2", solve, wellConditioned(r, 3, 3), randT(r, 3, 2))
	add("solve/1x1,1", solve, wellConditioned(r, 1, 1), randT(r, 1))
	add("solve/5x5,5", solve, wellConditioned(r, 5, 5), randT(r, 5))
	add("solve/batch2x4x4,2x4x3", solve, wellConditioned(r, 2, 4, 4), randT(r, 2, 4, 3))
	add("solve/batch2x3x3,2x3(vectors)", solve, wellConditioned(r, 2, 3, 3), randT(r, 2, 3))
	add("solve/broadcast4x4,3x4x2", solve, wellConditioned(r, 4, 4), randT(r, 3, 4, 2))
	add("solve/broadcast2x1x3x3,4x3x1", solve, wellConditioned(r, 2, 1, 3, 3), randT(r, 4, 3, 1))
	add("inv/4x4", func(xs []*ad.Value) *ad.Value { return linalg.Inv(xs[0]) }, wellConditioned(r, 4, 4))
	add("inv/batch3x2x2", func(xs []*ad.Value) *ad.Value { return linalg.Inv(xs[0]) }, wellConditioned(r, 3, 2, 2))
	add("det/4x4", func(xs []*ad.Value) *ad.Value { return linalg.Det(xs[0]) }, wellConditioned(r, 4, 4))
	add("det/batch2x3x3", func(xs []*ad.Value) *ad.Value { return linalg.Det(xs[0]) }, wellConditioned(r, 2, 3, 3))
	add("det/1x1", func(xs []*ad.Value) *ad.Value { return linalg.Det(xs[0]) }, wellConditioned(r, 1, 1))
	add("slogdet/batch3x4x4", func(xs []*ad.Value) *ad.Value { _, l := linalg.Slogdet(xs[0]); return l }, randT(r, 3, 4, 4))
	add("logdet/5x5", func(xs []*ad.Value) *ad.Value { return linalg.LogDet(xs[0]) }, spdT(r, 5, 5))
	chol := func(xs []*ad.Value) *ad.Value { return linalg.Cholesky(xs[0]) }
	add("cholesky/1x1", chol, spdT(r, 1, 1))
	add("cholesky/4x4", chol, spdT(r, 4, 4))
	add("cholesky/batch2x3x3", chol, spdT(r, 2, 3, 3))
	add("cholesky/20x20", chol, spdT(r, 20, 20))
	cs2 := func(xs []*ad.Value) *ad.Value { return linalg.CholeskySolve(xs[0], xs[1]) }
	add("choleskysolve/4x4,4x2", cs2, lowerT(r, 4, 4), randT(r, 4, 2))
	add("choleskysolve/batch2x3x3,2x3", cs2, lowerT(r, 2, 3, 3), randT(r, 2, 3))
	for c := range 8 {
		upper, trans, unit := c&1 != 0, c&2 != 0, c&4 != 0
		var opts []linalg.TriangularOption
		if trans {
			opts = append(opts, linalg.Transposed)
		}
		if unit {
			opts = append(opts, linalg.UnitDiagonal)
		}
		a := lowerT(r, 2, 4, 4)
		if upper {
			a = tensor.New(tensor.Float64, 2, 4, 4).Permute(a, 0, 2, 1)
		}
		add(fmt.Sprintf("triangular/upper=%v,trans=%v,unit=%v", upper, trans, unit),
			func(xs []*ad.Value) *ad.Value { return linalg.TriangularSolve(xs[0], xs[1], upper, opts...) },
			a, randT(r, 2, 4, 3))
	}
	add("triangular/vector", func(xs []*ad.Value) *ad.Value { return linalg.TriangularSolve(xs[0], xs[1], false) },
		lowerT(r, 5, 5), randT(r, 5))
	// A composition: the Gaussian log-likelihood's data term through
	// Cholesky, CholeskySolve and Slogdet.
	add("composite/gaussian", func(xs []*ad.Value) *ad.Value {
		l := linalg.Cholesky(xs[0])
		z := linalg.CholeskySolve(l, xs[1])
		_, ld := linalg.Slogdet(xs[0])
		return ad.Add(ad.Sum(ad.Mul(xs[1], z)), ld)
	}, spdT(r, 4, 4), randT(r, 4))
	return cs
}

func TestGradients(t *testing.T) {
	for _, c := range gradCases() {
		t.Run(c.name, func(t *testing.T) {
			if res, err := gradcheck.Check(c.f, c.xs, &gradcheck.Settings{Tol: 1e-5}); err != nil {
				t.Errorf("first order: %v", err)
			} else if !res.OK {
				t.Errorf("first order: %v", res)
			}
		})
	}
}

func TestSecondOrder(t *testing.T) {
	for _, c := range gradCases() {
		t.Run(c.name, func(t *testing.T) {
			if res, err := gradcheck.CheckSecond(c.f, c.xs, &gradcheck.Settings{Tol: 1e-4}); err != nil {
				t.Errorf("second order: %v", err)
			} else if !res.OK {
				t.Errorf("second order: %v", res)
			}
		})
	}
}
