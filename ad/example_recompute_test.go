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

// A schedule that recorded layers already (to measure them) keeps the
// recordings and hands them to a Recompute node: its backward pass sweeps
// them (Sweep.Replay) instead of running the layers again, and Stats
// counts them as the node's.
func ExampleRecord() {
	w := ad.Var(tensor.FromFloat64([]float64{0.5, -0.25, 0.75, 1}, 2, 2))
	layer := func(h *ad.Value) *ad.Value { return ad.Tanh(ad.MatMul(h, w)) }
	x := ad.Var(tensor.FromFloat64([]float64{1, 2, 3, 4}, 2, 2))

	var recs []*ad.Recording
	var saved int64
	cur := x.Detach()
	for range 3 {
		r := ad.Record(layer, cur)
		recs, saved, cur = append(recs, r), saved+r.SavedBytes(), r.Out()
	}
	fmt.Println("the layers save:", saved, "bytes besides x")
	replay := func(s *ad.Sweep, _, g *ad.Value) []*ad.Value {
		for i := len(recs) - 1; i >= 0; i-- {
			g = s.Replay(recs[i], g)
		}
		return []*ad.Value{g}
	}
	run := func(xs []*ad.Value) *ad.Value { return layer(layer(layer(xs[0]))) }
	y := ad.Recompute{Name: "three layers", F: run, Out: cur, Vars: []*ad.Value{w}, Reverse: replay, Held: recs}.Apply(x)
	fmt.Println("the node holds:", ad.Stats(y).SavedBytes, "bytes (x is a Var: not counted)")

	g1, _ := ad.Grad(ad.Sum(y), x, w)
	g2, _ := ad.Grad(ad.Sum(run([]*ad.Value{x})), x, w)
	fmt.Println("same gradients:", g1[0].Tensor().AtFlat(2) == g2[0].Tensor().AtFlat(2), g1[1].Tensor().AtFlat(1) == g2[1].Tensor().AtFlat(1))
	// Output:
	// the layers save: 96 bytes besides x
	// the node holds: 96 bytes (x is a Var: not counted)
	// same gradients: true true
}
