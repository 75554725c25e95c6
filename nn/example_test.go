package nn_test

import (
	"bytes"
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/nn"
	"github.com/adjointgo/adjoint/optim"
	"github.com/adjointgo/adjoint/tensor"
)

// Train a small MLP to compute XOR, then save and reload it.
func Example() {
	x := ad.Const(tensor.FromFloat64([]float64{0, 0, 0, 1, 1, 0, 1, 1}, 4, 2))
	y := []int{0, 1, 1, 0}
	model := nn.NewMLP([]int{2, 8, 2}, nn.NewRNG(1), &nn.MLPConfig{Act: nn.Tanh, Init: nn.XavierUniform})
	opt := optim.NewAdam(nn.Values(model), optim.AdamConfig{LR: 0.05})
	for range 300 {
		loss := nn.CrossEntropy(model.Forward(x), y)
		opt.ZeroGrad()
		if err := loss.Backward(); err != nil {
			panic(err)
		}
		opt.Step()
	}
	fmt.Println("accuracy:", nn.Accuracy(model.Forward(x), y))

	var file bytes.Buffer
	if err := nn.Save(&file, model, nil); err != nil {
		panic(err)
	}
	copy := nn.NewMLP([]int{2, 8, 2}, nn.NewRNG(2), &nn.MLPConfig{Act: nn.Tanh})
	if _, err := nn.Load(file.Bytes(), copy); err != nil {
		panic(err)
	}
	fmt.Println("reloaded accuracy:", nn.Accuracy(copy.Forward(x), y))
	for _, p := range copy.Params() {
		fmt.Println(p.Name, p.Value.Shape())
	}
	// Output:
	// accuracy: 1
	// reloaded accuracy: 1
	// layers.0.weight [8 2]
	// layers.0.bias [8]
	// layers.1.weight [2 8]
	// layers.1.bias [2]
}

func ExampleBCEWithLogits() {
	logits := ad.Var(tensor.FromFloat64([]float64{2, -1}, 2))
	labels := ad.Const(tensor.FromFloat64([]float64{1, 0}, 2))
	loss := nn.BCEWithLogits(logits, labels)
	if err := loss.Backward(); err != nil {
		panic(err)
	}
	// the gradient is (σ(x) − y)/N
	fmt.Printf("loss %.4f, gradient %.4f\n", loss.Item(), logits.Grad().Data())
	// Output: loss 0.2201, gradient [-0.0596 0.1345]
}

func ExampleDropout() {
	d := nn.NewDropout(0.5, 42)
	x := ad.Const(tensor.Full(tensor.Float64, 1, 8))
	first := d.Forward(x, true).Data()
	d.Offset = 0 // replay
	again := d.Forward(x, true).Data()
	fmt.Println(first)
	fmt.Println(fmt.Sprint(first) == fmt.Sprint(again))
	// Output:
	// [2 2 2 0 2 0 2 2]
	// true
}
