package ad_test

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// exampleLayers returns n layers h ↦ tanh(h·W) with 8×8 weights (Vars the
// layers close over), and the weights.
func exampleLayers(n int) ([]func(*ad.Value) *ad.Value, []*ad.Value) {
	var layers []func(*ad.Value) *ad.Value
	var ws []*ad.Value
	for i := range n {
		w := tensor.New(tensor.Float64, 8, 8)
		for j := range w.Len() {
			w.SetFlat(j, math.Sin(float64(7*i+j))/3)
		}
		wv := ad.Var(w)
		ws = append(ws, wv)
		layers = append(layers, func(h *ad.Value) *ad.Value { return ad.Tanh(ad.MatMul(h, wv)) })
	}
	return layers, ws
}

// Checkpointing a stack of layers: the graph keeps the input and the
// output instead of every activation, and the gradient is the same, bit
// for bit.
func ExampleCheckpoint() {
	layers, ws := exampleLayers(16)
	x := ad.Const(tensor.Full(tensor.Float64, 0.5, 4, 8))
	stack := func(in []*ad.Value) *ad.Value {
		h := in[0]
		for _, l := range layers {
			h = l(h)
		}
		return h
	}

	plainLoss := ad.Sum(stack([]*ad.Value{x}))
	ckptLoss := ad.Sum(ad.Checkpoint(stack, x))
	fmt.Println("saved bytes without:", ad.Stats(plainLoss).SavedBytes)
	fmt.Println("saved bytes with:   ", ad.Stats(ckptLoss).SavedBytes)

	g1, _ := ad.Grad(plainLoss, ws[0])
	g2, _ := ad.Grad(ckptLoss, ws[0])
	fmt.Println("same gradient:", g1[0].Tensor().AtFlat(0) == g2[0].Tensor().AtFlat(0))
	// Output:
	// saved bytes without: 4352
	// saved bytes with:    512
	// same gradient: true
}

// PyTorch's checkpoint_sequential: 16 layers in 4 segments keep the
// inputs and outputs of the first 3 segments and the last one's
// activations: 8 of 4×8 float64 (256 bytes each), against 17 without.
func ExampleCheckpointSequential() {
	layers, _ := exampleLayers(16)
	x := ad.Const(tensor.Full(tensor.Float64, 0.5, 4, 8))
	y := ad.CheckpointSequential(layers, 4, x)
	fmt.Println("saved bytes:", ad.Stats(ad.Sum(y)).SavedBytes)
	// Output:
	// saved bytes: 2048
}

// Time stepping with the binomial schedule: 1000 steps of an explicit
// Euler integration of dx/dt = −k·x, reversed with 10 snapshots. The
// gradient with respect to k is exact, and the steps run without recording
// are the fewest any schedule needs.
func ExampleCheckpointChain() {
	k := ad.Var(tensor.Scalar(tensor.Float64, 0.5))
	dt := ad.Scalar(0.001)
	step := func(x *ad.Value) *ad.Value { return ad.Sub(x, ad.Mul(dt, ad.Mul(k, x))) }
	x0 := ad.Const(tensor.Scalar(tensor.Float64, 1))

	x := ad.CheckpointChain(step, x0, 1000, 10)
	g, err := ad.Grad(x, k)
	if err != nil {
		panic(err)
	}
	// x(1000) = (1 − 0.001·k)¹⁰⁰⁰, so ∂x/∂k = −(1 − 0.001·k)⁹⁹⁹.
	fmt.Printf("x = %.6f, ∂x/∂k = %.6f (exact %.6f)\n", x.Item(), g[0].Item(), -math.Pow(1-0.0005, 999))
	fmt.Println("unrecorded steps:", ad.RevolveSteps(1000, 10))
	// Output:
	// x = 0.606455, ∂x/∂k = -0.606758 (exact -0.606758)
	// unrecorded steps: 3636
}

