package scalar_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/scalar"
)

// The log density of y = 1.5 under a normal distribution, differentiated in
// its mean and standard deviation.
func ExampleNormalLpdf() {
	var t scalar.Tape
	mu, sigma := t.Var(1), t.Var(2)
	lp := scalar.NormalLpdf(scalar.Const(1.5), mu, sigma)
	t.Backward(lp)
	fmt.Printf("lp = %.6f\n", lp.Value())
	fmt.Printf("∂/∂mu = %.6f, ∂/∂sigma = %.6f\n", t.Adjoint(mu), t.Adjoint(sigma))
	// Output:
	// lp = -1.643336
	// ∂/∂mu = 0.125000, ∂/∂sigma = -0.468750
}

// A special function's Hessian through tangent mode: lgamma's second
// derivative is trigamma.
func ExampleVar_Lgamma() {
	f := func(x []scalar.Var) scalar.Var { return x[0].Lgamma() }
	g, v := scalar.Gradient(nil, f, []float64{3})
	h := scalar.Hessian(nil, f, []float64{3})
	fmt.Printf("lgamma(3) = %.6f, digamma(3) = %.6f, trigamma(3) = %.6f\n", v, g[0], h.At(0, 0))
	// Output:
	// lgamma(3) = 0.693147, digamma(3) = 0.922784, trigamma(3) = 0.394934
}
