package ad_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// Causal attention over three positions: the first query sees only the
// first key, so its output is the first value; the gradient reaches the
// keys and values through the fused row's backward pass.
func ExampleScaledDotProductAttention() {
	q := ad.Var(tensor.FromFloat64([]float64{1, 0, 0, 1, 1, 1}, 3, 2))
	k := ad.Var(tensor.FromFloat64([]float64{1, 0, 0, 1, 1, 1}, 3, 2))
	v := ad.Var(tensor.FromFloat64([]float64{10, 20, 30}, 3, 1))
	y := ad.ScaledDotProductAttention(q, k, v, ad.AttentionOptions{Causal: true})
	fmt.Printf("%.4f\n", y.Data())
	gs, err := ad.Grad(ad.Sum(y), v)
	if err != nil {
		panic(err)
	}
	fmt.Printf("dL/dv %.4f\n", gs[0].Data())
	// Output:
	// [10.0000 16.6976 22.5523]
	// dL/dv [1.5785 0.9180 0.5035]
}

// Layer norm and RMS norm over the last axis, with a scale (gamma) and,
// for layer norm, a shift (beta).
func ExampleLayerNorm() {
	x := ad.Const(tensor.FromFloat64([]float64{1, 2, 3, 4, -1, 0, 1, 2}, 2, 4))
	gamma := ad.Const(tensor.FromFloat64([]float64{1, 1, 2, 2}, 4))
	beta := ad.Const(tensor.FromFloat64([]float64{0, 0, 0, 1}, 4))
	fmt.Printf("%.4f\n", ad.LayerNorm(x, gamma, beta, 1e-5).Data())
	fmt.Printf("%.4f\n", ad.RMSNorm(x, nil, 1e-5).Data())
	// Output:
	// [-1.3416 -0.4472 0.8944 3.6833 -1.3416 -0.4472 0.8944 3.6833]
	// [0.3651 0.7303 1.0954 1.4606 -0.8165 0.0000 0.8165 1.6330]
}

// Two heads packed side by side, as one linear projection writes them:
// features 0–1 of each position are head 0, features 2–3 head 1. Each head
// attends on its own — with a large scale, almost only to the key equal to
// its query — and the output keeps the layout (head 0's values in feature
// 0, head 1's in feature 1).
func ExampleAttentionOptions_heads() {
	qk := ad.Const(tensor.FromFloat64([]float64{
		1, 0, 0, 1, // position 0: head 0 (1, 0), head 1 (0, 1)
		0, 1, 1, 0, // position 1: head 0 (0, 1), head 1 (1, 0)
	}, 2, 4))
	v := ad.Const(tensor.FromFloat64([]float64{1, 10, 2, 20}, 2, 2)) // one value per head and position
	y := ad.ScaledDotProductAttention(qk, qk, v, ad.AttentionOptions{Heads: 2, Scale: 10})
	fmt.Printf("%.4f\n", y.Data())
	// Output:
	// [1.0000 10.0005 2.0000 19.9995]
}
