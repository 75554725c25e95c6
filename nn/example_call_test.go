package nn_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/tensor"
)

// Evaluate a layer at parameter values of one's own and differentiate with
// respect to them; the layer keeps its parameters.
func ExampleCall() {
	layer := nn.NewLinear(2, 1, nn.NewRNG(1), nil)
	fmt.Println(nn.ParamNames(layer))

	x := ad.Const(tensor.FromFloat64([]float64{1, 2, 3, 4}, 2, 2))
	w := ad.Var(tensor.FromFloat64([]float64{1, -1}, 1, 2))
	b := ad.Var(tensor.FromFloat64([]float64{0.5}, 1))
	y := nn.Call(layer, []*ad.Value{w, b}, func() *ad.Value { return layer.Forward(x) })
	fmt.Println("y:", y.Data())

	grads, err := ad.Grad(ad.Sum(ad.Square(y)), w, b)
	if err != nil {
		panic(err)
	}
	fmt.Println("d/dW:", grads[0].Data(), "d/db:", grads[1].Data())
	fmt.Println("own weight back:", layer.W == nn.Values(layer)[0] && layer.W != w)
	// Output:
	// [weight bias]
	// y: [-0.5 -0.5]
	// d/dW: [-4 -6] d/db: [-2]
	// own weight back: true
}

// Per-example gradients: the Jacobian of the per-example losses with
// respect to the parameters has one row per example.
func ExampleFunctional() {
	model := nn.NewMLP([]int{2, 3, 2}, nn.NewRNG(1), &nn.MLPConfig{Act: nn.Tanh})
	x := ad.Const(tensor.FromFloat64([]float64{0, 1, 1, 0, 1, 1}, 3, 2))
	labels := []int{1, 1, 0}
	losses := nn.Functional(model, func() *ad.Value {
		return nn.CrossEntropyPerExample(model.Forward(x), labels)
	})

	var params []*tensor.Tensor
	for _, v := range nn.Values(model) {
		params = append(params, v.Tensor())
	}
	jac, err := ad.Jacobian(losses, params, ad.JacReverse)
	if err != nil {
		panic(err)
	}
	for i, name := range nn.ParamNames(model) {
		fmt.Println(name, "per-example gradients:", jac[i].Shape())
	}
	// Output:
	// layers.0.weight per-example gradients: [3 3 2]
	// layers.0.bias per-example gradients: [3 3]
	// layers.1.weight per-example gradients: [3 2 3]
	// layers.1.bias per-example gradients: [3 2]
}

// One loss per example; their mean is CrossEntropy.
func ExampleCrossEntropyPerExample() {
	logits := ad.Var(tensor.FromFloat64([]float64{
		2, 0, 0,
		0, 0, 0,
		0, 1, 3,
	}, 3, 3))
	targets := []int{0, 1, 1}
	per := nn.CrossEntropyPerExample(logits, targets)
	fmt.Printf("per example: %.4f\n", per.Data())
	fmt.Printf("mean: %.4f, CrossEntropy: %.4f\n", ad.Mean(per).Item(), nn.CrossEntropy(logits, targets).Item())

	// The gradient of one example's loss touches only its row.
	g, err := ad.Grad(ad.IndexSelect(per, 0, []int{2}), logits)
	if err != nil {
		panic(err)
	}
	fmt.Printf("gradient of example 2: %.4f\n", g[0].Data())
	// Output:
	// per example: [0.2395 1.0986 2.1698]
	// mean: 1.1693, CrossEntropy: 1.1693
	// gradient of example 2: [0.0000 0.0000 0.0000 0.0000 0.0000 0.0000 0.0420 -0.8858 0.8438]
}
