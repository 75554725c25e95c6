package ad_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/tensor"
)

// A function of two inputs recorded as one Recompute node: the graph keeps
// the inputs and the output, the backward pass runs f again, and the
// gradients are those of f recorded, bit for bit. Package checkpoint's
// policies are built on it.
func ExampleRecompute() {
	w := ad.Var(tensor.FromFloat64([]float64{0.5, -0.25, 0.75, 1}, 2, 2))
	f := func(xs []*ad.Value) *ad.Value {
		h := xs[0]
		for range 8 {
			h = ad.Tanh(ad.Add(ad.MatMul(h, w), xs[1]))
		}
		return h
	}
	x := ad.Const(tensor.FromFloat64([]float64{1, 2, 3, 4}, 2, 2))
	b := ad.Var(tensor.FromFloat64([]float64{0.1, -0.1}, 2))

	plain := ad.Sum(f([]*ad.Value{x, b}))
	node := ad.Sum(ad.Recompute{Name: "block", F: f}.Apply(x, b))
	fmt.Println("saved bytes without:", ad.Stats(plain).SavedBytes)
	fmt.Println("saved bytes with:   ", ad.Stats(node).SavedBytes)
	g1, _ := ad.Grad(plain, w, b)
	g2, _ := ad.Grad(node, w, b)
	fmt.Println("same gradients:", g1[0].Tensor().AtFlat(3) == g2[0].Tensor().AtFlat(3), g1[1].Tensor().AtFlat(0) == g2[1].Tensor().AtFlat(0))
	// Output:
	// saved bytes without: 288
	// saved bytes with:    64
	// same gradients: true true
}
