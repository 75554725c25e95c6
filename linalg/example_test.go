package linalg_test

import (
	"errors"
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/linalg"
	"github.com/adjointgo/adjoint/tensor"
)

// Solve a linear system and differentiate through it: the gradient of
// sum(x) with respect to b is the solution of the adjoint system Aᵀ·g = 1,
// computed with the same LU factors.
func ExampleSolve() {
	a := ad.Var(tensor.FromFloat64([]float64{4, 1, 2, 3}, 2, 2))
	b := ad.Var(tensor.FromFloat64([]float64{1, 2}, 2))
	x := linalg.Solve(a, b)
	g, err := ad.Grad(ad.Sum(x), a, b)
	if err != nil {
		panic(err)
	}
	fmt.Printf("x = %.4f\n", x.Data())
	fmt.Printf("∂Σx/∂b = %.4f\n", g[1].Data())
	fmt.Printf("∂Σx/∂A = %.4f\n", g[0].Data())
	// Output:
	// x = [0.1000 0.6000]
	// ∂Σx/∂b = [0.1000 0.3000]
	// ∂Σx/∂A = [-0.0100 -0.0600 -0.0300 -0.1800]
}

// The log-density of a multivariate normal through its Cholesky factor:
// log N(y; 0, Σ) = −½·yᵀΣ⁻¹y − Σᵢ log Lᵢᵢ − (n/2)·log 2π, differentiated
// with respect to Σ: ½(Σ⁻¹ − Σ⁻¹yyᵀΣ⁻¹).
func ExampleCholesky() {
	sigma := ad.Var(tensor.FromFloat64([]float64{2, 1, 1, 2}, 2, 2))
	y := ad.Const(tensor.FromFloat64([]float64{1, -1}, 2))
	l := linalg.Cholesky(sigma)
	z := linalg.CholeskySolve(l, y) // Σ⁻¹·y
	logdet := linalg.LogDet(sigma)
	quad := ad.Sum(ad.Mul(y, z))
	nll := ad.MulScalar(ad.Add(quad, logdet), 0.5) // without the constant
	g, err := ad.Grad(nll, sigma)
	if err != nil {
		panic(err)
	}
	fmt.Printf("L = %.4f\n", l.Data())
	fmt.Printf("½(yᵀΣ⁻¹y + log det Σ) = %.4f\n", nll.Item())
	fmt.Printf("gradient = %.4f\n", g[0].Data())
	// Output:
	// L = [1.4142 0.0000 0.7071 1.2247]
	// ½(yᵀΣ⁻¹y + log det Σ) = 1.5493
	// gradient = [-0.1667 0.3333 0.3333 -0.1667]
}

// A singular matrix is a typed error naming the pivot, not NaN.
func ExampleSolve_singular() {
	a := ad.Var(tensor.FromFloat64([]float64{1, 2, 2, 4}, 2, 2))
	b := ad.Var(tensor.FromFloat64([]float64{1, 1}, 2))
	err := ad.Try(func() { linalg.Solve(a, b) })
	var le *linalg.Error
	fmt.Println(errors.Is(err, linalg.ErrSingular), errors.As(err, &le) && le.Pivot == 1)
	fmt.Println(err)
	// Output:
	// true true
	// linalg: solve: the matrix is singular: pivot 1 is exactly zero after partial pivoting (its columns 0..1 are linearly dependent)
}

// Slogdet keeps the determinant of a large matrix in range, and its
// gradient is A⁻ᵀ.
func ExampleSlogdet() {
	a := ad.Var(tensor.FromFloat64([]float64{0, 2, 3, 1}, 2, 2))
	sign, logAbs := linalg.Slogdet(a)
	g, err := ad.Grad(logAbs, a)
	if err != nil {
		panic(err)
	}
	fmt.Printf("sign %v, log|det| = %.4f, gradient %.4f\n", sign.Item(), logAbs.Item(), g[0].Data())
	// Output:
	// sign -1, log|det| = 1.7918, gradient [-0.1667 0.5000 0.3333 0.0000]
}

// The tensor-level factorisation returns errors instead of panicking, and
// can be reused for several right-hand sides.
func ExampleFactorLU() {
	f, err := linalg.FactorLU(tensor.FromFloat64([]float64{2, 1, 1, 3}, 2, 2))
	if err != nil {
		panic(err)
	}
	x, _ := f.Solve(tensor.FromFloat64([]float64{3, 4}, 2))
	fmt.Printf("det %.1f, x = %.1f\n", f.Det().Item(), x.Data())
	_, err = linalg.FactorCholesky(tensor.FromFloat64([]float64{1, 2, 2, 1}, 2, 2))
	fmt.Println(err)
	// Output:
	// det 5.0, x = [1.0 1.0]
	// linalg: cholesky: A is not positive definite: pivot 1 is not positive (its leading 2×2 minor is not positive definite); for a covariance, add a small multiple of the identity
}

// TriangularSolve with the transposed triangle: Lᵀ·x = b.
func ExampleTriangularSolve() {
	l := ad.Const(tensor.FromFloat64([]float64{2, 0, 1, 4}, 2, 2))
	b := ad.Const(tensor.FromFloat64([]float64{3, 8}, 2))
	fmt.Println(linalg.TriangularSolve(l, b, false).Data())
	fmt.Println(linalg.TriangularSolve(l, b, false, linalg.Transposed).Data())
	// Output:
	// [1.5 1.625]
	// [0.5 2]
}
