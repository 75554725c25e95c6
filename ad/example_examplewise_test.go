package ad_test

import (
	"fmt"

	"github.com/adjointgo/adjoint/ad"
	"github.com/adjointgo/adjoint/fn"
	"github.com/adjointgo/adjoint/tensor"
)

// A function that reads its operand's data to decide what to compute (a
// solver's loop, say) has no batching rule; wrapped in Examplewise it runs
// once per example inside Vmap, and per-example gradients go through it.
func ExampleExamplewise() {
	// Halve x until its largest element is below 1: how many times depends
	// on the data, so each example needs its own count.
	shrink := func(xs []*ad.Value) []*ad.Value {
		x := xs[0]
		for x.Tensor().AtFlat(0) >= 1 {
			x = ad.MulScalar(x, 0.5)
		}
		return []*ad.Value{x}
	}
	f := fn.Of(func(xs ...*ad.Value) *ad.Value { return ad.Sum(ad.Examplewise(shrink, xs[0])[0]) })
	x := ad.Const(tensor.FromFloat64([]float64{0.5, 3, 10}, 3, 1))
	fmt.Println("values:", fn.Vmap(f, nil, nil)(x)[0].Data())
	fmt.Println("gradients:", fn.Vmap(fn.Grad(f), nil, nil)(x)[0].Data())
	// Output:
	// values: [0.5 0.75 0.625]
	// gradients: [1 0.25 0.0625]
}
