package linalg_test

import (
	"errors"
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/linalg"
	"github.com/adjointgo/adjoint/tensor"
)

// The eigenvalues of a symmetric matrix, ascending, and the gradient of
// the largest one: vvᵀ for its unit eigenvector v.
func ExampleEigh() {
	a := ad.Var(tensor.FromFloat64([]float64{
		2, 1,
		1, 2,
	}, 2, 2))
	w, v := linalg.Eigh(a)
	fmt.Printf("eigenvalues %.4f\n", rounded(w))

	// A·v = v·diag(w): the columns of v are the eigenvectors.
	av := ad.MatMul(a, v)
	vw := ad.Mul(v, ad.Reshape(w, 1, 2))
	fmt.Printf("A·v − v·diag(w) = %.4f\n", rounded(ad.Sub(av, vw)))

	g, err := ad.Grad(ad.Sum(ad.Slice(w, 0, 1, 2)), a)
	if err != nil {
		panic(err)
	}
	fmt.Printf("∂w₁/∂A = %.4f\n", rounded(g[0]))
	// Output:
	// eigenvalues [1.0000 3.0000]
	// A·v − v·diag(w) = [0.0000 0.0000 0.0000 0.0000]
	// ∂w₁/∂A = [0.5000 0.5000 0.5000 0.5000]
}

// log det A of a symmetric positive definite matrix as the sum of the logs
// of its eigenvalues; its gradient is A⁻¹.
func ExampleEighVals() {
	a := ad.Var(tensor.FromFloat64([]float64{
		4, 1,
		1, 3,
	}, 2, 2))
	logdet := ad.Sum(ad.Log(linalg.EighVals(a)))
	g, err := ad.Grad(logdet, a)
	if err != nil {
		panic(err)
	}
	fmt.Printf("log det = %.4f (log 11 = 2.3979)\n", logdet.Item())
	fmt.Printf("gradient = %.4f (A⁻¹ = [3 −1; −1 4]/11)\n", g[0].Data())
	// Output:
	// log det = 2.3979 (log 11 = 2.3979)
	// gradient = [0.2727 -0.0909 -0.0909 0.3636] (A⁻¹ = [3 −1; −1 4]/11)
}

// A thin SVD of a 3×2 matrix, its reconstruction, and the gradient of the
// nuclear norm Σ s, which is U·Vh.
func ExampleSVD() {
	a := ad.Var(tensor.FromFloat64([]float64{
		3, 0,
		0, 2,
		0, 0,
	}, 3, 2))
	u, s, vh := linalg.SVD(a)
	fmt.Println("shapes", u.Shape(), s.Shape(), vh.Shape())
	fmt.Printf("singular values %.4f\n", rounded(s))

	rec := ad.MatMul(ad.Mul(u, ad.Reshape(s, 1, 2)), vh)
	fmt.Printf("U·diag(s)·Vh = %.4f\n", rounded(rec))

	g, err := ad.Grad(ad.Sum(s), a)
	if err != nil {
		panic(err)
	}
	fmt.Printf("∂Σs/∂A = %.4f\n", rounded(g[0]))
	// Output:
	// shapes [3 2] [2] [2 2]
	// singular values [3.0000 2.0000]
	// U·diag(s)·Vh = [3.0000 0.0000 0.0000 2.0000 0.0000 0.0000]
	// ∂Σs/∂A = [1.0000 0.0000 0.0000 1.0000 0.0000 0.0000]
}

// The spectral norm of each matrix of a batch, as its largest singular
// value.
func ExampleSVDVals() {
	a := ad.Const(tensor.FromFloat64([]float64{
		1, 2, 2, 4, // rank one: ‖A‖₂ = 5
		0, 1, -1, 0, // a rotation: ‖A‖₂ = 1
	}, 2, 2, 2))
	s := linalg.SVDVals(a)
	fmt.Printf("%.4f\n", ad.Slice(s, -1, 0, 1).Data())
	// Output:
	// [5.0000 1.0000]
}

// The trace of a batch of matrices, and its gradient: the identity.
func ExampleTrace() {
	a := ad.Var(tensor.FromFloat64([]float64{
		1, 2, 3, 4,
		5, 6, 7, 8,
	}, 2, 2, 2))
	tr := linalg.Trace(a)
	fmt.Println("traces", tr.Data())
	g, err := ad.Grad(ad.Sum(tr), a)
	if err != nil {
		panic(err)
	}
	fmt.Println("gradient", g[0].Data())
	// Output:
	// traces [5 13]
	// gradient [1 0 0 1 1 0 0 1]
}

// Diag reads the diagonal; DiagEmbed, its transpose, writes one.
func ExampleDiagEmbed() {
	a := ad.Const(tensor.FromFloat64([]float64{1, 2, 3, 4}, 2, 2))
	d := linalg.Diag(a)
	fmt.Println(d.Data(), linalg.DiagEmbed(d).Data())
	// Output:
	// [1 4] [1 0 0 4]
}

// TryEigh returns the errors that Eigh panics with.
func ExampleTryEigh() {
	_, _, err := linalg.TryEigh(ad.Const(tensor.New(tensor.Float64, 2, 3)))
	fmt.Println(errors.Is(err, linalg.ErrShape))
	fmt.Println(err)
	// Output:
	// true
	// linalg: eigh: [2 3]: the matrices are 2×3, not square
}

// rounded returns v's elements rounded to 4 decimals, without negative
// zeros, so that printed results do not depend on the last bits.
func rounded(v *ad.Value) []float64 {
	d := v.Data()
	for i, x := range d {
		d[i] = math.Round(x*1e4)/1e4 + 0
	}
	return d
}
