package checkpoint_test

import (
	"fmt"
	"math"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/checkpoint"
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

// Checkpointing a stack of layers with Full: the graph keeps the input
// and the output instead of every activation, and the gradient is the
// same, bit for bit.
func ExampleRun() {
	layers, ws := exampleLayers(16)
	x := ad.Const(tensor.Full(tensor.Float64, 0.5, 4, 8))

	plainLoss := ad.Sum(checkpoint.Run(checkpoint.None, layers, x))
	ckptLoss := ad.Sum(checkpoint.Run(checkpoint.Full, layers, x))
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
func ExampleSegments() {
	layers, _ := exampleLayers(16)
	x := ad.Const(tensor.Full(tensor.Float64, 0.5, 4, 8))
	y := checkpoint.Run(checkpoint.Segments(4), layers, x)
	fmt.Println("saved bytes:", ad.Stats(ad.Sum(y)).SavedBytes)
	// Output:
	// saved bytes: 2048
}

// Time stepping with the binomial schedule: 1000 steps of an explicit
// Euler integration of dx/dt = −k·x, reversed with 10 snapshots. The
// gradient with respect to k is exact, and the steps run without recording
// are the fewest any schedule needs.
func ExampleBinomial() {
	k := ad.Var(tensor.Scalar(tensor.Float64, 0.5))
	dt := ad.Scalar(0.001)
	step := func(x *ad.Value) *ad.Value { return ad.Sub(x, ad.Mul(dt, ad.Mul(k, x))) }
	x0 := ad.Const(tensor.Scalar(tensor.Float64, 1))

	steps := make([]func(*ad.Value) *ad.Value, 1000)
	for i := range steps {
		steps[i] = step
	}
	x := checkpoint.Run(checkpoint.Binomial(10), steps, x0)
	g, err := ad.Grad(x, k)
	if err != nil {
		panic(err)
	}
	// x(1000) = (1 − 0.001·k)¹⁰⁰⁰, so ∂x/∂k = −(1 − 0.001·k)⁹⁹⁹.
	fmt.Printf("x = %.6f, ∂x/∂k = %.6f (exact %.6f)\n", x.Item(), g[0].Item(), -math.Pow(1-0.0005, 999))
	fmt.Println("unrecorded steps:", checkpoint.BinomialSteps(1000, 10))
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
func ExampleBudget() {
	layers, _ := exampleLayers(16)
	x := ad.Const(tensor.Full(tensor.Float64, 0.5, 4, 8))
	for _, budget := range []int64{1 << 20, 3072, 1024} {
		y := checkpoint.Run(checkpoint.Budget(budget), layers, x)
		fmt.Printf("budget %7d: the graph keeps %d bytes\n", budget, ad.Stats(ad.Sum(y)).SavedBytes)
	}
	// Output:
	// budget 1048576: the graph keeps 4352 bytes
	// budget    3072: the graph keeps 2816 bytes
	// budget    1024: the graph keeps 512 bytes
}

// A reversible additive coupling block, y1 = x1 + f(x2), y2 = x2 + g(y1),
// as one layer on a state holding x1 and x2 (4 rows each), with its
// inverse: the backward pass rebuilds x1 and x2 from y1 and y2 instead of
// saving anything in between.
func ExampleReversible() {
	layers, ws := exampleLayers(2)
	f, g := layers[0], layers[1]
	block := func(s *ad.Value) *ad.Value {
		x1, x2 := ad.Slice(s, 0, 0, 4), ad.Slice(s, 0, 4, 8)
		y1 := ad.Add(x1, f(x2))
		return ad.Concat(0, y1, ad.Add(x2, g(y1)))
	}
	inverse := func(s *ad.Value) *ad.Value {
		y1, y2 := ad.Slice(s, 0, 0, 4), ad.Slice(s, 0, 4, 8)
		x2 := ad.Sub(y2, g(y1))
		return ad.Concat(0, ad.Sub(y1, f(x2)), x2)
	}
	x1 := ad.Var(tensor.Full(tensor.Float64, 0.5, 4, 8))
	x2 := ad.Var(tensor.Full(tensor.Float64, -0.5, 4, 8))
	y := checkpoint.Run(checkpoint.Reversible(inverse), []func(*ad.Value) *ad.Value{block}, ad.Concat(0, x1, x2))
	grads, err := ad.Grad(ad.Sum(y), x1, ws[1])
	if err != nil {
		panic(err)
	}
	fmt.Printf("∂/∂x1[0] = %.6f, ∂/∂W₁[0] = %.6f\n", grads[0].Tensor().AtFlat(0), grads[1].Tensor().AtFlat(0))

	// The same block, stored.
	s1 := ad.Add(x1, f(x2))
	s2 := ad.Add(x2, g(s1))
	gs, _ := ad.Grad(ad.Add(ad.Sum(s1), ad.Sum(s2)), x1, ws[1])
	fmt.Println("stored, to 1e-12:", math.Abs(gs[1].Tensor().AtFlat(0)-grads[1].Tensor().AtFlat(0)) < 1e-12)
	// Output:
	// ∂/∂x1[0] = 1.457301, ∂/∂W₁[0] = 2.116493
	// stored, to 1e-12: true
}

// RevNet-style coupling blocks under Couplings: the graph keeps the input
// and the output whatever the depth, and the backward pass evaluates each
// block's F and G once (here counted), recording G at the output's y1 and
// F at the rebuilt x2. The gradients are the stored blocks' to rounding.
func ExampleCouplings() {
	layers, ws := exampleLayers(8)
	calls := 0
	var blocks []checkpoint.Coupling
	var blockLayers []func(*ad.Value) *ad.Value
	for i := 0; i < len(layers); i += 2 {
		f, g := layers[i], layers[i+1]
		counted := func(h *ad.Value) *ad.Value { calls++; return g(h) }
		b := checkpoint.Coupling{F: f, G: counted} // the state's rows 0-3 are x1, rows 4-7 x2
		blocks, blockLayers = append(blocks, b), append(blockLayers, b.Layer)
	}
	x := ad.Var(tensor.Full(tensor.Float64, 0.25, 8, 8))

	stored := ad.Sum(checkpoint.Run(checkpoint.None, blockLayers, x))
	calls = 0
	rev := ad.Sum(checkpoint.Run(checkpoint.Couplings(blocks...), blockLayers, x))
	fmt.Println("G evaluated in the forward pass:", calls)
	fmt.Println("saved bytes stored:   ", ad.Stats(stored).SavedBytes)
	fmt.Println("saved bytes couplings:", ad.Stats(rev).SavedBytes)

	calls = 0
	g2, err := ad.Grad(rev, x, ws[7])
	if err != nil {
		panic(err)
	}
	fmt.Println("G evaluated in the backward pass:", calls)
	g1, _ := ad.Grad(stored, x, ws[7])
	for i := range g1 {
		a, b := g1[i].Tensor().AtFlat(0), g2[i].Tensor().AtFlat(0)
		fmt.Printf("gradient %d: %.6f, stored to 1e-12: %v\n", i, b, math.Abs(a-b) <= 1e-12*math.Abs(a))
	}
	fmt.Println(checkpoint.Couplings(blocks...))
	// Output:
	// G evaluated in the forward pass: 4
	// saved bytes stored:    4096
	// saved bytes couplings: 512
	// G evaluated in the backward pass: 4
	// gradient 0: 0.897217, stored to 1e-12: true
	// gradient 1: 1.087174, stored to 1e-12: true
	// Couplings(4 blocks)
}

// A block's Inverse rebuilds its input from its output, to rounding: the
// inverse to give Reversible for a block among other invertible layers.
func ExampleCoupling_Inverse() {
	layers, _ := exampleLayers(2)
	b := checkpoint.Coupling{F: layers[0], G: layers[1], Axis: 1} // columns 0-7 are x1, 8-15 x2
	x := ad.Const(tensor.Full(tensor.Float64, 0.5, 4, 16))
	back := b.Inverse(b.Layer(x))
	worst := 0.0
	for i := range back.Tensor().Len() {
		worst = max(worst, math.Abs(back.Tensor().AtFlat(i)-0.5))
	}
	fmt.Println("rebuilt to 1e-15:", worst < 1e-15)
	// Output:
	// rebuilt to 1e-15: true
}

// Selective recomputation: each layer is a product followed by cheap
// element-wise ops, tanh(exp(sin(h·W))). Without a checkpoint the graph
// keeps three tensors a layer (the product's operand, sin's input, exp's
// output); with the products' outputs kept it keeps one a layer, plus the
// input and the output, and only sin, exp and tanh run again in the
// backward pass, where Full would run the products again too. The
// gradient is the same, bit for bit.
func ExampleSelective() {
	_, ws := exampleLayers(16)
	x := ad.Const(tensor.Full(tensor.Float64, 0.5, 4, 8))
	var layers []func(*ad.Value) *ad.Value
	for _, w := range ws {
		layers = append(layers, func(h *ad.Value) *ad.Value { return ad.Tanh(ad.Exp(ad.Sin(ad.MatMul(h, w)))) })
	}

	plainLoss := ad.Sum(checkpoint.Run(checkpoint.None, layers, x))
	selLoss := ad.Sum(checkpoint.Run(checkpoint.Selective(ad.KeepMatMul), layers, x))
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

// Policies are comparable values that print as the calls that make them.
func ExamplePolicy() {
	for _, p := range []checkpoint.Policy{checkpoint.None, checkpoint.Full, checkpoint.Segments(10),
		checkpoint.Binomial(4), checkpoint.Budget(5 << 20), checkpoint.Selective(ad.KeepExpensive)} {
		fmt.Println(p)
	}
	fmt.Println(checkpoint.Segments(10) == checkpoint.Segments(10), checkpoint.Budget(1) == checkpoint.Segments(1))
	err := ad.Try(func() { checkpoint.Run(checkpoint.Segments(0), nil, ad.Scalar(1)) })
	fmt.Println(err)
	// Output:
	// None
	// Full
	// Segments(10)
	// Binomial(4)
	// Budget(5242880)
	// Selective(KeepExpensive)
	// true false
	// checkpoint: Segments(0): 0 segments: use at least 1 (about √(number of layers) saves most)
}
