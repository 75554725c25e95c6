package nn_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/tensor"
)

// A LeNet-style stage, convolution, ReLU and a 2×2 max pool, as one fused
// row: the same values as the pool applied after ForwardAct.
func ExampleConv2d_ForwardActPool() {
	rng := nn.NewRNG(1)
	conv := nn.NewConv2d(1, 4, [2]int{3, 3}, rng, nil)
	pool := nn.NewMaxPool2d([2]int{2, 2}, [2]int{}, [2]int{})
	x := tensor.New(tensor.Float64, 2, 1, 8, 8)
	for i := range x.Len() {
		x.SetFlat(i, float64(i%7)-3)
	}
	fused := conv.ForwardActPool(ad.Const(x), ad.ActReLU, pool)
	after := pool.Forward(conv.ForwardAct(ad.Const(x), ad.ActReLU))
	same := true
	for i, v := range fused.Data() {
		same = same && v == after.Data()[i]
	}
	fmt.Println(fused.Op(), fused.Shape(), same)
	// Output:
	// conv2d [2 4 3 3] true
}
