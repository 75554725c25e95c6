package optim_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/tensor"
)

// Adam's first step moves every parameter by the learning rate against the
// sign of its gradient (the bias-corrected m̂/√v̂ is g/|g|), whatever the
// gradient's size; later steps minimise Σ (p − 3)².
func ExampleAdam() {
	p := ad.Var(tensor.FromSlice([]float64{1, -2}, 2))
	opt := optim.NewAdam([]*ad.Value{p}, optim.AdamConfig{LR: 0.1})
	step := func() {
		loss := ad.Sum(ad.Square(ad.AddScalar(p, -3)))
		opt.ZeroGrad()
		if err := loss.Backward(); err != nil {
			panic(err)
		}
		opt.Step()
	}
	step()
	fmt.Printf("after 1 step: %.4f\n", p.Tensor())
	for range 1000 {
		step()
	}
	fmt.Printf("after %d steps: %.3f\n", opt.Steps(), p.Tensor())
	// Output:
	// after 1 step: [ 1.1000 -1.9000]
	// after 1001 steps: [3.000 3.000]
}
