package scalar_test

import (
	"fmt"
	"log"
	"math"

	"gonum.org/v1/gonum/optimize"

	"github.com/adjointgo/adjoint/scalar"
)

// Minimising Rosenbrock's function with gonum's BFGS, with gradients from
// the tape.
func ExampleObjective_bfgs() {
	o := &scalar.Objective{F: rosenbrock}
	p := optimize.Problem{Func: o.Func, Grad: o.Grad}
	res, err := optimize.Minimize(p, []float64{-1.2, 1}, nil, &optimize.BFGS{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("minimum at (%.4f, %.4f), f < 1e-12: %v\n", res.X[0], res.X[1], math.Abs(res.F) < 1e-12)
	// Output:
	// minimum at (1.0000, 1.0000), f < 1e-12: true
}
