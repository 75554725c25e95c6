package mcmc_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/mcmc"
	"github.com/adjointgo/adjoint/scalar"
)

// Draws from a normal with mean 3 and standard deviation 2, written on the
// scalar tape.
func Example() {
	m := mcmc.FromTape(1, func(t *scalar.Tape, q []scalar.Var) scalar.Var {
		z := q[0].SubC(3).MulC(0.5)
		return z.Square().MulC(-0.5)
	})
	r, err := mcmc.Sample(m, &mcmc.Options{Seed: 7, Chains: 4, Samples: 2000})
	if err != nil {
		fmt.Println(err)
		return
	}
	p := r.Params[0]
	fmt.Printf("mean %.1f, sd %.1f, R-hat below 1.01: %v, divergences %d\n", p.Mean, p.SD, p.RHat < 1.01, r.Divergences)
	// Output: mean 3.0, sd 2.0, R-hat below 1.01: true, divergences 0
}
