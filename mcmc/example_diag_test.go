package mcmc_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/mcmc"
	"github.com/adjointgo/adjoint/tensor"
)

// R-hat is near 1 for chains drawing from one distribution and well above
// it when a chain is stuck elsewhere; the effective sample size of
// independent draws is about their number.
func ExampleRHat() {
	r := tensor.NewRNG(1)
	draw := func(n int, shift float64) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = r.Norm() + shift
		}
		return x
	}
	mixed := [][]float64{draw(1000, 0), draw(1000, 0), draw(1000, 0), draw(1000, 0)}
	stuck := [][]float64{draw(1000, 0), draw(1000, 0), draw(1000, 0), draw(1000, 3)}
	ess := mcmc.ESS(mixed)
	fmt.Println(mcmc.RHat(mixed) < 1.01, mcmc.RHat(stuck) > 1.1, ess > 3000 && ess < 5000)
	// Output: true true true
}