// A memory budget for 16 layers whose activations are 256 bytes: with
// room for all, nothing is recomputed; with room for 12, runs of layers
// are checkpointed; with room for 4, less than any one level of
// checkpoints can hold, the binomial schedule takes over, and the graph
// keeps only the input and the output (its 1 snapshot and the current
// state are held beside it).
func ExampleCheckpointBudget() {
	layers, _ := exampleLayers(16)
	x := ad.Const(tensor.Full(tensor.Float64, 0.5, 4, 8))
	for _, budget := range []int64{1 << 20, 3072, 1024} {
		y := ad.CheckpointBudget(layers, x, budget)
		fmt.Printf("budget %7d: the graph keeps %d bytes\n", budget, ad.Stats(ad.Sum(y)).SavedBytes)
	}
	// Output:
	// budget 1048576: the graph keeps 4352 bytes
	// budget    3072: the graph keeps 2816 bytes
	// budget    1024: the graph keeps 512 bytes
}

// A reversible block: the backward pass rebuilds x1 and x2 from y1 and y2.
func ExampleReversible() {
	layers, ws := exampleLayers(2)
	x1 := ad.Var(tensor.Full(tensor.Float64, 0.5, 4, 8))
	x2 := ad.Var(tensor.Full(tensor.Float64, -0.5, 4, 8))
	y1, y2 := ad.Reversible(layers[0], layers[1], x1, x2)
	g, err := ad.Grad(ad.Add(ad.Sum(y1), ad.Sum(y2)), x1, ws[1])
	if err != nil {
		panic(err)
	}
	fmt.Printf("∂/∂x1[0] = %.6f, ∂/∂W₁[0] = %.6f\n", g[0].Tensor().AtFlat(0), g[1].Tensor().AtFlat(0))

	// The same block, stored: y1 = x1 + f(x2), y2 = x2 + g(y1).
	s1 := ad.Add(x1, layers[0](x2))
	s2 := ad.Add(x2, layers[1](s1))
	gs, _ := ad.Grad(ad.Add(ad.Sum(s1), ad.Sum(s2)), x1, ws[1])
	fmt.Println("stored, to 1e-12:", math.Abs(gs[1].Tensor().AtFlat(0)-g[1].Tensor().AtFlat(0)) < 1e-12)
	// Output:
	// ∂/∂x1[0] = 1.457301, ∂/∂W₁[0] = 2.116493
	// stored, to 1e-12: true
}

// Selective recomputation: each layer is a product followed by cheap
// element-wise ops, tanh(exp(sin(h·W))). Without a checkpoint the graph
// keeps three tensors a layer (the product's operand, sin's input, exp's
// output); with the products' outputs kept it keeps one a layer, plus the
// input and the output, and only sin, exp and tanh run again in the
// backward pass, where
// Checkpoint would run the products again too. The gradient is the same,
// bit for bit.
func ExampleCheckpointSelective() {
	_, ws := exampleLayers(16)
	x := ad.Const(tensor.Full(tensor.Float64, 0.5, 4, 8))
	stack := func(in []*ad.Value) *ad.Value {
		h := in[0]
		for _, w := range ws {
			h = ad.Tanh(ad.Exp(ad.Sin(ad.MatMul(h, w))))
		}
		return h
	}

	plainLoss := ad.Sum(stack([]*ad.Value{x}))
	selLoss := ad.Sum(ad.CheckpointSelective(stack, ad.KeepMatMul, x))
	fmt.Println("saved bytes without:", ad.Stats(plainLoss).SavedBytes)
	fmt.Println("saved bytes with:   ", ad.Stats(selLoss).SavedBytes)

	g1, _ := ad.Grad(plainLoss, ws[0])
	g2, _ := ad.Grad(selLoss, ws[0])
	fmt.Println("same gradient:", g1[0].Tensor().AtFlat(0) == g2[0].Tensor().AtFlat(0))
	// Output:
	// saved bytes without: 12544
	// saved bytes with:    4608
	// same gradient: true
}
