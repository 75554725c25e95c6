package optim_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/tensor"
)

// An optimizer's state goes into a checkpoint beside the parameters; a
// resumed run restores both and carries on with the same steps.
func ExampleAdam_State() {
	w := ad.Var(tensor.FromFloat64([]float64{1, -2}, 2))
	opt := optim.NewAdam([]*ad.Value{w}, optim.AdamConfig{LR: 0.1})
	for range 3 {
		opt.ZeroGrad()
		if err := ad.Sum(ad.Square(w)).Backward(); err != nil {
			fmt.Println(err)
		}
		opt.Step()
	}
	s := opt.State()
	fmt.Println(s.Kind, s.Steps, s.Names())

	resumed := optim.NewAdam([]*ad.Value{w}, optim.AdamConfig{LR: 0.1})
	if err := resumed.SetState(s); err != nil {
		fmt.Println(err)
	}
	fmt.Println(resumed.Steps())
	// Output:
	// adam 3 [m.0 v.0]
	// 3
}
