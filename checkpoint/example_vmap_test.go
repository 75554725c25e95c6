package checkpoint_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/checkpoint"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

// Per-example gradients through checkpointed layers: inside fn.Vmap the
// schedule runs on the whole batch, so each layer runs once per
// evaluation for all the examples together, as many times as for one
// example, and the gradients are those without checkpointing.
func ExampleRun_vmap() {
	layers, _ := exampleLayers(8)
	calls := 0
	counted := make([]func(*ad.Value) *ad.Value, len(layers))
	for i, l := range layers {
		counted[i] = func(h *ad.Value) *ad.Value { calls++; return l(h) }
	}
	loss := func(p checkpoint.Policy) fn.Func {
		return fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(checkpoint.Run(p, counted, xs[0])) })
	}
	batch := ad.Const(tensor.Full(tensor.Float64, 0.5, 32, 8)) // 32 examples of 8 features

	perExample := fn.Vmap(fn.Grad(loss(checkpoint.Segments(2)), 0), nil, nil)
	got := perExample(batch)[0]
	fmt.Println("layer calls for 32 examples:", calls)
	want := fn.Vmap(fn.Grad(loss(checkpoint.None), 0), nil, nil)(batch)[0]
	fmt.Println("gradients:", got.Shape(), "same as without checkpointing:", fmt.Sprint(got.Data()) == fmt.Sprint(want.Data()))
	// Output:
	// layer calls for 32 examples: 12
	// gradients: [32 8] same as without checkpointing: true
}
