package linalg_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/linalg"
	"github.com/adjointgo/adjoint/tensor"
)

// Per-example gradients of a Gaussian negative log-likelihood term,
// ½·yᵀΣ⁻¹y + ½·log det Σ, with one covariance Σ per example: the function
// is written for one example and mapped over three (fn.Vmap of fn.Grad);
// the three Cholesky factorisations run as one batched call.
func ExampleCholesky_vmap() {
	nll := fn.Of(func(xs ...*ad.Value) *ad.Value {
		sigma, y := xs[0], xs[1]
		l := linalg.Cholesky(sigma)
		quad := ad.Sum(ad.Mul(y, linalg.CholeskySolve(l, y)))
		logdet := ad.MulScalar(ad.Sum(ad.Log(linalg.Diag(l))), 2)
		return ad.MulScalar(ad.Add(quad, logdet), 0.5)
	})
	sigmas := tensor.FromFloat64([]float64{
		2, 0, 0, 2, // 2·I
		1, 0, 0, 4, // diag(1, 4)
		2, 1, 1, 2,
	}, 3, 2, 2)
	y := ad.Const(tensor.FromFloat64([]float64{1, 1}, 2))
	// The gradient with respect to y is Σ⁻¹y for each example.
	perExample := fn.Vmap(fn.Grad(nll, 1), []int{0, fn.NoBatch}, nil)
	g := perExample(ad.Const(sigmas), y)[0]
	fmt.Printf("%.4f\n", g.Tensor().Float64s())
	// Output:
	// [0.5000 0.5000 1.0000 0.2500 0.3333 0.3333]
}
