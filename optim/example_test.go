package optim_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/tensor"
)

// Minimise (p − 3)² with SGD and momentum.
func ExampleSGD() {
	p := ad.Var(tensor.FromFloat64([]float64{0}, 1))
	opt := optim.NewSGD([]*ad.Value{p}, optim.SGDConfig{LR: 0.1, Momentum: 0.5})
	for range 50 {
		loss := ad.Sum(ad.Square(ad.AddScalar(p, -3)))
		opt.ZeroGrad()
		if err := loss.Backward(); err != nil {
			panic(err)
		}
		opt.Step()
	}
	fmt.Printf("%.4f\n", p.Item())
	// Output: 3.0000
}

// A cosine schedule drives the learning rate of any optimiser.
func ExampleCosine() {
	s := optim.Cosine{Base: 0.1, Min: 0.001, Steps: 100}
	for _, step := range []int{0, 50, 100} {
		fmt.Printf("step %d: lr %.4f\n", step, s.LR(step))
	}
	// Output:
	// step 0: lr 0.1000
	// step 50: lr 0.0505
	// step 100: lr 0.0010
}
